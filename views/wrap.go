package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// nbHyphen is U+2011 NON-BREAKING HYPHEN, one cell wide like '-'.
const nbHyphen = "\u2011"

// WrapLines wraps plain text (no escape sequences) at spaces into lines of
// at most w cells (w < 1 counts as 1); a word longer than w is cut where it
// must be. Unlike ansi.Wrap alone it never breaks after a hyphen, so flags
// and rule ids ("--findings", "exposed-communication") stay whole: at 80
// columns they read "-" / "-findings" and "[exposed-" / "communication]".
// Text holding U+2011 itself comes back with '-' there.
// Words joined by Together (U+00A0) stay on one line when they fit in w,
// and come back joined by plain spaces.
func WrapLines(text string, w int) []string {
	w = max(w, 1)
	protected := strings.ReplaceAll(text, "-", nbHyphen)
	if strings.Contains(protected, nbsp) {
		// A phrase wider than the line breaks at its spaces after all.
		words := strings.Split(protected, " ")
		for i, wd := range words {
			if strings.Contains(wd, nbsp) && ansi.StringWidth(wd) > w {
				words[i] = strings.ReplaceAll(wd, nbsp, " ")
			}
		}
		protected = strings.Join(words, " ")
	}
	lines := strings.Split(ansi.Wrap(protected, w, " "), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(strings.ReplaceAll(l, nbHyphen, "-"), nbsp, " ")
	}
	return lines
}

// nbsp is U+00A0 NO-BREAK SPACE: ansi.Wrap does not break there.
const nbsp = "\u00a0"

// Together joins the words of phrase so that WrapLines keeps them on one
// line ("· to test: Findings, enter (attention=fused)" rather than "· to"
// at a line's end).
func Together(phrase string) string { return strings.ReplaceAll(phrase, " ", nbsp) }
