package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rlktop/rlktop/loop"
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

// startLiveTUI starts the live run o, its controller and poller, and the
// real TUI model with backends under teatest at 200×50, as runTUI wires
// them; everything stops when the test ends.
func startLiveTUI(t *testing.T, o loop.LiveOptions, backends []views.FlagChoice) (*loop.Live, *teatest.TestModel) {
	t.Helper()
	live, err := loop.StartLive(o)
	if err != nil {
		if live != nil {
			live.Close()
		}
		t.Fatal(err)
	}
	ctl := newLiveController(live, o)
	t.Cleanup(ctl.close)
	_, status, _ := live.Telemetry()
	feed := make(chan tea.Msg, 16)
	done := make(chan struct{})
	go pollLive(live, ctl, feed, done)
	t.Cleanup(func() { close(done) })
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Source: o.Session.Source, Feed: feed, Controller: ctl,
		Backends: backends, DeviceStatus: status})
	return live, teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 50))
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
	live, tm := startLiveTUI(t, o, builtinBackends())
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

// TestLiveControllerCompare runs the TUI's comparison over the real loop
// (small sizes, 4 steps per arm): three arms (A, B, A′), attention rows
// that exist in one arm only, a schedule naming the arms, and the live
// child running again afterwards under a new pid.
func TestLiveControllerCompare(t *testing.T) {
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
	ctl.compareSteps = 4
	defer ctl.close()
	before := live.Sup.Status().PID
	var progress []string
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	var labels []loop.StepLabel
	res, err := ctl.Compare(ctx, "attention", []string{"math", "fused"}, func(s string) { progress = append(progress, s) },
		func(l loop.StepLabel) { labels = append(labels, l) })
	if err != nil {
		t.Fatal(err)
	}
	// The segments' steps reached the TUI's step chart as the final
	// schedule labels them (the schedule also lists the unlabelled steps
	// that ran between segments), with the arm names the TUI maps.
	sched := map[[2]int64]loop.StepLabel{}
	counted := 0
	for _, l := range res.Schedule {
		sched[[2]int64{int64(l.PID), l.Step}] = l
	}
	for _, l := range labels {
		if got := sched[[2]int64{int64(l.PID), l.Step}]; got != l {
			t.Errorf("live label %+v, schedule says %+v", l, got)
		}
		if l.Phase == loop.PhaseCounted {
			counted++
		}
	}
	if want := 3 * 4; counted != want { // 3 arms × compareSteps
		t.Errorf("%d counted labels delivered, want %d", counted, want)
	}
	if len(res.Arms) != 3 || res.Arms[0].Name != "attention=math" || res.Arms[1].Name != "attention=fused" ||
		res.Arms[2].Name != loop.NoiseName("attention=math") {
		t.Fatalf("arms %+v", res.Arms)
	}
	for _, a := range res.Arms {
		if !a.Valid || a.Steps != 4 {
			t.Errorf("arm %s valid %v steps %d (%s), want valid with 4", a.Name, a.Valid, a.Steps, a.Reason)
		}
	}
	rows := map[string]bool{}
	for _, r := range res.Rows {
		if r.Group == "kernel" {
			rows[r.Key] = true
			switch r.Key {
			case "attn_fused_fwd":
				if r.ANs != 0 || r.BNs <= 0 {
					t.Errorf("attn_fused_fwd A %d B %d, want only in B", r.ANs, r.BNs)
				}
			case "attn_math_qk":
				if r.ANs <= 0 || r.BNs != 0 {
					t.Errorf("attn_math_qk A %d B %d, want only in A", r.ANs, r.BNs)
				}
			}
		}
	}
	if !rows["attn_fused_fwd"] || !rows["attn_math_qk"] {
		t.Errorf("kernel rows lack the attention kernels: %v", rows)
	}
	arms := map[string]int{}
	for _, s := range res.Schedule {
		if s.Phase == loop.PhaseCounted {
			arms[s.Arm]++
		}
	}
	if arms["attention=math"] != 4 || arms["attention=fused"] != 4 {
		t.Errorf("counted steps per arm in the schedule: %v", arms)
	}
	if len(progress) == 0 {
		t.Error("no progress lines")
	}
	st := live.Sup.Status()
	if st.State != loop.Running || st.PID == before {
		t.Errorf("live child after the comparison: %s (pid before %d)", st.Describe(), before)
	}
}
