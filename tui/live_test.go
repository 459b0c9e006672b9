package tui_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/gpu/gputest"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/wire/msg"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views/viewstest"
)

// fakeCtl records the calls the live keys make.
type fakeCtl struct {
	mu    sync.Mutex
	calls []string
	res   *livestate.CompareResult
	// labels are sent to Compare's onStep before it returns; block, when
	// set, holds Compare until closed.
	labels []livestate.StepLabel
	block  chan struct{}
}

func (f *fakeCtl) log(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }
func (f *fakeCtl) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}
func (f *fakeCtl) SetFlag(k, v string) error { f.log("set " + k + "=" + v); return nil }
func (f *fakeCtl) SetTracing(on bool) error  { f.log(fmt.Sprint("tracing ", on)); return nil }
func (f *fakeCtl) Restart() error            { f.log("restart"); return nil }
func (f *fakeCtl) StartRecording() (string, error) {
	f.log("record")
	return "/work/rlktop-20261129-120000.rlk", nil
}
func (f *fakeCtl) StopRecording() (livestate.RecordingInfo, error) {
	f.log("stop")
	return livestate.RecordingInfo{Bytes: 3 << 20, Frames: 120, Events: 45000}, nil
}
func (f *fakeCtl) Compare(ctx context.Context, k string, vals []string, progress func(string), onStep func(livestate.StepLabel)) (*livestate.CompareResult, error) {
	f.log("compare " + k + "=" + strings.Join(vals, ","))
	progress("arm " + k + "=" + vals[0] + " from step 0")
	for _, l := range f.labels {
		onStep(l)
	}
	if f.labels != nil {
		progress("labels sent")
	}
	if f.block != nil {
		<-f.block
	}
	return f.res, nil
}

func backendChoices() []livestate.FlagSpec {
	return []livestate.FlagSpec{
		{Key: "attention", Values: []string{"math", "fused"}},
		{Key: "qkv", Values: []string{"separate", "fused"}},
		{Key: "scan", Values: []string{"serial", "sklansky"}},
		{Key: "sampler", Values: []string{"multinomial", "gumbel"}},
		{Key: "head", Values: []string{"materialized", "gatherdot"}},
	}
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// liveState is a hand-made session state: the viewstest snapshot as the
// cumulative aggregate, a window with only its first two kernels, 30
// steps of pid 7 (100 ms + (i mod 5) × 20 ms) with attention flipped at
// step 20, one child with the flags in force.
func liveState(attention string, tracing bool) *livestate.State {
	cum := viewstest.Snapshot()
	cum.Source, cum.Format, cum.Warnings = "live: built-in RL loop", "rlktop", nil
	win := *cum
	win.Kernels = cum.Kernels[:2]
	st := &livestate.State{Cumulative: cum, Recent: &win, RecentNs: 5e9, StepCount: 30, StepsPerSec: 6.5, Events: 12345}
	for i := int64(0); i < 30; i++ {
		st.Steps = append(st.Steps, livestate.StepTime{Step: i, PID: 7, DurNs: 100e6 + (i%5)*20e6})
	}
	st.Marks = []livestate.Mark{{Step: 20, PID: 7, Key: "attention", Value: "math"}}
	st.Children = []livestate.Child{{Connected: true, Tracing: tracing, Flags: []msg.KV{{Key: "attention", Value: attention}}}}
	return st
}

func liveFlags(attention string) livestate.FlagState {
	return livestate.FlagState{InForce: map[string]string{"attention": attention, "qkv": "separate", "scan": "serial", "sampler": "multinomial", "head": "materialized"}}
}

func liveMsg(attention string, tracing bool) livestate.Update {
	return livestate.Update{State: liveState(attention, tracing), Child: livestate.Status{State: livestate.Running, PID: 7},
		Flags: liveFlags(attention), At: t0}
}

func newLive(t *testing.T, w, h int, ctl tui.Controller) *tui.Model {
	return newModel(t, w, h, tui.Options{Controller: ctl, Backends: backendChoices(), DeviceStatus: gputest.CPUOnlyStatus})
}

// do runs cmd and feeds what it returns back into m, following batches;
// commands that do not answer within 300 ms (timers, listeners) are
// dropped.
func do(m *tui.Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(300 * time.Millisecond):
		return
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			do(m, c)
		}
		return
	}
	if msg == nil {
		return
	}
	_, next := m.Update(msg)
	do(m, next)
}

