package views

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// PythonKeyMap is the bindings of the Python view.
type PythonKeyMap struct {
	ListKeyMap
	Open  key.Binding // enter: open or close the callees (tree), or the function's place in the tree
	Tree  key.Binding // t: functions ↔ call tree
	Stage key.Binding // s / S: next / previous stage filter
	Prev  key.Binding
}

// DefaultPythonKeyMap: list movement; enter opens callees, t switches
// between the function table and the call tree, s/S cycle the stage
// filter.
func DefaultPythonKeyMap() PythonKeyMap {
	return PythonKeyMap{
		ListKeyMap: DefaultListKeyMap(),
		Open:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "callees")),
		Tree:       key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "table/tree")),
		Stage:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s/S", "stage")),
		Prev:       key.NewBinding(key.WithKeys("S")),
	}
}

// Python shows where the Python side of the steps went
// (Snapshot.Python): per function its self and total share of the
// samples (the innermost frame; on the stack), its self time per step and
// what its self samples were inside (torch, native, a wait), or the call
// tree whose nodes enter opens; for the whole step or one stage (s).
type Python struct {
	st     *Styles
	keys   PythonKeyMap
	snap   *attrib.Snapshot
	prof   *attrib.PyProfile
	stages []string // "" (every stage), then the profile's stages by samples; nil: not listed yet (listStages)
	stage  int      // index into stages
	want   string   // the stage filtered on, for listStages
	tree   bool
	open   map[string]bool // tree paths (function indexes) opened
	// What is shown: the table (funcs) or the tree (rows) of shownProf,
	// which is prof but while a build runs off the frame.
	shownProf *attrib.PyProfile
	funcs     *attrib.PyFuncTable // the table's rows, made a page at a time
	rows      []pyTreeRow
	scope     int64 // samples of the scope
	// stale: a snapshot came since funcs and rows were made; they are
	// made again when the view is drawn or used (at 100k functions that
	// is most of a frame, which the other views' frames need not pay),
	// or, from asyncSize, off the frame (Cmd).
	stale bool
	// Builds off the frame: gen numbers each build asked for, shownGen
	// is the one shown; one runs at a time, and the last asked while it
	// runs waits in queued.
	asyncSize int
	gen       uint64
	shownGen  uint64
	inFlight  bool
	queued    *pyJob
	list      list
	w, h      int
	focused   bool
}

type pyTreeRow struct {
	node  *attrib.PyNode
	depth int
	path  string
}

// NewPython is the Python view.
func NewPython(st *Styles) *Python {
	return &Python{st: st, keys: DefaultPythonKeyMap(), open: map[string]bool{}}
}

func (p *Python) Title() string { return "Python" }

func (p *Python) Info() string {
	p.fresh()
	if p.prof == nil {
		return ""
	}
	scope := "whole step"
	if p.prof.Steps == 0 {
		scope = "whole run"
	}
	if s := p.stages[p.stage]; s != "" {
		scope = "stage " + escape.Control(s)
	}
	mode := "functions"
	if p.tree {
		mode = "tree"
	}
	if p.computing() {
		return mode + " · " + scope + " · computing…"
	}
	return fmt.Sprintf("%s · %s · %s samples", mode, scope, FormatCount(p.scope))
}

// Available: only with Python samples (the agent's sampler).
func (p *Python) Available() bool { return p.prof != nil }

func (p *Python) SetSnapshot(s *attrib.Snapshot) {
	p.snap = s
	p.prof = nil
	if s != nil {
		p.prof = s.Python
	}
	if p.stages != nil {
		p.want = p.stages[p.stage]
	}
	// The stages are listed when the view is next used (listStages): a
	// pass over the samples, 0.2 ms at 100k functions warm and 0.7 ms of
	// a frame (CPU profile of BenchmarkFrame), that the other views need
	// not pay.
	// The filter stays on its stage only while each profile has it.
	p.stages = nil
	if p.want != "" && !pyHasStage(p.prof, p.want) {
		p.want = ""
	}
	p.stale = true
}

// listStages lists the profile's stages with samples ("" first), the
// filter on want.
func (p *Python) listStages() {
	if p.stages != nil {
		return
	}
	p.stages = []string{""}
	p.stage = 0
	for _, r := range p.prof.StageRows() {
		p.stages = append(p.stages, r.Stage)
		if r.Stage == p.want {
			p.stage = len(p.stages) - 1
		}
	}
}

