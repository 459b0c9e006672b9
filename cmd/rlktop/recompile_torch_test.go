package main

import (
	"encoding/json"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestTorchCompareRecompiles (an arm that recompiles is
// invalid, never faster): testdata/torch_recompile.py calls a
// torch.compile'd function (backend eager, dynamic=False) on a fixed 8x8
// input with shapes=fixed, and on 4+step rows with shapes=vary, so that
// every vary step fails dynamo's shape guard and compiles the frame again
// (1 frame per step: checked by hand in the root, counters["frames"]
// ["total"] = 6 after 6 vary steps). Live comparison fixed vs vary: A
// compiles only in its first, warm-up step and stays valid; B is invalid
// (exit status 3), its reason names counted steps each with 1 frame, and
// its verdict is neither faster nor slower. Then a recording of the vary
// script: `report --by finding` ranks the recompile finding first,
// invalid, with 1 frame per step after the first 3 and 3 in them.
func TestTorchCompareRecompiles(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := testutil.CopyIntoRoot(t, r, "testdata/torch_recompile.py")
	res, code := runCompareJSON(t, r, "0", []string{"--flag", "shapes=fixed,vary", "--no-noise", "--steps", "3", "--block", "3"},
		[]string{"python3", script})
	if code != 3 {
		t.Errorf("exit status %d, want 3 (an invalid arm)", code)
	}
	if len(res.Arms) != 2 || !res.Arms[0].Valid || res.Arms[1].Valid {
		t.Fatalf("arms %+v: want A (fixed) valid, B (vary) invalid", res.Arms)
	}
	why := res.Arms[1].Reason
	t.Logf("arm B: %s; verdict %q", why, res.Verdict)
	if !strings.Contains(why, "torch.compile compiled") || !strings.Contains(why, "recompiles after warm-up") {
		t.Fatalf("reason %q: want the recompiles named", why)
	}
	m := regexp.MustCompile(`(\d+) \((\d+)\)`).FindAllStringSubmatch(why, -1)
	if len(m) < 3 {
		t.Errorf("reason %q names %d steps, want the 3 counted steps", why, len(m))
	}
	for _, x := range m {
		if n, _ := strconv.Atoi(x[2]); n != 1 {
			t.Errorf("step %s: %d frames compiled, want 1 (one new shape per step)", x[1], n)
		}
	}
	if res.Verdict == "faster" || res.Verdict == "slower" {
		t.Errorf("verdict %q for an invalid arm", res.Verdict)
	}

	rec := path.Join(r.Dst, "vary.rlk")
	if out, err := r.Command(r.Bin, "record", "-o", rec, "--flag", "shapes=vary", "--steps", "10", "--", "python3", script, "12").CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, tail(string(out), 2000))
	}
	out, err := r.Command(r.Bin, "report", "--by", "finding", "--format", "json", rec).Output()
	if err != nil {
		t.Fatalf("report --by finding: %v", err)
	}
	var doc struct{ Findings []attrib.Finding }
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Findings) == 0 {
		t.Fatalf("report --by finding: %v\n%s", err, tail(string(out), 2000))
	}
	f := doc.Findings[0]
	t.Logf("first finding: %s", strings.Join(f.Evidence, "; "))
	late, steps := f.Numbers["recompile_frames"], f.Numbers["recompile_steps"]
	if f.ID != "torch-compile-recompiles" || !f.Invalid || late != steps || steps < 7 || f.Numbers["warmup_frames"] != 3 {
		t.Errorf("first finding %s (invalid %v) %v: want the recompile finding, invalid, 1 frame in each of >= 7 steps after warm-up (steps 4..10 at least), 3 in warm-up (steps 1..3)", f.ID, f.Invalid, f.Numbers)
	}
}

// TestTorchInputBound (input wait when the agent sees the data
// loader): testdata/torch_input.py's dataset sleeps 20 ms per item and its
// step is one 8x8 linear layer. A recording's `report --by finding` names
// the input-bound finding, with at least 20 ms per step in DataLoader
// next() (the sleep) and at least half of the step wall time.
func TestTorchInputBound(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := testutil.CopyIntoRoot(t, r, "testdata/torch_input.py")
	rec := path.Join(r.Dst, "input.rlk")
	if out, err := r.Command(r.Bin, "record", "-o", rec, "--steps", "10", "--", "python3", script, "12").CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, tail(string(out), 2000))
	}
	out, err := r.Command(r.Bin, "report", "--by", "finding", "--format", "json", rec).Output()
	if err != nil {
		t.Fatalf("report --by finding: %v", err)
	}
	var doc struct{ Findings []attrib.Finding }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("report --by finding: %v\n%s", err, tail(string(out), 2000))
	}
	var f *attrib.Finding
	for i := range doc.Findings {
		if doc.Findings[i].ID == "input-bound" {
			f = &doc.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("no input-bound finding in %s", tail(string(out), 2000))
	}
	t.Logf("input-bound: %s", strings.Join(f.Evidence, "; "))
	if n := f.Numbers["steps"]; n < 5 || f.Numbers["wait_ns"]/n < 20e6 || f.Share < 0.5 {
		t.Errorf("input-bound %v, share %.3f: want >= 5 steps, >= 20 ms per step in next(), >= 50%% of the step", f.Numbers, f.Share)
	}
}
