package views_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// pySnapshot: 2 steps of, each, 30 samples in main→work_a and 5 in
// main→helper→work_a (stage a, Python) and 10 in main→work_b (stage b,
// inside torch), on the step thread, 10 ms each: work_a has 70 of 90
// samples (77.8%) and 35 × 10 ms = 350 ms a step, work_b 20 (22.2%,
// all inside torch) and 100 ms a step.
func pySnapshot() *attrib.Snapshot {
	t := tracer.NewTrace("rlktop", "py")
	t.PyStacks = tracer.NewPyStacks()
	t.PyPeriodNs = 10e6
	fr := func(name string, line int32) tracer.PyFrame {
		return tracer.PyFrame{Func: t.Strings.Intern(name), File: t.Strings.Intern("/src/rl/train.py"), FirstLine: line}
	}
	st := t.PyStacks
	main := st.Intern(0, fr("main", 1))
	a := st.Intern(main, fr("work_a", 10))
	ha := st.Intern(st.Intern(main, fr("helper", 30)), fr("work_a", 10))
	b := st.Intern(main, fr("work_b", 20))
	sa, sb := t.Strings.Intern("a"), t.Strings.Intern("b")
	for step := int64(0); step < 2; step++ {
		for _, c := range []struct {
			n     int
			stack uint32
			stage tracer.StrID
			state tracer.PyState
		}{{30, a, sa, tracer.PyRunning}, {5, ha, sa, tracer.PyRunning}, {10, b, sb, tracer.PyTorch}} {
			for range c.n {
				t.PySamples = append(t.PySamples, tracer.PySample{PID: 1, Stack: c.stack, Step: step, Stage: c.stage, StepStage: c.stage, State: c.state, StepThread: true, WeightNs: 10e6})
			}
		}
	}
	s := *viewstest.Snapshot()
	s.Python = attrib.PythonOf(t)
	return &s
}

func TestPythonView(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			v := views.NewPython(styles())
			v.SetSnapshot(pySnapshot())
			v.SetSize(w, 8)
			v.SetFocused(true)
			out := render(t, v.View(), w, 8)
			golden.RequireEqual(t, out)
			lines := strings.Split(out, "\n")
			if !strings.Contains(lines[1], "77.8%") || !strings.Contains(lines[1], "work_a  rl/train.py:10") || !strings.Contains(lines[1], "350 ms") ||
				!strings.Contains(lines[2], "22.2%") || !strings.Contains(lines[2], "work_b") || (w >= 80 && !strings.Contains(lines[2], "torch 100.0%")) {
				t.Errorf("function table:\n%s", out)
			}
			if v.Info() != "functions · whole step · 90 samples" {
				t.Errorf("info %q", v.Info())
			}
		})
	}
	// enter on work_a: the tree, opened down to its heaviest place
	// (main → work_a, 60 samples), the cursor on it.
	v := views.NewPython(styles())
	v.SetSnapshot(pySnapshot())
	v.SetSize(100, 8)
	v.SetFocused(true)
	press(v, "enter")
	out := render(t, v.View(), 100, 8)
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], "▾ main") || !strings.Contains(lines[1], "100.0%") || !strings.HasPrefix(lines[2], "›") || !strings.Contains(lines[2], "work_a") ||
		!strings.Contains(lines[2], "66.7%") || !strings.Contains(lines[4], "▸ helper") {
		t.Errorf("tree after enter:\n%s", out)
	}
	// enter on helper opens its callee.
	press(v, "down", "down", "enter")
	if out := render(t, v.View(), 100, 8); !strings.Contains(out, "▾ helper") || !strings.Contains(strings.Split(out, "\n")[5], "work_a") {
		t.Errorf("helper opened:\n%s", out)
	}
	// s: stage a (the stage with most samples), then b.
	press(v, "t", "s")
	if out := render(t, v.View(), 100, 8); v.Info() != "functions · stage a · 70 samples" || !strings.Contains(strings.Split(out, "\n")[1], "work_a") {
		t.Errorf("stage a: %q\n%s", v.Info(), out)
	}
	press(v, "s")
	if out := render(t, v.View(), 100, 8); v.Info() != "functions · stage b · 20 samples" || !strings.Contains(strings.Split(out, "\n")[1], "100.0%") {
		t.Errorf("stage b: %q\n%s", v.Info(), out)
	}
	// The filter stays on stage b through snapshots that have it, and is
	// back on every stage after one without it, drawn or not.
	v.SetSnapshot(pySnapshot())
	v.SetSnapshot(pySnapshot())
	if v.Info() != "functions · stage b · 20 samples" {
		t.Errorf("stage b after two snapshots: %q", v.Info())
	}
	v.SetSnapshot(viewstest.Snapshot())
	v.SetSnapshot(pySnapshot())
	if v.Info() != "functions · whole step · 90 samples" {
		t.Errorf("after a snapshot without stage b: %q", v.Info())
	}
	// No samples.
	v.SetSnapshot(viewstest.Snapshot())
	if v.Available() || !strings.Contains(render(t, v.View(), 100, 8), "no Python samples") {
		t.Errorf("without samples: available %v", v.Available())
	}
}

// TestStagesWithPython: beside each stage's GPU bar, the step thread's
// sampled time a step in it and the share running Python (stage a: 35
// samples × 10 ms a step, all Python; b: 100 ms, none); stages only the
// samples saw get rows of their own.
func TestStagesWithPython(t *testing.T) {
	v := views.NewStages(styles())
	s := pySnapshot()
	v.SetSnapshot(s)
	v.SetSize(100, 10)
	out := render(t, v.View(), 100, 10)
	golden.RequireEqual(t, out)
	var a, b string
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "a":
			a = l
		case len(f) > 0 && f[0] == "b":
			b = l
		}
	}
	if !strings.Contains(a, "│ 350 ms/step py 100%") || !strings.Contains(b, "│ 100 ms/step py 0%") || len(v.Rows()) != len(s.Stages)+2 {
		t.Errorf("stage a %q, b %q, %d rows (%d GPU stages):\n%s", a, b, len(v.Rows()), len(s.Stages), out)
	}
	// Narrow: no Python side.
	v.SetSize(60, 10)
	if out := render(t, v.View(), 60, 10); strings.Contains(out, "/step") {
		t.Errorf("60 cells:\n%s", out)
	}
}
