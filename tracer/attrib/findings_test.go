package attrib

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// oracle runs testdata/findings_oracle.py (python3, standard library) on
// a shared trace: per ProfilerStep#N step the idle ns (step wall time no
// GPU op covered), and the GPU time of ops matching re.
type oracleOut struct {
	Steps []struct {
		Step    int64 `json:"step"`
		StartNs int64 `json:"start_ns"`
		DurNs   int64 `json:"dur_ns"`
		IdleNs  int64 `json:"idle_ns"`
	} `json:"steps"`
	MatchNs int64 `json:"match_ns"`
	GPUNs   int64 `json:"gpu_ns"`
}

func runOracle(t *testing.T, path, re string) oracleOut {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the independent figures cannot be computed")
	}
	out, err := exec.Command(py, "testdata/findings_oracle.py", path, re).Output()
	if err != nil {
		t.Fatalf("findings_oracle.py %s: %v", path, err)
	}
	var o oracleOut
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// findingsOf opens a shared trace and evaluates the default findings over
// its snapshot and timeline.
func findingsOf(t *testing.T, path string) (*Snapshot, *Timeline, []Finding) {
	t.Helper()
	tr, err := tracefile.Open(path, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAggregator(nil)
	a.AddTrace(tr)
	s := a.Snapshot()
	tl := BuildTimeline(tr.Events, tr.Strings, tr.Contexts, nil, 0)
	return s, tl, EvaluateFindings(nil, FindingInput{Snapshot: s, Timeline: tl, Outputs: Outputs(tr), Counters: SummarizeCounters(tr)})
}

func findingByID(fs []Finding, id string) *Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// TestFindingsSharedSampledRank0: HTA's rank-0 trace of a 128-rank job
// (two ProfilerSteps). The idle finding's per-step idle time and share
// and the dominant category's share (NCCL kernels: the collective rule
// is decided by name, so the oracle counts names matching "nccl") equal
// findings_oracle.py's figures: 682,584,000 of 1,230,240,000 ns idle
// (55.5%), NCCL 396,199,000 of 607,844,000 ns of GPU op time (65.2%).
func TestFindingsSharedSampledRank0(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "kineto/hta_sampled_rank0.json.gz")
	o := runOracle(t, path, "nccl")
	s, tl, fs := findingsOf(t, path)
	st := IdleOf(tl, []int32{-1}, false)
	if st == nil || len(st.Steps) != len(o.Steps) {
		t.Fatalf("idle steps %+v, oracle %d steps", st, len(o.Steps))
	}
	var idle, dur int64
	for i, os := range o.Steps {
		g := st.Steps[i]
		if g.Step != os.Step || g.StartNs != os.StartNs || g.DurNs != os.DurNs || g.IdleNs != os.IdleNs {
			t.Errorf("step %d: rlktop %+v, oracle %+v", i, g, os)
		}
		idle += os.IdleNs
		dur += os.DurNs
	}
	f := findingByID(fs, "gpu-idle")
	if f == nil {
		t.Fatalf("no gpu-idle finding in %+v", fs)
	}
	if want := float64(idle) / float64(dur); math.Abs(f.Share-want) > 1e-12 || f.Numbers["idle_ns"] != float64(idle) || f.Numbers["step_ns"] != float64(dur) {
		t.Errorf("idle share %v (%v of %v ns), oracle %v (%d of %d)", f.Share, f.Numbers["idle_ns"], f.Numbers["step_ns"], want, idle, dur)
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "55.5%") {
		t.Errorf("evidence %q does not quote 55.5%%", f.Evidence)
	}
	c := findingByID(fs, "dominant-category")
	if c == nil {
		t.Fatalf("no dominant-category finding in %+v", fs)
	}
	if s.Totals.GPUTotalNs != o.GPUNs {
		t.Errorf("GPU op time %d, oracle %d", s.Totals.GPUTotalNs, o.GPUNs)
	}
	if want := float64(o.MatchNs) / float64(o.GPUNs); math.Abs(c.Share-want) > 1e-12 || c.Numbers["key:collective"] != 1 {
		t.Errorf("dominant category share %v numbers %v, oracle collective %v", c.Share, c.Numbers, want)
	}
	if len(c.Top) == 0 || !strings.Contains(strings.ToLower(c.Top[0]), "nccl") {
		t.Errorf("top kernels %q: want an NCCL kernel first", c.Top)
	}
	if findingByID(fs, "attention-math-fallback") != nil {
		t.Errorf("math attention finding on a trace without attention: %+v", fs)
	}
}

