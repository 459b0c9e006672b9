package tui_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rlktop/rlktop/gpu/gputest"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

func runFlow(t *testing.T, opts tui.Options, w, h int, steps func(tm *teatest.TestModel)) *tui.Model {
	t.Helper()
	st := views.DefaultStyles()
	opts.Styles = &st
	m := tui.New(opts)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("sort total")) },
		teatest.WithDuration(5*time.Second))
	steps(tm)
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*tui.Model)
	if !ok {
		t.Fatal("final model is not *tui.Model")
	}
	return final
}

// TestFlowDrillDown: tab to Categories, enter on its first row
// (attention: 310+40+24 ms of the fixture, the most) lists attention's
// kernels in Kernels — the fixture has three (flash_fwd, paged_attention,
// cunn_SoftMaxForward); enter opens the first one's launches, esc closes
// them, esc again goes back to Categories with the filter cleared.
func TestFlowDrillDown(t *testing.T) {
	final := runFlow(t, tui.Options{Snapshot: viewstest.Snapshot()}, 80, 24, func(tm *teatest.TestModel) {
		tm.Send(key("tab")) // Categories
		tm.Send(key("enter"))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("its kernels · enter")) },
			teatest.WithDuration(5*time.Second))
		tm.Send(key("enter"))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("launches")) },
			teatest.WithDuration(5*time.Second))
		tm.Send(key("esc"))
		tm.Send(key("esc"))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("10 categories")) },
			teatest.WithDuration(5*time.Second))
	})
	if got := final.Focused().Title(); got != "Categories" {
		t.Errorf("focus after esc esc = %s, want Categories", got)
	}
	if f := final.Kernels().Filter(); f != "" {
		t.Errorf("filter after going back = %q, want none", f)
	}
}

// TestDrillDownModel drives the model directly to check the rows the
// drill-down filter keeps: the fixture's attention kernels by hand.
func TestDrillDownModel(t *testing.T) {
	st := views.PlainStyles()
	m := tui.New(tui.Options{Styles: &st, Snapshot: viewstest.Snapshot()})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(key("tab"))
	_, cmd := m.Update(key("enter"))
	for cmd != nil { // the drill action comes back as a message
		msg := cmd()
		_, cmd = m.Update(msg)
	}
	if got := m.Focused().Title(); got != "Kernels" {
		t.Fatalf("focus = %s, want Kernels", got)
	}
	var want []string
	for _, k := range viewstest.Kernels {
		if k.Category == "attention" {
			want = append(want, k.Name)
		}
	}
	rows := m.Kernels().Rows()
	if len(rows) != len(want) || len(want) != 3 {
		t.Fatalf("%d rows, want %d (fixture attention kernels)", len(rows), len(want))
	}
	for i := range rows {
		if rows[i].Name != want[i] { // the fixture lists them by total, as the table sorts
			t.Errorf("row %d = %s, want %s", i, rows[i].Name, want[i])
		}
	}
}

