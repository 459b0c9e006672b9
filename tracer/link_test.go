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
// one and one nested in another, for random nested intervals, attention
// operators among them.
func TestResolveUntil(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	strs := NewStrings()
	names := []StrID{strs.Intern("a"), strs.Intern("b"), strs.Intern("aten::scaled_dot_product_attention")}
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
	// Attention modules: a range around an attention operator and a
	// later one, launches after the first within the range.
	for b := int64(50); b < span; b += 330 {
		evs = append(evs, Event{Kind: KindRange, Name: names[0], Start: b, Dur: 300, PID: 1, TID: 1},
			Event{Kind: KindCPUOp, Name: names[2], Start: b + 50, Dur: 40, PID: 1, TID: 1},
			Event{Kind: KindCPUOp, Name: names[1], Start: b + 150, Dur: 30, PID: 1, TID: 1})
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
		l.SetStrings(strs) // attention operators mark what follows them (AfterAttention)
		for i := range evs {
			l.Add(&evs[i])
		}
		return l
	}
	after := 0
	for _, th := range [][2]int32{{1, 1}, {1, 2}, {2, 1}} {
		pid, tid := th[0], th[1]
		lu, lr := fresh(), fresh()
		for at := int64(0); at < span; at += 7 {
			ctx, until := lu.ResolveUntil(pid, tid, at)
			if lu.Contexts[ctx].AfterAttention {
				after++
			}
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
	if after == 0 {
		t.Error("no launch after an attention operator: the test does not cover AfterAttention")
	}
}

// TestLinkAfterAttention: in two attention modules of one thread, laid
// out as Qwen2Attention is in tracelens_h100_qwen15_sdpa_flash (q/k/v
// linears, aten::scaled_dot_product_attention, the output linear), a
// launch is AfterAttention exactly when the SDPA operator of its own
// module instance ended before it: module 1 without sub-ranges, module 2
// with its projections in "nn.Module: Linear" ranges (at its q_proj the
// last SDPA is module 1's, whose range is closed; at its o_proj, its own,
// whose range is open). Launches inside SDPA are not after it. Without
// SetStrings (a Linker that cannot tell operators apart) nothing is.
func TestLinkAfterAttention(t *testing.T) {
	tr := NewTrace("test", "")
	s := tr.Strings.Intern
	var evs []Event
	add := func(k Kind, name string, start, dur int64) {
		evs = append(evs, Event{Kind: k, Name: s(name), Start: start, Dur: dur, PID: 1, TID: 7, Device: -1})
	}
	corr := uint64(0)
	launch := func(at int64) int {
		corr++
		evs = append(evs, Event{Kind: KindRuntime, Name: s("cudaLaunchKernel"), Start: at, Dur: 1, PID: 1, TID: 7, Corr: corr, Device: -1})
		evs = append(evs, Event{Kind: KindKernel, Name: s("k"), Start: 10_000 + at, Dur: 1, PID: 1, TID: -1, Corr: corr})
		return len(evs) - 1
	}
	sdpa := func(at int64) {
		add(KindCPUOp, "aten::scaled_dot_product_attention", at, 20)
		add(KindCPUOp, "aten::_scaled_dot_product_flash_attention", at+1, 18)
		add(KindCPUOp, "aten::_flash_attention_forward", at+2, 16)
	}
	type want struct {
		i     int
		after bool
		what  string
	}
	var ws []want
	// Module 1 [0, 100).
	add(KindRange, "nn.Module: Qwen2Attention", 0, 100)
	add(KindCPUOp, "aten::linear", 5, 10)
	ws = append(ws, want{launch(8), false, "module 1 q_proj"})
	sdpa(30)
	ws = append(ws, want{launch(40), false, "module 1 flash kernel (inside SDPA)"})
	add(KindCPUOp, "aten::linear", 70, 10)
	ws = append(ws, want{launch(75), true, "module 1 o_proj"})
	// Module 2 [100, 200), projections in Linear ranges.
	add(KindRange, "nn.Module: Qwen2Attention", 100, 100)
	add(KindRange, "nn.Module: Linear", 105, 10)
	ws = append(ws, want{launch(108), false, "module 2 q_proj in a Linear range"})
	sdpa(130)
	add(KindRange, "nn.Module: Linear", 170, 10)
	ws = append(ws, want{launch(175), true, "module 2 o_proj in a Linear range"})
	// Between modules: the last SDPA's range is closed.
	ws = append(ws, want{launch(202), false, "after module 2, outside it"})
	tr.Events = evs
	tr.Link()
	for _, w := range ws {
		c := tr.Contexts[tr.Events[w.i].Ctx]
		if c.AfterAttention != w.after {
			t.Errorf("%s: AfterAttention %v, want %v", w.what, c.AfterAttention, w.after)
		}
	}
	// The same events through a Linker without names.
	l := NewLinker()
	for i := range evs {
		l.Add(&evs[i])
	}
	if id := l.Resolve(1, 7, 75); l.Contexts[id].AfterAttention {
		t.Errorf("a Linker without SetStrings says AfterAttention")
	}
}

func TestIsAttentionOp(t *testing.T) {
	for name, want := range map[string]bool{
		"aten::scaled_dot_product_attention":                true,
		"aten::_scaled_dot_product_flash_attention":         true,
		"aten::_scaled_dot_product_efficient_attention":     true,
		"aten::_scaled_dot_product_flash_attention_for_cpu": true,
		"aten::_flash_attention_forward":                    true,
		"aten::_efficient_attention_forward":                true,
		"aten::softmax":                                     true,
		"aten::_softmax":                                    true,
		"aten::log_softmax":                                 false,
		"aten::_log_softmax":                                false,
		"aten::_softmax_backward_data":                      false,
		"aten::linear":                                      false,
		"aten::bmm":                                         false,
		"nn.Module: Qwen2Attention":                         false,
	} {
		if got := IsAttentionOp(name); got != want {
			t.Errorf("IsAttentionOp(%q) = %v, want %v", name, got, want)
		}
	}
}

// Link finds a launch by its correlation id in an array when the ids are
// compact and in a map when they are spread out: both find the same
// launches, here in a random trace linked with its ids as they are
// (compact, from a large base), and spread 2^20 apart, duplicates and ids
// without a launch included.
func TestLinkDenseSparseIDs(t *testing.T) {
	build := func(corr func(uint64) uint64) *Trace {
		r := rand.New(rand.NewPCG(5, 6))
		tr := NewTrace("test", "")
		op := tr.Strings.Intern("op")
		for i := range 3000 {
			tid := int32(1 + r.IntN(3))
			start := int64(i * 10)
			tr.Events = append(tr.Events, Event{Kind: KindCPUOp, Name: op, Start: start, Dur: int64(r.IntN(40)), PID: 1, TID: tid, Device: -1})
			c := corr(uint64(1 + r.IntN(2500)))
			tr.Events = append(tr.Events, Event{Kind: KindRuntime, Name: op, Start: start + 1, Dur: 1, PID: 1, TID: tid, Corr: c, Device: -1})
			tr.Events = append(tr.Events, Event{Kind: KindKernel, Name: op, Start: start + 5, Dur: 1, PID: 1, TID: -1, Corr: corr(uint64(1 + r.IntN(2600))), Device: 0})
		}
		tr.Link()
		return tr
	}
	dense := build(func(c uint64) uint64 { return 1<<40 + c })
	sparse := build(func(c uint64) uint64 { return c << 20 })
	linked := 0
	for i := range dense.Events {
		a, b := &dense.Events[i], &sparse.Events[i]
		if !reflect.DeepEqual(dense.Contexts[a.Ctx], sparse.Contexts[b.Ctx]) || a.Call != b.Call {
			t.Fatalf("event %d: context %+v (compact ids), %+v (spread)", i, dense.Contexts[a.Ctx], sparse.Contexts[b.Ctx])
		}
		if a.Kind == KindKernel && a.Ctx != 0 {
			linked++
		}
	}
	if linked == 0 {
		t.Fatal("no kernel linked")
	}
}
