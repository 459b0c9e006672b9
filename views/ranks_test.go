package views_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// rankSnapshot is two ranks with the numbers of attrib's
// TestRanksHandCounted (rank 1 arrives last at both collectives).
func rankSnapshot(byRank bool) *attrib.Snapshot {
	s := *viewstest.Snapshot()
	s.Ranks = &attrib.RankSummary{
		ByRank: byRank,
		Sources: []attrib.SourceRow{
			{Index: 0, Rank: 0, Name: "a.json", SpanNs: 185, KernelNs: 178, BusyNs: 168, IdleNs: 17, ComputeNs: 55,
				CommNs: 123, CommOverlapNs: 10, CommExposedNs: 113, Steps: 2, StepMedianNs: 100, CollWaitNs: 80},
			{Index: 1, Rank: 1, Name: "b.json", SpanNs: 195, KernelNs: 160, BusyNs: 160, IdleNs: 35, ComputeNs: 120,
				CommNs: 40, CommExposedNs: 40, Steps: 2, StepMedianNs: 90, LastArrivals: 2},
		},
		Steps: []attrib.StepSpread{
			{Step: 1, SlowSource: 1, FastSource: 0, SlowNs: 120, FastNs: 100, SpreadNs: 20, LateSource: 1, Collectives: 1, WaitNs: 40},
			{Step: 2, SlowSource: 0, FastSource: 1, SlowNs: 100, FastNs: 90, SpreadNs: 10, LateSource: 1, Collectives: 1, WaitNs: 40},
		},
		Collectives: 2,
	}
	return &s
}

func TestRanksView(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			r := views.NewRanks(styles())
			r.SetSnapshot(rankSnapshot(true))
			r.SetSize(w, 8)
			r.SetFocused(true)
			press(r, "down")
			out := render(t, r.View(), w, 8)
			golden.RequireEqual(t, out)
			// The facts, independent of the layout.
			for _, want := range []string{"late: rank 1 arrived last at 2 of 2 collectives", "rank 1: b.json", "widest step: 1, longest rank 1 120 ns"} {
				if !strings.Contains(out, want) {
					t.Errorf("missing %q:\n%s", want, out)
				}
			}
		})
	}
	// Files without ranks are named by file.
	r := views.NewRanks(styles())
	r.SetSnapshot(rankSnapshot(false))
	r.SetSize(100, 8)
	if out := render(t, r.View(), 100, 8); !strings.Contains(out, "late: file b.json arrived last") || r.Info() != "2 files · each on its own clock" {
		t.Errorf("by file: %q\n%s", r.Info(), out)
	}
	// No per-source numbers.
	r.SetSnapshot(viewstest.Snapshot())
	r.SetSize(80, 3)
	if out := render(t, r.View(), 80, 3); !strings.Contains(out, "no per-source numbers") {
		t.Errorf("no ranks:\n%s", out)
	}
}

// TestRanksDetailsWrap: at 50 columns the cursor's line ("rank 0: a.json ·
// span 185 ns · compute 55 ns · comm overlapped 10 ns · 2 steps", 61
// cells) and the widest-step line wrap under the table instead of ending
// in "…" ("comm overl…" at 80 columns on real DDP traces), and the
// table keeps both rows.
func TestRanksDetailsWrap(t *testing.T) {
	r := views.NewRanks(styles())
	r.SetSnapshot(rankSnapshot(true))
	r.SetSize(50, 12)
	r.SetFocused(true)
	out := ansi.Strip(r.View())
	if strings.Contains(out, "…") {
		t.Errorf("a line was cut:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"rank 0: a.json · span 185 ns · compute 55 ns · comm overlapped 10 ns · 2 steps",
		"widest step: 1, longest rank 1 120 ns, shortest rank 0 100 ns, spread 20 ns", "›0", " 1 "} {
		if !strings.Contains(flat, want) && !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// TestRanksViewLateStage: the Ranks view's late line also says what the
// late rank spends longer in (attrib.RankSummary.LateStage; hand-made:
// rank 1 30 ns of "load" over 2 steps, 15 ns a step, rank 0 none).
func TestRanksViewLateStage(t *testing.T) {
	s := rankSnapshot(true)
	s.Ranks.Sources[1].Stages = []attrib.StageWall{{Name: "load", Ns: 30, Count: 2}}
	s.Ranks.Sources[1].StageSteps = 2
	r := views.NewRanks(styles())
	r.SetSnapshot(s)
	r.SetSize(200, 12)
	out := render(t, r.View(), 200, 12)
	if want := `late: rank 1 arrived last at 2 of 2 collectives · it spends 15 ns per step in stage "load", the others 0 ns`; !strings.Contains(out, want) {
		t.Errorf("missing %q:\n%s", want, out)
	}
}
