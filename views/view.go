// Package views holds one component per TUI view. Those that implement
// View: Kernels (with its launch drill-down), Categories and Stages (both
// Groups), Steps, Step time (StepTimes), Timeline, Roofline, Ranks,
// Python, Memory, Findings, Compare, Flags, Output, Child and Device; the
// Header and Loading panes are drawn by the root without focus. A view
// renders an *attrib.Snapshot (raw numbers) and the live state the root
// hands it into text; it never does I/O and never starts goroutines.
//
// Every focusable view implements View: its own KeyMap (with a
// DefaultKeyMap), short and full help, SetSize, Update for its keys and
// View. The root model (package tui) owns layout, focus and routing.
package views

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/tracer/attrib"
	"slices"
)

// View is one focusable pane. Implementations are pointers; the root
// model calls SetSnapshot whenever a new snapshot arrives (about 10 Hz in
// a live session), SetSize on every layout change, Update with key
// presses while the view has focus, and View to draw.
type View interface {
	// Title is the pane's name in tabs and its title line ("Kernels").
	Title() string
	// Info is a short right-aligned note for the title line ("sort: total ▼").
	Info() string
	// SetSnapshot replaces the data shown. The snapshot is never mutated;
	// nil means "nothing yet". The view keeps its cursor on the same row
	// key when it can.
	SetSnapshot(s *attrib.Snapshot)
	// SetSize sets the body size in cells (the root draws the title line
	// above it). View must return exactly h lines of exactly w cells.
	SetSize(w, h int)
	// SetFocused tells the view whether it has the keyboard.
	SetFocused(bool)
	// Update handles a message while the view has focus.
	Update(msg tea.Msg) tea.Cmd
	// View draws the body.
	View() string
	// Capturing reports that the view wants every key (a text input is
	// open), so the root must not interpret q, tab or ? itself.
	Capturing() bool
	// ShortHelp and FullHelp list the view's bindings for the help bar.
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
}

// ListKeyMap is the movement bindings shared by every scrolling view.
type ListKeyMap struct {
	Up, Down, PageUp, PageDown, Home, End key.Binding
}

// DefaultListKeyMap: arrows and vi keys, PgUp/PgDn, Home/End (g/G).
func DefaultListKeyMap() ListKeyMap {
	return ListKeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d", "space"), key.WithHelp("pgdn", "page down")),
		Home:     key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "first")),
		End:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "last")),
	}
}

// move is a help-only binding standing for Up and Down in short help.
func (k ListKeyMap) move() key.Binding {
	return key.NewBinding(key.WithKeys(append(k.Up.Keys(), k.Down.Keys()...)...), key.WithHelp("↑/↓", "move"))
}

// bindings is the movement column of full help, pairs folded into one
// entry each so that help fits 80 columns.
func (k ListKeyMap) bindings() []key.Binding {
	join := func(a, b key.Binding, keys, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(append(a.Keys(), b.Keys()...)...), key.WithHelp(keys, desc))
	}
	arrows := "↑/↓"
	if slices.Contains(k.Up.Keys(), "k") {
		arrows += " k/j"
	}
	return []key.Binding{
		join(k.Up, k.Down, arrows, "move"),
		join(k.PageUp, k.PageDown, "pgup/pgdn", "page"),
		join(k.Home, k.End, "home/end", "first/last"),
	}
}

// list is a cursor over n rows shown page rows at a time.
type list struct {
	cursor, offset int
	n, page        int
}

func (l *list) setLen(n int) {
	l.n = n
	l.clamp()
}

func (l *list) setPage(p int) {
	if p < 1 {
		p = 1
	}
	l.page = p
	l.clamp()
}

func (l *list) clamp() {
	if l.cursor >= l.n {
		l.cursor = l.n - 1
	}
	if l.cursor < 0 {
		l.cursor = 0
	}
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.page > 0 && l.cursor >= l.offset+l.page {
		l.offset = l.cursor - l.page + 1
	}
	if max := l.n - l.page; l.offset > max {
		l.offset = max
	}
	if l.offset < 0 {
		l.offset = 0
	}
}

func (l *list) move(d int) { l.cursor += d; l.clamp() }

// handle applies a movement key; it reports whether the key was one.
func (l *list) handle(msg tea.KeyPressMsg, k ListKeyMap) bool {
	switch {
	case key.Matches(msg, k.Up):
		l.move(-1)
	case key.Matches(msg, k.Down):
		l.move(1)
	case key.Matches(msg, k.PageUp):
		l.move(-l.page)
	case key.Matches(msg, k.PageDown):
		l.move(l.page)
	case key.Matches(msg, k.Home):
		l.cursor = 0
		l.clamp()
	case key.Matches(msg, k.End):
		l.cursor = l.n - 1
		l.clamp()
	default:
		return false
	}
	return true
}

// visible returns the half-open range of rows on screen.
func (l *list) visible() (from, to int) {
	to = l.offset + l.page
	if to > l.n {
		to = l.n
	}
	return l.offset, to
}

// Requests from a view to the root model, one type each (the root
// carries them out in its Update; none does I/O): DrillMsg, BackMsg,
// NoteMsg, TryMsg. Flipping a flag is FlipMsg.

// DrillMsg asks the root to list the kernels of one category or stage
// (enter on a Categories or Stages row).
type DrillMsg struct {
	Group string // "cat" or "stage" (Kernels.DrillFrom's filter prefix)
	Key   string // the category or stage name
}

// BackMsg asks the root to return to the view a drill-down started from
// (esc in the drilled Kernels view).
type BackMsg struct{}

// NoteMsg asks the root to say Text in the status bar.
type NoteMsg struct{ Text string }

// TryMsg asks the root to test finding Finding's flag: the compare
// confirmation for its current value against the suggested one.
type TryMsg struct{ Finding string }

// Send returns a command that emits msg.
func Send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
