package attrib

import (
	"strings"
	"testing"
)

// TestGate: the gate fails only when the interval excludes the threshold.
func TestGate(t *testing.T) {
	slower := Gate{SlowerPct: 5, FasterPct: -1}
	cases := []struct {
		g     Gate
		r     Ratio
		valid bool
		fail  bool
	}{
		{slower, Ratio{Value: 1.30, CILow: 1.20, CIHigh: 1.40}, true, true},                              // certainly > 5% slower
		{slower, Ratio{Value: 1.08, CILow: 1.01, CIHigh: 1.15}, true, false},                             // could be < 5%
		{slower, Ratio{Value: 1.00, CILow: 0.90, CIHigh: 1.10}, true, false},                             // A/A
		{slower, Ratio{Value: 0.90, CILow: 0.80, CIHigh: 0.95}, false, true},                             // invalid never passes
		{Gate{SlowerPct: -1, FasterPct: 20}, Ratio{Value: 0.95, CILow: 0.90, CIHigh: 1.00}, true, true},  // promised 20% win gone
		{Gate{SlowerPct: -1, FasterPct: 20}, Ratio{Value: 0.82, CILow: 0.75, CIHigh: 0.90}, true, false}, // win still possible
	}
	for i, c := range cases {
		fail, why := c.g.Check(c.r, c.valid)
		if fail != c.fail || !strings.HasPrefix(why, "gate") {
			t.Errorf("case %d: fail %v (%s), want %v", i, fail, why, c.fail)
		}
	}
}
