package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/views"
)

// warnKey opens the import warnings: the status bar shows only the first
// one, cut to two lines ("warning: /work/…/tracelens_h100_
// qwen15_sdpa_flash.j…  1 import warning" with no key to read it).
var warnKey = key.NewBinding(key.WithKeys("W"), key.WithHelp("W", "import warnings"))

// warnings is the import warnings screen: every warning of the snapshot,
// wrapped at word boundaries, scrolled by ↑/↓ (pgup/pgdown), closed by W
// or esc.
type warnings struct {
	open bool
	off  int // first line shown
}

// hasWarnings reports whether the snapshot carries import warnings.
func (m *Model) hasWarnings() bool { return m.snap != nil && len(m.snap.Warnings) > 0 }

// warnLines are the warnings screen's lines at width w: a title, then
// each warning as "• " and its text wrapped under it.
func (m *Model) warnLines(w int) []string {
	n := len(m.snap.Warnings)
	title := fmt.Sprintf("%d import warnings", n)
	if n == 1 {
		title = "1 import warning"
	}
	lines := []string{m.st.Detail.Label.Render(title + " · ↑/↓ scroll · W or esc closes"), ""}
	for _, wr := range m.snap.Warnings {
		// Warnings quote names from the trace: escaped for the terminal.
		for i, l := range views.WrapLines(escape.Control(wr), max(w-2, 10)) {
			if i == 0 {
				lines = append(lines, "• "+l)
			} else {
				lines = append(lines, "  "+l)
			}
		}
	}
	return lines
}

// warnView draws the warnings screen in the body, bodyH lines of m.w.
func (m *Model) warnView() string {
	lines := m.warnLines(m.w)
	m.warn.off = max(min(m.warn.off, len(lines)-m.bodyH), 0)
	return views.Block(lines[m.warn.off:], m.w, m.bodyH)
}

// warnKeyPress handles a key while the warnings screen is open; ok is
// false for keys it leaves to the rest of the TUI (which close it).
func (m *Model) warnKeyPress(msg tea.KeyPressMsg) (ok bool) {
	switch msg.String() {
	case "W", "esc":
		m.warn = warnings{}
	case "up", "k":
		m.warn.off = max(m.warn.off-1, 0)
	case "down", "j":
		m.warn.off++
	case "pgup", "ctrl+u":
		m.warn.off = max(m.warn.off-m.bodyH, 0)
	case "pgdown", "ctrl+d", "space":
		m.warn.off += m.bodyH
	default:
		m.warn = warnings{}
		return false
	}
	return true
}

// firstWarning is the status bar's warning: the first one, without the
// file name the header already shows (one source) so that its words fit
// the two lines.
func (m *Model) firstWarning() string {
	w := m.snap.Warnings[0]
	if src := m.snap.Source; src != "" {
		w = strings.TrimPrefix(w, src+": ")
	}
	return w
}
