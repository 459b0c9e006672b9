package opmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// args builds a call's shape args as Kineto writes them.
func args(dims, types, concrete string) string {
	sep := string(tracer.ArgSep)
	return dims + sep + types + sep + sep + concrete + sep
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// TestHandCounts: each formula against a count done by hand from the
// shapes (the multiply-add = 2 convention; see model.toml's sources).
func TestHandCounts(t *testing.T) {
	m := Default()
	for _, c := range []struct {
		name, args   string
		flops, bytes float64
		dt           tracer.DType
	}{
		// [8944,1024]×[1024,1024] bf16 (tracelens_h100 aten::mm).
		{"aten::mm", args(`[[8944,1024],[1024,1024]]`, `["c10::BFloat16","c10::BFloat16"]`, `["",""]`),
			2 * 8944 * 1024 * 1024, 2 * (8944*1024 + 1024*1024 + 8944*1024), tracer.DTypeBF16},
		// addmm(bias [1024], [8944,1024], [1024,1024]): the bias add uncounted.
		{"aten::addmm", args(`[[1024],[8944,1024],[1024,1024],[],[]]`, `["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"]`, `["","","","1","1"]`),
			2 * 8944 * 1024 * 1024, 2 * (1024 + 8944*1024 + 1024*1024 + 8944*1024), tracer.DTypeBF16},
		{"aten::bmm", args(`[[6,93,16],[6,16,93]]`, `["float","float"]`, `["",""]`),
			2 * 6 * 93 * 93 * 16, 4 * (6*93*16 + 6*16*93 + 6*93*93), tracer.DTypeFP32},
		// linear(x [4,7,32], w [64,32], b [64]): 28 rows × 32 × 64.
		{"aten::linear", args(`[[4,7,32],[64,32],[64]]`, `["float","float","float"]`, `["","",""]`),
			2 * 28 * 32 * 64, 4 * (4*7*32 + 64*32 + 28*64 + 64), tracer.DTypeFP32},
		// matmul with broadcast batch: [2,1,5,8] × [3,8,4] → [2,3,5,4].
		{"aten::matmul", args(`[[2,1,5,8],[3,8,4]]`, `["float","float"]`, `["",""]`),
			2 * 6 * 5 * 8 * 4, 4 * (2*5*8 + 3*8*4 + 6*5*4), tracer.DTypeFP32},
		// conv: input [16,3,16,16], weight [8,3,3,3], stride 2, padding 1 →
		// output [16,8,8,8]; 2·N·Cout·Cin·k²·out² = 442,368 (also
		// FlopCounterMode's count for this call).
		{"aten::convolution", args(`[[16,3,16,16],[8,3,3,3],[8],[],[],[],[],[],[]]`, `["float","float","float","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"]`, `["","","","[2, 2]","[1, 1]","[1, 1]","False","[0, 0]","1"]`),
			2 * 16 * 8 * 3 * 9 * 64, 4 * (16*3*16*16 + 8*3*3*3 + 8 + 16*8*8*8), tracer.DTypeFP32},
		// grouped, dilated conv: input [2,8,10,10], weight [8,2,3,3],
		// groups 4, dilation 2, padding 0 → out 6×6.
		{"aten::mkldnn_convolution", args(`[[2,8,10,10],[8,2,3,3],[],[],[],[],[]]`, `["float","float","","ScalarList","ScalarList","ScalarList","Scalar"]`, `["","","","[0, 0]","[1, 1]","[2, 2]","4"]`),
			2 * 2 * 8 * 2 * 9 * 36, 4 * (2*8*10*10 + 8*2*3*3 + 2*8*6*6), tracer.DTypeFP32},
		// conv backward, output_mask [False, True, True]: grad weight only
		// (the forward's count once) and grad bias.
		{"aten::convolution_backward", args(`[[16,8,8,8],[16,3,16,16],[8,3,3,3],[],[],[],[],[],[],[],[]]`, `["float","float","float","ScalarList","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar","ScalarList"]`, `["","","","[8]","[2, 2]","[1, 1]","[1, 1]","False","[0, 0]","1","[False, True, True]"]`),
			2 * 16 * 8 * 3 * 9 * 64, 4 * (16*8*8*8 + 16*3*16*16 + 8*3*3*3 + 8*3*3*3 + 8), tracer.DTypeFP32},
		// flash attention forward on [B,T,H,d] = [16,559,16,64], causal
		// (tracelens_h100): (2·T·S·d + 2·T·S·dv)·B·H / 2.
		{"aten::_flash_attention_forward", args(`[[16,559,16,64],[16,559,16,64],[16,559,16,64],[],[],[],[],[],[],[],[],[],[],[],[]]`, `["c10::BFloat16","c10::BFloat16","c10::BFloat16","","","Scalar","Scalar","Scalar","Scalar","Scalar","Scalar","","","",""]`, `["","","","","","559","559","0.","True","False","0.125","","","",""]`),
			(2*559*559*64 + 2*559*559*64) * 16 * 16 / 2, 2 * 4 * 16 * 559 * 16 * 64, tracer.DTypeBF16},
		// SDPA on [B,H,T,d] with GQA keys (2 key heads), not causal.
		{"aten::_scaled_dot_product_flash_attention", args(`[[2,8,100,64],[2,2,300,64],[2,2,300,32],[],[],[],[]]`, `["c10::Half","c10::Half","c10::Half","Scalar","Scalar","Scalar","Scalar"]`, `["","","","0.","False","False",""]`),
			2*2*8*100*300*64 + 2*2*8*100*300*32, 2 * (2*8*100*64 + 2*2*300*64 + 2*2*300*32 + 2*8*100*32), tracer.DTypeFP16},
		// backward: 2× the forward.
		{"aten::_scaled_dot_product_flash_attention_backward", args(`[[2,8,100,32],[2,8,100,64],[2,8,300,64],[2,8,300,32],[2,8,100,32],[2,8,100]]`, `["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","float"]`, ``),
			2 * (2*2*8*100*300*64 + 2*2*8*100*300*32), 2*(2*8*100*32+2*8*100*64+2*8*300*64+2*8*300*32+2*8*100*32) + 4*2*8*100 + 2*(2*8*100*64+2*8*300*64+2*8*300*32), tracer.DTypeBF16},
		// elementwise with broadcast: [16,559,1024] * [1024] (bf16).
		{"aten::mul", args(`[[16,559,1024],[1024]]`, `["c10::BFloat16","c10::BFloat16"]`, `["",""]`),
			16 * 559 * 1024, 2 * (16*559*1024 + 1024 + 16*559*1024), tracer.DTypeBF16},
		// x.abs() as torch 2.6 records it inside the outer aten::abs
		// [[64, 7]]: the empty out= buffer is resized, not broadcast.
		{"aten::abs", args(`[[64, 7], [0]]`, `["float", "float"]`, `["", ""]`), 64 * 7, 4 * (64*7 + 64*7), tracer.DTypeFP32},
		// comparison writes bool.
		{"aten::isneginf", args(`[[4,10]]`, `["float"]`, `[""]`), 40, 4*40 + 40, tracer.DTypeFP32},
		// mean over the last dim, keepdim.
		{"aten::mean", args(`[[16,559,1024],[],[],[]]`, `["float","ScalarList","Scalar",""]`, `["","[-1]","True",""]`),
			16 * 559 * 1024, 4 * (16*559*1024 + 16*559), tracer.DTypeFP32},
		// softmax: 3 FLOPs per element by convention (TraceLens's).
		{"aten::_softmax", args(`[[6,93,93],[],[]]`, `["float","Scalar","Scalar"]`, `["","-1","False"]`),
			3 * 6 * 93 * 93, 4 * 2 * 6 * 93 * 93, tracer.DTypeFP32},
		// embedding of [16,559] indices in a [151936,1024] bf16 table.
		{"aten::embedding", args(`[[151936,1024],[16,559],[],[],[]]`, `["c10::BFloat16","long int","Scalar","Scalar","Scalar"]`, `["","","-1","False","False"]`),
			0, 8*16*559 + 2*2*16*559*1024, tracer.DTypeBF16},
		{"aten::copy_", args(`[[1,1,559],[1,1,559],[]]`, `["float","long int","Scalar"]`, `["","","False"]`), 0, 4*559 + 8*559, tracer.DTypeFP32},
		{"aten::cat", args(`[[[1,559,32],[1,559,32]],[]]`, `["TensorList","Scalar"]`, `["","-1"]`), 0, 2 * 4 * 2 * 559 * 32, tracer.DTypeUnknown},
	} {
		w, ok, err := m.Compute(c.name, c.args)
		if !ok || err != nil {
			t.Errorf("%s: modelled %v, error %v", c.name, ok, err)
			continue
		}
		if !near(w.Flops, c.flops) || !near(w.Bytes, c.bytes) || w.DType != c.dt || !w.Modelled {
			t.Errorf("%s: %.0f FLOPs, %.0f bytes, %v; hand count %.0f FLOPs, %.0f bytes, %v", c.name, w.Flops, w.Bytes, w.DType, c.flops, c.bytes, c.dt)
		}
	}
}

func TestComputeErrors(t *testing.T) {
	m := Default()
	if _, ok, _ := m.Compute("aten::frobnicate", ""); ok {
		t.Error("an operator without a model was modelled")
	}
	for _, c := range []struct{ name, args, want string }{
		{"aten::mm", args(`[[4,5],[6,7]]`, `["float","float"]`, ``), "inner dimensions differ"},
		{"aten::mm", args(`[[4,5],[]]`, `["float","Scalar"]`, ``), "argument 1 is not a recorded tensor"},
		{"aten::mm", args(`[[4,5],`, ``, ``), "Input Dims"},
		{"aten::add", args(`[[4,5],[3]]`, `["float","float"]`, ``), "do not broadcast"},
		// A TensorList recorded as [] (the shared A100 trace writes
		// "Input Dims": [[], []] for aten::cat).
		{"aten::cat", args(`[[],[]]`, `["TensorList","Scalar"]`, ``), "recorded without its tensors' shapes"},
	} {
		_, ok, err := m.Compute(c.name, c.args)
		if !ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want one saying %q", c.name, c.args, err, c.want)
		}
	}
}

