package attrib

import (
	"fmt"

	"github.com/rlktop/rlktop/internal/units"
)

// Gate is a CI decision on a comparison's step-time ratio B/A and its
// confidence interval: it fails only when the interval excludes
// the threshold, so a noisy runner whose interval straddles it passes.
type Gate struct {
	// SlowerPct fails when B is certainly slower than A by more than this
	// many percent: CILow > 1 + SlowerPct/100. Negative: off.
	SlowerPct float64
	// FasterPct fails when an expected win of at least this many percent
	// certainly vanished: CILow > 1 − FasterPct/100 (the fastest B
	// consistent with the data is still slower than the promised win).
	// Negative: off.
	FasterPct float64
}

// Check returns whether r fails the gate and a sentence saying why it
// passed or failed, with the numbers. An invalid comparison (valid false)
// fails: a crashed or NaN arm is never a pass.
func (g Gate) Check(r Ratio, valid bool) (fail bool, why string) {
	if !valid {
		return true, "gate: the comparison is invalid (an arm crashed, stopped early or produced NaN)"
	}
	iv := "B/A " + units.Ratio(r.Value, r.CILow, r.CIHigh)
	var reasons []string
	if g.SlowerPct >= 0 {
		th := 1 + g.SlowerPct/100
		if r.CILow > th {
			return true, fmt.Sprintf("gate failed: %s: B is slower than A by more than %g%% (the whole interval is above %.3f)", iv, g.SlowerPct, th)
		}
		reasons = append(reasons, fmt.Sprintf("not certainly more than %g%% slower (interval reaches %.3f ≤ %.3f)", g.SlowerPct, r.CILow, th))
	}
	if g.FasterPct >= 0 {
		th := 1 - g.FasterPct/100
		if r.CILow > th {
			return true, fmt.Sprintf("gate failed: %s: the expected %g%% win is not there (the whole interval is above %.3f)", iv, g.FasterPct, th)
		}
		reasons = append(reasons, fmt.Sprintf("a %g%% win is still possible (interval reaches %.3f ≤ %.3f)", g.FasterPct, r.CILow, th))
	}
	if len(reasons) == 0 {
		return false, ""
	}
	why = "gate passed: " + iv + ": "
	for i, s := range reasons {
		if i > 0 {
			why += "; "
		}
		why += s
	}
	return false, why
}
