package attrib

import (
	"strings"
	"unicode/utf8"

	"github.com/ianlancetaylor/demangle"
)

// MaxDisplayName is the longest display name DisplayName returns, in runes;
// longer names keep their start and end around a "…".
const MaxDisplayName = 80

const anonNS = "(anonymous namespace)"

// DisplayName returns a short human name for a kernel name as a trace wrote
// it: Itanium-mangled names ("_Z…") are demangled first; then template
// argument lists, the parameter list and a leading return type are dropped,
// keeping namespace::function ("void at::native::vectorized_elementwise_kernel<4,
// …>(int, …)" → "at::native::vectorized_elementwise_kernel"), and the result
// is cut to MaxDisplayName runes with "…" in the middle. Names that are not
// C++ signatures ("Memcpy HtoD (Pinned -> Device)", "Cijk_…") are only cut.
// It never fails: a name it cannot parse comes back (cut) as it is.
func DisplayName(name string) string {
	s := name
	if strings.HasPrefix(s, "_Z") {
		if d, err := demangle.ToString(s, demangle.NoParams, demangle.NoTemplateParams, demangle.NoClones); err == nil && d != "" {
			s = d
		}
	}
	s = shortenSignature(s)
	return Ellipsize(s, MaxDisplayName)
}

// shortenSignature drops template arguments, the trailing parameter list and
// a leading return type from a demangled C++ name. It keeps
// "(anonymous namespace)" scopes and "operator()" names.
func shortenSignature(s string) string {
	// Only C++-looking names: a template list or a parameter list glued to
	// an identifier.
	if !strings.ContainsAny(s, "<(") || !looksCPP(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	depth := 0 // <> nesting
	argStart, lastArgs := 0, ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.HasPrefix(s[i:], anonNS):
			if depth == 0 {
				b.WriteString(anonNS)
			}
			i += len(anonNS) - 1
		case strings.HasPrefix(s[i:], "operator()"):
			if depth == 0 {
				b.WriteString("operator()")
			}
			i += len("operator()") - 1
		case strings.HasPrefix(s[i:], "operator<<") || strings.HasPrefix(s[i:], "operator>>"):
			if depth == 0 {
				b.WriteString(s[i : i+10])
			}
			i += 9
		case strings.HasPrefix(s[i:], "operator<") || strings.HasPrefix(s[i:], "operator>") || strings.HasPrefix(s[i:], "operator->"):
			n := 9
			if strings.HasPrefix(s[i:], "operator->") {
				n = 10
			}
			if depth == 0 {
				b.WriteString(s[i : i+n])
			}
			i += n - 1
		case c == '<':
			if depth == 0 {
				argStart = i + 1
			}
			depth++
		case c == '>':
			if depth > 0 {
				depth--
				if depth == 0 {
					lastArgs = s[argStart:i]
				}
			}
		case c == '(' && depth == 0:
			// The parameter list: skip to its matching ')'; keep going only
			// when a scope follows ("f(int)::{lambda()#1}" is rare at top
			// level; we stop at the first parameter list).
			return generic(lastToken(strings.TrimSpace(b.String())), lastArgs)
		default:
			if depth == 0 {
				b.WriteByte(c)
			}
		}
	}
	return generic(lastToken(strings.TrimSpace(b.String())), lastArgs)
}

// generic appends the first template argument to names whose function part
// says nothing ("cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>",
// "rocprim::…::trampoline_kernel<…scan_config…>").
func generic(name, args string) string {
	fn := name
	if i := strings.LastIndex(fn, "::"); i >= 0 {
		fn = fn[i+2:]
	}
	switch strings.ToLower(fn) {
	case "kernel", "kernel2", "trampoline_kernel", "device_kernel", "global_kernel", "kernel_entry":
	default:
		return name
	}
	if args == "" {
		return name
	}
	first, depth := args, 0
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				first = args[:i]
				i = len(args)
			}
		}
	}
	first = strings.TrimSpace(first)
	if first == "" {
		return name
	}
	// Shorten the argument itself (drop its own templates).
	if short := shortenSignature(first); short != "" {
		first = short
	}
	return name + "<" + first + ">"
}

// looksCPP reports whether s starts like a C++ declaration: an identifier
// character, or "(anonymous namespace)", with no " (" sequence before the
// first '(' (which marks prose such as "Memcpy HtoD (Pinned -> Device)").
func looksCPP(s string) bool {
	s = strings.ReplaceAll(s, anonNS, "anonymous_namespace__")
	i := strings.IndexAny(s, "(<")
	if i <= 0 {
		return false
	}
	prev := s[i-1]
	return prev == '_' || prev == ':' || (prev >= '0' && prev <= '9') ||
		(prev|0x20 >= 'a' && prev|0x20 <= 'z') || prev == ')' || prev == '>'
}

// lastToken drops a leading return type ("void ", "std::enable_if::type "):
// everything up to the last space outside "(anonymous namespace)".
func lastToken(s string) string {
	masked := strings.ReplaceAll(s, anonNS, "(anonymous\x00namespace)")
	if i := strings.LastIndexByte(masked, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Ellipsize cuts s to at most max runes, keeping its start and end around a
// "…" (max < 3: the first max runes).
func Ellipsize(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	if max < 3 {
		r := []rune(s)
		return string(r[:max])
	}
	r := []rune(s)
	head := (max - 1) / 2
	tail := max - 1 - head
	return string(r[:head]) + "…" + string(r[n-tail:])
}
