package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// GroupsKeyMap is the bindings of the categories and stages views.
type GroupsKeyMap struct {
	ListKeyMap
	Drill key.Binding // enter: the group's kernels
}

// DefaultGroupsKeyMap: list movement; enter lists the selected group's
// kernels.
func DefaultGroupsKeyMap() GroupsKeyMap {
	return GroupsKeyMap{DefaultListKeyMap(), key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "its kernels"))}
}

// Groups is a bar chart of GroupRows (categories or stages): one line per
// group with its share of GPU time (Totals.GPUTotalNs) as a bar, the
// share, total time and count, in the snapshot's order (total time
// descending).
type Groups struct {
	st    *Styles
	keys  GroupsKeyMap
	title string
	drill string // the filter prefix of a drill-down ("cat", "stage"); "" none
	empty string
	pick  func(*attrib.Snapshot) []attrib.GroupRow // the rows (Stages: stagesAndPython)
	// py: the Python samples of each stage (the Stages view of a
	// snapshot with Python samples; python_stages.go), by stage name.
	py      map[string]attrib.PyStageRow
	snap    *attrib.Snapshot
	rows    []attrib.GroupRow
	list    list
	w, h    int
	focused bool
}

// NewCategories is the categories view (Snapshot.Categories).
func NewCategories(st *Styles) *Groups {
	return &Groups{st: st, keys: DefaultGroupsKeyMap(), title: "Categories", drill: "cat",
		empty: "no GPU work in this source",
		pick:  func(s *attrib.Snapshot) []attrib.GroupRow { return s.Categories }}
}

// NewStages is the stages view (Snapshot.Stages): time by the annotation
// range open when each kernel was launched.
func NewStages(st *Styles) *Groups {
	return &Groups{st: st, keys: DefaultGroupsKeyMap(), title: "Stages", drill: "stage",
		empty: "no stages: the source has no annotation / NVTX ranges"}
}

func (g *Groups) Title() string { return g.title }

func (g *Groups) Info() string {
	if g.snap == nil {
		return ""
	}
	what := strings.ToLower(g.title) // "categories", "stages"
	if len(g.rows) == 1 {
		what = map[string]string{"categories": "category", "stages": "stage"}[what]
	}
	n := fmt.Sprint(len(g.rows))
	if from, to := g.list.visible(); to-from < len(g.rows) {
		// A pane too short for every row says which it shows.
		n = fmt.Sprintf("%d–%d of %d", from+1, to, len(g.rows))
	}
	return fmt.Sprintf("%s %s · %s of %s", n, what, FormatNs(g.snap.Totals.GPUTotalNs), g.snap.TimeName())
}

// Rows returns the rows shown.
func (g *Groups) Rows() []attrib.GroupRow { return g.rows }

func (g *Groups) SetSnapshot(s *attrib.Snapshot) {
	g.snap = s
	g.rows = nil
	g.py = nil
	switch {
	case s != nil && g.drill == "stage":
		g.rows, g.py = stagesAndPython(s)
	case s != nil:
		g.rows = g.pick(s)
	}
	g.list.setLen(len(g.rows))
}

func (g *Groups) SetSize(w, h int) { g.w, g.h = w, h; g.list.setPage(h - g.headerRows()) }

// headerRows is 1 when the pane has room for the column header (what the
// share is of, and the columns' names: at 80 columns the pane's info line,
// which says so, does not fit beside the tabs), else 0.
func (g *Groups) headerRows() int {
	if g.h >= 8 {
		return 1
	}
	return 0
}
func (g *Groups) SetFocused(f bool) { g.focused = f }
func (g *Groups) Capturing() bool   { return false }

// Update moves the cursor; enter returns a DrillMsg{Group: "cat" or
// "stage", Key: the row's name} for the root to show its kernels.
func (g *Groups) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		if key.Matches(km, g.keys.Drill) {
			return g.drillCmd()
		}
		g.list.handle(km, g.keys.ListKeyMap)
	}
	return nil
}