// TestAssignCountsOnce: kernels take the work of the innermost modelled
// call; a call whose inner calls count its FLOPs is covered (math SDPA
// around bmm, linear around addmm), one whose inner calls do not keeps
// them (addmm around its bias copy_); a call's work is split over its
// kernels by duration; kernels under no model are unmodelled.
func TestAssignCountsOnce(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	s := tr.Strings
	call := func(name, a string, parent tracer.CallID) tracer.CallID {
		c := tr.AddCall(s.Intern(name), s.Intern(a))
		tr.Calls[c].Parent = parent
		return c
	}
	mm := args(`[[8,16],[16,4]]`, `["float","float"]`, ``)
	bmm := args(`[[2,8,16],[2,16,8]]`, `["float","float"]`, ``)
	sdpa := call("aten::scaled_dot_product_attention", args(`[[2,1,8,16],[2,1,8,16],[2,1,8,16]]`, `["float","float","float"]`, ``), 0)
	b1 := call("aten::bmm", bmm, sdpa)
	lin := call("aten::linear", args(`[[8,16],[4,16],[4]]`, `["float","float","float"]`, ``), 0)
	add := call("aten::addmm", args(`[[4],[8,16],[16,4]]`, `["float","float","float"]`, ``), lin)
	cp := call("aten::copy_", args(`[[8,4],[8,4]]`, `["float","float"]`, ``), add)
	mmc := call("aten::mm", mm, 0)
	unk := call("aten::frobnicate", ``, 0)
	kern := func(c tracer.CallID, dur int64) {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindKernel, Dur: dur, Call: c})
	}
	kern(b1, 10)  // 0: bmm (inside SDPA)
	kern(sdpa, 5) // 1: the SDPA call's own (a CPU trace's self time): covered
	kern(add, 30) // 2: addmm's GEMM
	kern(cp, 10)  // 3: addmm's bias copy
	kern(mmc, 30) // 4, 5: mm's two kernels, 3:1
	kern(mmc, 10) //
	kern(unk, 7)  // 6: unmodelled
	kern(0, 7)    // 7: no call
	st := Default().Assign(tr)
	work := func(i int) tracer.Work {
		w, ok := tracer.UnpackWork(tr.Events[i].Value)
		if !ok && i != 7 {
			t.Fatalf("kernel %d has no work", i)
		}
		return w
	}
	// Hand counts: bmm 2·2·8·8·16; addmm 2·8·4·16 = mm's; SDPA not counted.
	if w := work(0); !near(w.Flops, 2*2*8*8*16) {
		t.Errorf("bmm kernel: %.0f FLOPs", w.Flops)
	}
	if w := work(1); !w.Modelled || w.Flops != 0 {
		t.Errorf("SDPA self time: %+v, want covered (modelled, 0 FLOPs)", w)
	}
	if w := work(2); !near(w.Flops, 2*8*4*16) {
		t.Errorf("addmm kernel: %.0f FLOPs, want its own GEMM", w.Flops)
	}
	if w := work(3); w.Flops != 0 || !near(w.Bytes, 4*2*32) {
		t.Errorf("copy_ kernel: %+v", w)
	}
	if w4, w5 := work(4), work(5); !near(w4.Flops, 0.75*2*8*4*16) || !near(w5.Flops, 0.25*2*8*4*16) {
		t.Errorf("mm kernels: %.1f and %.1f FLOPs, want 3:1 of %d", w4.Flops, w5.Flops, 2*8*4*16)
	}
	if w := work(6); w.Modelled {
		t.Errorf("kernel of an unmodelled call: %+v", w)
	}
	if tr.Events[7].Value != 0 {
		t.Errorf("kernel without a call got work %x", tr.Events[7].Value)
	}
	if st.Kernels != 7 || st.Modelled != 5 || st.Covered != 1 || st.Unmodelled != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestPackWork(t *testing.T) {
	for _, w := range []tracer.Work{
		{Flops: 5.767e12, Bytes: 4.98e10, DType: tracer.DTypeBF16, Modelled: true},
		{Flops: 0, Bytes: 1234, DType: tracer.DTypeFP32, Modelled: true},
		{Flops: 2 * 8944 * 1024 * 1024, Bytes: 1, DType: tracer.DTypeINT8, Modelled: true},
		{Modelled: true},
	} {
		v := tracer.PackWork(w)
		got, ok := tracer.UnpackWork(v)
		if !ok || v == 0 || got.DType != w.DType || !got.Modelled ||
			math.Abs(got.Flops-w.Flops) > 2.4e-7*w.Flops || math.Abs(got.Bytes-w.Bytes) > 2.4e-7*w.Bytes {
			t.Errorf("%+v → %x → %+v", w, v, got)
		}
	}
	if got, ok := tracer.UnpackWork(tracer.PackWork(tracer.Work{})); !ok || got.Modelled {
		t.Errorf("unmodelled round trip: %+v %v", got, ok)
	}
	if _, ok := tracer.UnpackWork(0); ok {
		t.Error("0 unpacked as work")
	}
}

func TestLoadReplace(t *testing.T) {
	p := t.TempDir() + "/m.toml"
	if err := writeFile(p, "replace = true\n[[op]]\nnames = [\"aten::mm\"]\nformula = \"mm\"\nsource = \"t\"\n"); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Lookup("aten::mm") == nil || m.Lookup("aten::addmm") != nil {
		t.Errorf("replace kept %v", m.Names())
	}
	if err := writeFile(p, "[[op]]\nnames = [\"x\"]\nformula = \"nope\"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "unknown formula \"nope\"") || !strings.Contains(err.Error(), p) {
		t.Errorf("bad formula: %v", err)
	}
}
