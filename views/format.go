package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/units"
)

// FormatNs renders a duration in nanoseconds in human units with three
// significant digits: "812 ns", "1.23 µs", "45.6 ms", "1.20 s", and from
// 999.5 s in minutes, hours and days (units.LongDuration). Negative
// values keep their sign. The unit is chosen after rounding, so 999.7 µs
// is "1.00 ms", never "1000 µs".
func FormatNs(ns int64) string {
	if ns < 0 {
		return "-" + FormatNs(-ns)
	}
	v := float64(ns)
	switch {
	case v < 999.5:
		return strconv.FormatInt(ns, 10) + " ns"
	case v < 999.5e3:
		return sig3(v/1e3) + " µs"
	case v < 999.5e6:
		return sig3(v/1e6) + " ms"
	}
	if l, ok := units.LongDuration(ns); ok {
		return l // "16 m 40 s", "102 d 04 h"
	}
	return sig3(v/1e9) + " s"
}

// sig3 formats v (≥ 0.9995) with three significant digits (more for ≥ 1000).
func sig3(v float64) string {
	switch {
	case v < 9.995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// FormatCount renders n with thousands separators: 1234567 → "1,234,567".
func FormatCount(n int64) string {
	if n < 0 {
		return "-" + FormatCount(-n)
	}
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// FormatShare renders a fraction (0.123) as a percentage ("12.3%").
func FormatShare(f float64) string {
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// FormatBytes renders a byte count in binary units: "512 B", "1.5 KiB",
// "120.3 MiB", "2.00 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// width is the display width of s in cells. Plain printable ASCII (most
// kernel names) is measured by its length; anything else, including ANSI
// sequences and wide runes, by ansi.StringWidth.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// fit cuts s to at most w cells (with "…" when cut) and pads it with
// spaces to exactly w cells. It measures display cells, never bytes.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// fitRight is fit with the text aligned right.
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s = strings.Repeat(" ", w-sw) + s
	}
	return s
}

// fitLeftCut is fit, but cuts from the left ("…tail") so the end of a
// long path or name stays visible.
func fitLeftCut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if sw := width(s); sw > w {
		s = ansi.TruncateLeft(s, sw-w+1, "…")
	}
	return fit(s, w)
}

// block makes s exactly h lines of exactly w cells: longer lines are cut,
// missing lines are blank. Every view's output goes through it so the
// root model can lay views out without measuring them.
func block(lines []string, w, h int) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	out := make([]string, h)
	blank := strings.Repeat(" ", w)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = blank
		}
	}
	return strings.Join(out, "\n")
}

// Block is the exported form of block for the root model's own panes:
// lines cut or padded to exactly w cells, exactly h lines.
func Block(lines []string, w, h int) string { return block(lines, w, h) }