func (g *Groups) drillCmd() tea.Cmd {
	if g.drill == "" || g.list.cursor >= len(g.rows) {
		return nil
	}
	return Send(DrillMsg{Group: g.drill, Key: g.rows[g.list.cursor].Key})
}

// Click selects the row at line y; on the selected row it drills down.
func (g *Groups) Click(x, y int) tea.Cmd {
	y -= g.headerRows()
	i := g.list.offset + y
	if y < 0 || i >= len(g.rows) {
		return nil
	}
	if i == g.list.cursor {
		return g.drillCmd()
	}
	g.list.cursor = i
	g.list.clamp()
	return nil
}

func (g *Groups) ShortHelp() []key.Binding {
	if g.drill == "" {
		return []key.Binding{g.keys.move()}
	}
	return []key.Binding{g.keys.move(), g.keys.Drill}
}
func (g *Groups) FullHelp() [][]key.Binding {
	if g.drill == "" {
		return [][]key.Binding{g.keys.bindings()}
	}
	return [][]key.Binding{g.keys.bindings(), {g.keys.Drill}}
}

// Height returns the lines the view needs to show every row (at least 1).
func (g *Groups) Height() int { return max(len(g.rows), 1) }

func (g *Groups) View() string {
	st := g.st
	if g.snap == nil {
		return block([]string{st.Table.Dim.Render("waiting for data…")}, g.w, g.h)
	}
	if len(g.rows) == 0 {
		return block([]string{st.Table.Dim.Render(g.empty)}, g.w, g.h)
	}
	lw := 0
	for _, r := range g.rows {
		lw = max(lw, ansi.StringWidth(escape.Control(r.Key)))
	}
	gw := g.w // the cells of the GPU side
	if g.py != nil && g.w >= 64 {
		gw -= pyCellWidth // the Python side, beside the bar
	}
	lw = min(lw, max(gw-29-20, 10)) // keep at least 20 cells of bar
	const sw, tw, cw = 6, 9, 9
	bw := gw - 1 - lw - 1 - 1 - sw - 1 - tw - 1 - cw
	// Modelled work: achieved FLOP/s and the roofline bound with its
	// share of the roof, where there is room.
	showWork := g.snap.HasWork() && bw-workCols >= 10
	if showWork {
		bw -= workCols
	}
	showCount := true
	if bw < 10 {
		showCount = false
		bw += 1 + cw
	}
	bw = min(bw, maxBar) // long bars put the numbers too far from the labels
	var lines []string
	if g.headerRows() > 0 {
		what := map[string]string{"Categories": "category", "Stages": "stage"}[g.title]
		if what == "" {
			what = strings.ToLower(g.title)
		}
		h := " " + fit(what, lw) + " " + fit("share of "+g.snap.TimeName(), bw+1+sw) + " " + fitRight("total", tw)
		if showCount {
			h += " " + fitRight("count", cw)
		}
		if showWork {
			h += " " + fitRight("FLOP/s", 9) + " " + fitRight("of roof", 11)
		}
		lines = append(lines, st.Table.Header.Render(h))
	}
	from, to := g.list.visible()
	for i := from; i < to; i++ {
		r := &g.rows[i]
		gut := " "
		if g.focused && i == g.list.cursor {
			gut = "›"
		}
		line := gut + st.Bar.Label.Render(fit(escape.Control(r.Key), lw)) + " " + st.bar(r.Share, bw) + " " +
			st.Bar.Value.Render(fitRight(FormatShare(r.Share), sw)) + " " + fitRight(FormatNs(r.TotalNs), tw)
		if showCount {
			line += " " + st.Table.Dim.Render(fitRight(FormatCount(r.Count)+"×", cw))
		}
		if showWork {
			line += workCells(r.Work, g.snap.Peak)
		}
		if g.py != nil {
			line += st.Table.Dim.Render(g.pyCell(r, g.w-width(line)))
		}
		lines = append(lines, line)
	}
	return block(lines, g.w, g.h)
}
