package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// The real-PyTorch tests (issue 10): a CGO_ENABLED=0 rlktop runs
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
	for _, k := range doc.Kernels {
		kern[k.Name] = k.Category
	}
	// Linear layers run aten::addmm; SDPA's default backend on CPU is the
	// fused flash kernel, attributed to attention.
	if _, ok := kern["aten::addmm"]; !ok {
		t.Errorf("no aten::addmm among %d operators", len(kern))
	}
	if c := kern["aten::_scaled_dot_product_flash_attention_for_cpu"]; c != "attention" {
		t.Errorf("flash SDPA operator category %q, want attention", c)
	}
	if doc.Flags["sdpa"] != "default" || doc.Flags["compile"] != "on" {
		t.Errorf("flags %v: want the agent's sdpa=default, compile=on", doc.Flags)
	}
}

// TestTorchCompareSDPA: `rlktop compare --flag sdpa=math,flash` runs both
// arms in one process (live mode, no restart): the flash operator only in
// the flash arm, the math arm's bmm counted as attention (under
// aten::scaled_dot_product_attention), valid arms and a ratio with its
// interval.
func TestTorchCompareSDPA(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	args := append([]string{r.Bin, "compare", "--flag", "sdpa=math,flash", "--steps", "4", "--block", "2", "--format", "json", "--top", "0"}, exampleCmd(r)...)
	cmd := r.Command(args...)
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=2:1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("compare: %v\n%s\n%s", err, tail(string(out), 2000), tail(stderr.String(), 3000))
	}
	var doc struct {
		Mode string `json:"mode"`
		Arms []struct {
			Name  string `json:"name"`
			Valid bool   `json:"valid"`
			Steps int    `json:"steps"`
		} `json:"arms"`
		Ratio struct {
			Value, CILow, CIHigh float64
		} `json:"ratio"`
		Rows []struct {
			Group string  `json:"group"`
			Key   string  `json:"key"`
			ANs   float64 `json:"a_ns"`
			BNs   float64 `json:"b_ns"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var ratio struct {
		Value  float64 `json:"value"`
		CILow  float64 `json:"ci_low"`
		CIHigh float64 `json:"ci_high"`
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(out, &raw)
	json.Unmarshal(raw["ratio"], &ratio)
	if doc.Mode != "live" {
		t.Errorf("mode %q, want live (flags switched inside the process)", doc.Mode)
	}
	if len(doc.Arms) < 2 || !doc.Arms[0].Valid || !doc.Arms[1].Valid || doc.Arms[0].Steps < 4 || doc.Arms[1].Steps < 4 {
		t.Errorf("arms %+v: want two valid arms of >= 4 steps", doc.Arms)
	}
	if !(ratio.Value > 0 && ratio.CILow <= ratio.Value && ratio.Value <= ratio.CIHigh) {
		t.Errorf("ratio %+v: want a positive ratio inside its interval", ratio)
	}
	row := func(group, key string) (a, b float64, ok bool) {
		for _, x := range doc.Rows {
			if x.Group == group && x.Key == key {
				return x.ANs, x.BNs, true
			}
		}
		return 0, 0, false
	}
	if a, b, ok := row("kernel", "aten::_scaled_dot_product_flash_attention_for_cpu"); !ok || a != 0 || b <= 0 {
		t.Errorf("flash operator A %v B %v (found %v): want it only in the flash arm", a, b, ok)
	}
	if a, b, ok := row("kernel", "aten::bmm"); !ok || a <= 0 || b != 0 {
		t.Errorf("aten::bmm A %v B %v (found %v): want it only in the math arm (the example has no other bmm)", a, b, ok)
	}
	if a, _, ok := row("category", "attention"); !ok || a <= 0 {
		var keys []string
		for _, x := range doc.Rows {
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
	args := append([]string{r.Bin, "compare", "--flag", "compile=off,on", "--steps", "3", "--block", "3", "--no-noise", "--format", "json"},
		exampleCmd(r, "--compile", "--layers", "1")...)
	cmd := r.Command(args...)
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("compare: %v\n%s\n%s", err, tail(string(out), 2000), tail(stderr.String(), 3000))
	}
	var doc struct {
		Mode string `json:"mode"`
		Arms []struct {
			Name  string            `json:"name"`
			Flags map[string]string `json:"flags"`
			Valid bool              `json:"valid"`
			Steps int               `json:"steps"`
		} `json:"arms"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Mode != "live" || len(doc.Arms) != 2 {
		t.Fatalf("mode %q, %d arms: want live with 2", doc.Mode, len(doc.Arms))
	}
	for i, want := range []string{"off", "on"} {
		a := doc.Arms[i]
		if !a.Valid || a.Steps < 3 || a.Flags["compile"] != want {
			t.Errorf("arm %d %+v: want valid, >= 3 steps, compile=%s", i, a, want)
		}
	}
}
