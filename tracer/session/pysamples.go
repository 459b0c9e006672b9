package session

import (
	"slices"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/wire"
)

// pyKeep is what the session keeps of the Python agents' stack samples:
// one stack table (the session's string ids), the cumulative aggregate,
// and the newest samples for the window's profile (those within RecentNs
// of the newest, at most maxPyWindow).
type pyKeep struct {
	stacks  *tracer.PyStacks
	cum     *attrib.PyAggregator
	win     []tracer.PySample
	newest  int64
	period  int64
	dropped map[int32]uint64 // per process, cumulative
	// ver counts batches; builtAt is the ver the profiles were built at.
	builtAt uint64
	ver     uint64
	cumProf *attrib.PyProfile
	winProf *attrib.PyProfile
}

// maxPyWindow bounds the samples kept for the window (100 Hz × 8
// threads × 5 s is 4,000).
const maxPyWindow = 1 << 16

// maxPyStacks bounds the stack nodes a session interns; samples of new
// stacks past it count under an empty stack.
const maxPyStacks = 1 << 20

// InternPyStack is wire.PySink's: the stack goes into the session's table.
func (c *conn) InternPyStack(parent uint32, f tracer.PyFrame) (uint32, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pyInit()
	if p.stacks.Len() >= maxPyStacks {
		return 0, nil
	}
	return p.stacks.Intern(parent, f), nil
}

// PySamples is wire.PySink's: the samples are aggregated, kept for the
// window and recorded.
func (c *conn) PySamples(b *wire.PyBatch, _ int) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pyInit()
	p.cum.Add(b.Samples)
	p.period = max(p.period, b.PeriodNs)
	p.dropped[b.PID] = b.Dropped
	for _, x := range b.Samples {
		p.newest = max(p.newest, x.TS)
	}
	p.win = append(p.win, b.Samples...)
	cut := 0
	for cut < len(p.win) && (len(p.win)-cut > maxPyWindow || p.win[cut].TS < p.newest-s.opts.RecentNs) {
		cut++
	}
	if cut > len(p.win)/2 {
		p.win = slices.Clone(p.win[cut:])
	} else if cut > 0 {
		p.win = p.win[cut:]
	}
	if s.rec != nil {
		s.rec.pySamples(p.stacks, b)
	}
	p.ver++
	s.version++
	return nil
}

// pyInit returns the session's pyKeep, made on first use (s.mu held).
func (s *Session) pyInit() *pyKeep {
	if s.py == nil {
		s.py = &pyKeep{stacks: tracer.NewPyStacks(), cum: attrib.NewPyAggregator(), dropped: map[int32]uint64{}}
	}
	return s.py
}

// pyProfiles returns the cumulative and window Python profiles, rebuilt
// when samples came since the last call (s.mu held); nil, nil without
// samples. Building walks the cells and the distinct stacks only.
func (s *Session) pyProfiles() (cum, win *attrib.PyProfile) {
	p := s.py
	if p == nil || p.cum.Empty() {
		return nil, nil
	}
	if p.cumProf == nil || p.builtAt != p.ver {
		var dropped uint64
		for _, d := range p.dropped {
			dropped += d
		}
		p.cumProf = p.cum.Profile(p.stacks, s.strs)
		p.cumProf.PeriodNs, p.cumProf.Dropped = p.period, dropped
		p.cumProf.SetSteps(s.steps.count)
		w := attrib.NewPyAggregator()
		w.Add(p.win)
		p.winProf = w.Profile(p.stacks, s.strs)
		if p.winProf != nil {
			p.winProf.PeriodNs, p.winProf.Dropped = p.period, dropped
			var n int64
			for i := len(s.steps.times) - 1; i >= 0 && len(p.win) > 0 && s.steps.times[i].StartNs+s.steps.times[i].DurNs >= p.win[0].TS; i-- {
				n++
			}
			p.winProf.SetSteps(n)
		}
		p.builtAt = p.ver
	}
	return p.cumProf, p.winProf
}

// resetPy forgets the samples (Reset); the stack table stays, as the
// string table does.
func (s *Session) resetPy() {
	if s.py == nil {
		return
	}
	s.py.cum.Reset()
	s.py.win = nil
	s.py.cumProf, s.py.winProf = nil, nil
	s.py.ver++
}

// pySamples records a batch with the session's ids: the stack table's
// frames and nodes not yet in the recording first (r.pyFrames,
// r.pyNodes count them), then the samples.
func (r *recorder) pySamples(st *tracer.PyStacks, b *wire.PyBatch) {
	if r.err != nil || len(b.Samples) == 0 {
		return
	}
	r.defineStrings()
	out := wire.PyBatch{PID: b.PID, PeriodNs: b.PeriodNs, Dropped: b.Dropped, Samples: b.Samples}
	for i := r.pyFrames; i < st.Frames(); i++ {
		out.Frames = append(out.Frames, wire.PyFrameDef{ID: uint32(i) + 1, Frame: st.Frame(uint32(i))})
	}
	r.pyFrames = st.Frames()
	if r.pyNodes == 0 {
		r.pyNodes = 1 // stack 0, the empty one, is never defined
	}
	for i := r.pyNodes; i < st.Len(); i++ {
		n := st.Node(uint32(i))
		out.Stacks = append(out.Stacks, wire.PyStackDef{ID: uint32(i), Parent: n.Parent, Frame: n.Frame + 1})
	}
	r.pyNodes = st.Len()
	r.done1(r.w.PySamples(&out))
}
