package views_test

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/gpu/gputest"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// backends is the built-in loop's flag set (loop.PanelFlags of
// demo.FlagTable), in panel order.
func backends() []livestate.FlagSpec {
	return []livestate.FlagSpec{
		{Key: "attention", Values: []string{"math", "fused"}},
		{Key: "qkv", Values: []string{"separate", "fused"}},
		{Key: "scan", Values: []string{"serial", "sklansky"}},
		{Key: "sampler", Values: []string{"multinomial", "gumbel"}},
		{Key: "head", Values: []string{"materialized", "gatherdot"}},
	}
}

func inForce() map[string]string {
	return map[string]string{"attention": "math", "qkv": "separate", "scan": "serial", "sampler": "multinomial", "head": "materialized"}
}

func TestFlagChoiceNext(t *testing.T) {
	c := livestate.FlagSpec{Key: "k", Values: []string{"a", "b", "c"}}
	for cur, want := range map[string]string{"a": "b", "b": "c", "c": "a", "zz": "a"} {
		if got := c.Next(cur); got != want {
			t.Errorf("Next(%q) = %q, want %q", cur, got, want)
		}
	}
}

func TestFlagsView(t *testing.T) {
	cases := []struct {
		name  string
		state views.FlagsState
		keys  []string
	}{
		{"in_force", views.FlagsState{FlagState: livestate.FlagState{InForce: inForce()}, Tracing: true, Live: true}, nil},
		{"pending_cursor", views.FlagsState{FlagState: livestate.FlagState{InForce: inForce(), Pending: map[string]string{"attention": "fused"}},
			Tracing: false, TracingPending: true, Live: true}, []string{"down", "down"}},
		{"no_child", views.FlagsState{FlagState: livestate.FlagState{InForce: map[string]string{"attention": "fused"}}, Tracing: true}, nil},
	}
	for _, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s_w%d", c.name, w), func(t *testing.T) {
				f := views.NewFlags(styles(), backends())
				f.SetSize(w, f.Height())
				f.SetFocused(true)
				f.SetState(c.state)
				press(f, c.keys...)
				golden.RequireEqual(t, render(t, f.View(), w, f.Height()))
			})
		}
	}
}

func TestFlagsFlipSelected(t *testing.T) {
	f := views.NewFlags(styles(), backends())
	f.SetSize(80, 6)
	f.SetFocused(true)
	press(f, "down", "down")
	cmd := f.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	if cmd == nil {
		t.Fatal("space produced no command")
	}
	a, ok := cmd().(views.FlipMsg)
	if !ok || a.Key != "scan" {
		t.Fatalf("got %#v, want flip scan (third flag)", cmd())
	}
}

// steps: 40 steps of pid 7, step i taking 100 ms + (i mod 8) × 10 ms,
// the attention flip acknowledged at step 30. One earlier step of
// another pid (a previous child) is left out of the panel.
func stepsFixture() ([]livestate.StepTime, []livestate.Mark) {
	st := []livestate.StepTime{{Step: 99, PID: 3, DurNs: 5e9}}
	for i := int64(0); i < 40; i++ {
		st = append(st, livestate.StepTime{Step: i, PID: 7, StartNs: i * 2e8, DurNs: 100e6 + (i%8)*10e6})
	}
	marks := []livestate.Mark{{Step: 30, PID: 7, Key: "attention", Value: "fused"}, {Step: 99, PID: 3, Key: "qkv", Value: "fused"}}
	return st, marks
}

func TestSparkline(t *testing.T) {
	// Independent: lo 100, hi 170 → (v-lo)*7/(hi-lo) = 0,1,…,7.
	got := views.Sparkline([]int64{100, 110, 120, 130, 140, 150, 160, 170}, 100, 170)
	if got != "▁▂▃▄▅▆▇█" {
		t.Fatalf("Sparkline = %q", got)
	}
	if got := views.Sparkline([]int64{5, 5}, 5, 5); got != "▄▄" {
		t.Fatalf("flat Sparkline = %q", got)
	}
}

