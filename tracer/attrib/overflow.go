package attrib

import (
	"fmt"
	"math"

	"github.com/rlktop/rlktop/internal/interval"
)

// addSat is x+y saturated (interval.AddSat). Every duration sum of the
// aggregator (ns) goes through it: a sum that reaches math.MaxInt64
// (about 292 years) stays there, and Snapshot names it in a warning
// (overflowWarnings) instead of printing a negative or wrapped total.
func addSat(x, y int64) int64 { return interval.AddSat(x, y) }

// subSat is x-y saturated (interval.SubSat): a span or interval length, ns.
func subSat(x, y int64) int64 { return interval.SubSat(x, y) }

// overflowWarning is the snapshot warning for the totals that saturated;
// what lists them ("the kernel total", "3 kernels' totals: a, b, c").
func overflowWarning(what []string) string {
	list := what[0]
	for i, w := range what[1:] {
		if i == len(what)-2 {
			list += " and " + w
		} else {
			list += ", " + w
		}
	}
	return fmt.Sprintf("int64 overflow: %s exceeded %d ns (about 292 years) and %s shown as that maximum, not the true sum; the input holds implausible durations or times", list, int64(math.MaxInt64), isAre(len(what)))
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
