// Package escape makes text from traces safe to print: names are data, and
// a kernel, range or device name that holds ESC [2J, a colour, BEL or a
// bidirectional override must not act on the user's terminal.
package escape

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Control returns s with every character that a terminal would act on
// written as a Go escape instead: C0 controls (U+0000–U+001F, tab and
// newline included, as \t, \n, \x1b), DEL (\x7f), C1 controls
// (U+0080–U+009F, as \u009b), the bidirectional embedding, override and
// isolate characters (U+202A–U+202E, U+2066–U+2069; "Trojan Source",
// CVE-2021-42574) and bytes that are not UTF-8 (\xff). A backslash stays a
// single backslash, so printable text is unchanged and the result is for
// display, not for parsing back. s is returned as is when nothing needs
// escaping (no allocation).
func Control(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if needs(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case needs(r, n):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needs reports whether the rune r (n bytes long) must be escaped.
func needs(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Markdown returns s safe inside a GitHub Markdown table cell or line:
// Control first, then the characters that would end a cell or start
// markup escaped — "|" → `\|`, "*" → `\*`, "_" → `\_`, "`" → "\\`" (CommonMark
// 0.31 §2.4: any ASCII punctuation may be backslash-escaped) and "<" →
// "&lt;" (it could open an HTML tag; §6.6 raw HTML). A lone ">" stays:
// "Memcpy HtoD (Pinned -> Device)" reads the same in the source. The one
// Markdown escaper of report's tables, diffs, comparisons and findings.
func Markdown(s string) string { return mdReplacer.Replace(Control(s)) }

var mdReplacer = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", "`", "\\`")
