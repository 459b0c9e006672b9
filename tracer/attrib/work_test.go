package attrib

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

func nearRel(got, want float64) bool {
	return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))
}

// TestAggregateWork: handTrace's kernels given packed work (tracer.PackWork),
// summed by hand per kernel, category, stage and step; the memcpy and the
// last gemm carry none and count as unmodelled time under their innermost
// operator (none: "(no operator)").
func TestAggregateWork(t *testing.T) {
	tr := handTrace()
	tr.Calls = []tracer.OpCall{{}, {}} // a source with recorded shapes
	w := func(f, b float64) int64 {
		return tracer.PackWork(tracer.Work{Flops: f, Bytes: b, DType: tracer.DTypeBF16, Modelled: true})
	}
	// gemm ×3 on device 0 (step 1, forward): 1000, 2000, 3000 FLOPs; 100
	// bytes each; softmax ×2 (step 1, attn): 10 and 20 FLOPs, 400 bytes
	// each; the device-1 gemm (step 2, backward): unmodelled.
	vals := map[int]int64{1: w(1000, 100), 2: w(10, 400), 3: w(2000, 100), 4: w(3000, 100), 5: w(20, 400), 8: tracer.PackWork(tracer.Work{})}
	for i, v := range vals {
		tr.Events[i].Value = v
	}
	a := NewAggregator(nil)
	a.AddTrace(tr)
	s := a.Snapshot()
	if !s.HasWork() {
		t.Fatal("no work")
	}
	if !nearRel(s.Work.Flops, 6030) || !nearRel(s.Work.Bytes, 1100) || s.Work.Ns != 10+10+20+30+5 || s.Work.UnmodelledNs != 10 {
		t.Errorf("total work %+v: want 6030 FLOPs, 1100 bytes, 75 ns modelled, 10 ns unmodelled", s.Work)
	}
	byCat := map[string]Work{}
	for _, c := range s.Categories {
		byCat[c.Key] = c.Work
	}
	if g := byCat["gemm"]; !nearRel(g.Flops, 6000) || g.Ns != 60 || g.UnmodelledNs != 10 {
		t.Errorf("gemm category %+v", g)
	}
	if g := byCat["attention"]; !nearRel(g.Flops, 30) || !nearRel(g.Bytes, 800) || g.Ns != 15 {
		t.Errorf("attention category %+v", g)
	}
	byStage := map[string]Work{}
	for _, st := range s.Stages {
		byStage[st.Key] = st.Work
	}
	if g := byStage["attn"]; !nearRel(g.Flops, 30) {
		t.Errorf("stage attn %+v", g)
	}
	if g := byStage["forward"]; !nearRel(g.Flops, 6000) {
		t.Errorf("stage forward %+v", g)
	}
	for _, st := range s.Steps {
		want := map[int64]float64{1: 6030, 2: 0}[st.Step]
		if !nearRel(st.Work.Flops, want) {
			t.Errorf("step %d: %g FLOPs, want %g", st.Step, st.Work.Flops, want)
		}
	}
	if len(s.Unmodelled) != 1 || s.Unmodelled[0].Op != NoOperator || s.Unmodelled[0].Ns != 10 || s.Unmodelled[0].Count != 1 {
		t.Errorf("unmodelled %+v", s.Unmodelled)
	}
	if s.Work.DType() != tracer.DTypeBF16 {
		t.Errorf("dtype %v", s.Work.DType())
	}
}