// TestFlowMouse: a click on the "Stages" tab focuses Stages; a click on
// its second row selects it and a second click drills into its kernels.
func TestFlowMouse(t *testing.T) {
	st := views.PlainStyles()
	m := tui.New(tui.Options{Styles: &st, Snapshot: viewstest.Snapshot()})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	y, x := find(t, m.Render(), "Stages")
	m.Update(tea.MouseClickMsg{X: x + 1, Y: y, Button: tea.MouseLeft})
	if got := m.Focused().Title(); got != "Stages" {
		t.Fatalf("focus after click on the tab = %s, want Stages", got)
	}
	// The fixture's second stage by time is backward (96+64+12 ms + 10 ms
	// of memset) after forward; find its row on screen.
	y, x = find(t, m.Render(), "backward")
	m.Update(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	_, cmd := m.Update(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	for cmd != nil {
		_, cmd = m.Update(cmd())
	}
	if got := m.Focused().Title(); got != "Kernels" {
		t.Fatalf("focus after a second click = %s, want Kernels", got)
	}
	if f := m.Kernels().Filter(); f != "stage:backward" {
		t.Errorf("filter %q, want stage:backward", f)
	}
	// Wheel over the kernels table moves its cursor three rows.
	m.Update(key("esc"))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(key("tab")) // back to a list with many rows: focus Kernels
	for m.Focused().Title() != "Kernels" {
		m.Update(key("tab"))
	}
	y, x = find(t, m.Render(), "volta_sgemm")
	m.Update(tea.MouseWheelMsg{X: x, Y: y, Button: tea.MouseWheelDown})
	if sel := m.Kernels().Selected(); sel == nil || sel.Name != m.Kernels().Rows()[3].Name {
		t.Errorf("after one wheel notch the cursor is on %v, want row 3", sel)
	}
}

// find returns the row and column of the first cell of s on screen.
func find(t *testing.T, screen, s string) (int, int) {
	t.Helper()
	for y, l := range strings.Split(ansi.Strip(screen), "\n") {
		if i := strings.Index(l, s); i >= 0 {
			return y, ansi.StringWidth(l[:i])
		}
	}
	t.Fatalf("%q not on screen:\n%s", s, ansi.Strip(screen))
	return 0, 0
}

// TestFlowTimelineZoom: a file with a timeline; tab to Timeline, 0 fits
// the 14,000 ns of the fixture, + halves it around the middle.
func TestFlowTimelineZoom(t *testing.T) {
	tl, _ := viewstest.Timeline()
	final := runFlow(t, tui.Options{Snapshot: viewstest.Snapshot(), Timeline: tl}, 80, 24, func(tm *teatest.TestModel) {
		tm.Send(key("tab"))
		tm.Send(key("0"))
		tm.Send(key("+"))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("7.00 µs wide")) },
			teatest.WithDuration(5*time.Second))
	})
	from, span := final.Timeline().Range()
	// Fit: 0+14,000 over 70 cells; + zooms around cell 35 (7,000 ns):
	// 7,000 - 7,000/2 = 3,500.
	if from != 3_500 || span != 7_000 {
		t.Errorf("range %d+%d, want 3500+7000", from, span)
	}
}

// TestFlowMouseClickTab: in the running program, a click on the Stages
// tab label focuses Stages and a wheel notch over it moves nothing else.
func TestFlowMouseClickTab(t *testing.T) {
	probe := tui.New(tui.Options{Snapshot: viewstest.Snapshot()})
	probe.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	y, x := find(t, probe.Render(), "Stages")
	final := runFlow(t, tui.Options{Snapshot: viewstest.Snapshot()}, 80, 24, func(tm *teatest.TestModel) {
		tm.Send(tea.MouseClickMsg{X: x + 2, Y: y, Button: tea.MouseLeft})
		tm.Send(tea.MouseReleaseMsg{X: x + 2, Y: y, Button: tea.MouseLeft})
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("stages ·")) },
			teatest.WithDuration(5*time.Second))
	})
	if got := final.Focused().Title(); got != "Stages" {
		t.Errorf("focus %s, want Stages", got)
	}
}

// TestFlowCompareConfirm: in the running program, C shows what a
// comparison stops and loses and starts nothing; C again starts it.
func TestFlowCompareConfirm(t *testing.T) {
	ctl := &fakeCtl{res: &livestate.CompareResult{Mode: "live"}}
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Controller: ctl, Backends: backendChoices(), DeviceStatus: gputest.CPUOnlyStatus})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	tm.Send(liveMsg("math", true))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("sort total")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'C', Text: "C"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("C again")) },
		teatest.WithDuration(5*time.Second))
	if n := len(ctl.Calls()); n != 0 {
		t.Fatalf("C alone called %q", ctl.Calls())
	}
	tm.Send(tea.KeyPressMsg{Code: 'C', Text: "C"})
	deadline := time.Now().Add(5 * time.Second)
	for len(ctl.Calls()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if got := ctl.Calls(); len(got) != 1 || got[0] != "compare attention=math,fused" {
		t.Errorf("calls %q, want one comparison", got)
	}
}

