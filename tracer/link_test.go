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