// TestFindingsSharedNsResolution: ResNet on V100, five ProfilerSteps,
// the GPU busy almost throughout: per-step idle equal to the oracle's
// (5,834,229 ns in step 101 …), 2.6% in all, below the rule's 25%: no
// idle finding.
func TestFindingsSharedNsResolution(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "kineto/hta_ns_resolution_v100.json.gz")
	o := runOracle(t, path, "nccl")
	_, tl, fs := findingsOf(t, path)
	st := IdleOf(tl, []int32{-1}, false)
	if st == nil || len(st.Steps) != len(o.Steps) {
		t.Fatalf("idle steps %+v, oracle %+v", st, o.Steps)
	}
	for i, os := range o.Steps {
		if g := st.Steps[i]; g.Step != os.Step || g.DurNs != os.DurNs || g.IdleNs != os.IdleNs {
			t.Errorf("step %d: rlktop %+v, oracle %+v", i, g, os)
		}
	}
	if f := findingByID(fs, "gpu-idle"); f != nil {
		t.Errorf("gpu-idle finding at %.1f%% idle: %+v", 100*st.Share(), f)
	}
}

// TestFindingsSharedFlash: traces whose SDPA ran a fused kernel (flash on
// H100, AOTriton attn_fwd on MI300X) are no math fallback, although
// their attention modules' projections are attention GEMMs.
func TestFindingsSharedFlash(t *testing.T) {
	for _, f := range []string{"kineto/tracelens_h100_qwen15_sdpa_flash.json.gz", "kineto/tracelens_mi300_qwen15_aotriton.json.gz"} {
		_, _, fs := findingsOf(t, filepath.Join(testutil.SharedTraces(t), f))
		if m := findingByID(fs, "attention-math-fallback"); m != nil {
			t.Errorf("%s: math fallback reported on a fused trace: %+v", f, m)
		}
	}
}

// mathSnap is a hand-made snapshot: 100 ns of GPU time over 2 steps, 60
// ns of it the math path of SDPA (aten::bmm and softmax under
// aten::scaled_dot_product_attention), 5 ns a fused kernel, 35 ns gemm.
func mathSnap(devs ...tracer.Device) *Snapshot {
	sdpa := []string{"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_attention_math"}
	return &Snapshot{
		Devices: devs,
		Totals:  Totals{GPUTotalNs: 100, KernelTotalNs: 100},
		Kernels: []KernelRow{
			{Name: "aten::bmm", DisplayName: "aten::bmm", Category: "attention", Count: 4, TotalNs: 40, Ops: sdpa},
			{Name: "gemm_nt", DisplayName: "gemm_nt", Category: "gemm", Count: 1, TotalNs: 35},
			{Name: "cunn_SoftMaxForward", DisplayName: "cunn_SoftMaxForward", Category: "attention", Count: 2, TotalNs: 20, Ops: sdpa},
			{Name: "flash_fwd_kernel", DisplayName: "flash_fwd_kernel", Category: "attention", Count: 1, TotalNs: 5, Ops: []string{"aten::_scaled_dot_product_flash_attention"}},
		},
		Categories: []GroupRow{{Key: "attention", TotalNs: 65, Share: 0.65, Count: 7}, {Key: "gemm", TotalNs: 35, Share: 0.35, Count: 1}},
		Steps:      []StepRow{{Step: 1}, {Step: 2}},
	}
}

