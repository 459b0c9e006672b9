package tracefile

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
)

// warnDuplicateSteps warns, once per trace, when one thread holds several
// step ranges with the same number (two torch.profiler sessions of one
// process written into one file, or copies of a trace concatenated): the
// step table keys steps by number, so such a step's row sums the GPU work
// of all its ranges and shows the first range's start and duration (e.g.
// a file whose steps 101–105 were repeated showed step 101 "35.1 ms,
// gpu time 189 ms", which the gpu-time note then put down to overlapping
// streams). It reads only t's KindStep events, so the streamed path
// (whose trace holds just its steps) warns the same.
func warnDuplicateSteps(t *tracer.Trace, path string) {
	type key struct {
		pid, tid int32
		n        int64
	}
	first := map[key]int64{}
	repeated := map[key]bool{}
	var ex key
	var exA, exB int64
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind != tracer.KindStep {
			continue
		}
		k := key{e.PID, e.TID, e.Value}
		at, ok := first[k]
		if !ok {
			first[k] = e.Start
			continue
		}
		if len(repeated) == 0 {
			ex, exA, exB = k, at, e.Start
		}
		repeated[k] = true
	}
	if len(repeated) == 0 {
		return
	}
	others := ""
	if n := len(repeated) - 1; n > 0 {
		others = fmt.Sprintf("; so do %d other step numbers", n)
	}
	t.Warn(fmt.Sprintf("%s: step %d appears more than once on one thread (pid %d tid %d, at %d ns and %d ns)%s: such a step is one row that sums the GPU work of all its ranges and shows the first range's start and duration",
		path, ex.n, ex.pid, ex.tid, exA, exB, others))
}
