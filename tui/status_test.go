package tui_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/gpu/gputest"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views/viewstest"
)

// TestUntracedBannerWrapped: the reason a command runs untraced stays
// under the header at 80 columns, whole: its words, in order, on
// consecutive lines, none cut.
func TestUntracedBannerWrapped(t *testing.T) {
	reason := "no NVIDIA driver: libcuda.so.1 not found (install the driver or run on a GPU host); rocprofiler-sdk (AMD): librocprofiler-sdk.so not found"
	m := newModel(t, 80, 24, tui.Options{Controller: &fakeCtl{}, DeviceStatus: gputest.CPUOnlyStatus, Untraced: reason})
	m.Update(liveMsg("math", true))
	lines := strings.Split(ansi.Strip(m.Render()), "\n")
	var got []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, "no NVIDIA driver: ") {
			in = true
		}
		if in {
			if strings.TrimSpace(l) == "" || strings.Contains(l, "Kernels") {
				break
			}
			got = append(got, strings.Fields(l)...)
		}
	}
	want := strings.Fields(reason) // as given: no label before it
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("banner words\n%q\nwant\n%q", got, want)
	}
}

// TestTracingOffInHeader: with tracing off the header says so.
func TestTracingOffInHeader(t *testing.T) {
	m := newLive(t, 80, 24, &fakeCtl{})
	m.Update(liveMsg("math", false))
	if !strings.Contains(ansi.Strip(m.Render()), "tracing off: the child runs untraced") {
		t.Errorf("no tracing-off line:\n%s", ansi.Strip(m.Render()))
	}
	m.Update(liveMsg("math", true))
	if strings.Contains(ansi.Strip(m.Render()), "tracing off") {
		t.Error("tracing-off line stays after tracing is back on")
	}
}

// TestAppliedStatusClears: "requested; applied at the next step" becomes
// "applied at step 20" once the child acknowledges (the mark of
// liveState is at step 20).
func TestAppliedStatusClears(t *testing.T) {
	m := newLive(t, 200, 50, &fakeCtl{})
	m.Update(liveMsg("fused", true))
	press(m, "1") // fused → math
	if s := m.Status().Text; !strings.Contains(s, "applied at the next step") {
		t.Fatalf("status %q", s)
	}
	m.Update(liveMsg("math", true))
	if s := m.Status().Text; s != "attention=math applied at step 20" {
		t.Errorf("status after the ack %q, want attention=math applied at step 20", s)
	}
}

// TestStepsAfterExit: no "waiting for the first step" once the child
// has exited without sending one.
func TestStepsAfterExit(t *testing.T) {
	m := newLive(t, 80, 24, &fakeCtl{})
	msg := liveMsg("math", true)
	msg.State.Steps = nil
	msg.Child = livestate.Status{State: livestate.Exited, ExitCode: 1}
	m.Update(msg)
	for m.Focused().Title() != "Step time" {
		press(m, "tab")
	}
	out := ansi.Strip(m.Render())
	if strings.Contains(out, "waiting for the first step") || !strings.Contains(out, "no steps: the child exited with status 1 before sending a step") {
		t.Errorf("steps panel after exit:\n%s", out)
	}
}

// TestCompareAsksFirst: C alone starts nothing and says what will be
// lost; another key cancels; C, C starts the comparison.
func TestCompareAsksFirst(t *testing.T) {
	ctl := &fakeCtl{res: &livestate.CompareResult{Arms: nil, Mode: "live"}}
	m := newLive(t, 80, 24, ctl)
	m.Update(liveMsg("math", true))
	press(m, "C")
	if len(ctl.Calls()) != 0 {
		t.Fatalf("C alone called %q", ctl.Calls())
	}
	out := strings.Join(strings.Fields(ansi.Strip(m.Render())), " ")
	for _, s := range []string{"Compare attention: math vs fused?", "its totals, step history (30 steps so far) and window start from zero", "C again starts it"} {
		if !strings.Contains(out, s) {
			t.Errorf("confirmation lacks %q:\n%s", s, out)
		}
	}
	press(m, "j") // anything else cancels
	press(m, "C")
	if len(ctl.Calls()) != 0 {
		t.Fatalf("C after a cancelled confirmation called %q", ctl.Calls())
	}
	press(m, "C")
	if got := ctl.Calls(); len(got) != 1 || got[0] != "compare attention=math,fused" {
		t.Errorf("C C called %q", got)
	}
}