// pyHasStage: prof has samples in stage (StageRows lists it); found at
// the stage's first cell.
func pyHasStage(prof *attrib.PyProfile, stage string) bool {
	if prof == nil {
		return false
	}
	for si, s := range prof.Stages {
		if s != stage {
			continue
		}
		for _, c := range prof.Cells {
			if c.Stage == int32(si) && c.Samples != 0 {
				return true
			}
		}
	}
	return false
}

// fresh makes funcs and rows of the current snapshot if they are stale,
// unless they are made off the frame.
func (p *Python) fresh() {
	p.listStages()
	if p.stale && !p.offFrame() {
		p.rebuild()
	}
}

// SetAsync makes a snapshot's table or tree off the frame from size
// (the profile's functions plus cells; 0: never): Cmd starts the build,
// SetRows shows its result, and until then the view shows what it showed
// before.
func (p *Python) SetAsync(size int) { p.asyncSize = size }

func (p *Python) offFrame() bool {
	return p.asyncSize > 0 && p.prof != nil && len(p.prof.Funcs)+len(p.prof.Cells) >= p.asyncSize
}

// SetStage filters the view to stage ("" every stage); false when the
// profile has no such stage.
func (p *Python) SetStage(stage string) bool {
	p.listStages()
	for i, s := range p.stages {
		if s == stage {
			p.stage = i
			p.rebuild()
			return true
		}
	}
	return false
}

// SetTree shows the call tree (true) or the function table.
func (p *Python) SetTree(on bool) { p.tree = on; p.rebuild() }

// rebuild makes what is shown now, in the frame (a key asked for
// another stage, mode or node; or a small profile): a build off the
// frame asked for before is older and is dropped when it comes
// (SetRows).
func (p *Python) rebuild() {
	p.stale = false
	p.gen++
	p.queued = nil
	p.show(p.job(false).build(), p.gen)
}

// pyJob is what a build reads: the profile, the scope and the mode, the
// tree's opened nodes.
type pyJob struct {
	gen   uint64
	prof  *attrib.PyProfile
	stage string
	tree  bool
	open  map[string]bool
}

// pyBuilt is a build's result.
type pyBuilt struct {
	prof  *attrib.PyProfile
	funcs *attrib.PyFuncTable
	rows  []pyTreeRow
	scope int64
}

// job is a build of the current snapshot, stage and mode; copy when it
// runs on another goroutine (the opened nodes change with the keys).
func (p *Python) job(copy bool) *pyJob {
	p.listStages()
	j := &pyJob{gen: p.gen, prof: p.prof, tree: p.tree, open: p.open}
	if p.prof != nil {
		j.stage = p.stages[p.stage]
	}
	if copy && j.tree {
		j.open = maps.Clone(p.open)
	}
	return j
}

func (j *pyJob) build() pyBuilt {
	b := pyBuilt{prof: j.prof}
	if j.prof == nil {
		return b
	}
	if !j.tree {
		// The table needs no tree: building one per snapshot was a third
		// of a frame at 100k functions.
		b.funcs = j.prof.FunctionTable(j.stage)
		b.scope = b.funcs.Scope()
		return b
	}
	root := j.prof.Tree(j.stage)
	b.scope = root.Total
	var walk func(n *attrib.PyNode, depth int, path string)
	walk = func(n *attrib.PyNode, depth int, path string) {
		for _, c := range n.Children {
			cp := path + "/" + strconv.Itoa(int(c.Func))
			b.rows = append(b.rows, pyTreeRow{node: c, depth: depth, path: cp})
			if j.open[cp] {
				walk(c, depth+1, cp)
			}
		}
	}
	walk(root, 0, "")
	return b
}

// show makes b, the build gen asked for, what the view shows.
func (p *Python) show(b pyBuilt, gen uint64) {
	p.shownProf, p.funcs, p.rows, p.scope, p.shownGen = b.prof, b.funcs, b.rows, b.scope, gen
	if p.tree {
		p.list.setLen(len(p.rows))
	} else {
		p.list.setLen(p.funcs.Len())
	}
}

