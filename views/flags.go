package views

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// FlagsState is what the flags panel shows: the run's flags in force (as
// the newest child last acknowledged them) and pending (requested, not
// yet acknowledged), the one livestate.FlagState the TUI reads, and
// tracing on/off.
type FlagsState struct {
	livestate.FlagState
	// Tracing is the child's last acknowledged tracing state;
	// TracingPending is set while a pause/resume request is unanswered.
	Tracing        bool
	TracingPending bool
	// Live is false when no child runs (then flips restart it).
	Live bool
}

// FlagsKeyMap is the flags panel's own bindings (the digit keys that flip
// flag n are global, defined by the root model).
type FlagsKeyMap struct {
	ListKeyMap
	Flip key.Binding
}

// DefaultFlagsKeyMap: ↑/↓ select, space or enter flips the selected flag.
func DefaultFlagsKeyMap() FlagsKeyMap {
	l := DefaultListKeyMap()
	l.PageDown = key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down"))
	return FlagsKeyMap{ListKeyMap: l,
		Flip: key.NewBinding(key.WithKeys("space", "enter"), key.WithHelp("space", "flip selected"))}
}

// Flags is the flags panel: one line per backend flag with its choices,
// the one in force highlighted (only a value the child reported as
// applied: a flag it reports as "not used" or "?" has none highlighted and
// says so) and a requested one marked pending until the child
// acknowledges it at a step boundary; then tracing on/off.
type Flags struct {
	st      *Styles
	keys    FlagsKeyMap
	choices []livestate.FlagSpec
	state   FlagsState
	list    list
	w, h    int
	focused bool
}

// NewFlags returns the flags panel for choices (shown in this order; the
// digit key of flag i is i+1).
func NewFlags(st *Styles, choices []livestate.FlagSpec) *Flags {
	f := &Flags{st: st, keys: DefaultFlagsKeyMap(), choices: choices}
	f.list.setLen(len(choices))
	return f
}

func (f *Flags) Title() string { return "Flags" }

func (f *Flags) Info() string { return "applied at the next step" }

// SetSnapshot is a no-op: the panel shows SetState's data.
func (f *Flags) SetSnapshot(*attrib.Snapshot) {}

// SetState replaces what is shown.
func (f *Flags) SetState(s FlagsState) { f.state = s }

// State returns what is shown.
func (f *Flags) State() FlagsState { return f.state }

// Choices returns the flags in panel order.
func (f *Flags) Choices() []livestate.FlagSpec { return f.choices }

// Selected returns the flag under the cursor ("" with no flags).
func (f *Flags) Selected() livestate.FlagSpec {
	if f.list.cursor < 0 || f.list.cursor >= len(f.choices) {
		return livestate.FlagSpec{}
	}
	return f.choices[f.list.cursor]
}

// Select moves the cursor to the flag named key, if present.
func (f *Flags) Select(key string) {
	for i, c := range f.choices {
		if c.Key == key {
			f.list.cursor = i
			f.list.clamp()
		}
	}
}

func (f *Flags) SetSize(w, h int)  { f.w, f.h = w, h; f.list.setPage(max(h-1, 1)) }
func (f *Flags) SetFocused(b bool) { f.focused = b }
func (f *Flags) Capturing() bool   { return false }

// Height is one line per flag plus the tracing line.
func (f *Flags) Height() int { return len(f.choices) + 1 }

// FlipMsg asks the live run for the next value of flag Key (space/enter
// or a click on the selected flag of the Flags view; tui's live model
// picks the value and calls its Controller).
type FlipMsg struct{ Key string }

func flip(k string) tea.Cmd { return func() tea.Msg { return FlipMsg{Key: k} } }

// Update moves the cursor; space/enter returns a FlipMsg for the selected
// flag.
func (f *Flags) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if key.Matches(km, f.keys.Flip) {
		c := f.Selected()
		if c.Key == "" {
			return nil
		}
		return flip(c.Key)
	}
	f.list.handle(km, f.keys.ListKeyMap)
	return nil
}

// Click selects the flag at line y; on the selected flag it flips it.
func (f *Flags) Click(x, y int) tea.Cmd {
	from, _ := f.list.visible()
	i := from + y
	if y < 0 || i >= len(f.choices) {
		return nil
	}
	if i == f.list.cursor {
		return flip(f.choices[i].Key)
	}
	f.list.cursor = i
	f.list.clamp()
	return nil
}

func (f *Flags) ShortHelp() []key.Binding {
	return []key.Binding{f.keys.move(), f.keys.Flip}
}

func (f *Flags) FullHelp() [][]key.Binding {
	return [][]key.Binding{f.keys.bindings(), {f.keys.Flip}}
}

func (f *Flags) View() string {
	st := f.st
	if len(f.choices) == 0 {
		return block([]string{st.Table.Dim.Render("this run has no backend flags")}, f.w, f.h)
	}
	nameW := 0
	for _, c := range f.choices {
		nameW = max(nameW, width(c.Key))
	}
	var lines []string
	for i, c := range f.choices {
		gut := " "
		if f.focused && i == f.list.cursor {
			gut = "›"
		}
		digit := " "
		if i < 9 {
			digit = fmt.Sprint(i + 1)
		}
		cur, known := f.state.InForce[c.Key]
		var vals []string
		for _, v := range c.Values {
			switch {
			case known && v == cur:
				vals = append(vals, st.Live.On.Render("["+v+"]"))
			default:
				vals = append(vals, st.Live.Off.Render(" "+v+" "))
			}
		}
		line := gut + st.Table.Dim.Render(digit) + " " + fit(c.Key, nameW) + "  " + strings.Join(vals, " ")
		switch p, ok := f.state.Pending[c.Key]; {
		case ok && p != cur:
			line += "  " + st.Live.Pending.Render("→ "+p+" pending")
		case !known:
			line += "  " + st.Table.Dim.Render("(not reported yet)")
		case !slices.Contains(c.Values, cur):
			// The child reports a state that is none of the choices: a
			// flag not in use ("not used": the script never called
			// torch.compile) or not known ("?").
			if cur == "?" || cur == "" {
				cur = "unknown"
			}
			line += "  " + st.Table.Dim.Render("("+cur+")")
		}
		lines = append(lines, line)
	}
	tr := st.Live.On.Render("[on]") + " " + st.Live.Off.Render(" off ")
	if !f.state.Tracing {
		tr = st.Live.Off.Render(" on ") + " " + st.Live.On.Render("[off]")
	}
	line := "   " + fit("tracing", nameW) + "  " + tr + "  " + st.Table.Dim.Render("(T)")
	if f.state.TracingPending {
		line += "  " + st.Live.Pending.Render("pending")
	}
	if !f.state.Live {
		line += "  " + st.Table.Dim.Render("no child running: a flip restarts it")
	}
	lines = append(lines, line)
	// Keep the cursor row visible in short panes.
	from, to := f.list.visible()
	if f.h < len(lines) && to > from {
		lines = append(lines[from:to], lines[len(lines)-1])
	}
	return block(lines, f.w, f.h)
}
