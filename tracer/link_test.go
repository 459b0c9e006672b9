package tracer

import (
	"reflect"
	"testing"
)

// A hand-built trace: thread (1,7) runs step 3 [0,100), range "forward"
// [10,60) holding op "aten::mm" [20,40) and op "attn" [40,60); a launch at
// 25 (corr 1) and one at 45 (corr 2); a launch at 70 outside any range
// (corr 3); a kernel whose correlation has no launch (corr 9); and a
// built-in-loop style kernel with its own thread and no correlation at 50.
func TestLinkContexts(t *testing.T) {
	tr := NewTrace("test", "")
	s := tr.Strings.Intern
	ev := func(k Kind, name string, start, dur int64, tid int32, corr uint64, val int64) Event {
		e := Event{Kind: k, Name: s(name), Start: start, Dur: dur, PID: 1, TID: tid, Corr: corr, Value: val, Device: -1}
		if k.IsGPU() {
			e.Device = 0
		}
		return e
	}
	tr.Events = []Event{
		ev(KindKernel, "k1", 200, 5, -1, 1, 0), // kernels before their launches: order must not matter
		ev(KindKernel, "k2", 210, 5, -1, 2, 0),
		ev(KindKernel, "k3", 220, 5, -1, 3, 0),
		ev(KindKernel, "k9", 230, 5, -1, 9, 0),
		ev(KindStep, "ProfilerStep#3", 0, 100, 7, 0, 3),
		ev(KindRange, "forward", 10, 50, 7, 0, 0),
		ev(KindCPUOp, "aten::mm", 20, 20, 7, 0, 0),
		ev(KindCPUOp, "attn", 40, 20, 7, 0, 0),
		ev(KindRuntime, "cudaLaunchKernel", 25, 2, 7, 1, 0),
		ev(KindRuntime, "cudaLaunchKernel", 45, 2, 7, 2, 0),
		ev(KindRuntime, "cudaLaunchKernel", 70, 2, 7, 3, 0),
		ev(KindKernel, "cpu_kernel", 50, 3, 7, 0, 0),
	}
	tr.Link()
	ctx := func(i int) (ops, ranges []string, step int64) {
		c := tr.Contexts[tr.Events[i].Ctx]
		for _, id := range c.Ops {
			ops = append(ops, tr.Strings.Get(id))
		}
		for _, id := range c.Ranges {
			ranges = append(ranges, tr.Strings.Get(id))
		}
		return ops, ranges, c.Step
	}
	cases := []struct {
		i      int
		ops    []string
		ranges []string
		step   int64
	}{
		{0, []string{"aten::mm"}, []string{"forward"}, 3}, // launched at 25
		{1, []string{"attn"}, []string{"forward"}, 3},     // at 45: aten::mm ended at 40
		{2, nil, nil, 3},  // at 70: only the step is open
		{3, nil, nil, -1}, // no launch: context 0
		{11, []string{"attn"}, []string{"forward"}, 3}, // own thread, own start 50
	}
	for _, c := range cases {
		ops, ranges, step := ctx(c.i)
		if !reflect.DeepEqual(ops, c.ops) || !reflect.DeepEqual(ranges, c.ranges) || step != c.step {
			t.Errorf("event %d (%s): ops %v ranges %v step %d; want %v %v %d",
				c.i, tr.Name(&tr.Events[c.i]), ops, ranges, step, c.ops, c.ranges, c.step)
		}
	}
	if tr.Events[3].Ctx != 0 {
		t.Errorf("unlaunched kernel got context %d, want 0", tr.Events[3].Ctx)
	}
	// Identical contexts are interned once: k2 and cpu_kernel share one.
	if tr.Events[1].Ctx != tr.Events[11].Ctx {
		t.Errorf("equal contexts not shared: %d vs %d", tr.Events[1].Ctx, tr.Events[11].Ctx)
	}
	// Linking again gives the same answer.
	before := append([]Event(nil), tr.Events...)
	tr.Link()
	for i := range before {
		if !reflect.DeepEqual(tr.Contexts[before[i].Ctx], tr.Contexts[tr.Events[i].Ctx]) {
			t.Fatalf("second Link changed event %d's context", i)
		}
	}
}