// TestStatusWrapsWords (hints cut mid-word at 80 columns): a
// status message longer than the bar shows at 80 columns with every word
// whole, over two lines.
func TestStatusWrapsWords(t *testing.T) {
	msg := "attention=fused applied at step 16; the comparison needs about 108 steps per arm to decide, see Compare"
	m := newModel(t, 80, 24, tui.Options{})
	snap := viewstest.Snapshot()
	snap.Warnings = nil
	m.Update(tui.SnapshotMsg{Snapshot: snap})
	m.Update(tui.StatusMsg{Text: msg})
	lines := strings.Split(ansi.Strip(m.Render()), "\n")
	got := strings.Fields(lines[len(lines)-3] + " " + lines[len(lines)-2])
	if strings.Join(got, " ") != msg {
		t.Errorf("status rows %q / %q, want the words of %q", lines[len(lines)-3], lines[len(lines)-2], msg)
	}
}

// tabTitles lists the titles tab reaches from the focused view, once
// round.
func tabTitles(m *tui.Model) []string {
	first := m.Focused().Title()
	titles := []string{first}
	for range 30 {
		press(m, "tab")
		if m.Focused().Title() == first {
			break
		}
		titles = append(titles, m.Focused().Title())
	}
	return titles
}

// liveTabs is a live run w×24 with a timeline (11 tabs) and the titles
// tab visits.
func liveTabs(t *testing.T, w int) (*tui.Model, []string) {
	m := newLive(t, w, 24, &fakeCtl{})
	msg := liveMsg("math", true)
	msg.State.Timeline, _ = viewstest.Timeline()
	m.Update(msg)
	return m, tabTitles(m)
}

// tabBarRow returns the screen row holding the tab bar (the first row
// with a "│" and title) and its index.
func tabBarRow(m *tui.Model, title string) (string, int) {
	for i, l := range strings.Split(ansi.Strip(m.Render()), "\n") {
		if strings.Contains(l, "│") && strings.Contains(l, title) {
			return l, i
		}
	}
	return "", -1
}

// TestTabBarShowsFocusedTab (tmux 80x24: the tab bar ended "Compare│…", so
// the focused Findings tab could not be seen): at 40 columns a live run's
// tabs do not fit even with short titles; with the last tab focused the
// bar starts with "‹+N│", N the tabs before the first one shown (counted
// here by tabbing round), and holds that tab's full title; a click on the
// label before it (the mouse uses the same layout, "‹+N│" included)
// focuses that tab.
func TestTabBarShowsFocusedTab(t *testing.T) {
	m, titles := liveTabs(t, 40)
	press(m, "shift+tab") // from the first tab to the last
	last := m.Focused().Title()
	if last != titles[len(titles)-1] {
		t.Fatalf("shift+tab focused %q, want the last tab %q", last, titles[len(titles)-1])
	}
	bar, row := tabBarRow(m, last)
	labels := strings.Split(strings.TrimSpace(bar), "│")
	if len(labels) < 3 {
		t.Fatalf("tab bar %q: want a marker and at least two labels", bar)
	}
	hidden := len(titles) - (len(labels) - 1)
	if want := fmt.Sprintf("‹+%d", hidden); labels[0] != want {
		t.Fatalf("tab bar %q: want it to start with %s│ (%d tabs, %d shown) and show %q", bar, want, len(titles), len(labels)-1, last)
	}
	prev := strings.TrimSpace(labels[len(labels)-2])
	col := ansi.StringWidth(bar[:strings.Index(bar, "│"+prev)]) + 1
	m.Update(tea.MouseClickMsg{X: col, Y: row, Button: tea.MouseLeft})
	m.Update(tea.MouseReleaseMsg{X: col, Y: row, Button: tea.MouseLeft})
	if got := m.Focused().Title(); got != titles[len(titles)-2] {
		t.Errorf("click at column %d of %q focused %q, want %q", col, bar, got, titles[len(titles)-2])
	}
}

// TestTabBarAllTabsAt80: at 80 columns every tab of a live run is on the
// bar (Findings was hidden behind "…"): the focused one by
// its title, the others by their title or its first letters, in the
// order tab visits them, with no "+N" marker.
func TestTabBarAllTabsAt80(t *testing.T) {
	m, titles := liveTabs(t, 80)
	if len(titles) < 11 {
		t.Fatalf("tabs %q: want the 11 or more of a live run", titles)
	}
	for _, focus := range []int{0, len(titles) - 1} {
		for m.Focused().Title() != titles[focus] {
			press(m, "tab")
		}
		bar, _ := tabBarRow(m, titles[focus])
		labels := strings.Split(strings.TrimSpace(bar), "│")
		if len(labels) != len(titles) {
			t.Fatalf("focus %q: tab bar %q has %d labels, want all %d tabs %q", titles[focus], bar, len(labels), len(titles), titles)
		}
		for i, l := range labels {
			l = strings.TrimSpace(l)
			if i == len(labels)-1 {
				l = strings.Fields(l)[0] // the focused view's info follows
			}
			if i == focus && l != titles[i] || !strings.HasPrefix(titles[i], l) || len(l) < 3 {
				t.Errorf("focus %q: label %d %q for tab %q", titles[focus], i, l, titles[i])
			}
		}
	}
}

