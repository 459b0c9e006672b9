package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/report"
)

// The step of testdata/torch_memory.py allocates torch.ones(16 Mi) float32
// in stage policy_head: a 64 MiB temporary of aten::ones, freed by Python
// (no operator open) in the same step.
const mem64 = 64 << 20

// memDoc is what the memory tests read of a report's JSON.
type memDoc struct {
	Memory *report.MemoryDoc `json:"memory"`
}

func readMemDoc(t *testing.T, out []byte) *report.MemoryDoc {
	t.Helper()
	var d memDoc
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, tail(string(out), 2000))
	}
	if d.Memory == nil {
		t.Fatalf("no \"memory\" in the report:\n%s", tail(string(out), 2000))
	}
	return d.Memory
}

// checkMem64 asserts the 64 MiB temporary: one group, allocated by
// aten::ones in stage policy_head, freed outside any operator, once in
// each step with memory events, and every such step's peak at least 64 MiB.
func checkMem64(t *testing.T, what string, m *report.MemoryDoc) {
	t.Helper()
	var found []report.MemTempDoc
	for _, tp := range m.Temporaries {
		if tp.Bytes == mem64 {
			found = append(found, tp)
		}
	}
	steps := map[int64]bool{}
	for _, s := range m.Steps {
		steps[s.Step] = true
		if s.PeakAllocatedBytes < mem64 {
			t.Errorf("%s: step %d peak %d bytes, want >= 64 MiB", what, s.Step, s.PeakAllocatedBytes)
		}
	}
	if len(found) != 1 || found[0].Operator != "aten::ones" || found[0].Stage != "policy_head" || found[0].FreedBy != "" ||
		found[0].Count != len(steps) || len(steps) < 2 || found[0].Device != -1 {
		t.Errorf("%s: 64 MiB temporaries %+v over %d steps with memory: want one group of aten::ones in policy_head, freed by no operator, once a step (2 or more)", what, found, len(steps))
	}
}

// TestTorchMemoryLive: torch_memory.py under `run --headless` (the Python
// agent's torch.profiler windows with profile_memory) and under `record`
// then `report`: the 64 MiB temporary is found exactly, live and from the
// recording, both give the same temporaries, and the recording's model
// equals report/testdata/check_memory.py's over its Chrome export.
func TestTorchMemoryLive(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := testutil.CopyIntoRoot(t, r, "testdata/torch_memory.py")
	run := func(argv ...string) []byte {
		cmd := r.Command(argv...)
		cmd.Env = append(cmd.Env, "RLKTOP_KINETO=3:1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, tail(stderr.String(), 3000))
		}
		return out
	}
	live := readMemDoc(t, run(r.Bin, "run", "--headless", "--steps", "7", "--format", "json", "--", "python3", script, "12"))
	checkMem64(t, "live", live)
	rec := r.Dst + "/mem.rlk"
	run(r.Bin, "record", "-o", rec, "--steps", "7", "--", "python3", script, "12")
	recJSON := run(r.Bin, "report", "--format", "json", rec)
	fromRec := readMemDoc(t, recJSON)
	checkMem64(t, "recording", fromRec)
	// The recording's report against the independent script, over the
	// recording exported as Chrome JSON (the agent's steps as
	// ProfilerStep#N, its stages, the windows' operators and [memory]
	// events): the rule applied to the raw events gives the same peaks,
	// temporaries and held bytes.
	if py, err := exec.LookPath("python3"); err == nil {
		run(r.Bin, "export", rec, "-o", r.Dst+"/mem.export.json")
		repPath := filepath.Join(t.TempDir(), "report.json")
		if err := os.WriteFile(repPath, recJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		host := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst+"/mem.export.json", "/"))
		res, err := exec.Command(py, filepath.Join(testutil.RepoRoot(t), "report", "testdata", "check_memory.py"), host, repPath).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(res), "OK ") {
			t.Errorf("independent check of the recording: %v\n%s", err, res)
		}
		t.Logf("%s", res)
	}
	key := func(m *report.MemoryDoc) map[string]int {
		out := map[string]int{}
		for _, tp := range m.Temporaries {
			out[fmt.Sprintf("%s|%s|%s|%d|%d", tp.Operator, tp.Stage, tp.FreedBy, tp.Device, tp.Bytes)] = tp.Count
		}
		return out
	}
	// How many windows each run finished within its 7 steps depends on
	// the machine's load (one window more live than recorded was seen);
	// each window holds the same temporaries, so the two must agree up to
	// one factor: the same keys, every count in the same ratio.
	a, b := key(live), key(fromRec)
	if !slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))) {
		t.Errorf("temporaries differ: live %v, recording %v", a, b)
	}
	var ka, kb int
	for k, n := range a {
		if ka == 0 {
			ka, kb = n, b[k]
		}
		if n*kb != b[k]*ka {
			t.Errorf("temporary %s: %d live, %d recorded; others %d and %d (want one ratio: windows times each window's count)", k, n, b[k], ka, kb)
		}
	}
}