// computing: nothing is shown yet of a profile whose build runs.
func (p *Python) computing() bool {
	return p.shownProf == nil && p.prof != nil && (p.stale || p.shownGen != p.gen)
}

// PyRowsMsg is a build's result (Python.Cmd), for Python.SetRows.
type PyRowsMsg struct {
	view *Python
	gen  uint64
	b    pyBuilt
}

// Cmd starts the build of a stale snapshot's table or tree off the frame
// when the view is focused and the profile is large (SetAsync): its
// command's message goes to SetRows. Nil when there is nothing to start.
func (p *Python) Cmd() tea.Cmd {
	if !p.stale || !p.focused || !p.offFrame() {
		return nil
	}
	p.stale = false
	p.gen++
	j := p.job(true)
	if p.inFlight {
		p.queued = j
		return nil
	}
	return p.start(j)
}

// start returns the command that builds j: Bubble Tea runs a command on
// a goroutine of its own, so the view starts none. The profile is never
// changed once made, and j holds its own copy of the opened nodes.
func (p *Python) start(j *pyJob) tea.Cmd {
	p.inFlight = true
	return func() tea.Msg { return PyRowsMsg{view: p, gen: j.gen, b: j.build()} }
}

// SetRows shows a build's result unless a later one is shown (a key or
// a small profile rebuilt the view in the frame since), and starts the
// one waiting. A result a later snapshot superseded is still shown: what
// is shown is older still, and were it dropped, snapshots that come
// faster than their builds end would keep the view on its old rows (or
// computing…) for as long as they come.
func (p *Python) SetRows(msg PyRowsMsg) tea.Cmd {
	if msg.view != p {
		return nil
	}
	p.inFlight = false
	if msg.gen > p.shownGen {
		p.show(msg.b, msg.gen)
	}
	if q := p.queued; q != nil {
		p.queued = nil
		return p.start(q)
	}
	return nil
}

func (p *Python) SetSize(w, h int)  { p.w, p.h = w, h; p.list.setPage(h - 1) }
func (p *Python) SetFocused(f bool) { p.focused = f }
func (p *Python) Capturing() bool   { return false }

// Update: movement; enter opens or closes a tree node's callees (in the
// table: shows the function's heaviest place in the tree, opened down to
// it); t switches table and tree; s / S the stage filter.
func (p *Python) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok || p.prof == nil {
		return nil
	}
	p.fresh()
	switch {
	case key.Matches(km, p.keys.Open):
		p.enter()
	case key.Matches(km, p.keys.Tree):
		p.tree = !p.tree
		p.rebuild()
	case key.Matches(km, p.keys.Stage):
		p.stage = (p.stage + 1) % len(p.stages)
		p.rebuild()
	case key.Matches(km, p.keys.Prev):
		p.stage = (p.stage + len(p.stages) - 1) % len(p.stages)
		p.rebuild()
	default:
		p.list.handle(km, p.keys.ListKeyMap)
	}
	return nil
}

func (p *Python) enter() {
	if p.tree {
		if p.list.cursor < len(p.rows) {
			r := p.rows[p.list.cursor]
			if len(r.node.Children) > 0 {
				p.open[r.path] = !p.open[r.path]
				p.rebuild()
			}
		}
		return
	}
	if p.list.cursor >= p.funcs.Len() {
		return
	}
	// The table's function: its heaviest node in the tree, the path
	// down to it opened, the cursor on it.
	f := p.funcs.Row(p.list.cursor).PyFunc
	var best *attrib.PyNode
	var bestPath string
	var find func(n *attrib.PyNode, path string)
	find = func(n *attrib.PyNode, path string) {
		for _, c := range n.Children {
			cp := path + "/" + strconv.Itoa(int(c.Func))
			if p.prof.Funcs[c.Func] == f && (best == nil || c.Total > best.Total) {
				best, bestPath = c, cp
			}
			find(c, cp)
		}
	}
	find(p.prof.Tree(p.stages[p.stage]), "")
	if best == nil {
		return
	}
	parts := strings.Split(bestPath, "/")
	for i := 2; i < len(parts); i++ {
		p.open[strings.Join(parts[:i], "/")] = true
	}
	p.open[bestPath] = true
	p.tree = true
	p.rebuild()
	for i, r := range p.rows {
		if r.path == bestPath {
			p.list.cursor = i
			p.list.clamp()
		}
	}
}

