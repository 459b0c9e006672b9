package attrib

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// matcher is a case-insensitive regex with a literal prefilter: lits, when
// non-nil, are lower-case strings one of which every match must contain, so
// a name holding none of them is rejected without running the regex (Go's
// regexp runs long C++ kernel names through its slow NFA otherwise).
type matcher struct {
	re   *regexp.Regexp
	lits []string
}

func newMatcher(re *regexp.Regexp, src string) *matcher {
	m := &matcher{re: re}
	if t, err := syntax.Parse("(?i)"+src, syntax.Perl); err == nil {
		m.lits = required(t.Simplify())
	}
	return m
}

// match reports whether the regex matches name; lower is
// strings.ToLower(name) and ascii whether name is pure ASCII (the prefilter
// is only sound there: Unicode case folding maps e.g. 'ſ' to 's').
func (m *matcher) match(name, lower string, ascii bool) bool {
	if m == nil {
		return false
	}
	if ascii && m.lits != nil {
		found := false
		for _, l := range m.lits {
			if strings.Contains(lower, l) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return m.re.MatchString(name)
}

// required returns literals one of which every match of t contains
// (lower-cased), or nil when it cannot tell.
func required(t *syntax.Regexp) []string {
	switch t.Op {
	case syntax.OpLiteral:
		if len(t.Rune) == 0 {
			return nil
		}
		return []string{strings.ToLower(string(t.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		var best []string
		bestLen := 0
		for _, s := range t.Sub {
			r := required(s)
			if r == nil {
				continue
			}
			short := len(r[0])
			for _, l := range r {
				short = min(short, len(l))
			}
			if short > bestLen {
				best, bestLen = r, short
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, s := range t.Sub {
			r := required(s)
			if r == nil {
				return nil
			}
			all = append(all, r...)
		}
		return all
	}
	return nil
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
