package views

import (
	"math"
	"strings"
)

// maxBar is the longest bar drawn, in cells.
const maxBar = 60

// eighths are the partial block runes, index = eighths of a cell filled.
var eighths = [...]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar draws frac (clamped to [0,1]) of w cells, in eighths of a cell,
// padded with the empty rune to exactly w cells.
func (st *Styles) bar(frac float64, w int) string {
	if w <= 0 {
		return ""
	}
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	e := int(math.Round(frac * float64(w) * 8))
	full, part := e/8, e%8
	fill := strings.Repeat(st.BarFull, full) + eighths[part]
	used := full
	if part > 0 {
		used++
	}
	return st.Bar.Fill.Render(fill) + st.Bar.Empty.Render(strings.Repeat(st.BarEmpty, w-used))
}
