package views

import (
	"fmt"
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
	stages []string // "" (every stage), then the profile's stages by samples
	stage  int      // index into stages
	tree   bool
	open   map[string]bool     // tree paths (function indexes) opened
	funcs  *attrib.PyFuncTable // the table's rows, made a page at a time
	rows   []pyTreeRow
	scope  int64 // samples of the scope
	// stale: a snapshot came since funcs and rows were made; they are
	// made again when the view is drawn or used (at 100k functions that
	// is most of a frame, which the other views' frames need not pay).
	stale   bool
	list    list
	w, h    int
	focused bool
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
	cur := ""
	if p.stages != nil {
		cur = p.stages[p.stage]
	}
	p.stages = []string{""}
	p.stage = 0
	for _, r := range p.prof.StageRows() {
		p.stages = append(p.stages, r.Stage)
		if r.Stage == cur {
			p.stage = len(p.stages) - 1
		}
	}
	p.stale = true
}

// fresh makes funcs and rows of the current snapshot if they are stale.
func (p *Python) fresh() {
	if p.stale {
		p.rebuild()
	}
}

// SetStage filters the view to stage ("" every stage); false when the
// profile has no such stage.
func (p *Python) SetStage(stage string) bool {
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

func (p *Python) rebuild() {
	p.stale = false
	p.funcs, p.rows, p.scope = nil, nil, 0
	if p.prof == nil {
		p.list.setLen(0)
		return
	}
	stage := p.stages[p.stage]
	if !p.tree {
		// The table needs no tree: building one per snapshot was a third
		// of a frame at 100k functions.
		p.funcs = p.prof.FunctionTable(stage)
		p.scope = p.funcs.Scope()
		p.list.setLen(p.funcs.Len())
		return
	}
	root := p.prof.Tree(stage)
	p.scope = root.Total
	var walk func(n *attrib.PyNode, depth int, path string)
	walk = func(n *attrib.PyNode, depth int, path string) {
		for _, c := range n.Children {
			cp := path + "/" + strconv.Itoa(int(c.Func))
			p.rows = append(p.rows, pyTreeRow{node: c, depth: depth, path: cp})
			if p.open[cp] {
				walk(c, depth+1, cp)
			}
		}
	}
	walk(root, 0, "")
	p.list.setLen(len(p.rows))
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
	share := func(n int64) string {
		if p.scope == 0 {
			return ""
		}
		return FormatShare(float64(n) / float64(p.scope))
	}
	const sw, tw, iw = 6, 9, 15
	perStep := func(ns int64) string {
		if p.prof.Steps > 0 {
			ns /= p.prof.Steps
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
		f := p.prof.Funcs[r.node.Func]
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
