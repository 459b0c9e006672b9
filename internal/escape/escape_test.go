package escape

import (
	"testing"
	"unicode/utf8"
)

func TestControl(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn"},
		{"void at::native::(anonymous namespace)::kernel<float>", "void at::native::(anonymous namespace)::kernel<float>"},
		{"µs → ns, 東京", "µs → ns, 東京"},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell\a", `bell\a`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"rtl\u202egnp.exe", `rtl\u202egnp.exe`},
		{"iso\u2066x\u2069", `iso\u2066x\u2069`},
		{`back\slash`, `back\slash`},
		{"", ""},
	} {
		if got := Control(c.in); got != c.want {
			t.Errorf("Control(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestControlNoAlloc(t *testing.T) {
	s := "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64"
	if n := testing.AllocsPerRun(100, func() { _ = Control(s) }); n != 0 {
		t.Fatalf("%v allocations for a clean name", n)
	}
}

func FuzzControl(f *testing.F) {
	f.Add("\x1b[2J\xff\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		out := Control(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Control(%q) = %q is not UTF-8", s, out)
		}
		for i, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("Control(%q) = %q keeps %U at %d", s, out, r, i)
			}
		}
	})
}

// TestMarkdown: expected cells written by hand from the rule in the doc.
func TestMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ampere_sgemm_128x64_tn", `ampere\_sgemm\_128x64\_tn`},
		{"a|b", `a\|b`},
		{"void k<float>(*p)", `void k&lt;float>(\*p)`},
		{"Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pinned -> Device)"},
		{"`tick`", "\\`tick\\`"},
		{"\x1b[2J|", `\x1b[2J\|`},
	} {
		if got := Markdown(c.in); got != c.want {
			t.Errorf("Markdown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