func (p *Python) ShortHelp() []key.Binding {
	return []key.Binding{p.keys.move(), p.keys.Open, p.keys.Tree, p.keys.Stage}
}
func (p *Python) FullHelp() [][]key.Binding {
	return [][]key.Binding{p.keys.bindings(), {p.keys.Open, p.keys.Tree, p.keys.Stage}}
}

// pyInside renders what a function's self samples were inside besides
// Python bytecode: its largest state other than python ("torch 80%").
func pyInside(st [tracer.PyStates]int64, self int64) string {
	best, bn := tracer.PyRunning, int64(0)
	for i := 1; i < tracer.PyStates; i++ {
		if st[i] > bn {
			best, bn = tracer.PyState(i), st[i]
		}
	}
	if bn == 0 || self == 0 {
		return ""
	}
	return best.String() + " " + FormatShare(float64(bn)/float64(self))
}

func (p *Python) View() string {
	p.fresh()
	st := p.st
	if p.snap == nil {
		return block([]string{st.Table.Dim.Render("waiting for data…")}, p.w, p.h)
	}
	if p.prof == nil {
		return block([]string{st.Table.Dim.Render("no Python samples: they come from the Python agent's sampler (a Python command under rlktop run/record; --py-sample-hz)")}, p.w, p.h)
	}
	if p.computing() {
		what := "function table"
		if p.tree {
			what = "call tree"
		}
		return block([]string{st.Table.Dim.Render("computing the " + what + " of " + FormatCount(int64(len(p.prof.Funcs))) + " functions…")}, p.w, p.h)
	}
	// The rows are of shownProf: the snapshot before the current one
	// while the current one's build runs off the frame.
	prof := p.shownProf
	share := func(n int64) string {
		if p.scope == 0 {
			return ""
		}
		return FormatShare(float64(n) / float64(p.scope))
	}
	const sw, tw, iw = 6, 9, 15
	perStep := func(ns int64) string {
		if prof.Steps > 0 {
			ns /= prof.Steps
		}
		return FormatNs(ns)
	}
	showInside := p.w >= 70
	nameW := p.w - 1 - (sw+1)*2 - (tw + 1)
	if showInside {
		nameW -= iw + 1
	}
	nameW = max(nameW, 12)
	header := " " + fitRight("self", sw) + " " + fitRight("total", sw) + " " + fitRight("self/step", tw) + " "
	if showInside {
		header += fit("inside", iw) + " "
	}
	header += fit("function (file:line)", nameW)
	lines := []string{st.Table.Header.Render(fit(header, p.w))}
	from, to := p.list.visible()
	row := func(i int, self, total, selfNs int64, inside, name string) {
		line := fitRight(share(self), sw) + " " + fitRight(share(total), sw) + " " + fitRight(perStep(selfNs), tw) + " "
		if showInside {
			line += fit(inside, iw) + " "
		}
		line += fit(name, nameW)
		if p.focused && i == p.list.cursor {
			lines = append(lines, "›"+st.Table.Selected.Render(line))
		} else {
			lines = append(lines, " "+line)
		}
	}
	if !p.tree {
		for i := from; i < to; i++ {
			r := p.funcs.Row(i)
			row(i, r.Self, r.Total, r.SelfNs, pyInside(r.States, r.Self), escape.Control(r.Function)+"  "+escape.Control(r.Where()))
		}
		if p.funcs.Len() == 0 {
			lines = append(lines, st.Table.Dim.Render(" no samples in this stage"))
		}
		return block(lines, p.w, p.h)
	}
	for i := from; i < to; i++ {
		r := p.rows[i]
		f := prof.Funcs[r.node.Func]
		mark := "  "
		if len(r.node.Children) > 0 {
			mark = "▸ "
			if p.open[r.path] {
				mark = "▾ "
			}
		}
		row(i, r.node.Self, r.node.Total, r.node.SelfNs, pyInside(r.node.States, r.node.Self), strings.Repeat("  ", r.depth)+mark+escape.Control(f.Function)+"  "+escape.Control(f.Where()))
	}
	return block(lines, p.w, p.h)
}