func TestFindingsMathAttention(t *testing.T) {
	fs := EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Flags: map[string]string{"sdpa": "math", "compile": "on"}})
	if len(fs) < 2 || fs[0].ID != "attention-math-fallback" {
		t.Fatalf("findings %+v: want the math fallback first", fs)
	}
	f := fs[0]
	if f.Share != 0.6 || f.Numbers["math_ns"] != 60 || f.Numbers["fused_ns"] != 5 || f.Numbers["math_ns_per_step"] != 30 {
		t.Errorf("math attention numbers %v share %v: want 60 of 100 ns, 5 fused, 30 per step", f.Numbers, f.Share)
	}
	if f.Flag == nil || f.Flag.Key != "sdpa" || f.Flag.Value != "flash" || f.Flag.Current != "math" || f.Flag.Env {
		t.Errorf("flag %+v: want sdpa math → flash", f.Flag)
	}
	if fs[1].ID != "dominant-category" || fs[1].Share != 0.65 || fs[1].Flag != nil {
		t.Errorf("second finding %+v: want attention owning 65%%", fs[1])
	}
	// The built-in loop: its attention flag.
	fs = EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Flags: map[string]string{"attention": "math"}})
	if fl := fs[0].Flag; fl == nil || fl.Key != "attention" || fl.Value != "fused" {
		t.Errorf("built-in loop flag %+v: want attention=fused", fl)
	}
	// Already fused: nothing to flip, the finding stays (the numbers hold).
	fs = EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Flags: map[string]string{"sdpa": "flash"}})
	if f := findingByID(fs, "attention-math-fallback"); f == nil || f.Flag != nil {
		t.Errorf("sdpa=flash in force: finding %+v, want it without a flag", f)
	}
	// A command on an experimental AOTriton GPU: the environment flag
	// first; on gfx942 (never experimental) the agent's sdpa flag.
	rdna := tracer.Device{ID: 0, Name: "AMD Radeon RX 7900 XTX", Vendor: "amd", ComputeCap: "gfx1100"}
	fs = EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(rdna), Command: true, Flags: map[string]string{"sdpa": "default"}})
	if fl := fs[0].Flag; fl == nil || fl.Key != "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL" || fl.Value != "1" || !fl.Env || fl.Current != "" {
		t.Errorf("gfx1100 flag %+v: want TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1", fl)
	}
	mi300 := tracer.Device{ID: 0, Name: "AMD Instinct MI300X", Vendor: "amd", ComputeCap: "gfx942"}
	fs = EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(mi300), Command: true, Flags: map[string]string{"sdpa": "default"}})
	if fl := fs[0].Flag; fl == nil || fl.Key != "sdpa" || fl.Value != "flash" {
		t.Errorf("gfx942 flag %+v: want sdpa=flash", fl)
	}
	// Below min_share: a 10% rule does not fire at 6%.
	s := mathSnap()
	s.Totals.GPUTotalNs = 1000
	if f := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: s}), "attention-math-fallback"); f != nil {
		t.Errorf("fired at 6%%: %+v", f)
	}
}

func TestFindingsInvalidAndCounters(t *testing.T) {
	in := FindingInput{
		Snapshot: mathSnap(),
		Flags:    map[string]string{"sdpa": "math"},
		Outputs:  []OutputRow{{Kind: "check", Name: "loss", Steps: 9, NaNSteps: []int64{4, 5}}},
		Counters: []CounterStat{{Name: "gpu.mem_util_pct", Samples: 4, Mean: 75, Max: 90}, {Name: "gpu.cotenants", Samples: 4, Max: 1, Mean: 0.25}, {Name: "gpu.util_pct", Samples: 4, Mean: 98}},
	}
	fs := EvaluateFindings(nil, in)
	if fs[0].ID != "nan-outputs" || !fs[0].Invalid || !strings.Contains(fs[0].Evidence[0], `"loss": NaN/Inf in 2 of 9 steps (first step 4)`) {
		t.Errorf("first finding %+v: want the NaN check, invalid", fs[0])
	}
	if f := findingByID(fs, "memory-bound"); f == nil || f.Share != 0.75 || f.Numbers["gpu.util_pct"] != 98 {
		t.Errorf("memory-bound %+v", f)
	}
	if f := findingByID(fs, "cotenant"); f == nil || f.Numbers["max"] != 1 {
		t.Errorf("cotenant %+v", f)
	}
	in.Counters[0].Mean = 59
	if f := findingByID(EvaluateFindings(nil, in), "memory-bound"); f != nil {
		t.Errorf("memory-bound at 59%%: %+v", f)
	}
}

