package views_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// Golden files hold the views' text with ANSI styling stripped (the
// default colour theme is used, so a style that broke layout would still
// show); run `go test ./views -update` to rewrite them.

var widths = []int{80, 160}

func styles() *views.Styles { s := views.DefaultStyles(); return &s }

// render checks the view's contract (exactly h lines of exactly w cells)
// and returns the text without ANSI sequences.
func render(t *testing.T, out string, w, h int) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("got %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
	return ansi.Strip(out) + "\n"
}

func press(v views.View, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp}
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "end":
			msg = tea.KeyPressMsg{Code: tea.KeyEnd}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		v.Update(msg)
	}
}

func TestHeader(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			h := views.NewHeader(styles())
			h.SetWidth(w)
			h.SetSnapshot(viewstest.Snapshot())
			golden.RequireEqual(t, render(t, h.View(), w, h.Height()))
		})
	}
}

func TestKernelsView(t *testing.T) {
	cases := []struct {
		name string
		h    int
		keys []string
	}{
		{"default", 20, nil},
		{"sort_count_cursor", 20, []string{"c", "down", "down"}},
		{"filter_gemm", 20, []string{"/", "g", "E", "m", "m", "enter"}},
		{"filter_nomatch", 12, []string{"/", "x", "y", "z"}},
		{"short_scrolled", 10, []string{"end"}},
		{"with_transfers", 20, []string{"x", "c"}},
	}
	for _, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s_w%d", c.name, w), func(t *testing.T) {
				k := views.NewKernels(styles())
				k.SetSize(w, c.h)
				k.SetFocused(true)
				k.SetSnapshot(viewstest.Snapshot())
				press(k, c.keys...)
				golden.RequireEqual(t, render(t, k.View(), w, c.h))
			})
		}
	}
}

func TestCategoriesView(t *testing.T) {
	for _, w := range []int{60, 80, 160} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			g := views.NewCategories(styles())
			g.SetSnapshot(viewstest.Snapshot())
			g.SetSize(w, 10)
			golden.RequireEqual(t, render(t, g.View(), w, 10))
		})
	}
}

func TestStagesView(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			g := views.NewStages(styles())
			g.SetSnapshot(viewstest.Snapshot())
			g.SetSize(w, 8)
			golden.RequireEqual(t, render(t, g.View(), w, 8))
		})
	}
	t.Run("empty_w80", func(t *testing.T) {
		g := views.NewStages(styles())
		s := viewstest.Snapshot()
		s.Stages = nil
		g.SetSnapshot(s)
		g.SetSize(80, 3)
		golden.RequireEqual(t, render(t, g.View(), 80, 3))
	})
}

func TestStepsView(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			s := views.NewSteps(styles())
			s.SetSnapshot(viewstest.Snapshot())
			s.SetSize(w, 7)
			golden.RequireEqual(t, render(t, s.View(), w, 7))
		})
	}
}

func TestLoadingClock(t *testing.T) {
	l := views.NewLoading(styles(), "big.json.gz")
	l.Phase, l.Read, l.Size, l.Elapsed = "reading", 8<<20, 32<<20, 4200*time.Millisecond
	l.SetSize(80, 5)
	out := render(t, l.View(), 80, 5)
	// 4.2 s is the 42nd 100 ms frame: spinner frame 42 mod 10 = 2.
	if want := "8.0 MiB of 32.0 MiB (25%) · reading… ⠹ 4.2 s"; !strings.Contains(out, want) {
		t.Fatalf("loading screen lacks %q:\n%s", want, out)
	}
}

func TestLoadingView(t *testing.T) {
	t.Run("waiting_w80", func(t *testing.T) {
		l := views.NewLoading(styles(), "live: rlktop demo loop")
		l.SetSize(80, 5)
		golden.RequireEqual(t, render(t, l.View(), 80, 5))
	})
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			l := views.NewLoading(styles(), "/data/traces/rank0.json.gz")
			l.Phase, l.Read, l.Size = "reading", 3<<20, 12<<20
			l.SetSize(w, 7)
			golden.RequireEqual(t, render(t, l.View(), w, 7))
		})
	}
}

// TestStepsViewNamesSources: steps of two ranks share numbers, so each
// row names its rank (and "file" positions when ranks are not known).
func TestStepsViewNamesSources(t *testing.T) {
	snap := &attrib.Snapshot{Steps: []attrib.StepRow{
		{Step: 7, DurNs: 10e6, KernelNs: 8e6, Count: 3, Source: 0},
		{Step: 7, DurNs: 14e6, KernelNs: 8e6, Count: 3, Source: 1}},
		Ranks: &attrib.RankSummary{ByRank: true, Sources: []attrib.SourceRow{{Index: 1, Rank: 0}, {Index: 0, Rank: 1}}}}
	s := views.NewSteps(styles())
	s.SetSnapshot(snap)
	s.SetSize(80, 4)
	lines := strings.Split(render(t, s.View(), 80, 4), "\n")
	want := []*regexp.Regexp{regexp.MustCompile(`^ rank +step`), regexp.MustCompile(`^ 1 +7 .* 10\.0 ms`), regexp.MustCompile(`^. ?0 +7 .* 14\.0 ms`)}
	for i, re := range want {
		if i >= len(lines) || !re.MatchString(lines[i]) {
			t.Errorf("line %d: want %v in\n%s", i, re, strings.Join(lines, "\n"))
		}
	}
	snap.Ranks.ByRank = false
	s.SetSnapshot(snap)
	if out := render(t, s.View(), 80, 4); !strings.HasPrefix(out, " file ") {
		t.Errorf("positions: want a file column:\n%s", out)
	}
	snap.Ranks.Sources = snap.Ranks.Sources[:1] // one source: no column
	s.SetSnapshot(snap)
	if out := render(t, s.View(), 80, 4); !strings.HasPrefix(out, " step ") {
		t.Errorf("one source: want no source column:\n%s", out)
	}
}

// TestHeaderSeveralFiles: two long paths that do not fit in 80 columns
// show as their base names, both whole, in the order given (cut from the
// left, the first file's name was lost: "….json.gz, /work/…/b.json.gz").
func TestHeaderSeveralFiles(t *testing.T) {
	h := views.NewHeader(styles())
	h.SetWidth(80)
	s := viewstest.Snapshot()
	s.Source = "/work/shared/traces/kineto/hta_diff_control_a100.json.gz, /work/shared/traces/kineto/hta_diff_test_v100.json.gz"
	s.Rank = -1 // several sources: no one rank (as attrib.CombineSources)
	h.SetSnapshot(s)
	first := ansi.Strip(strings.Split(h.View(), "\n")[0])
	if !strings.Contains(first, "rlktop  hta_diff_control_a100.json.gz, hta_diff_test_v100.json.gz") {
		t.Errorf("header line %q", first)
	}
}

// TestKernelsHiddenTransfersSaid: the fixture's two transfer rows (30 ms
// and 10 ms, set by hand in viewstest) are hidden by default and said
// under the table; x shows them and the line goes.
func TestKernelsHiddenTransfersSaid(t *testing.T) {
	k := views.NewKernels(styles())
	k.SetSize(80, 20)
	k.SetSnapshot(viewstest.Snapshot())
	const hint = "+ 2 memcpy/memset rows, 40.0 ms (x shows them)"
	if out := ansi.Strip(k.View()); !strings.Contains(out, hint) {
		t.Errorf("no hint of the hidden rows:\n%s", out)
	}
	k.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if out := ansi.Strip(k.View()); strings.Contains(out, hint) {
		t.Errorf("hint still shown with the rows:\n%s", out)
	}
}
