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
	pending []tracer.MemEvent  // a tracer's records waiting for their step (conn.Memory)
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
	for _, st := range s.steps.times {
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
// records of a tracer (CUPTI, rocprofiler-sdk, the built-in loop).
// Sources send an interval when it ends, so the ranges around an
// allocation arrive after it: the records wait, as GPU work does, until
// a step of their process has ended after them (resolveMemory, from
// ingest), or the process disconnects, or more than maxMemPending wait.
func (c *conn) Memory(ms []tracer.MemEvent) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem.pending = append(s.mem.pending, ms...)
	if len(s.mem.pending) > maxMemPending {
		s.resolveMemory(-1, true)
	}
	return nil
}

// maxMemPending bounds the memory records waiting for their step.
const maxMemPending = 1 << 16

// resolveMemory resolves and adds the pending records of process pid
// (-1: every process) whose time a step of their process has ended after,
// or all of them with force. Called with s.mu held.
func (s *Session) resolveMemory(pid int32, force bool) {
	if len(s.mem.pending) == 0 {
		return
	}
	var ready, keep []tracer.MemEvent
	for _, m := range s.mem.pending {
		p := s.link.procs[m.PID]
		switch {
		case pid >= 0 && m.PID != pid:
			keep = append(keep, m)
		case force || (p != nil && p.hasStep && p.stepEnd > m.TS):
			ready = append(ready, m)
		default:
			keep = append(keep, m)
		}
	}
	s.mem.pending = keep
	s.addMemory(ready)
}