// TestFindingsIdleHand: two steps of 100 ns; ops [10,30) and [20,50) in
// step 1 (busy 40: idle 60, gaps [0,10), [50,100)), [150,200) in step 2
// (idle 50, gap [100,150)). Quarters of step 1: [0,25) idle 10, [25,50)
// 0, [50,75) 25, [75,100) 25; of step 2: 25, 25, 0, 0.
func TestFindingsIdleHand(t *testing.T) {
	tl := &Timeline{
		Lanes: []TimelineLane{{Device: 0, Stream: 7}, {Device: 0, Stream: 8}},
		Ops: []TimelineOp{
			{Lane: 0, Kind: tracer.KindKernel, StartNs: 10, DurNs: 20, Display: "a"},
			{Lane: 1, Kind: tracer.KindKernel, StartNs: 20, DurNs: 30, Display: "b"},
			{Lane: 0, Kind: tracer.KindKernel, StartNs: 150, DurNs: 50, Display: "c"},
		},
		Steps: []TimelineStep{{Step: 2, StartNs: 100, DurNs: 100}, {Step: 1, StartNs: 0, DurNs: 100}},
		CPU:   []TimelineSpan{{Kind: tracer.KindRange, StartNs: 100, DurNs: 60, Name: "dataloader"}, {Kind: tracer.KindRange, StartNs: 0, DurNs: 200, Name: "ProfilerStep#1"}},
	}
	st := IdleOf(tl, nil, false)
	if st == nil || st.IdleNs != 110 || st.StepNs != 200 || st.Steps[0].IdleNs != 60 || st.Steps[1].IdleNs != 50 {
		t.Fatalf("idle %+v", st)
	}
	if st.QuarterNs != [4]int64{35, 25, 25, 25} {
		t.Errorf("quarters %v, want [35 25 25 25]", st.QuarterNs)
	}
	if g := st.Gaps[0]; g.DurNs != 50 || g.Step != 1 || g.Before != "b" || g.After != "" || g.AtPct != 50 {
		t.Errorf("longest gap %+v: want 50 ns in step 1 at 50%% after b", g)
	}
	if g := st.Gaps[1]; g.Step != 2 || g.Before != "" || g.After != "c" || g.Range != "dataloader" {
		t.Errorf("second gap %+v: want step 2 before c, CPU in dataloader", g)
	}
}

func TestFindingsUserFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.toml")
	os.WriteFile(p, []byte(`
[[finding]]
id = "gpu-idle"
off = true

[[finding]]
id = "dominant-category"
kind = "dominant"
group = "category"
title = "mine"
min_share = 0.9
source = "test"
`), 0o600)
	fr, err := LoadFindings(p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range fr.List() {
		ids = append(ids, r.ID)
	}
	if ids[0] != "dominant-category" || fr.List()[0].Title != "mine" || strings.Contains(strings.Join(ids, ","), "gpu-idle") ||
		strings.Count(strings.Join(ids, ","), "dominant-category") != 1 || !strings.Contains(strings.Join(ids, ","), "attention-math-fallback") {
		t.Errorf("layered ids %v", ids)
	}
	if f := findingByID(EvaluateFindings(fr, FindingInput{Snapshot: mathSnap()}), "dominant-category"); f != nil {
		t.Errorf("user rule at 90%% fired at 65%%: %+v", f)
	}
	os.WriteFile(p, []byte("replace = true\n[[finding]]\nid = \"x\"\nkind = \"idle\"\ntitle = \"t\"\n"), 0o600)
	if fr, err = LoadFindings(p); err != nil || len(fr.List()) != 1 {
		t.Errorf("replace: %v, %d rules", err, len(fr.List()))
	}
	for _, bad := range []struct{ text, want string }{
		{"[[finding]]\nid = \"x\"\nkind = \"math-attention\"\ntitle = \"t\"\nkernel = \"(\"\n", `finding 1: field "kernel": bad regex`},
		{"[[finding]]\nid = \"x\"\nkind = \"nope\"\ntitle = \"t\"\n", `field "kind": unknown kind "nope"`},
		{"[[finding]]\nid = \"x\"\nkind = \"idle\"\ntitle = \"t\"\nshare = 1\n", `unknown key "finding.share"`},
		{"[[finding]]\nkind = \"idle\"\n", `field "id": missing`},
	} {
		os.WriteFile(p, []byte(bad.text), 0o600)
		_, err := LoadFindings(p)
		if !errors.Is(err, ErrFindings) || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %v, want %q with the path", bad.text, err, bad.want)
		}
	}
}

// TestFindingsDefaultTableDocumented: every built-in rule says where it
// comes from.
func TestFindingsDefaultTableDocumented(t *testing.T) {
	for _, r := range DefaultFindings().List() {
		if len(r.Source) < 20 || r.Try == "" {
			t.Errorf("finding %s: source %q try %q: every rule documents its source and what to try", r.ID, r.Source, r.Try)
		}
	}
}

