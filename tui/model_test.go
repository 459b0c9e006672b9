package tui_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

func newModel(t *testing.T, w, h int, opts tui.Options) *tui.Model {
	t.Helper()
	st := views.DefaultStyles()
	opts.Styles = &st
	m := tui.New(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// screen checks the root's contract (exactly h lines of w cells) and
// returns the text without ANSI sequences.
func screen(t *testing.T, m *tui.Model, w, h int) string {
	t.Helper()
	out := m.Render()
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

func key(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

func TestScreens(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 30}, {160, 40}, {200, 50}}
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("kernels_%dx%d", w, h), func(t *testing.T) {
			m := newModel(t, w, h, tui.Options{Snapshot: viewstest.Snapshot()})
			golden.RequireEqual(t, screen(t, m, w, h))
		})
		t.Run(fmt.Sprintf("categories_%dx%d", w, h), func(t *testing.T) {
			m := newModel(t, w, h, tui.Options{Snapshot: viewstest.Snapshot()})
			m.Update(key("tab"))
			if got := m.Focused().Title(); got != "Categories" {
				t.Fatalf("focus after tab: %s", got)
			}
			golden.RequireEqual(t, screen(t, m, w, h))
		})
	}
	t.Run("stages_fullhelp_80x24", func(t *testing.T) {
		m := newModel(t, 80, 24, tui.Options{Snapshot: viewstest.Snapshot()})
		m.Update(key("tab"))
		m.Update(key("tab"))
		m.Update(key("?"))
		golden.RequireEqual(t, screen(t, m, 80, 24))
	})
	t.Run("kernels_fullhelp_80x24", func(t *testing.T) {
		m := newModel(t, 80, 24, tui.Options{Snapshot: viewstest.Snapshot()})
		m.Update(key("?"))
		golden.RequireEqual(t, screen(t, m, 80, 24))
		// esc closes it as ? does (only ? did).
		m.Update(key("esc"))
		if out := screen(t, m, 80, 24); strings.Contains(out, "close help") {
			t.Errorf("esc left the full help open:\n%s", out)
		}
	})
	t.Run("loading_80x24", func(t *testing.T) {
		m := newModel(t, 80, 24, tui.Options{Source: "/data/run/rank0.pt.trace.json.gz"})
		m.Update(tui.ProgressMsg{Phase: "reading", Read: 96 << 20, Size: 256 << 20})
		golden.RequireEqual(t, screen(t, m, 80, 24))
	})
	t.Run("status_error_80x24", func(t *testing.T) {
		m := newModel(t, 80, 24, tui.Options{Snapshot: viewstest.Snapshot()})
		m.Update(tui.ErrMsg{Err: errors.New("session: child exited with status 1")})
		golden.RequireEqual(t, screen(t, m, 80, 24))
	})
	t.Run("status_long_error_80x24", func(t *testing.T) {
		m := newModel(t, 80, 24, tui.Options{Snapshot: viewstest.Snapshot()})
		m.Update(tui.ErrMsg{Err: errors.New(`/data/rank0.json.gz (byte 1978738): field "ts": cannot read event 11851 starting at byte 1978651: unexpected EOF (the file is damaged or truncated; for .gz check it with ` + "`gzip -t`" + `)`)})
		golden.RequireEqual(t, screen(t, m, 80, 24))
	})
	t.Run("too_small", func(t *testing.T) {
		m := newModel(t, 30, 8, tui.Options{Snapshot: viewstest.Snapshot()})
		golden.RequireEqual(t, screen(t, m, 30, 8))
	})
}

func TestFocusCycleSkipsUnavailable(t *testing.T) {
	s := viewstest.Snapshot()
	s.Steps = nil
	m := newModel(t, 80, 24, tui.Options{Snapshot: s})
	var seen []string
	for range 5 {
		seen = append(seen, m.Focused().Title())
		m.Update(key("tab"))
	}
	want := "Kernels Categories Stages Findings Kernels"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("tab order %q, want %q", got, want)
	}
	// Focus is on Categories now; back three times wraps past the hidden
	// Steps (Findings, always available, is the last tab).
	m.Update(key("shift+tab"))
	m.Update(key("shift+tab"))
	m.Update(key("shift+tab"))
	if got := m.Focused().Title(); got != "Stages" {
		t.Fatalf("shift+tab thrice from Categories: got %s, want Stages", got)
	}
}