func TestStepTimesView(t *testing.T) {
	st, marks := stepsFixture()
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			v := views.NewStepTimes(styles())
			v.SetSize(w, 5)
			v.SetSteps(st, marks, 4.5, 41)
			v.SetSize(w, v.Height())
			out := render(t, v.View(), w, v.Height())
			golden.RequireEqual(t, out)
			// The panel shows pid 7's 40 steps (both widths fit them):
			// median (lower) of 100..170 ms, 5 of each = 130 ms.
			if !strings.Contains(out, "median 130 ms") || !strings.Contains(out, "step 30: attention=fused") {
				t.Errorf("panel lacks median or mark:\n%s", out)
			}
			if strings.Contains(out, "qkv") {
				t.Errorf("mark of the old child shown:\n%s", out)
			}
			lines := strings.Split(out, "\n")
			if col := strings.IndexRune(lines[1], '▲'); col < 0 || []rune(lines[1])[31] != '▲' {
				t.Errorf("mark not under step 30 (cell 31): %q", lines[1])
			}
		})
	}
}

func TestChildView(t *testing.T) {
	cases := map[string]views.ChildState{
		"running": {Status: livestate.Status{State: livestate.Running, PID: 4242}, Events: 123456},
		"crashed": {Status: livestate.Status{State: livestate.Exited, PID: 4242, ExitCode: -1, Signal: "killed", Restarts: 1,
			StderrTail: []string{"step 41: 812.3 ms, legal 26", "step 42: 790.0 ms, legal 26"}}, Events: 9000, Dropped: 17},
	}
	for name, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s_w%d", name, w), func(t *testing.T) {
				v := views.NewChild(styles())
				v.SetState(c)
				v.SetSize(w, v.Height())
				golden.RequireEqual(t, render(t, v.View(), w, v.Height()))
			})
		}
	}
}

func TestDeviceView(t *testing.T) {
	h200, mi300, cpu := gputest.H200Busy(), gputest.MI300Idle(), gputest.CPUOnly()
	cases := []struct {
		name   string
		status string
		s      *reading.Sample
	}{
		{"h200_cotenant", "nvidia: 1 device(s), driver 550.54.14, CUDA 12.4", &h200},
		{"mi300_idle", "amd: 1 device(s)", &mi300},
		{"cpu_only", gputest.CPUOnlyStatus, &cpu},
		{"waiting", gputest.CPUOnlyStatus, nil},
	}
	for _, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s_w%d", c.name, w), func(t *testing.T) {
				v := views.NewDevice(styles(), c.status)
				v.SetSample(c.s, "")
				v.SetSize(w, v.Height())
				golden.RequireEqual(t, render(t, v.View(), w, v.Height()))
			})
		}
	}
	if b := views.CoTenantBanner(&h200); !strings.Contains(b, "pid 999 on GPU 0 (3.0 GiB)") {
		t.Errorf("banner %q", b)
	}
	if b := views.CoTenantBanner(&cpu); b != "" {
		t.Errorf("banner without co-tenants: %q", b)
	}
}

