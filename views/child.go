package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// ChildState is what the child panel shows.
type ChildState struct {
	Status  livestate.Status
	Events  uint64 // events received from all children
	Dropped uint64 // events the children dropped (bounded buffer full)
	Pending int    // GPU events waiting for their launch context
	// Note is a line from the root model ("restarting…", "stopped for a
	// comparison").
	Note string
	// Untraced is why the command runs without a GPU tracer, in full (the
	// banner above the views shortens it on small terminals).
	Untraced string
}

// Child is the traced child's panel: state, pid, restarts, events and
// dropped events; after a crash the exit status and the tail of its
// stderr (what was collected stays in the other views) and how to
// restart.
type Child struct {
	st    *Styles
	keys  GroupsKeyMap
	state ChildState
	list  list
	w, h  int
}

// NewChild returns an empty child panel.
func NewChild(st *Styles) *Child { return &Child{st: st, keys: DefaultGroupsKeyMap()} }

func (c *Child) Title() string { return "Child" }

func (c *Child) Info() string {
	s := c.state.Status
	if s.State == livestate.Running {
		return fmt.Sprintf("pid %d", s.PID)
	}
	return s.State.String()
}

// SetSnapshot is a no-op: the panel shows SetState's data.
func (c *Child) SetSnapshot(*attrib.Snapshot) {}

// SetState replaces what is shown.
func (c *Child) SetState(s ChildState) {
	c.state = s
	c.list.setLen(len(c.lines()))
}

// State returns what is shown.
func (c *Child) State() ChildState { return c.state }

func (c *Child) SetSize(w, h int) { c.w, c.h = w, h; c.list.setPage(h) }
func (c *Child) SetFocused(bool)  {}
func (c *Child) Capturing() bool  { return false }
func (c *Child) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		c.list.handle(km, c.keys.ListKeyMap)
		c.list.offset = c.list.cursor // scroll: the cursor is the top line
		c.list.clamp()
	}
	return nil
}
func (c *Child) ShortHelp() []key.Binding  { return []key.Binding{c.keys.move()} }
func (c *Child) FullHelp() [][]key.Binding { return [][]key.Binding{c.keys.bindings()} }

// Height is 2 lines while running, more with the stderr tail after a
// failure.
func (c *Child) Height() int { return len(c.lines()) }

func (c *Child) lines() []string {
	st := c.st
	s := c.state.Status
	var out []string
	var first string
	switch s.State {
	case livestate.Running:
		first = " " + st.Live.On.Render("running") + fmt.Sprintf(" pid %d", s.PID)
	case livestate.NotStarted:
		first = " " + st.Table.Dim.Render("not started")
	default:
		first = " " + st.Live.Warn.Render(s.Describe())
		if s.PID > 0 {
			first += st.Table.Dim.Render(fmt.Sprintf(" · was pid %d", s.PID))
		}
		first += " · " + st.Live.Pending.Render("r restarts")
	}
	if s.Restarts > 0 {
		first += st.Table.Dim.Render(fmt.Sprintf(" · restarts %d", s.Restarts))
	}
	out = append(out, first)
	second := " events " + FormatCount(int64(c.state.Events))
	if c.state.Pending > 0 {
		second += " · " + units.Plural(int64(c.state.Pending), "GPU op") + " waiting for their launch"
	}
	if c.state.Dropped > 0 {
		second += " · " + st.Live.Warn.Render("dropped "+FormatCount(int64(c.state.Dropped)))
	}
	out = append(out, second)
	if c.state.Note != "" {
		out = append(out, " "+st.Live.Pending.Render(c.state.Note))
	}
	if u := c.state.Untraced; u != "" {
		for _, l := range WrapLines(escape.Control(u), max(c.w-1, 10)) {
			out = append(out, " "+st.Live.Warn.Render(l))
		}
	}
	if s.State != livestate.Running && s.State != livestate.NotStarted && len(s.StderrTail) > 0 {
		out = append(out, " "+st.Table.Dim.Render("last stderr lines:"))
		for _, l := range s.StderrTail {
			// The child's output may hold colours and controls (tqdm,
			// logging): shown escaped, never acted on.
			out = append(out, "   "+escape.Control(strings.TrimRight(l, "\r")))
		}
	}
	return out
}

func (c *Child) View() string {
	l := c.lines()
	from := min(c.list.offset, max(len(l)-c.h, 0))
	return block(l[from:], c.w, c.h)
}