// TestCompareConfirmAnswered: C shows the confirmation prompt; C again
// starts the comparison and the prompt goes; the Compare view says what
// runs ("C again to compare attention …" stayed up during
// it).
func TestCompareConfirmAnswered(t *testing.T) {
	m := newModel(t, 120, 40, tui.Options{Controller: &fakeCtl{}, Backends: backendChoices(), DeviceStatus: gputest.CPUOnlyStatus})
	m.Update(liveMsg("math", true))
	m.Update(key("C"))
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "C again to compare attention") {
		t.Fatalf("no confirmation prompt:\n%s", out)
	}
	m.Update(key("C"))
	out := ansi.Strip(m.Render())
	if strings.Contains(out, "C again") || !strings.Contains(out, "comparing attention: math vs fused") || !strings.Contains(out, "C cancels") {
		t.Errorf("after C C the status still asks or does not say what runs:\n%s", out)
	}
}

// TestImportWarningsKey (the status bar showed
// "warning: /work/…/tracelens_h100_qwen15_sdpa_flash.j…  1 import warning"
// with no key to read it): the status bar's right side names W; the
// status line leaves out the file name the header shows; W lists every
// warning whole (its words, in order, wrapped), esc closes the list.
func TestImportWarningsKey(t *testing.T) {
	m := newModel(t, 80, 24, tui.Options{})
	snap := viewstest.Snapshot()
	snap.Source = "/traces/tracelens_h100_qwen15_sdpa_flash.json.gz"
	warns := []string{
		snap.Source + `: 1 event partly overlaps an enclosing event on the same thread instead of nesting (first: "<built-in method _record_function_enter_new of PyCapsule object at 0x7d6a86ff5f20>" [1428625731786377, 1428625731905169) ns and "ProfilerStep#6" [1428625731896179, 1428625779047574) ns on pid 25286 tid 25286); kept as they are`,
		snap.Source + ": 3 GPU ops have no launch; they count in no step",
	}
	snap.Warnings = warns
	m.Update(tui.SnapshotMsg{Snapshot: snap})
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "2 import warnings (W)") {
		t.Errorf("status bar does not name the key:\n%s", out)
	}
	if !strings.Contains(out, "warning: 1 event partly overlaps") {
		t.Errorf("status line does not start with the warning's own words:\n%s", out)
	}
	// One line, ending in "…" beside the key: the rest is under W.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "warning: 1 event") {
			if !strings.Contains(l, "…") || !strings.Contains(l, "(W)") || strings.Contains(lines[i+1], "same thread") {
				t.Errorf("the warning takes more than its one status line:\n%s", out)
			}
		}
	}
	press(m, "W")
	out = ansi.Strip(m.Render())
	if !strings.Contains(out, "W or esc closes") {
		t.Fatalf("W did not open the warnings:\n%s", out)
	}
	var body []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "•" || len(body) > 0 && strings.HasPrefix(l, "  ")) {
			body = append(body, strings.TrimPrefix(strings.TrimSpace(l), "• "))
		}
	}
	if got, want := strings.Fields(strings.Join(body, " ")), strings.Fields(strings.Join(warns, " ")); !slices.Equal(got, want) {
		t.Errorf("W lists\n%q\nwant the words of every warning\n%q\nscreen:\n%s", got, want, out)
	}
	press(m, "esc")
	if out := ansi.Strip(m.Render()); strings.Contains(out, "W or esc closes") || !strings.Contains(out, "kernel") {
		t.Errorf("esc did not close the warnings:\n%s", out)
	}
}

// Warnings quote names from the trace: one naming an event whose name
// holds a clear-screen, a title change and a bell reaches neither the
// status line nor the W list raw; both show the escaped text.
func TestImportWarningsEscaped(t *testing.T) {
	m := newModel(t, 120, 24, tui.Options{})
	snap := viewstest.Snapshot()
	snap.Warnings = []string{"1 event partly overlaps \"op\x1b[2J\x1b]0;pwned\a\" on pid 1"}
	m.Update(tui.SnapshotMsg{Snapshot: snap})
	check := func(where string) {
		out := m.Render()
		if strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\a") {
			t.Errorf("%s: a control sequence from a warning reaches the terminal: %q", where, out)
		}
		if !strings.Contains(ansi.Strip(out), `op\x1b[2J`) {
			t.Errorf("%s: the escaped name is not shown:\n%s", where, ansi.Strip(out))
		}
	}
	check("status line")
	press(m, "W")
	check("W list")
}

// C outside a live run (rlktop open): findings name C for comparing a
// flag, and it did nothing; it says what to run instead.
func TestCompareKeyInOpenSays(t *testing.T) {
	m := newModel(t, 120, 24, tui.Options{})
	m.Update(tui.SnapshotMsg{Snapshot: viewstest.Snapshot()})
	press(m, "C")
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "comparing a flag needs a running loop") {
		t.Errorf("C in open says nothing:\n%s", out)
	}
}
