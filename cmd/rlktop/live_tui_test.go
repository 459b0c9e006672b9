package main

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
)

// rlktopBinary is the rlktop binary record_test.go's TestMain builds (the
// built-in loop's child is its hidden __demo-child subcommand); the test
// skips with -short.
func rlktopBinary(t *testing.T) string {
	t.Helper()
	return needRecordBin(t)
}

// screenModel is the TUI model under teatest that keeps the text of the
// last screen it drew. A terminal renderer redraws only the cells that
// changed (and moves the cursor over equal ones), so a line's text need
// not appear whole in the output stream; waiting on the drawn screen does
// not depend on what the previous frame held.
type screenModel struct {
	*tui.Model
	screen atomic.Pointer[string]
}

func (s *screenModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := s.Model.Update(msg)
	return s, cmd
}

func (s *screenModel) View() tea.View {
	v := s.Model.View()
	text := ansi.Strip(v.Content)
	s.screen.Store(&text)
	return v
}

// waitScreen waits up to d for the drawn screen to contain text; it fails
// the test with the last screen.
func (s *screenModel) waitScreen(t *testing.T, text string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		p := s.screen.Load()
		if p != nil && strings.Contains(*p, text) {
			return
		}
		if time.Now().After(deadline) {
			last := "(nothing drawn)"
			if p != nil {
				last = *p
			}
			t.Fatalf("%q not on the screen after %s; the last screen:\n%s", text, d, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clickTab clicks the tab label on the drawn screen: unlike tab, which
// steps past views as they become available (a restarted child's first
// snapshot has no modelled work, so Roofline comes and goes), a click
// lands on the view named.
func (s *screenModel) clickTab(t *testing.T, tm *teatest.TestModel, label string) {
	t.Helper()
	if p := s.screen.Load(); p != nil {
		for y, l := range strings.Split(*p, "\n") {
			if i := strings.Index(l, " │ "+label); i >= 0 && strings.Contains(l, "Kernels │") {
				x := ansi.StringWidth(l[:i]) + 3
				tm.Send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
				tm.Send(tea.MouseReleaseMsg{X: x, Y: y, Button: tea.MouseLeft})
				return
			}
		}
	}
	t.Fatalf("no %s tab on the screen", label)
}

// clickTabUntil clicks the tab label until the drawn screen contains
// text, for up to d: a click that lands while the model is between
// frames (a comparison ending redraws the Compare view; under load one
// click in a CI run was not seen) is sent again every 2 s.
func (s *screenModel) clickTabUntil(t *testing.T, tm *teatest.TestModel, label, text string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s.clickTab(t, tm, label)
		next := time.Now().Add(2 * time.Second)
		for time.Now().Before(next) {
			if p := s.screen.Load(); p != nil && strings.Contains(*p, text) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			s.waitScreen(t, text, 0)
		}
	}
}

// startLiveTUI starts the live run o, its controller and poller, and the
// real TUI model with backends under teatest at 200×50, as runTUI wires
// them; everything stops when the test ends.
func startLiveTUI(t *testing.T, o loop.LiveOptions, backends []livestate.FlagSpec) (*loop.Live, *teatest.TestModel, *screenModel) {
	t.Helper()
	live, err := loop.StartLive(o)
	if err != nil {
		if live != nil {
			live.Close()
		}
		t.Fatal(err)
	}
	ctl := loop.NewController(live, o)
	t.Cleanup(ctl.Close)
	_, status, _ := live.Telemetry()
	feed := make(chan tea.Msg, 16)
	done := make(chan struct{})
	go pollLive(ctl, feed, done)
	t.Cleanup(func() { close(done) })
	st := views.DefaultStyles()
	m := &screenModel{Model: tui.New(tui.Options{Styles: &st, Source: o.Session.Source, Feed: feed, Controller: ctl,
		Backends: backends, DeviceStatus: status})}
	return live, teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 50)), m
}

// TestLiveTUIFlipAttention drives the real live TUI over the real built-in
// loop (small sizes): it waits for the math attention kernels, presses 1
// (flip attention), and waits for attn_fused_fwd and the flip's mark.
func TestLiveTUIFlipAttention(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the built-in loop (builds rlktop); skipped with -short")
	}
	bin := rlktopBinary(t)
	o := loop.LiveOptions{Exe: bin,
		Flags:   map[string]string{"envs": "8", "layers": "1", "width": "24", "attention": "math"},
		Session: session.Options{Source: "live: test"}}
	live, tm, sc := startLiveTUI(t, o, loop.PanelFlags(o))
	wait := 25 * time.Second // the machine may be loaded
	sc.waitScreen(t, "attn_math_qk", wait)
	tm.Send(tea.KeyPressMsg{Code: '1', Text: "1"})
	sc.waitScreen(t, "attn_fused_fwd", wait)
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*screenModel).Model
	// The session (independently of the screen) saw both kernels and
	// the child acknowledged the flip with a step number.
	ss := live.Session.Snapshot()
	names := map[string]bool{}
	for _, k := range ss.Cumulative.Kernels {
		names[k.Name] = true
	}
	if !names["attn_math_qk"] || !names["attn_fused_fwd"] {
		t.Errorf("session kernels lack attn_math_qk or attn_fused_fwd: %v", names)
	}
	var mark *livestate.Mark
	for i := range ss.Marks {
		if ss.Marks[i].Key == "attention" && ss.Marks[i].Value == "fused" {
			mark = &ss.Marks[i]
		}
	}
	if mark == nil || mark.Step < 0 {
		t.Errorf("no acknowledged attention=fused mark: %+v", ss.Marks)
	}
	var shown []string
	if s := final.Snapshot(); s != nil {
		for _, k := range s.Kernels {
			shown = append(shown, k.Name)
		}
	}
	found := false
	for _, n := range shown {
		found = found || n == "attn_fused_fwd"
	}
	if !found {
		t.Errorf("the TUI's snapshot lacks attn_fused_fwd: %v", shown)
	}
}
