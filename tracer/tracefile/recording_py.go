package tracefile

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
)

// Python stack samples of a recording (wire PySamples frames): the stacks
// interned into the trace's PyStacks, the samples kept as they are. They
// count towards the recording budget like events.

// InternPyStack is wire.PySink's.
func (rs *recSink) InternPyStack(parent uint32, f tracer.PyFrame) (uint32, error) {
	if rs.t.PyStacks == nil {
		rs.t.PyStacks = tracer.NewPyStacks()
	}
	return rs.t.PyStacks.Intern(parent, f), nil
}

// PySamples is wire.PySink's.
func (rs *recSink) PySamples(b *wire.PyBatch, undefined int) error {
	held := uint64(len(rs.t.Events) + len(rs.t.Counters) + len(rs.t.PySamples))
	if n := uint64(len(b.Samples)); n > rs.budget || held > rs.budget-n {
		return &Error{Path: rs.path, Field: "samples",
			Msg:  fmt.Sprintf("the recording would hold more than %d events, counters and Python samples (%s): kept the %d before a pysamples frame of %d", rs.budget, rs.budgetWhy, held, n),
			Hint: fmt.Sprintf("pass --%s N or set %s to a larger number", MaxRecordingEventsFlag, MaxRecordingEventsEnv)}
	}
	if rs.t.PyStacks == nil {
		rs.t.PyStacks = tracer.NewPyStacks()
	}
	rs.t.PySamples = append(rs.t.PySamples, b.Samples...)
	rs.t.PyPeriodNs = max(rs.t.PyPeriodNs, b.PeriodNs)
	if rs.pyDropped == nil {
		rs.pyDropped = map[int32]uint64{}
	}
	rs.pyDropped[b.PID] = b.Dropped
	var d uint64
	for _, v := range rs.pyDropped {
		d += v
	}
	rs.t.PyDropped = d
	rs.undefined += undefined
	return nil
}

// splitPySamples hands each process's Python samples to its trace (out,
// by index of pid); the stack table is shared.
func splitPySamples(t *tracer.Trace, out []*tracer.Trace, index map[int32]int) {
	for _, s := range t.PySamples {
		i, ok := index[s.PID]
		if !ok {
			i = 0
		}
		out[i].PySamples = append(out[i].PySamples, s)
	}
}
