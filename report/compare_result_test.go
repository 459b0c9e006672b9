package report

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// TestWriteCompareResultTables: the small tables under a comparison in
// both text formats; expected cells written by hand (md cells through
// escape.Markdown: "loss_ema|x" → `loss\_ema\|x`).
func TestWriteCompareResultTables(t *testing.T) {
	res := &livestate.CompareResult{
		Arms:     []attrib.ArmStats{{Name: "a=1", Valid: true, Steps: 2, MedianNs: 999_700}, {Name: "a=2", Valid: true, Steps: 2, MedianNs: 500_000}},
		Ratio:    attrib.Ratio{Value: 0.5, CILow: 0.45, CIHigh: 0.55},
		Verdict:  attrib.VerdictFaster,
		Metrics:  []livestate.MetricCompare{{Metric: "loss_ema|x", Arm: "a=2", Steps: 2, Mean: 0.25}},
		Checks:   []livestate.CheckSummary{{Name: "grad", Arm: "a=2", Steps: 2, NaNSteps: []int64{3, 7}}},
		Mode:     "live",
		Schedule: []livestate.StepLabel{{Step: 0, Arm: "a=1", Phase: livestate.PhaseWarmup}, {Step: 1, Arm: "a=1", Phase: livestate.PhaseCounted}},
		Notes:    []string{"a_note"},
		WallNs:   999_700,
	}
	var b strings.Builder
	if err := WriteCompareResult(&b, res, Options{Format: "md", Top: -1}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**step time B/A: 0.500 [0.450, 0.550] — FASTER",
		"| metric | arm | steps | mean | A/A′ envelope | verdict | steps inside/edge/outside |\n|---|---|---|---|---|---|---|\n| loss\\_ema\\|x | a=2 | 2 | 0.25 | - | - | - |\n",
		"| grad | a=2 | 2 | 2 steps: 3, 7 (arm invalid) |\n",
		"_mode live; 2 steps run (1 counted, 1 warm-up or switching); wall 1.00 ms_\n",
		"_Note: a\\_note_\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("md lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteCompareResult(&b, res, Options{Format: "table", Top: -1}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"NaN/Inf checks (rlktop.check):\ncheck  arm  steps  NaN/Inf\ngrad   a=2  2      2 steps: 3, 7 (arm invalid)\n",
		"consistency: not available",
		"\nnote: a_note\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestWriteSuggestTable: a tried flag's row; ratios by units.Ratio.
func TestWriteSuggestTable(t *testing.T) {
	doc := &SuggestDoc{ProfileSteps: 6, Flags: map[string]string{"attention": "math"},
		Findings: []attrib.Finding{{ID: "attention-math-fallback", Title: "attention runs on the *math* fallback", Evidence: []string{"42% of GPU time"}}},
		Tried: []livestate.Tried{{FindingID: "attention-math-fallback", Key: "attention", From: "math", To: "fused", Valid: true,
			Step: attrib.Ratio{Value: 0.889, CILow: 0.8, CIHigh: 0.95}, Verdict: attrib.VerdictFaster,
			Row: "attention", RowRatio: attrib.Ratio{Value: 0.75, CILow: 0.7, CIHigh: 0.8}, HaveOutputs: true, MaxAbs: 1.79e-6}}}
	var b strings.Builder
	if err := WriteSuggest(&b, doc, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Findings** (profile of 6 steps; flags attention=math)\n\n1. attention runs on the \\*math\\* fallback [attention-math-fallback]: 42% of GPU time; no flag to test\n",
		"| attention-math-fallback | attention | math | fused | 0.889 [0.800, 0.950] | faster | attention 0.750 [0.700, 0.800] | max \\|Δ\\| 1.8e-06, not bitwise |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("md lacks %q:\n%s", want, b.String())
		}
	}
}

// TestWriteGate: the gate's line per format (nothing in JSON or without one).
func TestWriteGate(t *testing.T) {
	why := "gate failed: B/A 1.100 [1.060, 1.150]: B is slower than A by more than 5%"
	for _, c := range []struct{ why, format, want string }{
		{why, "table", why + "\n"},
		{why, "md", "\n**" + why + "**\n"},
		{why, "json", ""},
		{"", "table", ""},
		{"a_b", "md", "\n**a\\_b**\n"},
	} {
		var b strings.Builder
		if err := WriteGate(&b, c.why, Options{Format: c.format}); err != nil || b.String() != c.want {
			t.Errorf("WriteGate(%q, %s) = %q, %v; want %q", c.why, c.format, b.String(), err, c.want)
		}
	}
}
