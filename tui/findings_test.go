package tui_test

import (
	"bytes"
	"slices"
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

// mathUpdate is a live state of the built-in loop on the math attention
// path: 60 of 100 ms of kernel time in attn_math_* over 3 steps.
func mathUpdate() livestate.Update {
	msg := liveMsg("math", true)
	s := *msg.State.Cumulative
	s.Kernels = []attrib.KernelRow{
		{Name: "attn_math_softmax", DisplayName: "attn_math_softmax", Category: "attention", Count: 6, TotalNs: 40e6},
		{Name: "matmul_mlp_up", DisplayName: "matmul_mlp_up", Category: "gemm", Count: 6, TotalNs: 40e6},
		{Name: "attn_math_qk", DisplayName: "attn_math_qk", Category: "attention", Count: 6, TotalNs: 20e6},
	}
	s.Categories = []attrib.GroupRow{{Key: "attention", Count: 12, TotalNs: 60e6, Share: 0.6}, {Key: "gemm", Count: 6, TotalNs: 40e6, Share: 0.4}}
	s.Totals = attrib.Totals{KernelCount: 18, KernelTotalNs: 100e6, GPUTotalNs: 100e6}
	s.Steps = []attrib.StepRow{{Step: 1}, {Step: 2}, {Step: 3}}
	msg.State.Cumulative = &s
	// No flip took effect: the findings are evaluated over the cumulative
	// totals (after one, over the window: sinceFlip).
	msg.State.Marks = nil
	return msg
}

func fusedResult() *livestate.CompareResult {
	return &livestate.CompareResult{
		Arms: []attrib.ArmStats{{Name: "attention=math", Valid: true, Steps: 8, MedianNs: 2e8},
			{Name: "attention=fused", Valid: true, Steps: 8, MedianNs: 1.42e8}, {Name: "A′ (attention=math)", Valid: true, Steps: 8, MedianNs: 2e8}},
		Ratio: attrib.Ratio{Value: 0.71, CILow: 0.70, CIHigh: 0.75}, Verdict: attrib.VerdictFaster, Mode: "live",
		Rows: []attrib.RowComparison{{Group: "category", Key: "attention", ANs: 60e6, BNs: 40.8e6, Ratio: 0.68, CILow: 0.6, CIHigh: 0.7, Verdict: "faster"}},
		Consistency: []livestate.ArmConsistency{{Arm: "attention=math", Len: 752, Bitwise: true},
			{Arm: "attention=fused", Len: 752, MaxAbs: 1.7e-6, MaxULP: 850}},
	}
}

// TestFindingsEnterCompares is the one key from finding to
// verdict, as a teatest flow over the real model: the built-in loop on
// the math path shows the math-fallback finding first; enter on it asks
// the compare confirmation for attention math vs fused, C starts the
// comparison (the controller is asked for exactly that), and when it
// ends the finding shows the measured result.
func TestFindingsEnterCompares(t *testing.T) {
	ctl := &fakeCtl{res: fusedResult()}
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Controller: ctl, Backends: backendChoices(), DeviceStatus: gputest.CPUOnlyStatus})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	tm.Send(mathUpdate())
	wait := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	wait("Findings")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}) // Findings is the last tab
	wait("1. attention runs on the math fallback")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("Compare attention: math vs fused?")
	tm.Send(tea.KeyPressMsg{Code: 'C', Text: "C"})
	wait("comparison done: faster")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab}) // from Compare on to Findings
	wait("tried attention=fused")
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*tui.Model)
	if got := ctl.Calls(); strings.Join(got, "|") != "compare attention=math,fused" {
		t.Errorf("controller calls %q, want one compare of attention=math,fused", got)
	}
	out := ansi.Strip(final.Render())
	want := "tried attention=fused: step 0.71× [0.70, 0.75] faster, attention 0.68×, outputs max |Δ| 1.7e-06, not bitwise"
	if !strings.Contains(out, want) {
		t.Errorf("screen lacks %q:\n%s", want, out)
	}
}

// TestFindingsEnterElsewhere: a file (no live run) cannot compare: enter
// names the command that would; live, the status bar names the top
// finding, and any key but C dismisses a finding's confirmation.
func TestFindingsEnterElsewhere(t *testing.T) {
	msg := mathUpdate()
	m := newModel(t, 120, 40, tui.Options{Snapshot: msg.State.Cumulative})
	for m.Focused().Title() != "Findings" {
		m.Update(key("tab"))
	}
	press(m, "enter")
	if s := m.Status().Text; !strings.Contains(s, "rlktop compare --flag") && !strings.Contains(s, "no flag") {
		t.Errorf("file: status %q", s)
	}
	ctl := &fakeCtl{res: fusedResult()}
	m = newLive(t, 120, 40, ctl)
	m.Update(mathUpdate())
	// The first screen names the top finding in the status bar.
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "▸ attention runs on the math fallback (60.0%) · to test: Findings, enter (attention=fused)") {
		t.Errorf("status bar lacks the top finding:\n%s", out)
	}
	for m.Focused().Title() != "Findings" {
		m.Update(key("tab"))
	}
	press(m, "enter")
	press(m, "x") // dismisses
	if s := m.Status().Text; s != "comparison not started" {
		t.Errorf("status after x: %q", s)
	}
	if len(ctl.Calls()) != 0 {
		t.Errorf("calls %q after a dismissed confirmation", ctl.Calls())
	}
}