// TestFindingsRanks: hand-made per-source numbers (attrib.Ranks' shape).
// Rank 1 arrived last at 9 of 10 collectives; ranks 0 and 2 waited 30 and
// 10 ms of 200 ms spans each: 40/400 = 10% ≥ 5%. Rank 1 spends 5 steps ×
// 12 ms in stage "sync_loss" (60 ms), rank 0 10 ms in all (2 ms a step),
// rank 2 none: the others' median per step is 0 (sorted 0, 2: the lower),
// so rank 1's 12 ms a step is named (≥ 5% of its 41 ms step); "fwd" is
// 20 ms a step everywhere and is not. Exposed communication without the
// waits: (40-30) + 30 + (30-10) = 60 ms of 600 ms span: 10% ≥ 10%, 40 ms
// of waiting left out; most exposed after that: rank 1, 30 of 200 ms.
// Per step is over the steps the stages were summed over (StageSteps 5),
// not a live process's whole-run Steps (rank 1's 500 here, which gave
// "3.51 ms per step" live for a 40 ms sleep).
func TestFindingsRanks(t *testing.T) {
	fwd := StageWall{Name: "fwd", Ns: 100e6, Count: 5}
	rs := &RankSummary{ByRank: true, Collectives: 10, Sources: []SourceRow{
		{Index: 0, Rank: 0, SpanNs: 200e6, CollWaitNs: 30e6, CommNs: 50e6, CommExposedNs: 40e6, StepMedianNs: 40e6, Steps: 5, StageSteps: 5, LastArrivals: 1,
			Stages: []StageWall{fwd, {Name: "sync_loss", Ns: 10e6, Count: 5}}},
		{Index: 1, Rank: 1, SpanNs: 200e6, CollWaitNs: 0, CommNs: 40e6, CommExposedNs: 30e6, StepMedianNs: 41e6, Steps: 500, StageSteps: 5, LastArrivals: 9,
			Stages: []StageWall{fwd, {Name: "sync_loss", Ns: 60e6, Count: 5}}},
		{Index: 2, Rank: 2, SpanNs: 200e6, CollWaitNs: 10e6, CommNs: 45e6, CommExposedNs: 30e6, StepMedianNs: 40e6, Steps: 5, StageSteps: 5,
			Stages: []StageWall{fwd}},
	}}
	s := mathSnap()
	s.Ranks = rs
	fs := EvaluateFindings(nil, FindingInput{Snapshot: s})
	st := findingByID(fs, "straggler-rank")
	if st == nil || st.Share != 0.1 || st.Numbers["late_source"] != 1 || st.Numbers["last_arrivals"] != 9 ||
		!strings.Contains(st.Evidence[0], "rank 1 arrived last at 9 of 10 matched collectives") {
		t.Errorf("straggler %+v", st)
	}
	if st != nil && (st.Numbers["late_stage_ns"] != 12e6 || st.Numbers["others_stage_ns"] != 0 ||
		!strings.Contains(strings.Join(st.Evidence, "\n"), `rank 1 spends 12.0 ms per step in stage "sync_loss", the others 0 ns (median)`)) {
		t.Errorf("straggler's stage: %v\n%s", st.Numbers, strings.Join(st.Evidence, "\n"))
	}
	ex := findingByID(fs, "exposed-communication")
	if ex == nil || math.Abs(ex.Share-0.1) > 1e-15 || ex.Numbers["waited_ns"] != 40e6 || !strings.Contains(strings.Join(ex.Evidence, "\n"), "most exposed: rank 1 (15.0% of its span)") {
		t.Errorf("exposed %+v", ex)
	}
	// A stage the late rank spends no longer in than the others is not
	// named (fwd only: 0 excess).
	rs.Sources[1].Stages = []StageWall{fwd}
	if st := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: s}), "straggler-rank"); st == nil || st.Numbers["late_stage_ns"] != 0 ||
		strings.Contains(strings.Join(st.Evidence, "\n"), "per step in stage") {
		t.Errorf("no excess, yet: %+v", st)
	}
	// No collectives matched: the step medians (50 vs 40 ms: 20%).
	rs.Collectives = 0
	rs.Sources[1].StepMedianNs = 50e6
	st = findingByID(EvaluateFindings(nil, FindingInput{Snapshot: s}), "straggler-rank")
	if st == nil || math.Abs(st.Share-0.2) > 1e-15 || st.Numbers["slow_source"] != 1 {
		t.Errorf("straggler by step medians %+v", st)
	}
	// One source: no straggler.
	rs.Sources = rs.Sources[:1]
	if st := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: s}), "straggler-rank"); st != nil {
		t.Errorf("one source: %+v", st)
	}
}