func TestFatalErrorQuits(t *testing.T) {
	m := newModel(t, 80, 24, tui.Options{Source: "x.json"})
	want := errors.New("x.json (byte 12): expected ':'")
	_, cmd := m.Update(tui.ErrMsg{Err: want, Fatal: true})
	if cmd == nil {
		t.Fatal("fatal error should quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("fatal error command is not tea.Quit")
	}
	if m.Err() != want {
		t.Fatalf("Err() = %v", m.Err())
	}
}

func TestQuitKeyTypesIntoFilter(t *testing.T) {
	m := newModel(t, 80, 24, tui.Options{Snapshot: viewstest.Snapshot()})
	m.Update(key("/"))
	_, cmd := m.Update(key("q"))
	if cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Fatal("q quit while typing a filter")
		}
	}
	if got := m.Kernels().Filter(); got != "q" {
		t.Fatalf("filter %q, want q", got)
	}
	_, cmd = m.Update(key("ctrl+c"))
	if cmd == nil {
		t.Fatal("ctrl+c should quit even while typing")
	}
}

// BenchmarkSnapshotAndRender is one live-session tick at 200×50 with
// 2,000 kernels: a new snapshot routed to every view, then a full frame.
func BenchmarkSnapshotAndRender(b *testing.B) {
	snap := viewstest.Big(2000)
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Snapshot: snap})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	b.ReportAllocs()
	for b.Loop() {
		m.Update(tui.SnapshotMsg{Snapshot: snap})
		_ = m.Render()
	}
}

// TestEverySize renders every terminal size from 1×1 to 240×60 (in
// steps) with a full, an empty and a 2,000-kernel snapshot, with each
// view focused and full help on and off: the screen must always be
// exactly the terminal's size, and nothing may panic.
func TestEverySize(t *testing.T) {
	if testing.Short() {
		t.Skip("every-size sweep skipped in -short mode")
	}
	empty := viewstest.Snapshot()
	empty.Kernels, empty.Transfers, empty.Categories, empty.Stages, empty.Steps = nil, nil, nil, nil, nil
	empty.Devices, empty.Warnings = nil, nil
	snaps := map[string]*attrib.Snapshot{"full": viewstest.Snapshot(), "empty": empty, "big": viewstest.Big(2000), "loading": nil}
	for name, s := range snaps {
		for w := 1; w <= 240; w += 17 {
			for h := 1; h <= 60; h += 9 {
				m := newModel(t, w, h, tui.Options{Snapshot: s, Source: "x.json"})
				for tab := 0; tab < 4; tab++ {
					for _, help := range []bool{false, true} {
						if help {
							m.Update(key("?"))
						}
						out := m.Render()
						lines := strings.Split(out, "\n")
						if len(lines) != h {
							t.Fatalf("%s %dx%d tab %d help %v: %d lines", name, w, h, tab, help, len(lines))
						}
						for i, l := range lines {
							if lw := ansi.StringWidth(l); lw != w {
								t.Fatalf("%s %dx%d tab %d help %v: line %d is %d wide: %q", name, w, h, tab, help, i, lw, ansi.Strip(l))
							}
						}
						if help {
							m.Update(key("?"))
						}
					}
					m.Update(key("tab"))
				}
			}
		}
	}
}

// TestScrubSelectsStepRow: the fixture's steps are 1–5 and the Steps view's
// cursor starts on the last; `.` selects step 1 (the header says "step 1
// (1 of 5)") and the Steps view's cursor moves to row 1, `.` again to
// row 2 (the header said step 101 while the cursor stayed
// on 105).
func TestScrubSelectsStepRow(t *testing.T) {
	s := viewstest.Snapshot()
	m := newModel(t, 80, 24, tui.Options{Snapshot: s})
	var steps []tui.StepSnapshot
	for _, r := range s.Steps {
		steps = append(steps, tui.StepSnapshot{Step: r.Step, Snapshot: s})
	}
	m.Update(tui.SnapshotMsg{Snapshot: s, Steps: steps})
	for m.Focused().Title() != "Steps" {
		m.Update(key("tab"))
	}
	cursorRow := func() string {
		for _, l := range strings.Split(screen(t, m, 80, 24), "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "›") {
				return f[0]
			}
		}
		return ""
	}
	if got := cursorRow(); got != "›5" {
		t.Fatalf("cursor at %q before scrubbing, want ›5", got)
	}
	m.Update(key("."))
	if out := screen(t, m, 80, 24); !strings.Contains(out, "step 1 (1 of 5)") || cursorRow() != "›1" {
		t.Errorf("after . : cursor %q\n%s", cursorRow(), out)
	}
	m.Update(key("."))
	if got := cursorRow(); got != "›2" {
		t.Errorf("after . . : cursor %q, want ›2", got)
	}
}
