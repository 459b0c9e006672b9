package tui

import (
	"charm.land/bubbles/v2/key"
	"github.com/rlktop/rlktop/views"
)

// KeyMap is the root model's global bindings. They apply unless the
// focused view is capturing keys (a text input is open); ctrl+c always
// quits.
type KeyMap struct {
	Quit, ForceQuit, Next, Prev, Help key.Binding
}

// DefaultKeyMap: q quits, tab / shift+tab move focus, ? toggles full help.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Next:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "view")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "all keys")),
	}
}

// helpKeys joins the focused view's bindings and the global ones for
// bubbles/help.
type helpKeys struct {
	global KeyMap
	view   views.View    // may be nil
	extra  []key.Binding // the root's own keys beyond KeyMap (step scrubbing of a file)
	live   []key.Binding // live-run keys
}

func (h helpKeys) ShortHelp() []key.Binding {
	var b []key.Binding
	if h.view == nil { // loading: nothing to move between yet
		return []key.Binding{h.global.Quit}
	}
	if h.view.Capturing() {
		return h.view.ShortHelp()
	}
	if len(h.live) > 0 {
		// A live run has more keys than 80 cells hold and the help bar
		// cuts the last: "? all keys" and "q quit" go first so that they
		// always show, then the live keys, then the view's.
		b = append(b, h.global.Help, h.global.Quit)
		b = append(b, h.live...)
		return append(b, h.view.ShortHelp()...)
	}
	b = append(b, h.view.ShortHelp()...)
	b = append(b, h.extra...)
	return append(b, h.global.Next, h.global.Help, h.global.Quit)
}

func (h helpKeys) FullHelp() [][]key.Binding {
	var g [][]key.Binding
	if h.view == nil {
		return [][]key.Binding{{h.global.Quit, h.global.ForceQuit}}
	}
	prev := key.NewBinding(key.WithKeys(h.global.Prev.Keys()...), key.WithHelp("⇧tab", "prev view"))
	global := []key.Binding{h.global.Next, prev, h.global.Help, h.global.Quit}
	if len(h.live) > 0 {
		// A live run has more columns than 80 cells hold and bubbles/help
		// cuts the last ones: keep moving between views and quitting in
		// sight by putting them right after the live keys.
		g = append(g, h.live, global)
		global = nil
	}
	g = append(g, h.view.FullHelp()...)
	if len(h.extra) > 0 {
		g = append(g, h.extra)
	}
	if global != nil {
		g = append(g, global)
	}
	return g
}