func press(m *tui.Model, k string) {
	_, cmd := m.Update(key(k))
	do(m, cmd)
}

func TestLiveScreens(t *testing.T) {
	h200 := gputest.H200Busy()
	cases := []struct {
		name string
		w, h int
		keys []string
	}{
		{"kernels_80x24", 80, 24, nil},
		{"flags_80x24", 80, 24, []string{"tab", "tab"}}, // past Output
		{"steps_80x24", 80, 24, []string{"tab", "tab", "tab"}},
		{"wide_200x50", 200, 50, nil},
		{"wide_window_160x40", 160, 40, []string{"w"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newLive(t, c.w, c.h, &fakeCtl{})
			m.Update(liveMsg("math", true))
			m.Update(tui.DeviceMsg{Sample: h200})
			for _, k := range c.keys {
				press(m, k)
			}
			golden.RequireEqual(t, screen(t, m, c.w, c.h))
		})
	}
}

func TestLiveFlipPendingAck(t *testing.T) {
	ctl := &fakeCtl{}
	m := newLive(t, 200, 50, ctl)
	m.Update(liveMsg("math", true))
	press(m, "1")
	if got := ctl.Calls(); len(got) != 1 || got[0] != "set attention=fused" {
		t.Fatalf("calls %q, want [set attention=fused]", got)
	}
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "→ fused pending") {
		t.Fatalf("no pending mark:\n%s", out)
	}
	// The child has not acknowledged yet: still pending.
	m.Update(liveMsg("math", true))
	if !strings.Contains(ansi.Strip(m.Render()), "→ fused pending") {
		t.Fatal("pending cleared before the ack")
	}
	m.Update(liveMsg("fused", true))
	out = ansi.Strip(m.Render())
	if strings.Contains(out, "pending") || !strings.Contains(out, "[fused]") {
		t.Fatalf("after the ack:\n%s", out)
	}
}

func TestLiveKeysCallController(t *testing.T) {
	res := &livestate.CompareResult{
		Arms: []attrib.ArmStats{{Name: "attention=math", Valid: true, Steps: 4, MedianNs: 2e8},
			{Name: "attention=fused", Valid: true, Steps: 4, MedianNs: 1e8}},
		Ratio: attrib.Ratio{Value: 0.5, CILow: 0.45, CIHigh: 0.55}, Verdict: attrib.VerdictFaster, Mode: "live",
		Rows: []attrib.RowComparison{{Group: "kernel", Key: "attn_fused_fwd", BNs: 5e7, DeltaNs: 5e7, Verdict: "only in B"}},
	}
	ctl := &fakeCtl{res: res}
	m := newLive(t, 200, 50, ctl)
	m.Update(liveMsg("math", true))
	press(m, "T")
	press(m, "r")
	press(m, "R")
	st := liveState("math", true)
	st.Recording = &livestate.RecordingInfo{Started: t0.Add(-65 * time.Second), Bytes: 1536 << 10}
	m.Update(livestate.Update{State: st, Child: livestate.Status{State: livestate.Running, PID: 7}, Flags: liveFlags("math"), At: t0})
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "● REC rlktop-20261129-120000.rlk 1.5 MiB 1:05") {
		t.Fatalf("recording indicator missing:\n%s", out)
	}
	press(m, "R")
	if s := m.Status().Text; !strings.Contains(s, "3.0 MiB, 120 frames, 45,000 events") {
		t.Fatalf("status after stop: %q", s)
	}
	press(m, "C") // asks first
	press(m, "C")
	want := []string{"tracing false", "restart", "record", "stop", "compare attention=math,fused"}
	if got := ctl.Calls(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if got := m.Focused().Title(); got != "Compare" {
		t.Fatalf("focus after C: %s", got)
	}
	out := ansi.Strip(m.Render())
	for _, s := range []string{"attention=fused / attention=math  ratio 0.500 [0.450, 0.550]  faster", "attn_fused_fwd", "only in B"} {
		if !strings.Contains(out, s) {
			t.Errorf("compare view lacks %q:\n%s", s, out)
		}
	}
}

