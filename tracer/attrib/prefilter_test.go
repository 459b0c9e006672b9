package attrib

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func TestRequiredLiterals(t *testing.T) {
	cases := []struct {
		re   string
		want []string
	}{
		{"flash_fwd|flash_bwd", []string{"flash_"}},
		{"(^|_)attn(_|$)", []string{"attn"}},
		{"^env[._]", []string{"env"}},
		{"nccl|rccl|all_?reduce", []string{"nccl", "rccl", "reduce"}},
		{"a*", nil},
		{"x?y?", nil},
		{"^Cijk_", []string{"cijk_"}},
		{"(foo)+bar", []string{"foo"}},
		{"a|b*", nil},
	}
	for _, c := range cases {
		tr, err := syntax.Parse("(?i)"+c.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got := required(tr.Simplify())
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", c.re, got, want)
		}
	}
}

// The prefilter never changes a match result: every default rule's
// matcher agrees with its plain regex on names built around the rules'
// own literals in random case, and on non-ASCII names.
func TestPrefilterSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var lits []string
	var ms []*matcher
	for _, r := range DefaultRules().List() {
		for _, m := range []*matcher{r.kernel, r.context, r.any} {
			if m != nil {
				ms = append(ms, m)
				lits = append(lits, m.lits...)
			}
		}
	}
	if len(lits) < 50 {
		t.Fatalf("only %d literals extracted", len(lits))
	}
	pieces := append(slices.Clone(lits), "_", "::", "<", ">", "(", ")", " ", "void ", "kernel", "x", "ſ", "K", "2")
	randCase := func(s string) string {
		b := []rune(s)
		for i := range b {
			if rng.IntN(2) == 0 {
				b[i] = []rune(strings.ToUpper(string(b[i])))[0]
			}
		}
		return string(b)
	}
	for trial := 0; trial < 2000; trial++ {
		var sb strings.Builder
		for k := rng.IntN(6); k >= 0; k-- {
			sb.WriteString(randCase(pieces[rng.IntN(len(pieces))]))
		}
		name := sb.String()
		lower, ascii := strings.ToLower(name), isASCII(name)
		for _, m := range ms {
			if got, want := m.match(name, lower, ascii), m.re.MatchString(name); got != want {
				t.Fatalf("%q on %q: prefiltered %v, regex %v (lits %q)", m.re, name, got, want, m.lits)
			}
		}
	}
	// Unicode folding: 'ſ' (U+017F) folds to 's'; the prefilter is skipped
	// for non-ASCII names, so this still matches.
	m := newMatcher(regexp.MustCompile("(?i)scan"), "scan")
	if !m.match("ſcan", strings.ToLower("ſcan"), isASCII("ſcan")) {
		t.Error("non-ASCII fold lost")
	}
}
