package views_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
)

// liveRankSnapshot is a live two-rank run as tracer/session builds it
// after 399 steps per rank: 798 step rows (one per
// rank and step), each rank's whole run in Steps/RunNs, the traced time
// (its steps with operators in the window) in SpanNs.
func liveRankSnapshot() *attrib.Snapshot {
	s := rankSnapshot(true)
	s.Steps = nil
	for n := int64(1); n <= 399; n++ {
		s.Steps = append(s.Steps, attrib.StepRow{Step: n, Source: 0}, attrib.StepRow{Step: n, Source: 1})
	}
	rs := *s.Ranks
	rs.Sources = []attrib.SourceRow{rs.Sources[0], rs.Sources[1]}
	for i := range rs.Sources {
		r := &rs.Sources[i]
		r.Format, r.Name, r.Steps, r.RunNs, r.SpanNs = "live", []string{"pid 24150", "pid 24151"}[i], 399, 20_100_000_000, 3_900_000_000
	}
	s.Ranks = &rs
	return s
}

// TestHeaderStepsPerRank: the header counted the
// step rows of both ranks ("steps 798") where each rank ran 399 steps;
// it says the per-rank count, as the Step time panel does.
func TestHeaderStepsPerRank(t *testing.T) {
	s := liveRankSnapshot()
	for _, w := range widths {
		h := views.NewHeader(styles())
		h.SetWidth(w)
		h.SetSnapshot(s)
		out := ansi.Strip(h.View())
		if !strings.Contains(out, "steps/rank 399") || strings.Contains(out, "798") {
			t.Errorf("w%d: want 'steps/rank 399' and no 798:\n%s", w, out)
		}
	}
	// Ranks one step apart: the range; files without ranks: per file.
	s.Ranks.Sources[1].Steps = 398
	s.Ranks.ByRank = false
	h := views.NewHeader(styles())
	h.SetWidth(160)
	h.SetSnapshot(s)
	if out := ansi.Strip(h.View()); !strings.Contains(out, "steps/file 398–399") {
		t.Errorf("want 'steps/file 398–399':\n%s", out)
	}
}

// TestRanksViewLiveRun: a live rank's detail line
// gives its whole run (399 steps in 20.1 s) and says that the other
// columns cover its traced steps (3.90 s), not "span 3.90 s · 399 steps".
func TestRanksViewLiveRun(t *testing.T) {
	r := views.NewRanks(styles())
	r.SetSnapshot(liveRankSnapshot())
	r.SetSize(200, 10)
	out := render(t, r.View(), 200, 10)
	want := "rank 0: pid 24150 · 399 steps in 20.1 s · other columns: its steps with operators in the window, 3.90 s"
	if !strings.Contains(out, want) || strings.Contains(out, "span 3.90 s") {
		t.Errorf("want %q:\n%s", want, out)
	}
}

// TestStepsInfoPerRank: the Steps view's title
// counted the rows of both ranks ("798 steps"); it says the per-rank
// count as the header does.
func TestStepsInfoPerRank(t *testing.T) {
	s := views.NewSteps(styles())
	s.SetSnapshot(liveRankSnapshot())
	if got := s.Info(); !strings.HasPrefix(got, "399 steps/rank · median") {
		t.Errorf("Info %q, want '399 steps/rank · median …'", got)
	}
}