// TestRatesAndMFU: the roofline against the H100 SXM row, by hand: ridge
// 989.4e12 / 3.35e12 = 295 FLOP/B at bf16.
func TestRatesAndMFU(t *testing.T) {
	p := DefaultPeaks().Lookup("NVIDIA H100 80GB HBM3")
	if p == nil || p.Device != "NVIDIA H100 SXM" {
		t.Fatalf("H100 HBM3: %+v", p)
	}
	bf16 := func(f, b float64, ns int64) Work {
		w := Work{Flops: f, Bytes: b, Ns: ns}
		w.FlopsByDType[tracer.DTypeBF16] = f
		return w
	}
	// 1 TFLOP over 1 GB in 2 ms: intensity 1000 > 295, compute-bound,
	// 500 TFLOP/s of 989.4.
	r := RatesOf(bf16(1e12, 1e9, 2e6), p)
	if r.Bound != BoundCompute || !nearRel(r.Intensity, 1000) || !nearRel(r.FlopsPerS, 5e14) || !nearRel(r.OfPeak, 5e14/989.4e12) {
		t.Errorf("compute-bound row: %+v", r)
	}
	// 1 GFLOP over 10 GB in 5 ms: intensity 0.1, memory-bound, 2 TB/s
	// of 3.35.
	r = RatesOf(bf16(1e9, 1e10, 5e6), p)
	if r.Bound != BoundMemory || !nearRel(r.BytesPerS, 2e12) || !nearRel(r.OfPeak, 2e12/3.35e12) {
		t.Errorf("memory-bound row: %+v", r)
	}
	if got, want := MFU(bf16(1e12, 1, 1), p, 10e6), 1e12/989.4e12/0.01; !nearRel(got, want) {
		t.Errorf("MFU %g, want %g", got, want)
	}
	if r := RatesOf(bf16(1, 1, 1), nil); r.Bound != "" || r.OfPeak != 0 {
		t.Errorf("no peak: %+v", r)
	}
	for _, name := range []string{"NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA B200", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB",
		"Tesla V100-SXM2-16GB", "Tesla V100-PCIE-32GB", "NVIDIA L40S", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4070 Ti", "NVIDIA GeForce RTX 3090",
		"AMD Instinct MI300X VF", "AMD Instinct MI250X", "AMD Instinct MI210", "AMD Radeon 8060S Graphics"} {
		if p := DefaultPeaks().Lookup(name); p == nil || p.BytesPerS <= 0 || p.FlopsFor(tracer.DTypeFP32) <= 0 || p.Source == "" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if p := DefaultPeaks().Lookup("NVIDIA H100 PCIe"); p.Device != "NVIDIA H100 PCIe" {
		t.Errorf("H100 PCIe matched %s", p.Device)
	}
	if p := DefaultPeaks().Lookup("Tesla T4"); p != nil {
		t.Errorf("T4 matched %s", p.Device)
	}
}

func TestLoadPeaksUser(t *testing.T) {
	p := t.TempDir() + "/d.toml"
	writeTestFile(t, p, "[[device]]\nname = \"My T4\"\nmatch = 'T4'\ntflops = { fp32 = 8.1, fp16 = 65 }\nbandwidth_gbs = 320\nsource = \"T4 datasheet\"\n")
	tab, err := LoadPeaks(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := tab.Lookup("Tesla T4"); d == nil || d.FlopsFor(tracer.DTypeFP16) != 65e12 || d.BytesPerS != 320e9 {
		t.Errorf("user row: %+v", d)
	}
	if d := tab.Lookup("NVIDIA H200"); d == nil {
		t.Error("built-in rows lost")
	}
	writeTestFile(t, p, "[[device]]\nname = \"x\"\nmatch = 'x'\ntflops = { fp33 = 1 }\nbandwidth_gbs = 1\n")
	if _, err := LoadPeaks(p); err == nil || !strings.Contains(err.Error(), "fp33") {
		t.Errorf("bad dtype: %v", err)
	}
}

func writeTestFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFindingsRoofline: on a snapshot counted by hand — attention's math
// fallback (softmax memory-bound, 60 of its 100 ns; the GEMMs
// compute-bound) against the H100 SXM peaks — attention-memory-bound
// fires with a 60% share and step-mfu says the step's MFU.
func TestFindingsRoofline(t *testing.T) {
	p := DefaultPeaks().Lookup("NVIDIA H100 80GB HBM3")
	bf16 := func(f, b float64, ns int64) Work {
		w := Work{Flops: f, Bytes: b, Ns: ns}
		w.FlopsByDType[tracer.DTypeBF16] = f
		return w
	}
	s := &Snapshot{Peak: p,
		Kernels: []KernelRow{
			{Name: "softmax_warp_forward", DisplayName: "softmax_warp_forward", Category: "attention", TotalNs: 60, Count: 1, Ops: []string{"aten::scaled_dot_product_attention"}, Work: bf16(1e6, 1e9, 60)},
			{Name: "sm90_gemm", DisplayName: "sm90_gemm", Category: "attention", TotalNs: 40, Count: 1, Ops: []string{"aten::scaled_dot_product_attention", "aten::bmm"}, Work: bf16(1e10, 1e6, 40)},
		},
		Steps:  []StepRow{{Step: 1, DurNs: 1000, Work: bf16(1e10+1e6, 1e9+1e6, 100)}},
		Totals: Totals{GPUTotalNs: 100, KernelTotalNs: 100},
	}
	s.Work = bf16(1e10+1e6, 1e9+1e6, 100)
	fs := EvaluateFindings(nil, FindingInput{Snapshot: s, Flags: map[string]string{"sdpa": "math"}})
	var mem, mfu *Finding
	for i := range fs {
		switch fs[i].ID {
		case "attention-memory-bound":
			mem = &fs[i]
		case "step-mfu":
			mfu = &fs[i]
		}
	}
	if mem == nil || !nearRel(mem.Share, 0.6) || mem.Flag == nil || mem.Flag.Value != "flash" {
		t.Fatalf("attention-memory-bound: %+v", mem)
	}
	// The softmax moves 1e9 bytes in 60 ns: 1.67e16 B/s, of 3.35e12.
	if got, want := mem.Numbers["of_memory_roof"], 1e9/60e-9/3.35e12; !nearRel(got, want) {
		t.Errorf("of_memory_roof %g, want %g", got, want)
	}
	if !strings.Contains(strings.Join(mem.Evidence, " "), "[batch, heads, T, T]") {
		t.Errorf("evidence %q names no math fallback", mem.Evidence)
	}
	// MFU: (1e10+1e6) FLOPs at 989.4 TFLOP/s over the step's 1000 ns.
	if mfu == nil || !nearRel(mfu.Numbers["mfu"], (1e10+1e6)/989.4e12/1e-6) || !nearRel(mfu.Share, 0.6) {
		t.Fatalf("step-mfu: %+v", mfu)
	}
	// With 900 ns more kernel time no operator modelled, the finding
	// ranks by the memory-bound part of all 1,000 ns (60 ns: 6%), while
	// its number keeps the modelled part's 60%.
	thin := *s
	thin.Totals.KernelTotalNs, thin.Totals.GPUTotalNs = 1000, 1000
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: &thin}) {
		if f.ID == "step-mfu" && (!nearRel(f.Share, 0.06) || !nearRel(f.Numbers["memory_bound_share"], 0.6)) {
			t.Errorf("step-mfu over a thinly modelled step: share %g, memory_bound_share %g; want 0.06 and 0.6", f.Share, f.Numbers["memory_bound_share"])
		}
	}
	// The same bytes from a fused kernel: nothing better to try.
	fused := *s
	fused.Kernels = []KernelRow{s.Kernels[0], s.Kernels[1]}
	for i := range fused.Kernels {
		fused.Kernels[i].Name, fused.Kernels[i].DisplayName, fused.Kernels[i].Ops = "pytorch_flash::flash_fwd_kernel", "flash_fwd_kernel", []string{"aten::_flash_attention_forward"}
	}
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: &fused}) {
		if f.ID == "attention-memory-bound" {
			t.Errorf("attention-memory-bound fired on fused kernels: %v", f.Evidence)
		}
	}
	// Mostly fused, with a stray math call (1 ns of the 61 ns
	// memory-bound, under the rule's 25%): flash is already what runs.
	stray := fused
	stray.Kernels = append(slices.Clone(fused.Kernels), KernelRow{Name: "softmax_warp_forward", DisplayName: "softmax_warp_forward", Category: "attention", TotalNs: 1, Count: 1,
		Ops: []string{"aten::scaled_dot_product_attention"}, Work: bf16(1e3, 1e7, 1)})
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: &stray, Flags: map[string]string{"sdpa": "default"}}) {
		if f.ID == "attention-memory-bound" {
			t.Errorf("attention-memory-bound fired on fused kernels beside a stray math call: %v", f.Evidence)
		}
	}
	s.Peak = nil
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: s}) {
		if f.ID == "attention-memory-bound" || f.ID == "step-mfu" {
			t.Errorf("%s fired without a device peak", f.ID)
		}
	}
}