func TestLivePauseFreezes(t *testing.T) {
	m := newLive(t, 200, 50, &fakeCtl{})
	m.Update(liveMsg("math", true))
	first := m.Snapshot()
	press(m, "p")
	m.Update(liveMsg("math", true))
	if m.Snapshot() != first {
		t.Fatal("snapshot replaced while paused")
	}
	if !strings.Contains(ansi.Strip(m.Render()), "PAUSED") {
		t.Fatal("no PAUSED indicator")
	}
	press(m, "p")
	m.Update(liveMsg("math", true))
	if m.Snapshot() == first {
		t.Fatal("snapshot not replaced after resuming")
	}
	press(m, "w")
	if got := len(m.Snapshot().Kernels); got != 2 {
		t.Fatalf("window shows %d kernels, want the window's 2", got)
	}
}

func TestLiveCrashShowsTail(t *testing.T) {
	m := newLive(t, 200, 50, &fakeCtl{})
	m.Update(liveMsg("math", true))
	m.Update(livestate.Update{State: liveState("math", true), At: t0, Flags: liveFlags("math"),
		Child: livestate.Status{State: livestate.Exited, PID: 7, ExitCode: 2, StderrTail: []string{"panic: boom", "goroutine 1 [running]:"}}})
	out := ansi.Strip(m.Render())
	for _, s := range []string{"exited with status 2", "r restarts", "panic: boom", "attn"} {
		if !strings.Contains(out, s) && s != "attn" {
			t.Errorf("screen lacks %q:\n%s", s, out)
		}
	}
	// What was collected stays: the kernels of the snapshot are shown.
	if m.Snapshot() == nil || len(m.Snapshot().Kernels) != len(viewstest.Kernels) {
		t.Fatal("collected data lost after the crash")
	}
}

func TestLiveFlagsPanelSpaceFlips(t *testing.T) {
	ctl := &fakeCtl{}
	m := newLive(t, 80, 24, ctl)
	m.Update(liveMsg("math", true))
	press(m, "tab") // Output
	press(m, "tab") // Flags
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	do(m, cmd)
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	do(m, cmd)
	if got := ctl.Calls(); len(got) != 1 || got[0] != "set qkv=fused" {
		t.Fatalf("calls %q, want [set qkv=fused]", got)
	}
}

