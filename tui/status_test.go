package tui_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/gpu/gputest"
	"github.com/rlktop/rlktop/loop"
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
	msg.Child = loop.Status{State: loop.Exited, ExitCode: 1}
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
	ctl := &fakeCtl{res: &loop.CompareResult{Arms: nil, Mode: "live"}}
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

// TestStatusWrapsWords (user trial: hints cut mid-word at 80 columns): a
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

// TestTabBarShowsFocusedTab (tmux 80x24: the tab bar ended "Compare│…", so
// the focused Findings tab could not be seen): at 40 columns, with the
// last tab focused, the bar starts with "…│" and holds that tab's title;
// a click on the title before it (the mouse uses the same layout, "…│"
// included) focuses that tab.
func TestTabBarShowsFocusedTab(t *testing.T) {
	m := newModel(t, 40, 24, tui.Options{})
	tl, _ := viewstest.Timeline()
	m.Update(tui.SnapshotMsg{Snapshot: viewstest.Snapshot(), Timeline: tl})
	press(m, "shift+tab") // from the first tab to the last
	last := m.Focused().Title()
	bar, row := "", -1
	for i, l := range strings.Split(ansi.Strip(m.Render()), "\n") {
		if strings.Contains(l, "│") && strings.Contains(l, last) {
			bar, row = l, i
			break
		}
	}
	if !strings.HasPrefix(bar, "…│") {
		t.Fatalf("tab bar %q: want it to start with …│ and show %q", bar, last)
	}
	labels := strings.Split(strings.TrimSpace(strings.TrimPrefix(bar, "…│")), "│")
	if len(labels) < 2 {
		t.Fatalf("tab bar %q: want at least two labels", bar)
	}
	prev := strings.TrimSpace(labels[len(labels)-2])
	col := ansi.StringWidth(bar[:strings.Index(bar, prev)]) + 1
	m.Update(tea.MouseClickMsg{X: col, Y: row, Button: tea.MouseLeft})
	m.Update(tea.MouseReleaseMsg{X: col, Y: row, Button: tea.MouseLeft})
	if got := m.Focused().Title(); got != prev {
		t.Errorf("click at column %d of %q focused %q, want %q", col, bar, got, prev)
	}
}

// TestCompareConfirmAnswered: C shows the confirmation prompt; C again
// starts the comparison and the prompt goes; the Compare view says what
// runs (user trial 4: "C again to compare attention …" stayed up during
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
