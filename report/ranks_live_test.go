package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRanksLiveSources: the sources of a live run
// are processes: 'run --headless --by rank' headed their "pid N" column
// "file" and gave "span 110 ms, 10 steps" where the span was the traced
// operators' and the steps the window's. Now the column says "process"
// and each line gives the whole run and the traced time apart; the JSON
// carries run_ns (files: absent).
func TestRanksLiveSources(t *testing.T) {
	s := rankSnap()
	for i := range s.Ranks.Sources {
		r := &s.Ranks.Sources[i]
		r.Path, r.Format, r.Name = "", "live", []string{"pid 24150", "pid 24151"}[i]
		r.Steps, r.RunNs, r.SpanNs = 7, 450_000_000, 120_000_000
	}
	var b bytes.Buffer
	if err := Write(&b, s, Options{By: ByRank}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	head := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "rank ") && strings.Contains(l, "kernels") {
			head = l
		}
	}
	if f := strings.Fields(head); len(f) < 2 || f[1] != "process" {
		t.Errorf("table header %q: want 'rank process …'\n%s", head, out)
	}
	for _, want := range []string{"rank 0: pid 24150, 7 steps, run 450 ms, traced 120 ms", "rank 1: pid 24151, 7 steps, run 450 ms, traced 120 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := Write(&b, s, Options{By: ByRank, Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sources []map[string]any `json:"sources"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Sources) != 2 || doc.Sources[0]["run_ns"] != 450e6 {
		t.Errorf("JSON sources %v (%v): want run_ns 450000000", doc.Sources, err)
	}
	// Files: "file" and no run.
	b.Reset()
	if err := Write(&b, rankSnap(), Options{By: ByRank}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "process") || strings.Contains(out, " run ") || !strings.Contains(out, "rank 0: a.json, span 185 ns, 2 steps") {
		t.Errorf("files:\n%s", out)
	}
}
