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
// columns they read "-" / "-findings" and "[exposed-" / "communication]"
// (user trial 4). Text holding U+2011 itself comes back with '-' there.
func WrapLines(text string, w int) []string {
	protected := strings.ReplaceAll(text, "-", nbHyphen)
	lines := strings.Split(ansi.Wrap(protected, max(w, 1), " "), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, nbHyphen, "-")
	}
	return lines
}
