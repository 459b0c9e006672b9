package views

import (
	"fmt"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// memoryLines says each arm's memory (livestate.ArmMemory): the median
// step peak, temporaries per step and the largest temporary of the
// category with most of them, so that a flip that stops materialising a
// tensor shows (sdpa math → flash: attention's scores gone).
func (c *Compare) memoryLines(r *livestate.CompareResult) []string {
	var out []string
	for i, m := range r.Memory {
		if m.Steps == 0 {
			continue
		}
		l := fmt.Sprintf("memory %s: peak %s · temporaries %s/step", fit(escape.Control(m.Arm), 12), FormatBytes(m.PeakAllocatedBytes), FormatBytes(m.TempBytesPerStep))
		if len(m.Categories) > 0 {
			k := m.Categories[0]
			op := "(" + escape.Control(k.LargestOperator) + ")"
			if k.LargestOperator == "" {
				op = attrib.NoOperator
			}
			l += fmt.Sprintf(" · %s largest %s %s", escape.Control(k.Category), FormatBytes(k.LargestBytes), op)
		}
		out = append(out, c.armStyle(i)(fit(l, max(c.w-1, 20))))
	}
	return out
}
