package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// Names are data: a kernel, stage, device or file name holding
// terminal controls reaches table, md and csv escaped, every view and the
// header; JSON keeps the raw name (its encoder escapes controls itself).
func TestControlCharactersEscaped(t *testing.T) {
	s := snap()
	evil := "k\x1b[2J\x1b[31mred\a\u009b\u202e"
	s.Source = "trace\x1b]0;title\a.json"
	s.Devices[0].Name = "GPU\x1b[5m"
	s.Warnings = []string{"bad name \x1b[H"}
	s.Kernels[0].Name, s.Kernels[0].DisplayName = evil, evil
	s.Kernels[0].Category = "cat\x07"
	s.Categories[0].Key = "cat\x07"
	s.Stages[0].Key = "stage\r\nforged line"
	const want = `k\x1b[2J\x1b[31mred\a\u009b\u202e`
	for _, f := range []string{"table", "md", "csv"} {
		for _, by := range Views() {
			out := render(t, s, Options{Format: f, By: by})
			if i := strings.IndexFunc(out, func(r rune) bool {
				return r == 0x1b || r == 0x07 || r == '\r' || r == 0x9b || r == 0x202e
			}); i >= 0 {
				t.Errorf("%s --by %s: control character at byte %d: %q", f, by, i, out[max(0, i-20):min(len(out), i+20)])
			}
			if by == ByKernel && !strings.Contains(out, want) && f != "md" {
				t.Errorf("%s: escaped name %s missing:\n%s", f, want, out)
			}
			if by == ByStage && strings.Contains(out, "\nforged line") {
				t.Errorf("%s: a stage name forged a line:\n%s", f, out)
			}
		}
	}
	// md: the escapes are there (escape.Markdown's markup escaping comes after).
	if out := render(t, s, Options{Format: "md"}); !strings.Contains(out, `k\x1b[2J`) || !strings.Contains(out, `GPU\x1b[5m`) {
		t.Errorf("md lacks the escaped names:\n%s", out)
	}
	var doc struct {
		Kernels []struct {
			Name string `json:"name"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(render(t, s, Options{Format: "json"})), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kernels[0].Name != evil {
		t.Errorf("json name %q, want the raw %q", doc.Kernels[0].Name, evil)
	}
}

// md's header lines are Markdown too: a warning quoting an operator named
// "<built-in method …>" or a path with "_" must not open an HTML tag or
// emphasis there.
func TestMarkdownHeaderEscaped(t *testing.T) {
	s := snap()
	s.Source = "a_b_c.json"
	s.Warnings = []string{`first: "<built-in method _enter of obj>"`}
	out := render(t, s, Options{Format: "md"})
	for _, want := range []string{`a\_b\_c.json`, `"&lt;built-in method \_enter of obj>"`} {
		if !strings.Contains(out, want) {
			t.Errorf("md header lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<built-in") {
		t.Errorf("md header keeps a raw <:\n%s", out)
	}
}
