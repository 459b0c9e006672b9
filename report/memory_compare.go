package report

import (
	"fmt"
	"strings"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// writeArmMemory prints each arm's memory (livestate.ArmMemory): the
// median step peak, temporaries per step, and per category the
// temporaries and the largest one, so that a flag's effect on what is
// materialised shows (sdpa math → flash: attention's [B,H,T,T] scores
// gone).
func writeArmMemory(b *strings.Builder, ms []livestate.ArmMemory, md bool) {
	if len(ms) == 0 {
		return
	}
	header := []string{"arm", "steps", "peak allocated", "peak reserved", "temporaries/step"}
	var rows [][]string
	for _, m := range ms {
		rows = append(rows, []string{m.Arm, fmt.Sprint(m.Steps), units.Bytes(m.PeakAllocatedBytes), units.Bytes(m.PeakReservedBytes), units.Bytes(m.TempBytesPerStep)})
	}
	writeSmallTable(b, "memory per arm (median step peak; counted steps with memory events)", header, rows, md)
	var cats []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, c := range m.Categories {
			if !seen[c.Category] {
				seen[c.Category] = true
				cats = append(cats, c.Category)
			}
		}
	}
	if len(cats) == 0 {
		return
	}
	header = []string{"category", "arm", "temporaries/step", "largest", "allocated by"}
	rows = nil
	for _, cat := range cats {
		for _, m := range ms {
			row := []string{cat, m.Arm, "0 B", "-", "-"}
			for _, c := range m.Categories {
				if c.Category == cat {
					row = []string{cat, m.Arm, units.Bytes(c.TempBytesPerStep), units.Bytes(c.LargestBytes), orNone(c.LargestOperator)}
				}
			}
			rows = append(rows, row)
		}
	}
	writeSmallTable(b, "temporaries by category per arm (allocated and freed inside one step)", header, rows, md)
}
