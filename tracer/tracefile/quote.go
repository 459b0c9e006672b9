package tracefile

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// quoteMax is the most characters, quotes included, that quoteShort gives
// a piece of the input shown in a message (a CSV header, a cell, the start
// of a file of unknown format).
const quoteMax = 64

// quoteShort quotes s as %q does (Go escapes for control bytes and invalid
// UTF-8), keeping only as much of its start as fits in quoteMax characters
// of quoted text; "…" after the closing quote says that s was cut. A
// binary file's start, whose bytes quote to up to 4 characters each, so
// stays one short piece of a message instead of hundreds of escapes.
func quoteShort(s string) string {
	if q := strconv.Quote(s); utf8.RuneCountInString(q) <= quoteMax {
		return q
	}
	// Every byte quotes to at least one character: no more than quoteMax
	// bytes can fit. Cut at a rune boundary (an invalid byte is one).
	if len(s) > quoteMax {
		s = s[:quoteMax]
	}
	for len(s) > 0 {
		q := strconv.Quote(s)
		if utf8.RuneCountInString(q) < quoteMax {
			return q + "…"
		}
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return `""…`
}

// isBinary reports whether head looks like binary data rather than text:
// it holds a NUL byte, or more than 1 in 8 of its bytes are control bytes
// (other than tab, CR, LF) or invalid UTF-8. A CSV or JSON file holds none.
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if (r == utf8.RuneError && n == 1 && len(head)-i >= utf8.UTFMax) || (r < 0x20 && r != '\t' && r != '\r' && r != '\n') || r == 0x7f {
			bad++
		}
		i += n
	}
	return bad*8 > len(head)
}
