package attrib

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rlktop/rlktop/tracer"
)

// FuzzDisplayName: any kernel name gives a display name of at most
// MaxDisplayName runes, without panicking.
func FuzzDisplayName(f *testing.F) {
	for _, s := range []string{aiterMangled, sglMangled, "void a<b>(c)", "(anonymous namespace)::f<", "operator()", "_Z", "x(((<<<", "Memcpy HtoD (Pinned -> Device)", "void cutlass::Kernel<>()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		d := DisplayName(name)
		if utf8.ValidString(name) && utf8.RuneCountInString(d) > MaxDisplayName {
			t.Fatalf("%q → %q: %d runes", name, d, utf8.RuneCountInString(d))
		}
	})
}

// FuzzParseRules: any rules file is accepted or rejected with an ErrRules
// error, never a panic; accepted rules classify without panicking.
func FuzzParseRules(f *testing.F) {
	f.Add(string(defaultRulesTOML))
	f.Add("[[rule]]\ncategory = \"x\"\nkernel = 'a('\n")
	f.Add("replace = true\n[[rule]]\ncategory = \"x\"\nany = 'q'\nkinds = [\"memcpy\"]\n")
	f.Fuzz(func(t *testing.T, file string) {
		r, err := ParseRules([]byte(file), "fuzz.toml", DefaultRules(), true)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.toml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		r.Classify(tracer.KindKernel, "ampere_sgemm_128x64_nn", Launch{Ops: []string{"aten::mm"}})
	})
}
