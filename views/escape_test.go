package views_test

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// Names are data (issue 16): a kernel, category, stage or device name with
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
	for name, out := range map[string]string{"kernels": k.View(), "categories": c.View(), "stages": g.View(), "header": h.View()} {
		if strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\a") {
			t.Errorf("%s: a control sequence from a name reaches the terminal: %q", name, out)
		}
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%s: the escaped name is not shown", name)
		}
	}
}
