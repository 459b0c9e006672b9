package tracer

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
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

// Autograd's case, by hand: the main thread 1 runs step 5 [0,1000) with
// "## forward ##" [0,400) and "## backward ##" [400,900); thread 2
// (autograd) launches at 500 under op "ConvolutionBackward0" with no range
// of its own, and at 600 inside its own range "nccl:all_reduce"; thread 3
// launches at 1200, after the step, with nothing open anywhere.
func TestLinkStepThreadFallback(t *testing.T) {
	tr := NewTrace("test", "")
	s := tr.Strings.Intern
	cpu := func(k Kind, name string, start, dur int64, tid int32, corr uint64, val int64) Event {
		return Event{Kind: k, Name: s(name), Start: start, Dur: dur, PID: 1, TID: tid, Corr: corr, Value: val, Device: -1}
	}
	gpu := func(corr uint64) Event {
		return Event{Kind: KindKernel, Name: s("k"), Start: 5000 + int64(corr), Dur: 1, PID: 1, TID: -1, Corr: corr}
	}
	tr.Events = []Event{
		gpu(1), gpu(2), gpu(3), gpu(4),
		cpu(KindStep, "ProfilerStep#5", 0, 1000, 1, 0, 5),
		cpu(KindRange, "## forward ##", 0, 400, 1, 0, 0),
		cpu(KindRange, "## backward ##", 400, 500, 1, 0, 0),
		cpu(KindRuntime, "cudaLaunchKernel", 100, 1, 1, 1, 0),
		cpu(KindCPUOp, "ConvolutionBackward0", 450, 100, 2, 0, 0),
		cpu(KindRuntime, "cudaLaunchKernel", 500, 1, 2, 2, 0),
		cpu(KindRange, "nccl:all_reduce", 590, 20, 2, 0, 0),
		cpu(KindRuntime, "cudaLaunchKernel", 600, 1, 2, 3, 0),
		cpu(KindRuntime, "cudaLaunchKernel", 1200, 1, 3, 4, 0),
	}
	tr.Link()
	want := []struct {
		ops, ranges []string
		step        int64
		from        StageRule
	}{
		{nil, []string{"## forward ##"}, 5, StageLaunchThread},
		{[]string{"ConvolutionBackward0"}, []string{"## backward ##"}, 5, StageStepThread},
		{nil, []string{"nccl:all_reduce"}, 5, StageLaunchThread},
		{nil, nil, -1, StageNoRange},
	}
	for i, w := range want {
		c := tr.Contexts[tr.Events[i].Ctx]
		var ops, ranges []string
		for _, id := range c.Ops {
			ops = append(ops, tr.Strings.Get(id))
		}
		for _, id := range c.Ranges {
			ranges = append(ranges, tr.Strings.Get(id))
		}
		if !reflect.DeepEqual(ops, w.ops) || !reflect.DeepEqual(ranges, w.ranges) || c.Step != w.step || c.StageFrom != w.from {
			t.Errorf("kernel %d: ops %v ranges %v step %d from %v; want %v %v %d %v", i+1, ops, ranges, c.Step, c.StageFrom, w.ops, w.ranges, w.step, w.from)
		}
	}
	if tr.Events[3].Ctx != 0 {
		t.Errorf("launch with nothing open got context %d, want 0", tr.Events[3].Ctx)
	}
	// Queries out of time order give the same answers (the sweep restarts).
	l := NewLinker()
	for i := range tr.Events {
		l.Add(&tr.Events[i])
	}
	for _, q := range []struct {
		tid  int32
		t    int64
		want int
	}{{2, 600, 2}, {2, 500, 1}, {1, 100, 0}, {2, 600, 2}} {
		got := l.Contexts[l.Resolve(1, q.tid, q.t)]
		if !reflect.DeepEqual(got, tr.Contexts[tr.Events[q.want].Ctx]) {
			t.Errorf("Resolve(1, %d, %d) = %+v, want %+v", q.tid, q.t, got, tr.Contexts[tr.Events[q.want].Ctx])
		}
	}
}

// TestSortAppended: sorting a sorted prefix with elements appended gives
// what slices.SortStableFunc gives over the whole slice (ties in order),
// for appended runs that fall anywhere in the prefix.
func TestSortAppended(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type el struct{ k, seq int }
	byK := func(a, b el) int { return cmp.Compare(a.k, b.k) }
	for trial := range 2000 {
		n, m := rng.IntN(40), rng.IntN(10)
		s := make([]el, 0, n+m)
		for i := range n + m {
			s = append(s, el{rng.IntN(20), i})
		}
		slices.SortStableFunc(s[:n], byK)
		want := slices.Clone(s)
		slices.SortStableFunc(want, byK)
		sortAppended(s, n, byK)
		if !slices.Equal(s, want) {
			t.Fatalf("trial %d (prefix %d, appended %d): got %v, want %v", trial, n, m, s, want)
		}
	}
}

// TestResolveUntil: the context ResolveUntil gives at t is the one
// Resolve gives at every time in [t, until), on the launching thread (with
// operators and ranges) and on a thread without ranges (which takes the
// step thread's), around steps with gaps between them and a zero-length
// one and one nested in another, for random nested intervals.
func TestResolveUntil(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	strs := NewStrings()
	names := []StrID{strs.Intern("a"), strs.Intern("b"), strs.Intern("c")}
	const span = 2000
	var evs []Event
	for range 60 {
		s := rng.Int64N(span)
		kind := KindRange
		if rng.IntN(3) == 0 {
			kind = KindCPUOp
		}
		evs = append(evs, Event{Kind: kind, Name: names[rng.IntN(3)], Start: s, Dur: rng.Int64N(200), PID: 1, TID: 1})
	}
	for i, s := range []int64{100, 400, 700, 700, 1500, 1600} {
		d := int64(250)
		switch i {
		case 3:
			d = 0
		case 5:
			d = 100 // nested in the step before: innermost from 1600 to 1700
		}
		evs = append(evs, Event{Kind: KindStep, Start: s, Dur: d, Value: int64(i), PID: 1, TID: 1},
			Event{Kind: KindStep, Start: s, Dur: d, Value: int64(i), PID: 2, TID: 1}) // a process with steps only
	}
	fresh := func() *Linker {
		l := NewLinker()
		for i := range evs {
			l.Add(&evs[i])
		}
		return l
	}
	for _, th := range [][2]int32{{1, 1}, {1, 2}, {2, 1}} {
		pid, tid := th[0], th[1]
		lu, lr := fresh(), fresh()
		for at := int64(0); at < span; at += 7 {
			ctx, until := lu.ResolveUntil(pid, tid, at)
			if until <= at {
				t.Fatalf("tid %d at %d: until %d", tid, at, until)
			}
			for t2 := at; t2 < min(until, span+300); t2++ {
				if got := lr.Resolve(pid, tid, t2); !reflect.DeepEqual(lr.Contexts[got], lu.Contexts[ctx]) {
					t.Fatalf("pid %d tid %d: at %d the context holds until %d, but at %d it is %+v, not %+v", pid, tid, at, until, t2, lr.Contexts[got], lu.Contexts[ctx])
				}
			}
		}
	}
}
