package views_test

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// Names are data: a kernel, category, stage or device name with
// terminal controls (clear screen, a bell, a title change) reaches the TUI
// escaped; the views' own styling is untouched.
func TestViewsEscapeNames(t *testing.T) {
	const evil = "\x1b[2J\x1b]0;pwned\a"
	s := viewstest.Snapshot()
	s.Kernels[0].Name += evil
	s.Kernels[0].DisplayName += evil
	s.Categories[0].Key += evil
	s.Stages[0].Key += evil
	s.Devices[0].Name += evil
	k := views.NewKernels(styles())
	k.SetSize(160, 20)
	k.SetSnapshot(s)
	c := views.NewCategories(styles())
	c.SetSize(160, 10)
	c.SetSnapshot(s)
	g := views.NewStages(styles())
	g.SetSize(160, 8)
	g.SetSnapshot(s)
	h := views.NewHeader(styles())
	h.SetWidth(160)
	h.SetSnapshot(s)
	s.Memory = viewstest.Memory()
	s.Memory.Temporaries[0].Op += evil
	s.Memory.Temporaries[0].Stage += evil
	s.Memory.Temporaries[0].FreedBy = ""
	m := views.NewMemory(styles())
	m.SetSize(160, 20)
	m.SetFocused(true)
	m.SetSnapshot(s)
	if out := m.View(); !strings.Contains(out, "(no operator)") {
		t.Errorf("memory: a temporary freed outside every operator is not said so:\n%s", out)
	}
	for name, out := range map[string]string{"kernels": k.View(), "categories": c.View(), "stages": g.View(), "header": h.View(), "memory": m.View()} {
		if strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\a") {
			t.Errorf("%s: a control sequence from a name reaches the terminal: %q", name, out)
		}
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%s: the escaped name is not shown", name)
		}
	}
}

// The Child panel shows the child's last stderr lines escaped: a coloured
// log line or a progress bar's controls are not replayed on the terminal.
func TestChildStderrEscaped(t *testing.T) {
	v := views.NewChild(styles())
	v.SetState(views.ChildState{Status: livestate.Status{State: livestate.Exited, PID: 7, ExitCode: 1,
		StderrTail: []string{"\x1b[31mERROR\x1b[0m boom\a", "\x1b[2J"}}})
	v.SetSize(120, v.Height())
	out := v.View()
	if strings.Contains(out, "\x1b[31mERROR") || strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\a") {
		t.Errorf("raw controls from the child's stderr in the view: %q", out)
	}
	if !strings.Contains(out, `\x1b[31mERROR\x1b[0m boom\a`) {
		t.Errorf("escaped line missing: %q", out)
	}
}

// The kernel detail panel (name, launch operators and ranges, stage)
// escapes names as the tables do: SGR, C1 CSI (U+009B) and bidi
// overrides (U+202E) from a trace reach it as text, not as controls
// (they passed to the terminal).
func TestKernelDetailEscapesNames(t *testing.T) {
	const evil = "\x1b[5;31mblink\u009b2J\u202eevil"
	s := viewstest.Snapshot()
	s.Kernels[0].Name = "kern" + evil
	s.Kernels[0].DisplayName = "kern"
	s.Kernels[0].Ops = []string{"aten::op" + evil}
	s.Kernels[0].Ranges = []string{"range" + evil}
	s.Kernels[0].Stage = "stage" + evil
	k := views.NewKernels(styles())
	k.SetSize(200, 30)
	k.SetSnapshot(s)
	out := k.View()
	for _, raw := range []string{"\x1b[5;31m", "\u009b", "\u202e"} {
		if strings.Contains(out, raw) {
			t.Errorf("%q from a name reaches the terminal in the detail panel:\n%q", raw, out)
		}
	}
	for _, want := range []string{`kern\x1b[5;31mblink`, `aten::op\x1b[5;31m`, `range\x1b[5;31m`, `stage\x1b[5;31m`} {
		if !strings.Contains(out, want) {
			t.Errorf("the detail panel lacks the escaped %s", want)
		}
	}
}
