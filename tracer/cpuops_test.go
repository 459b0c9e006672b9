package tracer

import "testing"

// TestCPUOpKernels checks self times on a hand-built nesting:
// sdpa [0,100) holds bmm [10,40) and softmax [40,70), which holds exp [50,60);
// another thread has a leaf [5,25). Self times by hand: sdpa 100-30-30 = 40,
// bmm 30, softmax 30-10 = 20, exp 10, leaf 20.
func TestCPUOpKernels(t *testing.T) {
	tr := NewTrace("test", "")
	id := func(s string) StrID { return tr.Strings.Intern(s) }
	tr.Events = []Event{
		{Start: 40, Dur: 30, Name: id("aten::_softmax"), TID: 1, Kind: KindCPUOp},
		{Start: 0, Dur: 100, Name: id("aten::scaled_dot_product_attention"), TID: 1, Kind: KindCPUOp},
		{Start: 10, Dur: 30, Name: id("aten::bmm"), TID: 1, Kind: KindCPUOp},
		{Start: 50, Dur: 10, Name: id("aten::exp"), TID: 1, Kind: KindCPUOp},
		{Start: 5, Dur: 20, Name: id("aten::leaf"), TID: 2, Kind: KindCPUOp},
		{Start: 0, Dur: 200, Name: id("collect"), TID: 1, Kind: KindRange},
	}
	if n := tr.CPUOpKernels(); n != 5 {
		t.Fatalf("appended %d kernels, want 5", n)
	}
	want := map[string]int64{"aten::scaled_dot_product_attention": 40, "aten::bmm": 30, "aten::_softmax": 20, "aten::exp": 10, "aten::leaf": 20}
	tr.Link()
	for _, e := range tr.Events {
		if e.Kind != KindKernel {
			continue
		}
		name := tr.Name(&e)
		if e.Dur != want[name] {
			t.Errorf("%s: self %d ns, want %d", name, e.Dur, want[name])
		}
		if e.Device != -1 || e.Stream != e.TID {
			t.Errorf("%s: device %d stream %d, want -1 and the thread %d", name, e.Device, e.Stream, e.TID)
		}
		if name == "aten::_softmax" {
			ops := tr.Contexts[e.Ctx].Ops
			if len(ops) < 2 || tr.Strings.Get(ops[0]) != "aten::scaled_dot_product_attention" {
				t.Errorf("softmax's launch context %v: want it under aten::scaled_dot_product_attention", ops)
			}
		}
	}
	// A trace with GPU work is left alone.
	tr.Events = append(tr.Events, Event{Kind: KindMemcpy, Dur: 1})
	if n := tr.CPUOpKernels(); n != 0 {
		t.Errorf("trace with GPU work: appended %d", n)
	}
}