// compareFixture is a hand-made result: B (fused) 40% faster, rows whose
// |Δ| order is known (attn_math_qk −30 ms, attn_fused_fwd +20 ms,
// matmul_mlp_up +1 ms, attention category −40 ms).
func compareFixture() *livestate.CompareResult {
	r := &livestate.CompareResult{
		Arms: []attrib.ArmStats{
			{Name: "attention=math", Valid: true, Steps: 4, MedianNs: 500e6, P10Ns: 480e6, P90Ns: 560e6},
			{Name: "attention=fused", Valid: true, Steps: 4, MedianNs: 300e6, P10Ns: 290e6, P90Ns: 330e6},
			{Name: livestate.NoiseName("attention=math"), Valid: true, Steps: 4, MedianNs: 505e6, P10Ns: 470e6, P90Ns: 570e6},
		},
		Ratio:   attrib.Ratio{Value: 0.6, CILow: 0.55, CIHigh: 0.66},
		Verdict: attrib.VerdictFaster,
		Noise:   &attrib.Noise{Ratio: 1.01, CILow: 0.95, CIHigh: 1.08},
		Rows: []attrib.RowComparison{
			{Group: "kernel", Key: "matmul_mlp_up", ANs: 50e6, BNs: 51e6, DeltaNs: 1e6, Ratio: 1.02, CILow: 0.97, CIHigh: 1.07, Verdict: attrib.VerdictNoise},
			{Group: "kernel", Key: "attn_math_qk", ANs: 30e6, BNs: 0, DeltaNs: -30e6, Verdict: attrib.VerdictFaster},
			{Group: "category", Key: "attention", ANs: 60e6, BNs: 20e6, DeltaNs: -40e6, Ratio: 0.333, CILow: 0.3, CIHigh: 0.36, Verdict: attrib.VerdictFaster},
			{Group: "kernel", Key: "attn_fused_fwd", ANs: 0, BNs: 20e6, DeltaNs: 20e6, Verdict: attrib.VerdictSlower},
		},
		Consistency: []livestate.ArmConsistency{{Arm: "attention=fused", Len: 2048, MaxAbs: 2.4e-6, MaxULP: 9}},
		Mode:        "live",
		WallNs:      95e9,
	}
	arms := []string{"attention=math", "attention=fused", livestate.NoiseName("attention=math")}
	for i := 0; i < 15; i++ {
		a := (i / 5) % 3
		ph := livestate.PhaseCounted
		if i%5 == 0 {
			ph = livestate.PhaseWarmup
		}
		r.Schedule = append(r.Schedule, livestate.StepLabel{PID: 1, Step: int64(i), Arm: arms[a], Phase: ph, DurNs: r.Arms[a].MedianNs + int64(i%5)*1e6})
	}
	return r
}

func TestCompareSortByAbsDelta(t *testing.T) {
	got := views.SortByAbsDelta(compareFixture().Rows)
	want := []string{"attention", "attn_math_qk", "attn_fused_fwd", "matmul_mlp_up"}
	for i, r := range got {
		if r.Key != want[i] {
			t.Fatalf("order %d: %s, want %s", i, r.Key, want[i])
		}
	}
}

func TestCompareView(t *testing.T) {
	cases := []struct {
		name string
		s    views.CompareState
		h    int
	}{
		{"idle", views.CompareState{Hint: "attention: math vs fused"}, 5},
		{"running", views.CompareState{Phase: views.CompareRunning, What: "attention: math vs fused", Elapsed: 83e9,
			Progress: []string{"arm attention=math from step 0", "arm attention=math: 1/4 steps of this segment (0 counted of 12)"}, CoTenant: true}, 6},
		{"done", views.CompareState{Phase: views.CompareDone, What: "attention: math vs fused", Result: compareFixture()}, 18},
		{"failed", views.CompareState{Phase: views.CompareFailed, What: "attention: math vs fused", Err: "context canceled"}, 3},
	}
	for _, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s_w%d", c.name, w), func(t *testing.T) {
				v := views.NewCompare(styles())
				v.SetSize(w, c.h)
				v.SetFocused(true)
				v.SetState(c.s)
				golden.RequireEqual(t, render(t, v.View(), w, c.h))
			})
		}
	}
}

func TestStepTimesTracingOff(t *testing.T) {
	st, marks := stepsFixture()
	v := views.NewStepTimes(styles())
	v.SetSteps(st, marks, 4.5, 41)
	v.SetTracing(false)
	v.SetSize(80, 5)
	v.SetSize(80, v.Height())
	out := render(t, v.View(), 80, v.Height())
	if !strings.Contains(out, "tracing off: the loop runs untraced") {
		t.Fatalf("no tracing-off note:\n%s", out)
	}
}

func TestCompareCancelled(t *testing.T) {
	v := views.NewCompare(styles())
	v.SetSize(80, 3)
	v.SetState(views.CompareState{Phase: views.CompareFailed, What: "attention: math vs fused", Err: "cancelled"})
	if out := render(t, v.View(), 80, 3); !strings.Contains(out, "comparison of attention: math vs fused cancelled · C starts another") {
		t.Fatalf("cancelled view:\n%s", out)
	}
}

