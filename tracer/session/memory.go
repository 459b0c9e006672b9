package session

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// maxMemRecords bounds the memory records a session keeps (the newest;
// about 100 B each): torch.profiler windows of a step that allocates a
// few thousand tensors fill it after hundreds of windows.
const maxMemRecords = 1 << 19

// memState is the session's memory model input: the children's
// allocations and frees, each resolved with the session's linker when it
// arrived (the kernels' rule: the operators and stage open on its thread,
// the step of its process), and the model built from them.
type memState struct {
	recs    []attrib.MemRecord // appended; trimming makes a new array
	dropped int
	model   *attrib.Memory // built at modelVer
	ver     uint64         // bumped per batch
	builtAt uint64
}

// addMemory takes a child's memory events (times in host ns, pids the
// session's), records them and resolves them. A torch.profiler window's
// events are added after its operators were ingested, and the agent's
// steps and stages of the window arrived before it. Called with s.mu
// held.
func (s *Session) addMemory(ms []tracer.MemEvent) {
	if len(ms) == 0 {
		return
	}
	if s.rec != nil {
		s.rec.memory(ms)
	}
	recs := attrib.AttributeMemory(s.link.core, s.strs, ms, 0)
	s.mem.recs = append(s.mem.recs, recs...)
	if n := len(s.mem.recs); n > maxMemRecords {
		cut := n - maxMemRecords/2
		s.mem.dropped += cut
		s.mem.recs = append([]attrib.MemRecord(nil), s.mem.recs[cut:]...)
	}
	s.mem.ver++
	s.version++
}

// memoryInput returns what the model is built from (under s.mu): the
// records (a prefix never written again) and the step windows; ok is
// false when the model built last is current.
func (s *Session) memoryInput() (recs []attrib.MemRecord, steps []attrib.MemStepWindow, ok bool) {
	if len(s.mem.recs) == 0 || (s.mem.model != nil && s.mem.builtAt == s.mem.ver) {
		return nil, nil, false
	}
	recs = s.mem.recs[:len(s.mem.recs):len(s.mem.recs)]
	for _, st := range s.steps {
		steps = append(steps, attrib.MemStepWindow{PID: st.PID, Step: st.Step, StartNs: st.StartNs, EndNs: st.StartNs + st.DurNs})
	}
	return recs, steps, true
}

// memoryWarning says how many records the bound dropped ("" none).
func (m *memState) warning() string {
	if m.dropped == 0 {
		return ""
	}
	return fmt.Sprintf("memory model: the oldest %d allocations and frees were dropped (%d kept)", m.dropped, len(m.recs))
}

func (r *recorder) memory(ms []tracer.MemEvent) {
	if r.err == nil {
		r.done1(r.w.Memory(ms))
	}
}

// memModel returns the newest model built (nil none).
func (s *Session) memModel() *attrib.Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mem.model
}

// Memory takes a child's Memory frame (wire.MemorySink): the allocation
// records of a tracer. They are resolved on arrival, so an operator or
// range that ends after them (sources send intervals when they end) is
// not seen yet: their stage is known only when it was already closed.
func (c *conn) Memory(ms []tracer.MemEvent) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addMemory(ms)
	return nil
}