// TestFlowCompareArmsOnStepChart: while a comparison runs, the step chart
// draws which arm ran each step as the controller reports it (onStep):
// the fake sends A's warm-up and 3 counted steps, B's, A′'s warm-up and 2
// counted, then an extra step of A — the arm row reads ·AAA·BBB·aa· (one
// letter per label, written by hand from the list), and the legend counts
// 3, 3 and 2 counted steps. 200 columns: the wide layout shows the step
// chart beside the Compare view.
func TestFlowCompareArmsOnStepChart(t *testing.T) {
	lbl := func(arm, phase string, ms int64) livestate.StepLabel {
		return livestate.StepLabel{PID: 9, Arm: arm, Phase: phase, DurNs: ms * 1e6}
	}
	a, b, n := "attention=math", "attention=fused", livestate.NoiseName("attention=math")
	ctl := &fakeCtl{res: &livestate.CompareResult{Mode: "restart"}, block: make(chan struct{}), labels: []livestate.StepLabel{
		lbl(a, livestate.PhaseWarmup, 30), lbl(a, livestate.PhaseCounted, 20), lbl(a, livestate.PhaseCounted, 21), lbl(a, livestate.PhaseCounted, 22),
		lbl(b, livestate.PhaseWarmup, 15), lbl(b, livestate.PhaseCounted, 10), lbl(b, livestate.PhaseCounted, 11), lbl(b, livestate.PhaseCounted, 12),
		lbl(n, livestate.PhaseWarmup, 25), lbl(n, livestate.PhaseCounted, 20), lbl(n, livestate.PhaseCounted, 23), lbl(a, livestate.PhaseExtra, 24),
	}}
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Controller: ctl, Backends: backendChoices(), DeviceStatus: gputest.CPUOnlyStatus})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 50))
	tm.Send(liveMsg("math", true))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("sort total")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'C', Text: "C"})
	tm.Send(tea.KeyPressMsg{Code: 'C', Text: "C"})
	// The fake's progress line after the labels arrives behind them (one
	// channel, in order): once drawn, every label has been handled.
	teatest.WaitFor(t, tm.Output(), func(bs []byte) bool { return bytes.Contains(bs, []byte("labels sent")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*tui.Model)
	close(ctl.block)
	if !ok {
		t.Fatal("final model is not *tui.Model")
	}
	out := ansi.Strip(final.View().Content)
	if !strings.Contains(out, "·AAA·BBB·aa·") || !strings.Contains(out, "A math 3 · B fused 3 · a A′ 2") {
		t.Errorf("step chart lacks the arm row or its counts:\n%s", out)
	}
}

// TestFlowScrubFollows: in the running program, a file with two steps;
// tab to the Timeline, `.` selects step 41: the header says so and shows
// the step's totals (3 kernels, set by hand), and the Timeline shows
// step 41's range (0+7,000 ns: the step, its ops end by 6,000); `,` goes
// back to every step, fitted (0+14,000).
func TestFlowScrubFollows(t *testing.T) {
	tl, _ := viewstest.Timeline()
	s41, s42 := viewstest.Big(2), viewstest.Big(3)
	s41.Totals = attrib.Totals{KernelCount: 3, KernelTotalNs: 3_000, GPUTotalNs: 3_000}
	s42.Totals = attrib.Totals{KernelCount: 6, KernelTotalNs: 6_000, GPUTotalNs: 6_000}
	final := runFlow(t, tui.Options{Snapshot: viewstest.Snapshot(), Timeline: tl}, 80, 24, func(tm *teatest.TestModel) {
		tm.Send(tui.SnapshotMsg{Snapshot: viewstest.Snapshot(), Timeline: tl,
			Steps: []tui.StepSnapshot{{Step: 41, Snapshot: s41}, {Step: 42, Snapshot: s42}}})
		tm.Send(key("tab"))
		tm.Send(key("."))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			return bytes.Contains(b, []byte("step 41 (1 of 2)")) && bytes.Contains(b, []byte("7.00 µs wide"))
		}, teatest.WithDuration(5*time.Second))
		tm.Send(key(","))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("14.0 µs wide")) },
			teatest.WithDuration(5*time.Second))
	})
	if from, span := final.Timeline().Range(); from != 0 || span != 14_000 {
		t.Errorf("after , : range %d+%d, want 0+14000", from, span)
	}
	if !final.Timeline().Fitting() {
		t.Error("every step again should fit")
	}
}