// TestFindingsTopKernelsApart: a finding's top kernels are named as the
// report's table names them — two kernels whose display names collide
// (they differ only in a template argument) are told apart, not listed
// twice under one name.
func TestFindingsTopKernelsApart(t *testing.T) {
	s := mathSnap()
	s.Kernels = []KernelRow{
		{Name: "reduce_kernel<float>", DisplayName: "reduce_kernel", Category: "gemm", Count: 1, TotalNs: 50},
		{Name: "reduce_kernel<int>", DisplayName: "reduce_kernel", Category: "gemm", Count: 1, TotalNs: 40},
		{Name: "other", DisplayName: "other", Category: "attention", Count: 1, TotalNs: 10},
	}
	s.Categories = []GroupRow{{Key: "gemm", TotalNs: 90, Share: 0.9, Count: 2}, {Key: "attention", TotalNs: 10, Share: 0.1, Count: 1}}
	f := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: s}), "dominant-category")
	if f == nil || len(f.Top) != 2 {
		t.Fatalf("dominant category %+v: want two top kernels", f)
	}
	if strings.SplitN(f.Top[0], " ", 2)[0] == strings.SplitN(f.Top[1], " ", 2)[0] {
		t.Errorf("top kernels %q: the two reduce_kernel rows share one name", f.Top)
	}
}

// TestTimeNameCPUOnly: shares of a run whose work ran on the host CPU only
// are never of "GPU time": "CPU op time" on device -1 (CPU operators of a
// trace without GPU work), "kernel time" on a device whose vendor is cpu
// (the built-in loop's kernels, as its header names them); one GPU with
// work makes it GPU time, and no work at all says GPU time (nothing to
// call CPU-only).
func TestTimeNameCPUOnly(t *testing.T) {
	for _, c := range []struct {
		devs []tracer.Device
		work []int32
		want string
	}{
		{nil, []int32{-1}, "CPU op time"},
		{[]tracer.Device{{ID: 0, Vendor: "cpu"}}, []int32{0}, "kernel time"},
		{[]tracer.Device{{ID: 0, Vendor: "cpu"}, {ID: 1, Vendor: "nvidia"}}, []int32{0, 1}, "GPU time"},
		{[]tracer.Device{{ID: 0, Vendor: "nvidia"}}, []int32{0}, "GPU time"},
		{[]tracer.Device{{ID: 0, Vendor: "cpu"}}, nil, "GPU time"},
	} {
		s := &Snapshot{Devices: c.devs, WorkDevices: c.work}
		if got := s.TimeName(); got != c.want {
			t.Errorf("devices %+v, work %v: %q, want %q", c.devs, c.work, got, c.want)
		}
	}
	// The dominant-category finding on a CPU-only snapshot says so.
	s := &Snapshot{WorkDevices: []int32{-1}, Totals: Totals{GPUTotalNs: 100},
		Categories: []GroupRow{{Key: "gemm", TotalNs: 90, Count: 3, Share: 0.9}}}
	found := false
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: s}) {
		found = found || f.Kind == FindDominant
		if f.Kind == FindDominant && (f.ShareOf != "CPU op time" || !strings.Contains(f.Evidence[0], "of 100 ns CPU op time") || f.Title != "one category owns most of the CPU op time") {
			t.Errorf("dominant on CPU: %q, share of %q, evidence %q", f.Title, f.ShareOf, f.Evidence)
		}
	}
	if !found {
		t.Error("no dominant-category finding at 90%")
	}
}

// A finding quotes a kernel's name cut to FindingNameRunes ("…" ending
// it): the H100 trace's direct_copy_kernel_cuda elementwise kernel is
// about 400 characters whole and buried the finding's sentence; a short
// name is quoted whole.
func TestFindingLabelsCut(t *testing.T) {
	long := "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<…>)"
	l := &kernelLabelSet{fn: func(i int) string { return []string{long, "attn_fwd"}[i] }}
	if got := l.of(0); utf8.RuneCountInString(got) != FindingNameRunes || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "void at::native::elementwise_kernel<128") {
		t.Errorf("long name quoted as %q (%d runes), want its first %d runes ending in …", got, utf8.RuneCountInString(got), FindingNameRunes-1)
	}
	if got := l.of(1); got != "attn_fwd" {
		t.Errorf("short name quoted as %q", got)
	}
}