// TestStepTimesCompare: a running comparison's steps with their arms. The
// fixture (A warm-up + 3 counted, B warm-up + 3 counted, A′ warm-up + 2
// counted, one extra step) gives the arm row ·AAA·BBB·aa· and the counts
// 3, 3, 2, written by hand; the sparkline spans 10..30 ms.
func TestStepTimesCompare(t *testing.T) {
	ms := []int64{30, 20, 21, 22, 15, 10, 11, 12, 25, 20, 23, 24}
	var steps []views.ArmStep
	for i, d := range ms {
		a := views.ArmStep{DurNs: d * 1e6, Counted: i%4 != 0 && i != 11}
		switch {
		case i >= 8:
			a.Noise = i != 11
		case i >= 4:
			a.Arm = 1
		}
		steps = append(steps, a)
	}
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			v := views.NewStepTimes(styles())
			st, marks := stepsFixture()
			v.SetSteps(st, marks, 4.5, 41)
			v.SetCompare(steps, []string{"math", "fused"})
			v.SetSize(w, v.Height())
			out := render(t, v.View(), w, v.Height())
			golden.RequireEqual(t, out)
			lines := strings.Split(out, "\n")
			if got := strings.TrimRight(lines[1], " "); got != " ·AAA·BBB·aa·" {
				t.Errorf("arm row %q, want \" ·AAA·BBB·aa·\"", got)
			}
			// 30 ms is the maximum (█), 10 ms the minimum (▁).
			if r := []rune(lines[0]); r[1] != '█' || r[6] != '▁' {
				t.Errorf("sparkline %q: want █ at step 0 and ▁ at step 5", lines[0])
			}
			if !strings.Contains(out, "A math 3 · B fused 3 · a A′ 2") {
				t.Errorf("legend lacks the counted steps:\n%s", out)
			}
			v.SetCompare(nil, nil)
			if strings.Contains(v.View(), "not counted") {
				t.Error("SetCompare(nil) kept the comparison")
			}
		})
	}
}

// TestFlagsNotUsed ("compile [on]" for a script that never
// compiles): the Python agent reports compile "not used" until the script
// calls torch.compile, and "?" for a flag it cannot read; neither
// highlights a value, and the line says which. tf32 "on" is in force.
func TestFlagsNotUsed(t *testing.T) {
	choices := []livestate.FlagSpec{{Key: "compile", Values: []string{"on", "off"}},
		{Key: "sdpa", Values: []string{"default", "math", "flash"}}, {Key: "tf32", Values: []string{"on", "off"}}}
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			f := views.NewFlags(styles(), choices)
			f.SetSize(w, f.Height())
			f.SetState(views.FlagsState{FlagState: livestate.FlagState{InForce: map[string]string{"compile": "not used", "sdpa": "?", "tf32": "on"}}, Tracing: true, Live: true})
			out := render(t, f.View(), w, f.Height())
			golden.RequireEqual(t, out)
			lines := strings.Split(out, "\n")
			if strings.Contains(lines[0], "[on]") || !strings.Contains(lines[0], "(not used)") {
				t.Errorf("compile line %q", lines[0])
			}
			if strings.Contains(lines[1], "[") || !strings.Contains(lines[1], "(unknown)") {
				t.Errorf("sdpa line %q", lines[1])
			}
			if !strings.Contains(lines[2], "[on]") || strings.Contains(lines[2], "(") {
				t.Errorf("tf32 line %q", lines[2])
			}
		})
	}
}

// TestStepsViewNoSteps ("no steps" did not say what was looked
// for): a source without steps names the step ranges looked for, wrapped
// at word boundaries at 80 and 160 columns.
func TestStepsViewNoSteps(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			s := viewstest.Snapshot()
			s.Steps = nil
			v := views.NewSteps(styles())
			v.SetSize(w, 6)
			v.SetSnapshot(s)
			out := render(t, v.View(), w, 6)
			golden.RequireEqual(t, out)
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range []string{"step, iteration, iter or train_step", "--step-range REGEX", "ProfilerStep#N", "rlktop.step()"} {
				if !strings.Contains(flat, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
