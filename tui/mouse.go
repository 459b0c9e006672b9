package tui

import (
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/views"
)

// Mouse (cell-motion reporting, tea.MouseModeCellMotion): a click on a
// tab focuses its view; a click in a pane focuses it and, for views that
// implement clicker, acts on the row under the pointer (select it; on the
// selected row, what enter or space would do). The wheel scrolls the pane
// under the pointer (three rows a notch) and zooms the timeline. Mouse
// messages reach a view in its own coordinates (0,0 its top-left body
// cell); a drag goes to the view where it started.

// clicker is implemented by views that act on clicks, in their own
// coordinates.
type clicker interface{ Click(x, y int) tea.Cmd }

// region is where a tab's body is on screen.
type region struct {
	tab        int
	x, y, w, h int
}

func (r region) has(x, y int) bool { return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h }

// top is the screen row of the tab bar.
func (m *Model) top() int { return m.header.Height() + m.bannerHeight() }

// regions returns the panes on screen with their body rectangles.
func (m *Model) regions() []region {
	if m.snap == nil || m.bodyH < 1 {
		return nil
	}
	y0 := m.top() + 1
	if !m.wide() {
		return []region{{m.focus, 0, y0, m.w, m.bodyH}}
	}
	lw, rw := m.split()
	main := m.mainTab()
	var out []region
	for i, t := range m.tabs {
		if t.View == main.View {
			out = append(out, region{i, 0, y0 + 1, lw, m.bodyH - 1})
		}
	}
	side := m.sideTabs()
	hs := m.sideHeights(side)
	y := y0
	for i, t := range side {
		for j, tt := range m.tabs {
			if tt.View == t.View {
				out = append(out, region{j, lw + 1, y + 1, rw, hs[i] - 1})
			}
		}
		y += hs[i] + 1
	}
	return out
}

// tabAt returns the tab whose label is at column x of the tab bar, or -1.
func (m *Model) tabAt(x int) int {
	tabs, _, _ := m.tabLayout()
	for _, tp := range tabs {
		if x >= tp.col && x < tp.col+tp.w {
			return tp.tab
		}
	}
	return -1
}

// tabPos is where a tab's label is drawn in the tab bar.
type tabPos struct {
	tab, col, w, pad int
	label            string // the title, or its short form (shortTitles)
}

// shortTitles are the tab labels used when the full titles do not fit on
// one line (80 columns hold the 12 tabs of a live run only this way;
// otherwise Findings hides behind "…"). The focused tab keeps its
// full title.
var shortTitles = map[string]string{
	"Kernels":    "Kern",
	"Timeline":   "Time",
	"Output":     "Out",
	"Step time":  "Step",
	"Categories": "Cat",
	"Stages":     "Stage",
	"Device":     "Dev",
	"Compare":    "Comp",
	"Findings":   "Find",
}

// tabsBefore and tabsAfter mark tabs the bar has no room for: "‹+2│"
// first, "│+3›" last, with how many are hidden each side.
func tabsBefore(n int) string { return fmt.Sprintf("‹+%d│", n) }
func tabsAfter(n int) string  { return fmt.Sprintf("│+%d›", n) }

// tabLayout places the available tabs' labels (padded by a space each
// side when they all fit; short titles but the focused one's when the
// full ones do not): from the first, or, when the focused tab would not
// fit, from a later one so that it does. before and after count the tabs
// left out each side (tabsBefore, tabsAfter). The tab bar and mouse
// clicks both use it.
func (m *Model) tabLayout() (tabs []tabPos, before, after int) {
	var avail []int
	total := 0
	for i, t := range m.tabs {
		if m.available(i) {
			avail = append(avail, i)
			total += ansi.StringWidth(t.View.Title()) + 3
		}
	}
	pad, short := 1, false
	if total > m.w {
		pad = 0
		short = total-2*len(avail) > m.w
	}
	label := func(i int) string {
		t := m.tabs[i].View.Title()
		if s, ok := shortTitles[t]; ok && short && i != m.focus {
			return s
		}
		return t
	}
	place := func(start int) []tabPos {
		var out []tabPos
		col := 0
		if start > 0 {
			col = ansi.StringWidth(tabsBefore(start))
		}
		for k, i := range avail[start:] {
			if k > 0 {
				col++ // separator
			}
			l := label(i)
			w := ansi.StringWidth(l) + 2*pad
			room := m.w
			if left := len(avail) - start - k - 1; left > 0 {
				room -= ansi.StringWidth(tabsAfter(left))
			}
			if col+w > room {
				return out
			}
			out = append(out, tabPos{tab: i, col: col, w: w, pad: pad, label: l})
			col += w
		}
		return out
	}
	for start := range avail {
		tabs = place(start)
		if slices.ContainsFunc(tabs, func(tp tabPos) bool { return tp.tab == m.focus }) || !slices.Contains(avail, m.focus) {
			return tabs, start, len(avail) - start - len(tabs)
		}
	}
	return tabs, len(avail) - len(tabs), 0
}

// mouse handles a mouse message.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	ms := msg.Mouse()
	if m.snap == nil {
		return nil
	}
	// A drag in progress belongs to the view where it started.
	if m.drag != nil {
		r := *m.drag
		v := m.tabs[r.tab].View
		switch msg.(type) {
		case tea.MouseMotionMsg:
			return v.Update(tea.MouseMotionMsg(local(ms, r)))
		case tea.MouseReleaseMsg:
			m.drag = nil
			cmd := v.Update(tea.MouseReleaseMsg(local(ms, r)))
			m.layout()
			return cmd
		}
	}
	if _, ok := msg.(tea.MouseClickMsg); ok && ms.Y == m.top() {
		if i := m.tabAt(ms.X); i >= 0 && ms.Button == tea.MouseLeft {
			m.Focused().SetFocused(false)
			m.focus = i
			m.layout()
		}
		return nil
	}
	for _, r := range m.regions() {
		if !r.has(ms.X, ms.Y) {
			continue
		}
		v := m.tabs[r.tab].View
		lm := local(ms, r)
		switch msg.(type) {
		case tea.MouseWheelMsg:
			if _, ok := v.(*views.Timeline); ok {
				return v.Update(tea.MouseWheelMsg(lm))
			}
			code := tea.KeyDown
			switch ms.Button {
			case tea.MouseWheelUp:
				code = tea.KeyUp
			case tea.MouseWheelDown:
			default:
				return nil
			}
			var cmds []tea.Cmd
			for range 3 {
				cmds = append(cmds, v.Update(tea.KeyPressMsg{Code: code}))
			}
			return tea.Batch(cmds...)
		case tea.MouseClickMsg:
			if ms.Button != tea.MouseLeft {
				return nil
			}
			if m.focus != r.tab {
				m.Focused().SetFocused(false)
				m.focus = r.tab
				m.layout()
			}
			if _, ok := v.(*views.Timeline); ok {
				rr := r
				m.drag = &rr
				return v.Update(tea.MouseClickMsg(lm))
			}
			var cmd tea.Cmd
			if c, ok := v.(clicker); ok {
				cmd = c.Click(lm.X, lm.Y)
			}
			m.layout()
			return cmd
		}
		return nil
	}
	return nil
}

func local(ms tea.Mouse, r region) tea.Mouse {
	ms.X -= r.x
	ms.Y -= r.y
	return ms
}
