package views

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/units"
)

// FormatNs is units.Duration: three significant digits, the unit chosen
// after rounding ("999,700 ns" is "1.00 ms"), from 999.5 s in minutes,
// hours and days.
func FormatNs(ns int64) string { return units.Duration(ns) }

// FormatCount is units.Count: 1234567 → "1,234,567".
func FormatCount(n int64) string { return units.Count(n) }

// FormatShare is units.Share: a fraction (0.123) as "12.3%".
func FormatShare(f float64) string { return units.Share(f) }

// FormatBytes is units.Bytes: "512 B", "1.5 KiB", "120.3 MiB".
func FormatBytes(n int64) string { return units.Bytes(n) }

// width is the display width of s in cells. Printable ASCII (most
// kernel names), the narrow symbols views draw (narrowRune) and CSI
// sequences (styles: no width) are counted here; anything else (wide
// runes, combining marks, other escape sequences) is measured by
// ansi.StringWidth.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
				j++ // parameter and intermediate bytes
			}
			if j == len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return ansi.StringWidth(s)
			}
			i = j + 1
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !narrowRune(r) {
				return ansi.StringWidth(s)
			}
			n++
			i += size
		default:
			return ansi.StringWidth(s)
		}
	}
	return n
}

// narrowRune reports runes one cell wide on their own that never join
// the rune before them into one grapheme (ansi.StringWidth agrees on
// every one; TestWidth): Latin-1 letters and signs, general punctuation
// ("…", "›", "·"), arrows, box drawing, blocks and most geometric shapes
// ("▼", "▓").
func narrowRune(r rune) bool {
	switch {
	case r >= 0xa0 && r <= 0xff:
		return r != 0xad // the soft hyphen has no width
	case r >= 0x2010 && r <= 0x2027, r >= 0x2030 && r <= 0x205e,
		r >= 0x2190 && r <= 0x21ff, r >= 0x2500 && r <= 0x25fc:
		return true
	}
	return false
}

// fit cuts s to at most w cells (with "…" when cut) and pads it with
// spaces to exactly w cells. It measures display cells, never bytes.
func fit(s string, w int) string { return fitAlign(s, w, false) }

// fitRight is fit with the text aligned right.
func fitRight(s string, w int) string { return fitAlign(s, w, true) }

// fitAlign is fit, padded on the left when right is set.
func fitAlign(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = width(s)
	}
	if sw < w {
		if right {
			return strings.Repeat(" ", w-sw) + s
		}
		s += strings.Repeat(" ", w-sw)
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
