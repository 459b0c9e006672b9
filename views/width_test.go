package views

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestWidth checks width's own counting against ansi.StringWidth (the
// reference the slow path uses) for every rune it counts itself, next to
// ASCII, after a style and before a combining mark or a variation
// selector (which make one wider or joined grapheme of the rune before).
func TestWidth(t *testing.T) {
	for r := rune(0x80); r <= 0x2fff; r++ {
		for _, s := range []string{string(r), "a" + string(r) + "b", "\x1b[1;38;5;12m" + string(r) + "\x1b[0m",
			string(r) + "\u0301", string(r) + "\ufe0f", "\u200d" + string(r)} {
			if got, want := width(s), ansi.StringWidth(s); got != want {
				t.Fatalf("width(%q) = %d, ansi.StringWidth says %d", s, got, want)
			}
		}
	}
}

// FuzzWidth: width agrees with ansi.StringWidth on any string.
func FuzzWidth(f *testing.F) {
	for _, s := range []string{"gemm", "\x1b[2mcat\x1b[0m", "a…b", "\x1b[", "\x1b[1", "\x1b]8;;x\x07y", "e\u0301", "▼ 日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := width(s), ansi.StringWidth(s); got != want {
			t.Fatalf("width(%q) = %d, ansi.StringWidth says %d", s, got, want)
		}
	})
}

// paint gives what the category's style renders, escapes included, for
// block text as laneRow draws it.
func TestTimelinePaint(t *testing.T) {
	st := DefaultStyles()
	tl := NewTimeline(&st)
	for _, cat := range []string{"gemm", "attention", "memcpy", "", "optimizer", "copy"} {
		for _, s := range []string{"g", "GGgg", "Ggemm_nt…gg", "▓▓"} {
			if got, want := tl.paint(cat, s), tl.catStyle(cat).Render(s); got != want {
				t.Errorf("paint(%q, %q) = %q, Render gives %q", cat, s, got, want)
			}
		}
	}
}
