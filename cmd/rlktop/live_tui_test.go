package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rlktop/rlktop/gpu"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildOut  []byte
)

// rlktopBinary builds this command once per test run (the built-in loop's
// child is the hidden __demo-child subcommand of the same binary).
func rlktopBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := filepath.Abs(filepath.Join(t.TempDir(), "..", "rlktop-bin"))
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "rlktop")
		buildOut, buildErr = exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return builtBin
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
	live, err := loop.StartLive(o)
	if err != nil {
		if live != nil {
			live.Close()
		}
		t.Fatal(err)
	}
	ctl := newLiveController(live, o)
	defer ctl.close()
	mon, status := gpu.Open()
	defer mon.Close()
	feed := make(chan tea.Msg, 16)
	done := make(chan struct{})
	go pollLive(live, ctl, mon, feed, done)
	defer close(done)

	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Source: o.Session.Source, Feed: feed, Controller: ctl,
		Backends: builtinBackends(), DeviceStatus: status})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 50))
	wait := 25 * time.Second // the machine may be loaded
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("attn_math_qk"))
	}, teatest.WithDuration(wait), teatest.WithCheckInterval(200*time.Millisecond))
	tm.Send(tea.KeyPressMsg{Code: '1', Text: "1"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("attn_fused_fwd"))
	}, teatest.WithDuration(wait), teatest.WithCheckInterval(200*time.Millisecond))
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*tui.Model)
	if !ok {
		t.Fatal("final model is not *tui.Model")
	}
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
	var mark *session.Mark
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