// TestLiveEverySize checks the layout contract (exactly h lines of w
// cells) of the live screens at many sizes, on every tab, with a crash,
// a co-tenant banner, a finished comparison and full help.
func TestLiveEverySize(t *testing.T) {
	if testing.Short() {
		t.Skip("size sweep skipped with -short")
	}
	res := &livestate.CompareResult{
		Arms: []attrib.ArmStats{{Name: "attention=math", Valid: true, Steps: 4, MedianNs: 2e8},
			{Name: "attention=fused", Valid: false, Reason: "exited with status 2", Steps: 1, MedianNs: 1e8}},
		Verdict: attrib.VerdictInvalid, Mode: "live",
		Rows:     []attrib.RowComparison{{Group: "kernel", Key: strings.Repeat("very_long_kernel_name_", 10), ANs: 1, BNs: 5e7, DeltaNs: 5e7, Ratio: 5e7, CILow: 1, CIHigh: 9e9, Verdict: attrib.VerdictSlower}},
		Schedule: []livestate.StepLabel{{Arm: "attention=math", Phase: livestate.PhaseCounted, DurNs: 5}, {Arm: "attention=fused", Phase: livestate.PhaseWarmup, DurNs: 9}},
	}
	h200 := gputest.H200Busy()
	m := newLive(t, 80, 24, &fakeCtl{res: res})
	m.Update(liveMsg("math", true))
	m.Update(tui.DeviceMsg{Sample: h200})
	press(m, "C") // a finished comparison (C asks, C again starts)
	press(m, "C")
	m.Update(livestate.Update{State: liveState("math", true), At: t0, Flags: liveFlags("math"),
		Child: livestate.Status{State: livestate.Exited, ExitCode: 2, StderrTail: []string{strings.Repeat("x", 300), "b"}}})
	for w := 1; w <= 240; w += 23 {
		for h := 1; h <= 60; h += 11 {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			for tab := 0; tab < 9; tab++ {
				for _, help := range []bool{false, true} {
					if help {
						m.Update(key("?"))
					}
					lines := strings.Split(m.Render(), "\n")
					if len(lines) != h {
						t.Fatalf("%dx%d tab %d help %v: %d lines", w, h, tab, help, len(lines))
					}
					for i, l := range lines {
						if lw := ansi.StringWidth(l); lw != w {
							t.Fatalf("%dx%d tab %d help %v: line %d is %d wide: %q", w, h, tab, help, i, lw, ansi.Strip(l))
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

func TestLiveFullHelp80(t *testing.T) {
	m := newLive(t, 80, 24, &fakeCtl{})
	m.Update(liveMsg("math", true))
	press(m, "?")
	golden.RequireEqual(t, screen(t, m, 80, 24))
}

// errCtl is a controller whose every call fails with "boom".
type errCtl struct{ fakeCtl }

func (e *errCtl) SetFlag(k, v string) error { return errors.New("boom") }
func (e *errCtl) SetTracing(on bool) error  { return errors.New("boom") }
func (e *errCtl) Restart() error            { return errors.New("boom") }
func (e *errCtl) StartRecording() (string, error) {
	return "", errors.New("boom")
}

// TestLiveActionResults: each controller call's result comes back as its
// own message and sets its status line, on success and on failure.
func TestLiveActionResults(t *testing.T) {
	for _, c := range []struct {
		name string
		ctl  tui.Controller
		want []string // status after 1, T, r, R
	}{
		{"ok", &fakeCtl{}, []string{"attention=fused requested; applied at the next step", "tracing off requested",
			"child restarted (its steps and totals start afresh)", "recording to /work/rlktop-20261129-120000.rlk (R stops)"}},
		{"failing", &errCtl{}, []string{"attention=fused: boom", "tracing off: boom", "restart: boom", "recording: boom"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newLive(t, 200, 50, c.ctl)
			m.Update(liveMsg("math", true))
			for i, k := range []string{"1", "T", "r", "R"} {
				press(m, k)
				if got := m.Status().Text; got != c.want[i] {
					t.Errorf("after %s: status %q, want %q", k, got, c.want[i])
				}
			}
		})
	}
}

// TestLiveFlipRefused: a flip the child refuses (a typed refusal in the
// session state) is no longer shown pending, and the status bar says who
// refused what and why; a refusal of another value changes nothing.
func TestLiveFlipRefused(t *testing.T) {
	m := newLive(t, 200, 50, &fakeCtl{})
	m.Update(liveMsg("math", true))
	press(m, "1")
	up := liveMsg("math", true)
	up.State.Refusals = []livestate.Refusal{{Seq: 1, PID: 7, Op: msg.ControlSet, Key: "attention", Value: "math", Err: "old"}}
	m.Update(up)
	if !strings.Contains(ansi.Strip(m.Render()), "→ fused pending") {
		t.Fatal("a refusal of another value cleared the pending flip")
	}
	up = liveMsg("math", true)
	up.State.Refusals = append(up.State.Refusals[:0:0], livestate.Refusal{Seq: 1, PID: 7, Op: msg.ControlSet, Key: "attention", Value: "math", Err: "old"},
		livestate.Refusal{Seq: 2, PID: 7, Op: msg.ControlSet, Key: "attention", Value: "fused", Err: "no fused kernel on this device"})
	m.Update(up)
	out := ansi.Strip(m.Render())
	if strings.Contains(out, "pending") {
		t.Errorf("still pending after the refusal:\n%s", out)
	}
	if s := m.Status(); s.Level != tui.Error || s.Text != "child pid 7 refused set attention=fused: no fused kernel on this device" {
		t.Errorf("status %+v", s)
	}
}

// TestLiveStepTimeRanks: a distributed job's two ranks interleave their
// steps (pids 7 and 8, world 2; rank 1 takes 150 ms, rank 0 100 ms). The
// Step time panel counts steps per rank (20, not the 40 step events) and
// draws one step per step every rank finished, at its slowest rank's time
// (median 150 ms), not the one-step tail of the last pid ("598
// steps" and a single bar for a 300-step two-rank run).
func TestLiveStepTimeRanks(t *testing.T) {
	st := liveState("math", true)
	st.Steps, st.StepCount, st.Marks = nil, 40, nil
	for i := int64(0); i < 20; i++ {
		st.Steps = append(st.Steps, livestate.StepTime{Step: i, PID: 7, StartNs: i * 2e8, DurNs: 100e6},
			livestate.StepTime{Step: i, PID: 8, StartNs: i * 2e8, DurNs: 150e6})
	}
	st.Children = []livestate.Child{
		{Connected: true, Tracing: true, Hello: msg.Hello{PID: 7, Rank: 0, World: 2}},
		{Connected: true, Tracing: true, Hello: msg.Hello{PID: 8, Rank: 1, World: 2}}}
	m := newLive(t, 200, 50, &fakeCtl{})
	m.Update(livestate.Update{State: st, Child: livestate.Status{State: livestate.Running, PID: 6}, Flags: liveFlags("math"), At: t0})
	out := ansi.Strip(m.Render())
	for _, want := range []string{"· 20 steps", "median 150 ms", "min 150 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("step time panel lacks %q:\n%s", want, out)
		}
	}
}

// TestUntracedBannerShortOnSmallTerminals: the reason a command runs
// untraced (a long one, as on a machine with neither driver) takes two
// rows at 80×24, ending with where to read it all, and the Child view has
// it whole (6 of 24 rows for the whole session).
func TestUntracedBannerShortOnSmallTerminals(t *testing.T) {
	reason := "no tracer for this machine, running the command untraced: CUPTI (NVIDIA): no NVIDIA driver found (no /proc/driver/nvidia/version, no libcuda.so.1); rocprofiler-sdk (AMD): no ROCm found (no /dev/kfd, no librocprofiler-sdk.so in $ROCM_PATH/lib); a Python command still reports steps, stages and flags"
	m := newModel(t, 80, 24, tui.Options{Controller: &fakeCtl{}, Backends: backendChoices(), DeviceStatus: gputest.CPUOnlyStatus, Untraced: reason, Command: true})
	m.Update(liveMsg("math", true))
	out := ansi.Strip(m.Render())
	var banner []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "untraced") || strings.Contains(l, "(in full: Child)") || strings.Contains(l, "rocprofiler") {
			banner = append(banner, l)
		}
	}
	if len(banner) != 2 || !strings.HasSuffix(strings.TrimRight(banner[1], " "), "… (in full: Child)") {
		t.Errorf("banner rows %q, want 2 ending with where the rest is:\n%s", banner, out)
	}
	for m.Focused().Title() != "Child" {
		m.Update(key("tab"))
	}
	flat := strings.Join(strings.Fields(ansi.Strip(m.Render())), " ")
	if !strings.Contains(flat, "a Python command still reports steps, stages and flags") {
		t.Errorf("the Child view lacks the whole reason:\n%s", ansi.Strip(m.Render()))
	}
}

// TestLiveFlagsFromRunState: the flags panel and the flip keys read the
// run's one flag state (livestate.Update.Flags, loop.Live.FlagState): a flip the
// run says is pending is drawn pending although it was not asked here, and
// is gone when the run no longer says so; the digit key flips from the
// pending value (attention pending fused: 1 asks for math).
func TestLiveFlagsFromRunState(t *testing.T) {
	ctl := &fakeCtl{}
	m := newLive(t, 200, 50, ctl)
	msg := liveMsg("math", true)
	msg.Flags.Pending = map[string]string{"qkv": "fused", "attention": "fused"}
	m.Update(msg)
	out := ansi.Strip(m.Render())
	for _, line := range []string{"2 qkv ", "1 attention "} {
		if !strings.Contains(lineWith(out, line), "→ fused pending") {
			t.Errorf("%s: the run's pending flip is not drawn:\n%s", line, out)
		}
	}
	press(m, "1")
	if got := ctl.Calls(); len(got) != 1 || got[0] != "set attention=math" {
		t.Errorf("calls %q, want [set attention=math] (the value after the pending fused)", got)
	}
	m.Update(liveMsg("math", true))
	if out := ansi.Strip(m.Render()); strings.Contains(lineWith(out, "2 qkv "), "pending") || !strings.Contains(lineWith(out, "2 qkv "), "[separate]") {
		t.Errorf("qkv still pending after the run dropped it:\n%s", out)
	}
}

// lineWith returns the first line of s holding sub, "" when none.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