// TestFindingHintWrapsWhole: at 80×24 the status bar's top finding wraps
// before "· to test: …", never inside it ("· to" at the
// end of the first line, "test: Findings, enter" on the second).
func TestFindingHintWrapsWhole(t *testing.T) {
	m := newLive(t, 80, 24, &fakeCtl{res: fusedResult()})
	m.Update(mathUpdate())
	out := ansi.Strip(m.Render())
	lines := strings.Split(out, "\n")
	found := false
	for i, l := range lines {
		if strings.HasPrefix(l, "▸ attention runs on the math fallback") {
			found = strings.HasPrefix(lines[i+1], "· to test: Findings, enter (attention=fused)") ||
				strings.Contains(l, "· to test: Findings, enter (attention=fused)")
		}
	}
	if !found {
		t.Errorf("the finding hint's '· to test: Findings, enter (attention=fused)' is not on one line:\n%s", out)
	}
}

// TestFindingsAfterFlip (after 1 switched the built-in
// loop to attention=fused, Findings still listed "attention runs on the
// math fallback" at 14.3%, from the cumulative totals): once a flip took
// effect, the live findings are evaluated over the window. Here the
// cumulative totals are mathUpdate's (60% attn_math_*), the flip to
// fused took effect at step 40 and the window holds steps 41–43 with
// fused attention only: the math finding is gone and the view says what
// the findings cover. With step 39 still in the window the note says so.
func TestFindingsAfterFlip(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []int64
		note  string
	}{
		{"window after the flip", []int64{41, 42, 43}, "findings over the last 5.00 s (attention=fused from step 40; the cumulative totals mix both settings)"},
		{"window across the flip", []int64{39, 40, 41}, "findings over the last 5.00 s, which still holds steps before attention=fused from step 40"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := mathUpdate()
			msg.Flags = liveFlags("fused")
			msg.State.Marks = []livestate.Mark{{Step: 40, PID: 7, Key: "attention", Value: "fused"}}
			win := *msg.State.Cumulative
			win.Kernels = []attrib.KernelRow{
				{Name: "attn_fused", DisplayName: "attn_fused", Category: "attention", Count: 3, TotalNs: 10e6},
				{Name: "matmul_mlp_up", DisplayName: "matmul_mlp_up", Category: "gemm", Count: 3, TotalNs: 20e6},
			}
			win.Categories = []attrib.GroupRow{{Key: "gemm", Count: 3, TotalNs: 20e6, Share: 2.0 / 3}, {Key: "attention", Count: 3, TotalNs: 10e6, Share: 1.0 / 3}}
			win.Totals = attrib.Totals{KernelCount: 6, KernelTotalNs: 30e6, GPUTotalNs: 30e6}
			win.Steps = nil
			for _, s := range c.steps {
				win.Steps = append(win.Steps, attrib.StepRow{Step: s})
			}
			msg.State.Recent = &win
			m := newLive(t, 80, 24, &fakeCtl{})
			m.Update(msg)
			for m.Focused().Title() != "Findings" {
				m.Update(key("tab"))
			}
			out := ansi.Strip(m.Render())
			if strings.Contains(out, "math fallback") {
				t.Errorf("the math-fallback finding is listed after the flip to fused:\n%s", out)
			}
			lines := strings.Split(out, "\n")
			i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "findings over the last") })
			if i < 0 || !strings.Contains(strings.Join(strings.Fields(lines[i]+" "+lines[i+1]), " "), c.note) {
				t.Errorf("no note %q:\n%s", c.note, out)
			}
		})
	}
}

// TestFindingsOffTheFrame: a snapshot of 30k kernel rows (over
// findingsAsyncSize) returns from Update before its findings are
// evaluated; a second one sent while the first evaluation runs waits for
// it, the first's result is dropped (a later one was asked for), and the
// second's is what the Findings view shows: the findings
// attrib.EvaluateFindings gives over that snapshot and timeline.
func TestFindingsOffTheFrame(t *testing.T) {
	const n = 30_000
	a, tl := viewstest.BigWork(n), viewstest.BigTimeline(n)
	b := *a
	b.Kernels = slices.Clone(a.Kernels)
	want := attrib.EvaluateFindings(nil, attrib.FindingInput{Snapshot: &b, Timeline: tl})
	if len(want) == 0 {
		t.Fatal("no findings over the big snapshot: nothing to test")
	}
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	_, c1 := m.Update(tui.SnapshotMsg{Snapshot: a, Timeline: tl})
	for range 20 {
		if m.Focused().Title() == "Findings" {
			break
		}
		m.Update(key("tab"))
	}
	fv, ok := m.Focused().(*views.Findings)
	if !ok {
		t.Fatalf("focused %q, want Findings", m.Focused().Title())
	}
	if got := fv.Findings(); len(got) != 0 {
		t.Fatalf("%d findings right after Update: the evaluation ran in the frame", len(got))
	}
	_, c2 := m.Update(tui.SnapshotMsg{Snapshot: &b, Timeline: tl})
	msgs := runAll(c1)
	if len(msgs) != 1 {
		t.Fatalf("first snapshot's commands gave %d messages, want its findings", len(msgs))
	}
	runAll(c2) // nothing started: the evaluation of b waits for a's
	_, c3 := m.Update(msgs[0])
	if got := fv.Findings(); len(got) != 0 {
		t.Errorf("the first snapshot's findings shown after a second was sent: %d", len(got))
	}
	msgs = runAll(c3)
	if len(msgs) != 1 {
		t.Fatalf("after the first result %d messages, want the second snapshot's findings", len(msgs))
	}
	m.Update(msgs[0])
	got := fv.Findings()
	if len(got) != len(want) {
		t.Fatalf("%d findings shown, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Share != want[i].Share {
			t.Errorf("finding %d: %s %.4f, want %s %.4f", i, got[i].ID, got[i].Share, want[i].ID, want[i].Share)
		}
	}
}

// runAll runs cmd and a batch's commands, in this goroutine, and returns
// the messages they give.
func runAll(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if bm, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range bm {
			out = append(out, runAll(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}
