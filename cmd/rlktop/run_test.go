package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// `rlktop run --headless` on the built-in loop: the JSON carries the report
// contract plus the step summary and the flags; --by picks
// the table; a bad flag value is refused before any child starts.
func TestRunHeadless(t *testing.T) {
	bin := needRecordBin(t)
	args := append([]string{"run", "--headless", "--steps", "6", "--format", "json", "--flag", "attention=math"}, tinyLoop...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("run --headless: %v", err)
	}
	var doc struct {
		Totals struct {
			KernelCount int64 `json:"kernel_count"`
		} `json:"totals"`
		Steps struct {
			Count    int64 `json:"count"`
			MedianNs int64 `json:"median_ns"`
			P10Ns    int64 `json:"p10_ns"`
			P90Ns    int64 `json:"p90_ns"`
		} `json:"steps"`
		Flags   map[string]string `json:"flags"`
		Kernels []struct {
			Name string `json:"name"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Steps.Count != 6 || doc.Steps.P10Ns > doc.Steps.MedianNs || doc.Steps.MedianNs > doc.Steps.P90Ns || doc.Steps.MedianNs <= 0 {
		t.Errorf("steps %+v, want 6 ordered positive percentiles", doc.Steps)
	}
	if doc.Flags["attention"] != "math" || doc.Flags["envs"] != "8" {
		t.Errorf("flags %v", doc.Flags)
	}
	names := map[string]bool{}
	for _, k := range doc.Kernels {
		names[k.Name] = true
	}
	if !names["attn_math_qk"] || names["attn_fused_fwd"] || doc.Totals.KernelCount == 0 {
		t.Errorf("kernels %v (count %d): want attn_math_* and no attn_fused_fwd", names, doc.Totals.KernelCount)
	}

	tab, err := exec.Command(bin, append([]string{"run", "--headless", "--steps", "2", "--by", "stage"}, tinyLoop...)...).Output()
	if err != nil || !strings.Contains(string(tab), "stage ") || !strings.Contains(string(tab), "forward") {
		t.Errorf("--by stage: %v\n%s", err, tab)
	}

	bad := exec.Command(bin, "run", "--headless", "--steps", "2", "--flag", "attention=bogus")
	msg, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "bogus") || strings.Contains(string(msg), "last stderr lines") {
		t.Errorf("bad flag: err %v, output %s (want one error before any child)", err, msg)
	}
}

// TestRunHeadlessByFinding: `run --headless --by finding` prints the ranked
// findings of the run (refused as an unknown view), here the
// built-in loop with attention=math, whose attention runs the math
// kernels by construction (attn_math_*): the attention-math-fallback finding is
// listed. A bad --by is refused before anything runs (no step summary,
// no child's output) and names finding among the choices.
func TestRunHeadlessByFinding(t *testing.T) {
	bin := needRecordBin(t)
	out, err := exec.Command(bin, append([]string{"run", "--headless", "--steps", "6", "--by", "finding", "--format", "json", "--flag", "attention=math"}, tinyLoop...)...).Output()
	if err != nil {
		t.Fatalf("run --headless --by finding: %v\n%s", err, out)
	}
	var doc struct {
		Findings []struct {
			ID string `json:"id"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || f.ID == "attention-math-fallback"
	}
	if !found {
		t.Errorf("findings %+v: want attention-math-fallback (attention=math)", doc.Findings)
	}
	msg, err := exec.Command(bin, "run", "--headless", "--steps", "2", "--by", "nosuch").CombinedOutput()
	if err == nil || !strings.Contains(string(msg), `--by "nosuch"`) || !strings.Contains(string(msg), "finding") || strings.Contains(string(msg), "steps:") {
		t.Errorf("--by nosuch: err %v, output %s (want one error before the run, naming finding)", err, msg)
	}
}
