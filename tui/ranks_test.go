package tui_test

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views/viewstest"
)

// Several files: the Ranks view is a tab, and shows who arrived last; one
// file: no Ranks tab (TestFocusCycleSkipsUnavailable's order holds).
func TestRanksTab(t *testing.T) {
	s := viewstest.Snapshot()
	s.Ranks = &attrib.RankSummary{ByRank: true, Collectives: 3,
		Sources: []attrib.SourceRow{{Index: 0, Rank: 0, Name: "rank0.json", CollWaitNs: 5e6}, {Index: 1, Rank: 1, Name: "rank1.json", LastArrivals: 3}}}
	m := newModel(t, 120, 30, tui.Options{Snapshot: s})
	var seen []string
	for range 8 {
		title := m.Focused().Title()
		seen = append(seen, title)
		if title == "Ranks" {
			break
		}
		m.Update(key("tab"))
	}
	if seen[len(seen)-1] != "Ranks" {
		t.Fatalf("tab order %v: no Ranks view with two sources", seen)
	}
	if out := screen(t, m, 120, 30); !strings.Contains(out, "late: rank 1 arrived last at 3 of 3 collectives") {
		t.Errorf("ranks screen:\n%s", out)
	}
	s.Ranks.Sources = s.Ranks.Sources[:1]
	m = newModel(t, 120, 30, tui.Options{Snapshot: s})
	for range 8 {
		if m.Focused().Title() == "Ranks" {
			t.Fatal("Ranks tab with one source")
		}
		m.Update(key("tab"))
	}
}