// TestTorchMemoryTrace: a torch 2.6 torch.profiler(profile_memory=True)
// trace of the same step with SDPA on the math backend: report's memory
// model equals report/testdata/check_memory.py's recomputation from the
// raw file (pairing and attribution written from the rule), the 64 MiB
// temporary is found, and the findings name it and the attention peak.
func TestTorchMemoryTrace(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed on the host: the independent check cannot run")
	}
	trace := r.Dst + "/mem.json"
	gen := r.Command("python3", "-c", `
import torch, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, schedule, record_function
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.set_num_threads(1)
q = torch.randn(16, 8, 256, 16)
kept = []
def step():
    with record_function("policy_head"):
        t = torch.ones(16 * 1024 * 1024)
        s = t.sum()
        del t
    with record_function("attention"), sdpa_kernel(SDPBackend.MATH):
        o = F.scaled_dot_product_attention(q, q, q)
    kept.append(torch.zeros(256 * 1024))  # 1 MiB held across steps
with profile(activities=[ProfilerActivity.CPU], profile_memory=True, schedule=schedule(wait=0, warmup=1, active=4, repeat=1),
             on_trace_ready=lambda p: p.export_chrome_trace("`+trace+`")) as p:
    for _ in range(6):
        step()
        p.step()
`)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("torch.profiler: %v\n%s", err, out)
	}
	rep, err := r.Command(r.Bin, "report", "--format", "json", trace).Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	m := readMemDoc(t, rep)
	checkMem64(t, "trace", m)
	repPath := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(repPath, rep, 0o644); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(r.Dir, strings.TrimPrefix(trace, "/"))
	res, err := exec.Command(py, filepath.Join(testutil.RepoRoot(t), "report", "testdata", "check_memory.py"), host, repPath).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(res), "OK ") {
		t.Errorf("independent check: %v\n%s", err, res)
	}
	t.Logf("%s", res)
	fs, err := r.Command(r.Bin, "report", "--by", "finding", "--format", "json", trace).Output()
	if err != nil {
		t.Fatalf("report --by finding: %v", err)
	}
	var doc struct {
		Findings []struct {
			ID       string             `json:"id"`
			Evidence []string           `json:"evidence"`
			Numbers  map[string]float64 `json:"numbers"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(fs, &doc); err != nil {
		t.Fatalf("findings not JSON: %v\n%s", err, fs)
	}
	got := map[string]map[string]float64{}
	for _, f := range doc.Findings {
		got[f.ID] = f.Numbers
	}
	if n, ok := got["memory-temporary"]; !ok || n["bytes"] != mem64 {
		t.Errorf("memory-temporary finding %v: want the 64 MiB temporary (findings %s)", n, fs)
	}
	// The math path's scores, [16, 8, 256, 256] float32 = 32 MiB, are
	// live at the step's peak inside scaled_dot_product_attention.
	if n, ok := got["memory-peak-attention"]; !ok || n["inside_bytes"] < 32<<20 {
		t.Errorf("memory-peak-attention finding %v: want >= 32 MiB allocated inside SDPA live at the peak", n)
	}
	if n, ok := got["memory-growth"]; !ok || n["growth_bytes_per_step"] != 1<<20 {
		t.Errorf("memory-growth finding %v: want 1 MiB a step", n)
	}
}

// TestTorchCompareMemory: `compare --flag sdpa=math,flash` on
// torch_memory.py: the math arm's largest attention temporary is the
// [16, 8, 256, 256] float32 score matrix (32 MiB: aten::bmm's scores or
// aten::_softmax's probabilities); the flash arm has none of that size.
func TestTorchCompareMemory(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := testutil.CopyIntoRoot(t, r, "testdata/torch_memory.py")
	res, code := runCompareJSON(t, r, "2:1", []string{"--flag", "sdpa=math,flash", "--steps", "2", "--block", "2", "--no-noise"}, []string{"python3", script, "1000", "--no-big"})
	if code != 0 {
		t.Fatalf("compare: exit %d (arms %+v)", code, res.Arms)
	}
	if len(res.Memory) != 2 {
		t.Fatalf("memory per arm %+v: want two arms", res.Memory)
	}
	attn := func(i int) (int64, string) {
		for _, c := range res.Memory[i].Categories {
			if c.Category == "attention" {
				return c.LargestBytes, c.LargestOperator
			}
		}
		return 0, ""
	}
	const scores = 16 * 8 * 256 * 256 * 4
	// Two tensors of that size: bmm's scores and softmax's probabilities.
	if b, op := attn(0); b != scores || (op != "aten::bmm" && op != "aten::_softmax") || res.Memory[0].Steps < 1 {
		t.Errorf("math arm %+v: largest attention temporary %d bytes by %q, want %d by aten::bmm or aten::_softmax", res.Memory[0], b, op, scores)
	}
	if b, _ := attn(1); b >= scores/4 || res.Memory[1].Steps < 1 {
		t.Errorf("flash arm %+v: largest attention temporary %d bytes, want well under the math arm's %d", res.Memory[1], b, scores)
	}
	if res.Memory[1].PeakAllocatedBytes >= res.Memory[0].PeakAllocatedBytes {
		t.Errorf("peaks: flash %d >= math %d", res.Memory[1].PeakAllocatedBytes, res.Memory[0].PeakAllocatedBytes)
	}
}
