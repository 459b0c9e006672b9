package views_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
)

// explainFixture is a comparison with 10 steps per arm (the TUI's) whose
// overall interval holds 1, and rows that show each branch of the rule:
// elementwise 0.817 [0.659–0.978] with an envelope of ln 1.4 (±40%):
// the interval excludes 1 but the ratio is inside → within noise (the
// example); gemm 0.700 [0.650–0.750] with ±10% → faster; the
// attention category (the flag's) comes first though its Δ is smaller.
func explainFixture() *livestate.CompareResult {
	return &livestate.CompareResult{
		Arms: []attrib.ArmStats{{Name: "attention=math", Valid: true, Steps: 10, MedianNs: 200e6, P10Ns: 150e6, P90Ns: 260e6},
			{Name: "attention=fused", Valid: true, Steps: 10, MedianNs: 190e6, P10Ns: 140e6, P90Ns: 250e6},
			{Name: "A′ (attention=math)", Valid: true, Steps: 10, MedianNs: 205e6, P10Ns: 150e6, P90Ns: 270e6}},
		Ratio: attrib.Ratio{Value: 0.95, CILow: 0.80, CIHigh: 1.12}, Verdict: attrib.VerdictNoise,
		Noise: &attrib.Noise{Ratio: 1.02, CILow: 0.9, CIHigh: 1.15},
		Mode:  "live", WallNs: 20e9,
		Rows: []attrib.RowComparison{
			{Group: "category", Key: "gemm", ANs: 100e6, BNs: 70e6, DeltaNs: -30e6, Ratio: 0.7, CILow: 0.65, CIHigh: 0.75, Verdict: attrib.VerdictFaster, NoiseLn: math.Log(1.1)},
			{Group: "category", Key: "elementwise", ANs: 60e6, BNs: 49e6, DeltaNs: -11e6, Ratio: 0.817, CILow: 0.659, CIHigh: 0.978, Verdict: attrib.VerdictNoise, NoiseLn: math.Log(1.4)},
			{Group: "category", Key: "attention", ANs: 30e6, BNs: 25e6, DeltaNs: -5e6, Ratio: 0.833, CILow: 0.7, CIHigh: 1.05, Verdict: attrib.VerdictNoise, NoiseLn: math.Log(1.2)},
		},
	}
}

func TestCompareExplains(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			v := views.NewCompare(styles())
			v.SetSize(w, 24)
			v.SetFocused(true)
			v.SetState(views.CompareState{Phase: views.CompareDone, What: "attention: math vs fused", Flag: "attention", Result: explainFixture()})
			out := render(t, v.View(), w, 24)
			golden.RequireEqual(t, out)
			if rows := v.Rows(); rows[0].Key != "attention" || rows[1].Key != "gemm" || rows[2].Key != "elementwise" {
				t.Errorf("row order %s %s %s, want attention (the flag's) then by |Δ|", rows[0].Key, rows[1].Key, rows[2].Key)
			}
			flat := strings.Join(strings.Fields(out), " ")
			// Overall: [0.80–1.12] holds 1. Steps: half-width (ln 1.12 − ln 0.80)/2
			// = 0.16824; |ln 0.95| = 0.05129; 10·(0.16824/0.05129)² = 107.6 → 108.
			for _, s := range []string{"why: the interval [0.800, 1.120] holds 1 → within noise",
				"is too wide to decide with 10 steps per arm: about 108 would resolve a ratio of 0.950",
				"±40%", "±10%"} {
				if !strings.Contains(flat, s) {
					t.Errorf("view lacks %q", s)
				}
			}
			press(v, "down", "down") // elementwise
			flat = strings.Join(strings.Fields(render(t, v.View(), w, 24)), " ")
			// The envelope ±40% holds the ratios 1/1.4 = 0.714 to 1.400.
			if !strings.Contains(flat, "elementwise: the interval excludes 1, but 0.817 is inside the A/A′ envelope [0.714, 1.400] → within noise") {
				t.Errorf("elementwise reason missing:\n%s", flat)
			}
		})
	}
}

// TestEnvelopeWide: an envelope of a factor 2 or more is written as the
// factor ("×3.8", ratios 1/3.84 … 3.84) — "±284%" read as if 0.3 were
// inside; below 2 as a percentage.
func TestEnvelopeWide(t *testing.T) {
	for ln, want := range map[float64]string{math.Log(3.84): "×3.8", math.Log(2): "×2.0", math.Log(1.4): "±40%", 0: "—"} {
		if got := views.Envelope(ln); got != want {
			t.Errorf("Envelope(ln %.3f) = %q, want %q", ln, got, want)
		}
	}
}

func TestStepsToDecide(t *testing.T) {
	// Already decided: 0.
	if n := views.StepsToDecide(0.6, 0.55, 0.66, 0.05, 4); n != 0 {
		t.Errorf("decided interval: %d", n)
	}
	// The TUI run seen in tmux: 0.651 [0.419–0.799] (excludes 1) inside an
	// envelope of ±58% (ln 1.58 = 0.45742) with 12 steps per arm:
	// |ln 0.651| = 0.42925; 12·(0.45742/0.42925)² = 13.63 → 14.
	if n := views.StepsToDecide(0.651, 0.419, 0.799, math.Log(1.58), 12); n != 14 {
		t.Errorf("envelope case: %d, want 14", n)
	}
	// Ratio 1.000 (< 1% away): resolve a 5% difference. Half-width
	// (ln 1.1 − ln 0.9)/2 = 0.100335; ln 1.05 = 0.048790;
	// 10·(0.100335/0.048790)² = 42.29 → 43.
	if n := views.StepsToDecide(1.0, 0.9, 1.1, 0, 10); n != 43 {
		t.Errorf("ratio 1: %d, want 43", n)
	}
}

func TestCompareConfirm(t *testing.T) {
	v := views.NewCompare(styles())
	v.SetSize(80, 6)
	v.SetState(views.CompareState{Confirm: "C again compares attention: math vs fused; the live child stops and its totals restart"})
	if out := render(t, v.View(), 80, 6); !strings.Contains(strings.Join(strings.Fields(out), " "), "C again compares attention: math vs fused; the live child stops and its totals restart") {
		t.Errorf("confirm:\n%s", out)
	}
}
