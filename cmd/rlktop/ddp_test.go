package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestDDPGlooRanks (issue 12 items 1–2, "done when"): a real two-rank
// PyTorch DDP job on CPU (gloo), rank 1 slowed on purpose by a 40 ms
// sleep before each backward pass (examples/ddp_gloo.py), writes one
// Kineto trace per rank; `rlktop report --format json` of both must give
// per-rank numbers, step spreads and collective matching equal to
// testdata/ddp_check.py, a standard-library script reading the same
// files by the rules the issue states. The deliberate slowdown must show
// as rank 1 arriving last and rank 0 waiting for it.
func TestDDPGlooRanks(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	run := r.Command("python3", r.Dst+"/ddp_gloo.py", "--world", "2", "--steps", "8", "--slow-rank", "1", "--slow-ms", "40",
		"--trace-dir", r.Dst+"/ddp")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("ddp_gloo.py: %v\n%s", err, tail(string(out), 3000))
	}
	dir := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst, "/"), "ddp")
	files := []string{filepath.Join(dir, "rank0.json"), filepath.Join(dir, "rank1.json")}

	cmd := newReportCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"--format", "json"}, files...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != nil {
		t.Fatalf("report: %v\n%s", err, errOut.String())
	}
	check := exec.Command("python3", "testdata/ddp_check.py", files[0], files[1])
	check.Stderr = os.Stderr
	want, err := check.Output()
	if err != nil {
		t.Fatalf("ddp_check.py: %v", err)
	}
	type doc struct {
		Sources     []map[string]any `json:"sources"`
		StepSpreads []map[string]any `json:"step_spreads"`
		Matched     int              `json:"collectives_matched"`
	}
	var got, exp doc
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatalf("ddp_check.py JSON: %v\n%s", err, want)
	}
	if len(got.Sources) != 2 || len(exp.Sources) != 2 {
		t.Fatalf("sources: rlktop %d, check %d", len(got.Sources), len(exp.Sources))
	}
	for i, e := range exp.Sources {
		for k, v := range e {
			if k == "path" {
				continue
			}
			if !reflect.DeepEqual(got.Sources[i][k], v) {
				t.Errorf("rank %v %s: rlktop %v, independent %v", e["rank"], k, got.Sources[i][k], v)
			}
		}
	}
	if len(exp.StepSpreads) < 4 || len(got.StepSpreads) != len(exp.StepSpreads) {
		t.Fatalf("step spreads: rlktop %d, check %d (want the 6 traced steps)", len(got.StepSpreads), len(exp.StepSpreads))
	}
	for i, e := range exp.StepSpreads {
		if !reflect.DeepEqual(got.StepSpreads[i], e) {
			t.Errorf("step spread %d:\n rlktop %v\n check  %v", i, got.StepSpreads[i], e)
		}
	}
	if got.Matched != exp.Matched || exp.Matched < 6 {
		t.Errorf("collectives matched: rlktop %d, check %d (want >= 6: one gloo all-reduce per step at least)", got.Matched, exp.Matched)
	}
	// The deliberate straggler: rank 1 arrives last at most collectives,
	// rank 0 waits for it (about 40 ms a step) and rank 1 hardly waits.
	r0, r1 := got.Sources[0], got.Sources[1]
	if r1["last_arrivals"].(float64) < 0.8*float64(got.Matched) {
		t.Errorf("rank 1 arrived last at %v of %d collectives: want most (it sleeps 40 ms a step)", r1["last_arrivals"], got.Matched)
	}
	if w0, w1 := r0["coll_wait_ns"].(float64), r1["coll_wait_ns"].(float64); w0 < 4*20e6 || w1 > w0/4 {
		t.Errorf("collective wait: rank 0 %.0f ns, rank 1 %.0f ns: want rank 0 waiting (>= 20 ms a step), rank 1 much less", w0, w1)
	}
}
