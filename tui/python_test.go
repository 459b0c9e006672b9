package tui_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// TestPythonOffTheFrame: at 100k Python functions the Python view's
// table is built off the frame. Update returns and the frame is drawn
// before the table of a snapshot is made ("computing…" the first time);
// the rows come in the message of the command Update returned. A result
// that a later snapshot superseded is shown (nothing newer is), then the
// later one's rows (in Functions' order); while a later snapshot's table is
// being built the view shows the one before; a key that rebuilds the view
// at once (the stage filter) drops the build that ran.
func TestPythonOffTheFrame(t *testing.T) {
	const n = 100_000
	snap := func(shift bool) *attrib.Snapshot {
		s := viewstest.Snapshot()
		s.Python = viewstest.BigPython(n, shift)
		return s
	}
	a, b := snap(false), snap(true)
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	_, cmd := m.Update(tui.SnapshotMsg{Snapshot: a})
	pending := append([]tea.Cmd{cmd}, tabToPython(m)...)
	if got := m.Focused().Title(); got != "Python" {
		t.Fatalf("focused %q, want Python", got)
	}
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "computing the function table of 100,000 functions…") || strings.Contains(out, "Trainer.layer_0.forward  ") {
		t.Fatalf("the table was made in the frame, or the view does not say it is computing:\n%s", out)
	}
	_, c2 := m.Update(tui.SnapshotMsg{Snapshot: b})
	if rows := pyRows(runAll(c2)); len(rows) != 0 {
		t.Fatalf("a second build ran beside the first: %d results", len(rows))
	}
	var first []tea.Msg
	for _, c := range pending {
		first = append(first, pyRows(runAll(c))...)
	}
	if len(first) != 1 {
		t.Fatalf("the commands gave %d Python results, want the first snapshot's", len(first))
	}
	_, c3 := m.Update(first[0])
	checkPyRows(t, m, a.Python.Functions("")) // nothing newer is shown
	m.Update(onePyRows(t, c3, "after the first result"))
	checkPyRows(t, m, b.Python.Functions(""))

	// A third snapshot: the second's rows stay until its table comes.
	_, c4 := m.Update(tui.SnapshotMsg{Snapshot: a})
	checkPyRows(t, m, b.Python.Functions(""))
	m.Update(onePyRows(t, c4, "the third snapshot"))
	checkPyRows(t, m, a.Python.Functions(""))

	// A snapshot, then s (the next stage) before its build came: the
	// stage's rows at once, and the build's result dropped.
	_, c5 := m.Update(tui.SnapshotMsg{Snapshot: b})
	press(m, "s")
	stage := b.Python.StageRows()[0].Stage
	want := b.Python.Functions(stage)
	checkPyRows(t, m, want)
	for _, msg := range pyRows(runAll(c5)) {
		m.Update(msg)
	}
	checkPyRows(t, m, want)
	if info := m.Focused().Info(); !strings.Contains(info, "stage "+stage) {
		t.Errorf("info %q, want stage %s", info, stage)
	}

	// The call tree too: t makes it at once; a snapshot's tree comes
	// off the frame, the one before shown until then.
	press(m, "t")
	root := "▸ " + b.Python.Funcs[0].Function + "  "
	if out := ansi.Strip(m.Render()); !strings.Contains(out, root) {
		t.Fatalf("no tree after t:\n%s", out)
	}
	_, c6 := m.Update(tui.SnapshotMsg{Snapshot: a})
	if out := ansi.Strip(m.Render()); !strings.Contains(out, root) {
		t.Fatalf("the tree before was not shown while the next one is built:\n%s", out)
	}
	m.Update(onePyRows(t, c6, "the snapshot in tree mode"))
	if info := m.Focused().Info(); !strings.HasPrefix(info, "tree · stage "+stage+" · ") || strings.Contains(info, "computing") {
		t.Errorf("info %q after the tree came", info)
	}
}

// pyRows is the Python view's results among msgs.
func pyRows(msgs []tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, msg := range msgs {
		if _, ok := msg.(views.PyRowsMsg); ok {
			out = append(out, msg)
		}
	}
	return out
}

// tabToPython moves the focus to the Python view with tab, returning the
// commands of each key.
func tabToPython(m *tui.Model) []tea.Cmd {
	var cmds []tea.Cmd
	for range 20 {
		if m.Focused().Title() == "Python" {
			break
		}
		_, cmd := m.Update(key("tab"))
		cmds = append(cmds, cmd)
	}
	return cmds
}

// onePyRows runs cmd as Bubble Tea would and returns the one Python
// result it gives; none or several fail t (after what).
func onePyRows(t *testing.T, cmd tea.Cmd, after string) tea.Msg {
	t.Helper()
	rows := pyRows(runAll(cmd))
	if len(rows) != 1 {
		t.Fatalf("%s: %d Python results, want 1", after, len(rows))
	}
	return rows[0]
}

// checkPyRows: the screen lists want's first rows, in order.
func checkPyRows(t *testing.T, m *tui.Model, want []attrib.PyFuncRow) {
	t.Helper()
	out := ansi.Strip(m.Render())
	at := -1
	for _, r := range want[:20] {
		i := strings.Index(out, " "+r.Function+"  ")
		if i < 0 || i < at {
			t.Fatalf("row %s missing or out of order:\n%s", r.Function, out)
		}
		at = i
	}
}

// TestPythonRowsKeepUp: snapshots that each come before the previous
// one's table is made (a large profile on a busy machine) still move the
// view: each table that comes is shown, a snapshot behind, instead of
// "computing…" for as long as they come.
func TestPythonRowsKeepUp(t *testing.T) {
	const n = 30_000 // 60k functions plus cells, over pyAsyncSize
	snaps := [2]*attrib.Snapshot{viewstest.Snapshot(), viewstest.Snapshot()}
	snaps[0].Python, snaps[1].Python = viewstest.BigPython(n, false), viewstest.BigPython(n, true)
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	_, cmd := m.Update(tui.SnapshotMsg{Snapshot: snaps[0]})
	pending := append([]tea.Cmd{cmd}, tabToPython(m)...)
	for i := 1; i <= 4; i++ {
		_, c := m.Update(tui.SnapshotMsg{Snapshot: snaps[i%2]})
		pending = append(pending, c)
		var got []tea.Msg
		for _, c := range pending {
			got = append(got, pyRows(runAll(c))...)
		}
		if len(got) != 1 {
			t.Fatalf("snapshot %d: %d Python results, want the one being built", i, len(got))
		}
		_, c = m.Update(got[0])
		pending = []tea.Cmd{c}
		// The table of the snapshot before this one.
		checkPyRows(t, m, snaps[(i-1)%2].Python.Functions(""))
	}
}
