package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// TestSuggestBuiltinMathAttention: `compare --suggest` on the
// built-in loop started on the math attention path (its default) finds
// the math fallback first, with attention=math → fused to test, and its
// comparison reports the fused arm faster: step ratio and attention's
// time per step with intervals below 1, outputs compared (max |Δ|
// small, not bitwise: the fused kernel sums in another order). A/A′ is
// off (--no-noise): the built-in loop's A′ reruns A in the same child,
// and on the shared 2-core machine (load 10–16) its envelope measures
// the other engineers' load more than the loop. Measured (32 steps):
// 0.65× [0.46, 0.80] faster; under load 17 one run in three was
// "within noise" (0.86× [0.55, 1.09]), hence up to three runs.
func TestSuggestBuiltinMathAttention(t *testing.T) {
	bin := needRecordBin(t)
	var doc report.SuggestDoc
	var tr livestate.Tried
	// Up to three runs: a run whose interval reaches 1 ("within noise")
	// on a machine loaded by other test suites (load 16 on 2 cores) is
	// run again; "slower" or "invalid" fails at once.
	for attempt := 1; attempt <= 3; attempt++ {
		cmd := exec.Command(bin, append(append([]string{"compare", "--suggest", "--no-noise"}, attentionLoop...),
			"--steps", "32", "--profile-steps", "6", "--format", "json")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("compare --suggest: %v\n%s", err, tail(stderr.String(), 3000))
		}
		doc = report.SuggestDoc{}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		// Both the math fallback and, against the measured CPU roof,
		// attention being memory-bound (as run and the TUI list it):
		// one flag, compared once.
		ids := map[string]int{}
		for i, f := range doc.Findings {
			ids[f.ID] = i + 1
		}
		if ids["attention-math-fallback"] == 0 || ids["attention-memory-bound"] == 0 {
			t.Fatalf("findings %v: want the math fallback and attention-memory-bound", ids)
		}
		f := doc.Findings[ids["attention-math-fallback"]-1]
		if f.Flag == nil || f.Flag.Key != "attention" || f.Flag.Current != "math" || f.Flag.Value != "fused" || f.Share < 0.10 {
			t.Errorf("finding %+v: want attention math → fused at ≥ 10%% of GPU time", f)
		}
		if doc.Flags["attention"] != "math" {
			t.Errorf("profile flags %v: want attention=math", doc.Flags)
		}
		if len(doc.Tried) != 1 {
			t.Fatalf("tried %+v: want one comparison", doc.Tried)
		}
		tr = doc.Tried[0]
		t.Logf("run %d: %s", attempt, tr)
		if tr.Err != "" || !tr.Valid || tr.Key != "attention" || tr.From != "math" || tr.To != "fused" {
			t.Fatalf("tried %+v", tr)
		}
		if tr.Verdict == attrib.VerdictSlower || tr.Verdict == attrib.VerdictInvalid {
			t.Fatalf("verdict %q: the fused arm is never slower or invalid here", tr.Verdict)
		}
		if tr.Verdict == attrib.VerdictFaster {
			break
		}
	}
	if !(tr.Step.CIHigh < 1 && tr.Step.CILow <= tr.Step.Value && tr.Step.Value <= tr.Step.CIHigh) || tr.Verdict != attrib.VerdictFaster {
		t.Errorf("step %+v verdict %q: want the fused arm faster (its interval below 1)", tr.Step, tr.Verdict)
	}
	if tr.Row != "attention" || !(tr.RowRatio.Value < 1 && tr.RowRatio.CIHigh < 1 && tr.RowRatio.CILow > 0) {
		t.Errorf("attention B/A %+v: want an interval below 1", tr.RowRatio)
	}
	if !tr.HaveOutputs || tr.Bitwise || tr.MaxAbs <= 0 || tr.MaxAbs > 1e-4 || tr.NaN != 0 {
		t.Errorf("outputs %+v: want max |Δ| in (0, 1e-4], not bitwise, no NaN", tr)
	}
	// The table form names the finding, the flag and the interval.
	var txt strings.Builder
	if err := report.WriteSuggest(&txt, &doc, report.Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{". attention runs on the math fallback [attention-math-fallback]", "test --flag attention=math,fused",
		tr.FindingID + "  attention  math     fused", report.RatioText(tr.Step.Value, tr.Step.CILow, tr.Step.CIHigh)} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, txt.String())
		}
	}
}

// attentionLoop sizes the built-in loop so that attention owns most of
// its work (width 12, MLP 16: the GEMMs shrink with width², attention
// with width × 81 tokens): the fused arm's gain then shows in the step
// time above the load noise of a shared 2-core machine (measured: step
// 0.35× [0.22, 0.83], attention 0.39× at 16 steps, load 16).
var attentionLoop = []string{"--flag", "envs=32", "--flag", "layers=2", "--flag", "width=12", "--flag", "mlp=16", "--flag", "head_dim=8"}

// TestTriedString: the line a finding shows after its test.
func TestTriedString(t *testing.T) {
	tr := livestate.TriedOf(fakeResult(), "attention-math-fallback", "attention", "math", "fused", "attention")
	want := "tried attention=fused: step 0.89× [0.80, 0.95] faster, attention 0.75×, outputs max |Δ| 1.8e-06, not bitwise"
	if got := tr.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	res := fakeResult()
	res.CoTenant, res.Notes = true, []string{"GPU co-tenant since 12:00: pid 9 on nvidia GPU 0"}
	tr = livestate.TriedOf(res, "attention-math-fallback", "attention", "math", "fused", "attention")
	if !tr.CoTenant || !strings.HasSuffix(tr.String(), "(another process shared the GPU: timing suspect)") || len(tr.Notes) != 1 {
		t.Errorf("co-tenant: %+v %q", tr, tr.String())
	}
	var b strings.Builder
	report.WriteSuggest(&b, &report.SuggestDoc{Tried: []livestate.Tried{tr}}, report.Options{Format: "table"})
	if !strings.Contains(b.String(), "note: attention-math-fallback: another process shared the GPU") {
		t.Errorf("table lacks the co-tenant note:\n%s", b.String())
	}
}

// TestLiveControllerCompareCommand: the TUI's compare (C, or enter on a
// finding) of a live command compares that command, not the built-in
// loop: a Python loop declaring the flag "slow" (ms added per step),
// slow=0 vs 20: valid arms named after the flag, B about 3× slower
// (10 ms vs 30 ms per step). Before, the controller ran the built-in
// loop, which refused the flag.
func TestLiveControllerCompareCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Python command; skipped with -short")
	}
	live, o := startPythonLive(t, gateScript)
	ctl := loop.NewController(live, o)
	ctl.CompareSteps = 10
	defer ctl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := ctl.Compare(ctx, "slow", []string{"0", "20"}, func(string) {}, func(livestate.StepLabel) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) < 2 || res.Arms[0].Name != "slow=0" || res.Arms[1].Name != "slow=20" || !res.Arms[0].Valid || !res.Arms[1].Valid {
		t.Fatalf("arms %+v", res.Arms)
	}
	// 30 ms against 10 ms of sleep: 3× on a quiet machine; load stretches
	// the short steps' interval (4.0× [2.6, 9.2] seen at load 20), so the
	// check is the verdict, an interval above 1.5 and a ratio near 3 —
	// the built-in loop, which refuses the flag, would give none of them.
	if r := res.Ratio; !(r.CILow > 1.5 && r.Value > 2 && r.Value < 5) || res.Verdict != attrib.VerdictSlower {
		t.Errorf("ratio %+v verdict %q: want about 3× slower", r, res.Verdict)
	}
}
