package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// The real-PyTorch tests: a CGO_ENABLED=0 rlktop runs
// examples/selfplay_connect4.py inside the trixie PyTorch root
// (scripts/torch-root.sh) with the Python agent on its PYTHONPATH. They
// skip, saying so, without the root (scripts/test.sh builds it and makes a
// missing root a failure).

// exampleArgs keep a step short on a loaded 2-core machine (~0.3–1 s).
var exampleArgs = []string{"--threads", "1", "--envs", "16", "--width", "32", "--plies", "4"}

func exampleCmd(r *testutil.TorchRoot, extra ...string) []string {
	return append(append([]string{"--", "python3", r.Dst + "/selfplay_connect4.py"}, exampleArgs...), extra...)
}

// TestTorchRunHeadless: under `rlktop run --headless` the example's steps
// (one per optimizer step: the script prints one "iter" line per step),
// stages (its record_function ranges) and CPU operators (torch.profiler
// windows, RLKTOP_KINETO=3:1 → steps 1, 4, …) appear, with the agent's
// flags.
func TestTorchRunHeadless(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	args := append([]string{r.Bin, "run", "--headless", "--steps", "6", "--format", "json"}, exampleCmd(r)...)
	cmd := r.Command(args...)
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=3:1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run --headless: %v\n%s", err, tail(stderr.String(), 3000))
	}
	var doc struct {
		Steps struct {
			Count    int64 `json:"count"`
			MedianNs int64 `json:"median_ns"`
		} `json:"steps"`
		Flags   map[string]string `json:"flags"`
		Kernels []struct {
			Name     string `json:"name"`
			Category string `json:"category"`
			Count    int64  `json:"count"`
		} `json:"kernels"`
		Stages []struct {
			Stage string `json:"stage"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	iters := strings.Count(stderr.String(), "iter ")
	// The agent's first step starts at the first optimizer step, so the
	// script has printed at least one iteration more than rlktop counted.
	if doc.Steps.Count < 6 || int64(iters) < doc.Steps.Count || doc.Steps.MedianNs <= 0 {
		t.Errorf("steps %+v, script iterations %d: want >= 6 steps, no more than the script ran", doc.Steps, iters)
	}
	stages := map[string]bool{}
	for _, s := range doc.Stages {
		stages[s.Stage] = true
	}
	for _, s := range []string{"collect", "forward", "sample", "env_step", "backward"} {
		if !stages[s] {
			t.Errorf("stage %q missing: %v", s, stages)
		}
	}
	kern := map[string]string{}
	cats := map[string]map[string]bool{}
	for _, k := range doc.Kernels {
		kern[k.Name] = k.Category
		if cats[k.Name] == nil {
			cats[k.Name] = map[string]bool{}
		}
		cats[k.Name][k.Category] = true
	}
	// Linear layers run aten::addmm, a GEMM (rules.toml); SDPA's default
	// backend on CPU is the fused flash kernel, attributed to attention.
	if !cats["aten::addmm"]["gemm"] {
		t.Errorf("aten::addmm categories %v among %d operators: want gemm", cats["aten::addmm"], len(kern))
	}
	if c := kern["aten::_scaled_dot_product_flash_attention_for_cpu"]; c != "attention" {
		t.Errorf("flash SDPA operator category %q, want attention", c)
	}
	// The example compiles only with --compile: compile is "not used"
	// (it said "on" for a script that never compiles).
	if doc.Flags["sdpa"] != "default" || doc.Flags["compile"] != "not used" {
		t.Errorf("flags %v: want the agent's sdpa=default, compile=not used", doc.Flags)
	}
}

// TestTorchCompareSDPA: `rlktop compare --flag sdpa=math,flash` runs both
// arms in one process (live mode, no restart): the flash operator only in
// the flash arm, the math arm's bmm counted as attention (under
// aten::scaled_dot_product_attention), valid arms and a ratio with its
// interval.
func TestTorchCompareSDPA(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	res, code := runCompareJSON(t, r, "2:1", []string{"--flag", "sdpa=math,flash", "--steps", "4", "--block", "2", "--top", "0"}, exampleCmd(r)[1:])
	if code != 0 {
		t.Fatalf("compare: exit %d (arms %+v)", code, res.Arms)
	}
	if res.Mode != "live" {
		t.Errorf("mode %q, want live (flags switched inside the process)", res.Mode)
	}
	if len(res.Arms) < 2 || !res.Arms[0].Valid || !res.Arms[1].Valid || res.Arms[0].Steps < 4 || res.Arms[1].Steps < 4 {
		t.Errorf("arms %+v: want two valid arms of >= 4 steps", res.Arms)
	}
	if ra := res.Ratio; !(ra.Value > 0 && ra.CILow <= ra.Value && ra.Value <= ra.CIHigh) {
		t.Errorf("ratio %+v: want a positive ratio inside its interval", ra)
	}
	row := func(group, key string) (a, b int64, ok bool) {
		for _, x := range res.Rows {
			if x.Group == group && x.Key == key {
				return x.ANs, x.BNs, true
			}
		}
		return 0, 0, false
	}
	if len(res.Rows) == 0 {
		// Say why (CI once saw no rows at all, not reproduced since).
		t.Logf("no rows; notes %q, schedule %+v, arms %+v", res.Notes, res.Schedule, res.Arms)
	}
	if a, b, ok := row("kernel", "aten::_scaled_dot_product_flash_attention_for_cpu"); !ok || a != 0 || b <= 0 {
		t.Errorf("flash operator A %v B %v (found %v): want it only in the flash arm", a, b, ok)
	}
	if a, b, ok := row("kernel", "aten::bmm"); !ok || a <= 0 || b != 0 {
		t.Errorf("aten::bmm A %v B %v (found %v): want it only in the math arm (the example has no other bmm)", a, b, ok)
	}
	if a, _, ok := row("category", "attention"); !ok || a <= 0 {
		var keys []string
		for _, x := range res.Rows {
			keys = append(keys, x.Group+"/"+x.Key)
		}
		slices.Sort(keys)
		t.Errorf("no attention time in the math arm (rows %v)", keys)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestTorchCompareCompile: `--flag compile=off,on` on the example run with
// --compile switches torch.compiler.set_stance inside one process; both
// arms valid (the first compile happens in the warm-up of the "on" arm).
func TestTorchCompareCompile(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	res, code := runCompareJSON(t, r, "0", []string{"--flag", "compile=off,on", "--steps", "3", "--block", "3", "--no-noise"},
		exampleCmd(r, "--compile", "--layers", "1")[1:])
	if code != 0 {
		t.Fatalf("compare: exit %d (arms %+v)", code, res.Arms)
	}
	if res.Mode != "live" || len(res.Arms) != 2 {
		t.Fatalf("mode %q, %d arms: want live with 2", res.Mode, len(res.Arms))
	}
	for i, want := range []string{"off", "on"} {
		a := res.Arms[i]
		if !a.Valid || a.Steps < 3 || a.Flags["compile"] != want {
			t.Errorf("arm %d %+v: want valid, >= 3 steps, compile=%s", i, a, want)
		}
	}
}

// runCompareJSON runs `rlktop compare --format json ARGS -- COMMAND` inside
// the root with RLKTOP_KINETO=kineto; it returns the decoded result and
// the exit status.
func runCompareJSON(t *testing.T, r *testutil.TorchRoot, kineto string, args, command []string) (*livestate.CompareResult, int) {
	t.Helper()
	argv := append(append(append([]string{r.Bin, "compare", "--format", "json"}, args...), "--"), command...)
	cmd := r.Command(argv...)
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO="+kineto)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Logf("compare %v: exit %d; its stderr:\n%s", args, code, tail(stderr.String(), 3000))
	}
	var res livestate.CompareResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("compare %v: exit %d, not JSON: %v\n%s\n%s", args, code, err, tail(string(out), 2000), tail(stderr.String(), 3000))
	}
	return &res, code
}

// compareJSON is runCompareJSON on testdata/torch_checks.py, windows off.
func compareJSON(t *testing.T, r *testutil.TorchRoot, args ...string) (*livestate.CompareResult, int) {
	t.Helper()
	script := testutil.CopyIntoRoot(t, r, "testdata/torch_checks.py")
	return runCompareJSON(t, r, "0", args, []string{"python3", script})
}

// TestTorchChecksProbes: rlktop.probe evaluated at every switch. SDPA
// math vs flash on CPU: a non-zero difference below 1e-4 (fp32
// attention over 16 tokens of width 8) and not bitwise; two identical
// arms (an A/A run): bitwise equal.
func TestTorchChecksProbes(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	res, code := compareJSON(t, r, "--flag", "sdpa=math,flash", "--no-noise", "--steps", "4", "--block", "2")
	if code != 0 || len(res.Consistency) != 1 {
		t.Fatalf("exit %d, consistency %+v: want one probe row", code, res.Consistency)
	}
	c := res.Consistency[0]
	if c.Arm != "sdpa=flash" || c.Probe != "logits" || c.Switches < 1 || c.Len != 256 || c.Bitwise || !(c.MaxAbs > 0 && c.MaxAbs < 1e-4) || c.NaN != 0 {
		t.Errorf("math vs flash probe %+v: want 256 values, 0 < max |Δ| < 1e-4, not bitwise", c)
	}
	res, code = compareJSON(t, r, "--flag", "sdpa=math,math", "--no-noise", "--steps", "2", "--block", "1")
	if code != 0 || len(res.Consistency) != 1 || !res.Consistency[0].Bitwise || res.Consistency[0].MaxAbs != 0 {
		t.Errorf("A/A probe: exit %d, %+v: want bitwise equal", code, res.Consistency)
	}
}

// TestTorchChecksNaN: the arm whose script writes NaN into two rows of
// the logits every third iteration is invalid (exit status 3), and the
// steps it names are exactly those iterations: the agent's step k is the
// script's iteration k (its first optimizer step ends iteration 0 and
// starts step 1), so k % 3 == 0.
func TestTorchChecksNaN(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	res, code := compareJSON(t, r, "--flag", "poison=off,on", "--no-noise", "--steps", "4", "--block", "2")
	if code != 3 {
		t.Errorf("exit status %d, want 3 (an invalid arm)", code)
	}
	if len(res.Arms) != 2 || !res.Arms[0].Valid || res.Arms[1].Valid {
		t.Fatalf("arms %+v: want A valid, B invalid", res.Arms)
	}
	why := res.Arms[1].Reason
	m := regexp.MustCompile(`(\d+) \(logits: 2 rows\)`).FindAllStringSubmatch(why, -1)
	if len(m) == 0 || !strings.Contains(why, "NaN or Inf") {
		t.Fatalf("reason %q: want the NaN steps named", why)
	}
	for _, x := range m {
		k, _ := strconv.Atoi(x[1])
		if k%3 != 0 {
			t.Errorf("step %d named as NaN; the script poisons iterations divisible by 3 (step k = iteration k)", k)
		}
	}
	if res.Verdict == "faster" || res.Verdict == "slower" {
		t.Errorf("verdict %q for an invalid arm", res.Verdict)
	}
}

// TestTorchChecksAuditsAndMetrics: in restart mode every arm replays the
// same steps from the same seed. An arm with the same flags as A is
// bitwise equal to it over every audited value and its loss lies inside
// the A/A′ envelope (A′: another seed); a ten times larger learning rate
// changes the logits from the first step on (the first update precedes
// step 1, the first the agent measures) and its loss falls outside the
// envelope.
func TestTorchChecksAuditsAndMetrics(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	res, code := compareJSON(t, r, "--restart", "--flag", "lr=0.05,0.05,1.0", "--steps", "3", "--block", "3")
	if code != 0 {
		t.Fatalf("exit %d (arms %+v)", code, res.Arms)
	}
	audits := map[string]livestate.AuditCompare{}
	for _, a := range res.Audits {
		audits[a.Arm] = a
	}
	if a := audits["lr=0.05 #2"]; !a.Bitwise || a.Steps < 3 || a.Values != int64(a.Steps)*64*4 {
		t.Errorf("A/A audit %+v: want bitwise equal over steps × 64×4 logits", a)
	}
	if a := audits["lr=1.0"]; a.Bitwise || a.FirstDiff != 1 || a.FirstDiffElem < 0 || a.AValue == a.BValue {
		t.Errorf("lr=1.0 audit %+v: want a difference from step 1 (the first) at a sampled element, with two different values", a)
	}
	if a := audits["lr=0.05 #2"]; a.FirstDiffElem != -1 {
		t.Errorf("A/A audit names element %d", a.FirstDiffElem)
	}
	// The case: a flag that changes numerics without changing the
	// program. Float32 matmul precision "medium" computes in bf16 on a CPU
	// with avx512_bf16 (x@y differs by up to 7.6e-6) and changes nothing
	// on one without (AMD EPYC without it: bitwise equal), so the
	// expectation comes from torch itself on this machine, asked with the
	// loop's own layers (their shapes) on one thread, as the loop runs
	// them: which products take the bf16 path depends on the shape, the
	// thread count and OpenBLAS's core type (PyTorch 2.6 on an AMD CPU with
	// avx512_bf16: a 64×64 x@y on every core was equal while the loop's
	// 32→4 layer differed).
	probe, err := r.Command("python3", "-c", `import torch
torch.set_num_threads(1)
torch.manual_seed(0)
differs = False
for n, m, shape in ((8, 32, (64, 16, 8)), (32, 96, (64, 16, 32)), (32, 4, (64, 32))):
    layer, x = torch.nn.Linear(n, m), torch.randn(*shape)
    torch.set_float32_matmul_precision("highest"); a = layer(x)
    torch.set_float32_matmul_precision("medium"); b = layer(x)
    differs = differs or not torch.equal(a, b)
print("differs" if differs else "same")`).Output()
	if err != nil {
		t.Fatalf("matmul precision probe: %v", err)
	}
	mediumDiffers := strings.TrimSpace(string(probe)) == "differs"
	t.Logf("matmul_precision=medium on this CPU: %s", strings.TrimSpace(string(probe)))
	res2, code := compareJSON(t, r, "--restart", "--no-noise", "--flag", "matmul_precision=highest,highest,medium", "--steps", "2", "--block", "2")
	if code != 0 {
		t.Fatalf("matmul_precision compare: exit %d (arms %+v)", code, res2.Arms)
	}
	for _, a := range res2.Audits {
		switch a.Arm {
		case "matmul_precision=highest #2":
			if !a.Bitwise || a.Steps < 2 {
				t.Errorf("highest vs highest: %+v, want bitwise equal", a)
			}
		case "matmul_precision=medium":
			if mediumDiffers && (a.Bitwise || a.FirstDiff != 1) {
				t.Errorf("highest vs medium: %+v, want the first differing step named (1, the first: its update already differs)", a)
			}
			if !mediumDiffers && !a.Bitwise {
				t.Errorf("highest vs medium: %+v, want bitwise equal (torch computes x@y alike under both on this CPU)", a)
			}
		}
	}
	if len(res2.Audits) != 2 {
		t.Errorf("audits %+v, want two arms against A", res2.Audits)
	}
	metrics := map[string]livestate.MetricCompare{}
	for _, m := range res.Metrics {
		metrics[m.Arm] = m
	}
	if m := metrics["lr=0.05 #2"]; m.Metric != "loss" || m.Verdict != "inside" {
		t.Errorf("A/A loss %+v: want inside the envelope", m)
	}
	if m := metrics["lr=1.0"]; m.Verdict != "outside" {
		t.Errorf("lr=1.0 loss %+v: want outside the envelope", m)
	}
}

// TestTorchCPUTraceReport: a torch.profiler trace of CPU-only SDPA (the
// math backend) written by the real PyTorch reports its CPU operators by
// self time; report/testdata/check_report.py recomputes count, total and
// busy from the JSON alone, and the math path's bmm and softmax are
// attention (under aten::scaled_dot_product_attention).
func TestTorchCPUTraceReport(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed on the host: the independent check cannot run")
	}
	trace := r.Dst + "/math.json"
	gen := r.Command("python3", "-c", `
import torch, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.set_num_threads(1)
q = torch.randn(8, 4, 43, 16)
with profile(activities=[ProfilerActivity.CPU]) as p:
    with sdpa_kernel(SDPBackend.MATH):
        for _ in range(3):
            F.scaled_dot_product_attention(q, q, q)
p.export_chrome_trace("`+trace+`")
`)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("torch.profiler: %v\n%s", err, out)
	}
	rep, err := r.Command(r.Bin, "report", "--format", "json", trace).Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	repPath := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(repPath, rep, 0o644); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(r.Dir, strings.TrimPrefix(trace, "/"))
	res, err := exec.Command(py, filepath.Join(testutil.RepoRoot(t), "report", "testdata", "check_report.py"), host, repPath).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(res), "OK ") {
		t.Errorf("independent check: %v\n%s", err, res)
	}
	var doc struct {
		Kernels []struct {
			Name     string `json:"name"`
			Category string `json:"category"`
			Count    int64  `json:"count"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal(rep, &doc); err != nil {
		t.Fatal(err)
	}
	cat := map[string]string{}
	for _, k := range doc.Kernels {
		if k.Name == "aten::bmm" || k.Name == "aten::_softmax" {
			if cat[k.Name] != "" && cat[k.Name] != k.Category {
				t.Errorf("%s in two categories", k.Name)
			}
			cat[k.Name] = k.Category
		}
	}
	if cat["aten::bmm"] != "attention" || cat["aten::_softmax"] != "attention" {
		t.Errorf("math SDPA operators' categories %v: want attention", cat)
	}
}

// runAgentScript runs body with python3 inside the root after a prelude
// that writes the agent's files there (as rlktop extracts them), starts a
// Unix socket standing in for rlktop (conns gets its connection; with
// drain it reads and discards, like a session that never imports windows),
// sets RLKTOP_SOCKET and env, imports torch and starts the agent as its
// sitecustomize would. It returns the combined output.
func runAgentScript(t *testing.T, r *testutil.TorchRoot, drain bool, env map[string]string, body string) string {
	t.Helper()
	for name, b := range pyagentFiles() {
		p := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst, "/"), "py", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sets strings.Builder
	for k, v := range env {
		fmt.Fprintf(&sets, "os.environ[%q] = %q\n", k, v)
	}
	pyDrain := "False"
	if drain {
		pyDrain = "True"
	}
	prelude := `
import os, socket, sys, tempfile, threading, time
d = tempfile.mkdtemp(); path = os.path.join(d, "s")
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(1)
conns = []
def accept():
    conns.append(srv.accept()[0])
    while ` + pyDrain + ` and conns[0].recv(65536): pass
threading.Thread(target=accept, daemon=True).start()
os.environ["RLKTOP_SOCKET"] = path
` + sets.String() + `sys.path.insert(0, "` + r.Dst + `/py")
import torch
import rlktop
rlktop._start(); rlktop._agent.torch_imported(torch)
`
	out, err := r.Command("python3", "-c", prelude+body).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// TestTorchAgentStopsProfilerWhenRlktopDies: rlktop's end of the socket
// closes while a torch.profiler window is open; at the next step boundary
// the agent stops the profiler (left on, it records every later operator
// and memory grows without bound), and the script runs to its end.
func TestTorchAgentStopsProfilerWhenRlktopDies(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	out := runAgentScript(t, r, false, map[string]string{"RLKTOP_KINETO": "4:2"}, `
x = torch.randn(64, 64)
for i in range(12):
    y = x @ x
    rlktop.step()
    if i == 1:
        assert rlktop._agent.window is not None, "no window open at step 1"
        while not conns: time.sleep(0.01)
        conns[0].shutdown(socket.SHUT_RDWR); conns[0].close(); srv.close()
    time.sleep(0.05)
print("dead", rlktop._agent.dead, "window", rlktop._agent.window, "profiler", torch.autograd.profiler._is_profiler_enabled)
`)
	if !strings.Contains(out, "dead True window None profiler False") {
		t.Fatal(out)
	}
}

// TestTorchAgentWindowsDoNotPileUp: while rlktop does not take the
// torch.profiler windows (stopped, or behind: here a listener that reads
// and never imports), the agent starts no new window, so files never pile
// up on disk: 12 steps with a window every 2 leave one file.
func TestTorchAgentWindowsDoNotPileUp(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	out := runAgentScript(t, r, true, map[string]string{"RLKTOP_KINETO": "2:1"}, `
x = torch.randn(32, 32)
for i in range(12):
    y = x @ x
    rlktop.step()
a = rlktop._agent
print("files", len(os.listdir(a.tmpdir)), "skipped", a.windows_skipped)
`)
	// 12 step() calls: the first ends iteration 0 and starts step 1, the
	// others end steps 1–11 and start steps 2–12; windows start at even
	// ones: 2, 4 and 6 are written (at most three wait), 8, 10 and 12
	// skipped — 3.
	if !strings.Contains(out, "files 3 skipped 3") {
		t.Fatalf("want three window files and 3 skipped:\n%s", out)
	}
}

// TestTorchAgentProfilerSteps: a loop that drives its own torch.profiler
// with prof.step() and steps no optimizer gets its steps from there (six
// prof.step() calls: the first starts step 1, steps 1–5 end, step 6 runs).
func TestTorchAgentProfilerSteps(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	out := runAgentScript(t, r, true, nil, `
from torch.profiler import profile, schedule, ProfilerActivity
x = torch.randn(16, 16)
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=1)) as prof:
    for i in range(6):
        y = x @ x
        prof.step()
print("profiler-only steps", rlktop._agent.step_n)
`)
	if !strings.Contains(out, "profiler-only steps 6") {
		t.Fatal(out)
	}
}
