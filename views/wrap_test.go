package views

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestWrapLinesKeepsHyphenatedWords: at 30 cells the words with hyphens
// move whole to the next line (ansi.Wrap alone breaks "--findings" after
// its first "-"), every line fits, and the words come back in order.
func TestWrapLinesKeepsHyphenatedWords(t *testing.T) {
	text := "rules are in findings.toml; --findings FILE adds rules [exposed-communication]"
	got := WrapLines(text, 30)
	for _, l := range got {
		if ansi.StringWidth(l) > 30 {
			t.Errorf("line %q is wider than 30", l)
		}
		if strings.HasSuffix(l, "-") {
			t.Errorf("line %q ends at a hyphen", l)
		}
	}
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != text {
		t.Errorf("words changed: %q", got)
	}
	if plain := strings.Split(ansi.Wrap(text, 30, " "), "\n"); !strings.HasSuffix(plain[0], "-") && !strings.HasSuffix(plain[1], "-") {
		t.Logf("ansi.Wrap no longer breaks after hyphens here: %q", plain)
	}
	// A word longer than the width is still cut.
	if got := WrapLines("split_embedding_backward_codegen_rowwise", 16); len(got) != 3 || got[0] != "split_embedding_" {
		t.Errorf("long word: %q", got)
	}
}

// TestWrapLinesTogether: a phrase joined by Together starts the next line
// whole instead of leaving its first word at a line's end (not
// "· to" / "test: Findings, enter"), comes back with plain spaces, and
// breaks at its spaces when it is wider than the line.
func TestWrapLinesTogether(t *testing.T) {
	text := "▸ attention runs on the math fallback (47.5%) " + Together("· to test: Findings, enter (attention=fused)")
	// 53 cells: the status line's room at 80 columns beside "3.91 steps/s · cumulative".
	got := WrapLines(text, 53)
	want := []string{"▸ attention runs on the math fallback (47.5%)", "· to test: Findings, enter (attention=fused)"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = WrapLines(text, 20)
	for _, l := range got {
		if ansi.StringWidth(l) > 20 || strings.Contains(l, "\u00a0") {
			t.Errorf("narrow: line %q wider than 20 or holding a no-break space", l)
		}
	}
	if strings.Join(got, " ") != strings.ReplaceAll(text, "\u00a0", " ") {
		t.Errorf("narrow: words changed: %q", got)
	}
}
