package attrib

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// PyFunc is one Python function: its qualified name, file and the line
// its definition starts on (which tells apart functions of one name in a
// file).
type PyFunc struct {
	Function string
	File     string
	Line     int
}

// Where names the function's place as reports and the TUI show it:
// "file:line" with the file's last two path elements (the whole path is
// in File).
func (f PyFunc) Where() string {
	file := f.File
	if i := strings.LastIndexByte(file, '/'); i > 0 {
		if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
			file = file[j+1:]
		}
	}
	return file + ":" + strconv.Itoa(f.Line)
}

// PyCell counts the samples of one (stage, stack, state, thread kind).
type PyCell struct {
	Stage int32 // index into PyProfile.Stages
	Stack int32 // index into PyProfile.Stacks
	State tracer.PyState
	// StepThread: the samples are of the process's step thread.
	StepThread bool
	Samples    int64
	WeightNs   int64 // the time the samples stand for (tracer.PySample.WeightNs), ns
}

// PyProfile is where the Python side of the steps went: the Python
// agent's stack samples aggregated by stage, function-level stack, state
// and thread kind. Immutable once built; the views and writers read it
// through its methods. Samples taken before the first step are left out
// when any sample lies in a step (imports and set-up would swamp the
// steps), and counted in BeforeSteps.
type PyProfile struct {
	Funcs []PyFunc
	// Stacks are function-level stacks, outermost first, as indexes into
	// Funcs; Stacks[0] is the empty stack (a thread with no Python frame).
	Stacks [][]int32
	// Stages are the stage names; Stages[0] is StageNone.
	Stages []string
	// Cells, by stage, then stack, then state, then thread kind.
	Cells []PyCell
	// Samples and WeightNs sum the cells; StepSamples the step thread's.
	Samples, WeightNs, StepSamples int64
	// Steps is the number of steps the samples were taken over (the
	// trace's completed steps, else the (process, step) pairs the samples
	// lie in; 0 when no sample lies in a step): the divisor of the
	// per-step times.
	Steps int64
	// PeriodNs is the sampler's nominal interval (the largest of the
	// sources'), ns.
	PeriodNs int64
	// Dropped counts samples the agents dropped (queue full).
	Dropped uint64
	// BeforeSteps counts the samples left out as taken before the first
	// step.
	BeforeSteps int64
}

// PyAggregator sums Python samples into cells; Profile builds the
// PyProfile. Not safe for concurrent use.
type PyAggregator struct {
	cells   map[pyKey]*pyVal
	steps   map[pyStep]struct{}
	period  int64
	dropped uint64
	inSteps bool
}

type pyKey struct {
	stage      tracer.StrID
	stack      uint32
	state      tracer.PyState
	stepThread bool
	inStep     bool
}

type pyVal struct{ n, w int64 }

type pyStep struct {
	pid  int32
	step int64
}

// NewPyAggregator returns an empty aggregator.
func NewPyAggregator() *PyAggregator {
	return &PyAggregator{cells: map[pyKey]*pyVal{}, steps: map[pyStep]struct{}{}}
}

// Add sums samples (stacks and stage names in the table they name).
func (a *PyAggregator) Add(samples []tracer.PySample) {
	for i := range samples {
		s := &samples[i]
		k := pyKey{stage: s.StageOf(), stack: s.Stack, state: s.State, stepThread: s.StepThread, inStep: s.Step >= 0}
		v := a.cells[k]
		if v == nil {
			v = &pyVal{}
			a.cells[k] = v
		}
		v.n++
		v.w += int64(max(s.WeightNs, 0))
		if s.Step >= 0 {
			a.inSteps = true
			a.steps[pyStep{s.PID, s.Step}] = struct{}{}
		}
	}
}

// SetPeriod records a source's sampling period (the largest is kept) and
// adds its dropped samples.
func (a *PyAggregator) SetPeriod(periodNs int64, dropped uint64) {
	a.period = max(a.period, periodNs)
	a.dropped += dropped
}

// Reset forgets every sample.
func (a *PyAggregator) Reset() {
	clear(a.cells)
	clear(a.steps)
	a.inSteps = false
}

// Empty reports whether no sample was added.
func (a *PyAggregator) Empty() bool { return len(a.cells) == 0 }

// Profile builds the profile of what was added, naming stacks from
// stacks and strings from strs; nil when nothing was added.
func (a *PyAggregator) Profile(stacks *tracer.PyStacks, strs *tracer.Strings) *PyProfile {
	if len(a.cells) == 0 {
		return nil
	}
	p := &PyProfile{Stacks: [][]int32{nil}, Stages: []string{StageNone}, PeriodNs: a.period, Dropped: a.dropped}
	funcIdx := map[PyFunc]int32{}
	stackIdx := map[string]int32{"": 0}
	byStack := map[uint32]int32{0: 0}
	stageIdx := map[tracer.StrID]int32{0: 0}
	var path []int32
	stackOf := func(id uint32) int32 {
		if i, ok := byStack[id]; ok {
			return i
		}
		path = path[:0]
		stacks.Walk(id, func(f tracer.PyFrame) bool {
			fn := PyFunc{Function: strs.Get(f.Func), File: strs.Get(f.File), Line: int(f.FirstLine)}
			fi, ok := funcIdx[fn]
			if !ok {
				fi = int32(len(p.Funcs))
				p.Funcs = append(p.Funcs, fn)
				funcIdx[fn] = fi
			}
			path = append(path, fi)
			return true
		})
		slices.Reverse(path)
		key := pathKey(path)
		i, ok := stackIdx[key]
		if !ok {
			i = int32(len(p.Stacks))
			p.Stacks = append(p.Stacks, slices.Clone(path))
			stackIdx[key] = i
		}
		byStack[id] = i
		return i
	}
	merged := map[PyCell]*PyCell{}
	for k, v := range a.cells {
		if a.inSteps && !k.inStep {
			p.BeforeSteps += v.n
			continue
		}
		si, ok := stageIdx[k.stage]
		if !ok {
			si = int32(len(p.Stages))
			p.Stages = append(p.Stages, strs.Get(k.stage))
			stageIdx[k.stage] = si
		}
		c := PyCell{Stage: si, Stack: stackOf(k.stack), State: k.state, StepThread: k.stepThread}
		m := merged[c]
		if m == nil {
			m = &PyCell{Stage: c.Stage, Stack: c.Stack, State: c.State, StepThread: c.StepThread}
			merged[c] = m
		}
		m.Samples += v.n
		m.WeightNs += v.w
	}
	for _, c := range merged {
		p.Cells = append(p.Cells, *c)
		p.Samples += c.Samples
		p.WeightNs += c.WeightNs
		if c.StepThread {
			p.StepSamples += c.Samples
		}
	}
	sortCells(p.Cells)
	if a.inSteps {
		p.Steps = int64(len(a.steps))
	}
	return p
}

// sortCells orders cells by stage, then stack, then state, then thread
// kind (PyProfile.Cells' order).
func sortCells(cells []PyCell) {
	slices.SortFunc(cells, func(x, y PyCell) int {
		return cmp.Or(cmp.Compare(x.Stage, y.Stage), cmp.Compare(x.Stack, y.Stack), cmp.Compare(x.State, y.State), cmpBool(x.StepThread, y.StepThread))
	})
}

func pathKey(path []int32) string {
	b := make([]byte, 0, 4*len(path))
	for _, f := range path {
		b = append(b, byte(f), byte(f>>8), byte(f>>16), byte(f>>24))
	}
	return string(b)
}

// PythonOf aggregates the Python samples of traces (nil when none has
// any).
func PythonOf(traces ...*tracer.Trace) *PyProfile {
	var out *PyProfile
	for _, t := range traces {
		if len(t.PySamples) == 0 || t.PyStacks == nil {
			continue
		}
		a := NewPyAggregator()
		a.Add(t.PySamples)
		a.SetPeriod(t.PyPeriodNs, t.PyDropped)
		p := a.Profile(t.PyStacks, t.Strings)
		var steps int64
		for i := range t.Events {
			if t.Events[i].Kind == tracer.KindStep {
				steps++
			}
		}
		p.SetSteps(steps)
		out = out.Merge(p)
	}
	return out
}

// Merge returns the profile of p's samples and q's (either may be nil).
func (p *PyProfile) Merge(q *PyProfile) *PyProfile {
	if p == nil {
		return q
	}
	if q == nil {
		return p
	}
	m := &PyProfile{Funcs: slices.Clone(p.Funcs), Stacks: slices.Clone(p.Stacks), Stages: slices.Clone(p.Stages),
		Samples: p.Samples + q.Samples, WeightNs: p.WeightNs + q.WeightNs, StepSamples: p.StepSamples + q.StepSamples,
		Steps: p.Steps + q.Steps, PeriodNs: max(p.PeriodNs, q.PeriodNs), Dropped: p.Dropped + q.Dropped,
		BeforeSteps: p.BeforeSteps + q.BeforeSteps}
	funcIdx := map[PyFunc]int32{}
	for i, f := range m.Funcs {
		funcIdx[f] = int32(i)
	}
	stackIdx := map[string]int32{}
	for i, s := range m.Stacks {
		stackIdx[pathKey(s)] = int32(i)
	}
	stageIdx := map[string]int32{}
	for i, s := range m.Stages {
		stageIdx[s] = int32(i)
	}
	cells := map[PyCell]int{}
	for i, c := range p.Cells {
		m.Cells = append(m.Cells, c)
		cells[PyCell{Stage: c.Stage, Stack: c.Stack, State: c.State, StepThread: c.StepThread}] = i
	}
	for _, c := range q.Cells {
		path := make([]int32, len(q.Stacks[c.Stack]))
		for i, f := range q.Stacks[c.Stack] {
			fn := q.Funcs[f]
			fi, ok := funcIdx[fn]
			if !ok {
				fi = int32(len(m.Funcs))
				m.Funcs = append(m.Funcs, fn)
				funcIdx[fn] = fi
			}
			path[i] = fi
		}
		si, ok := stackIdx[pathKey(path)]
		if !ok {
			si = int32(len(m.Stacks))
			m.Stacks = append(m.Stacks, path)
			stackIdx[pathKey(path)] = si
		}
		name := q.Stages[c.Stage]
		gi, ok := stageIdx[name]
		if !ok {
			gi = int32(len(m.Stages))
			m.Stages = append(m.Stages, name)
			stageIdx[name] = gi
		}
		k := PyCell{Stage: gi, Stack: si, State: c.State, StepThread: c.StepThread}
		if j, ok := cells[k]; ok {
			m.Cells[j].Samples += c.Samples
			m.Cells[j].WeightNs += c.WeightNs
			continue
		}
		k.Samples, k.WeightNs = c.Samples, c.WeightNs
		cells[PyCell{Stage: gi, Stack: si, State: c.State, StepThread: c.StepThread}] = len(m.Cells)
		m.Cells = append(m.Cells, k)
	}
	sortCells(m.Cells)
	return m
}

// SetSteps sets the number of steps the samples were taken over (the
// steps a source completed; steps shorter than the sampling period may
// hold no sample), when n > 0 and the samples lie in steps.
func (p *PyProfile) SetSteps(n int64) {
	if p != nil && n > 0 && p.Steps > 0 {
		p.Steps = n
	}
}

// stageIndex returns the index of stage name, -1 for "" (every stage),
// -2 when p has no such stage.
func (p *PyProfile) stageIndex(stage string) int32 {
	if stage == "" {
		return -1
	}
	if i := slices.Index(p.Stages, stage); i >= 0 {
		return int32(i)
	}
	return -2
}

// PyFuncRow is one function's samples in a scope (a stage, or the whole
// step). Self counts samples whose innermost frame is the function;
// Total those whose stack holds it (once per sample, recursion or not).
// Shares are of the scope's samples.
type PyFuncRow struct {
	PyFunc
	Stage            string // the scope: a stage name, "" for the whole step
	Self, Total      int64
	SelfNs, TotalNs  int64 // the samples' weights, ns
	SelfShare, Share float64
	States           [tracer.PyStates]int64 // Self by state
}

// Functions returns the function rows of stage ("" = every stage),
// sorted by Self descending, then Total, then name; nil when the stage
// has no samples.
func (p *PyProfile) Functions(stage string) []PyFuncRow {
	return p.FunctionTable(stage).Rows()
}

// PyFuncTable is Functions(stage) with each row made when asked for
// (Row): a view shows a page of the rows, and making all of them (160
// bytes each) was about half of PyProfile.Functions at 100k functions,
// and most of its garbage.
type PyFuncTable struct {
	p     *PyProfile
	stage string
	scope int64
	keys  []pyFuncKey // in row order
	accs  []pyFuncAcc // by function index
}

// pyFuncAcc is one function's counts in a scope.
type pyFuncAcc struct {
	self, total, selfNs, totalNs int64
	states                       [tracer.PyStates]int64 // Self by state
	seen                         int32                  // 1 + the last cell counting the function's Total; 0: in no cell
}

// pyFuncKey is a row's sort key: the names are compared only on ties of
// the counts.
type pyFuncKey struct {
	self, total int64
	f           int32
}

// FunctionTable returns the function rows of stage ("" = every stage) in
// Functions' order; nil when p has no such stage.
func (p *PyProfile) FunctionTable(stage string) *PyFuncTable {
	if p == nil {
		return nil
	}
	si := p.stageIndex(stage)
	if si == -2 {
		return nil
	}
	// Function indexes are dense, so slices indexed by function stand in
	// for maps, and the counts are summed in small records apart from the
	// rows, which Row makes: at 100k functions the maps, and then the
	// rows touched per sample, were most of a live frame.
	t := &PyFuncTable{p: p, stage: stage, accs: make([]pyFuncAcc, len(p.Funcs))}
	accs := t.accs
	var scope int64
	for ci, c := range p.Cells {
		if si >= 0 && c.Stage != si {
			continue
		}
		scope += c.Samples
		st := p.Stacks[c.Stack]
		if len(st) == 0 {
			continue
		}
		a := &accs[st[len(st)-1]]
		a.self += c.Samples
		a.selfNs += c.WeightNs
		a.states[c.State] += c.Samples
		for _, f := range st {
			a := &accs[f]
			if a.seen == int32(ci+1) {
				continue // recursion: once per sample
			}
			a.seen = int32(ci + 1)
			a.total += c.Samples
			a.totalNs += c.WeightNs
		}
	}
	t.scope = scope
	keys := make([]pyFuncKey, 0, len(p.Funcs))
	for f := range accs {
		if accs[f].seen != 0 {
			keys = append(keys, pyFuncKey{accs[f].self, accs[f].total, int32(f)})
		}
	}
	slices.SortFunc(keys, func(a, b pyFuncKey) int {
		if c := cmp.Compare(b.self, a.self); c != 0 {
			return c
		}
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		x, y := &p.Funcs[a.f], &p.Funcs[b.f]
		return cmp.Or(cmp.Compare(x.Function, y.Function), cmp.Compare(x.File, y.File), cmp.Compare(x.Line, y.Line), cmp.Compare(a.f, b.f))
	})
	t.keys = keys
	return t
}

// Len is the number of rows (0 for a nil table).
func (t *PyFuncTable) Len() int {
	if t == nil {
		return 0
	}
	return len(t.keys)
}

// Scope is the samples of the table's stage: Scope(stage).
func (t *PyFuncTable) Scope() int64 {
	if t == nil {
		return 0
	}
	return t.scope
}

// Row returns row i, 0 <= i < Len().
func (t *PyFuncTable) Row(i int) PyFuncRow {
	k := t.keys[i]
	a := &t.accs[k.f]
	r := PyFuncRow{PyFunc: t.p.Funcs[k.f], Stage: t.stage, Self: a.self, Total: a.total, SelfNs: a.selfNs, TotalNs: a.totalNs, States: a.states}
	if t.scope > 0 {
		r.SelfShare = float64(r.Self) / float64(t.scope)
		r.Share = float64(r.Total) / float64(t.scope)
	}
	return r
}

// Rows returns every row (nil for a nil table).
func (t *PyFuncTable) Rows() []PyFuncRow {
	if t == nil {
		return nil
	}
	out := make([]PyFuncRow, len(t.keys))
	for i := range out {
		out[i] = t.Row(i)
	}
	return out
}

// Scope returns the samples of stage ("" = every stage): Tree(stage)'s
// root Total without building the tree.
func (p *PyProfile) Scope(stage string) int64 {
	if p == nil {
		return 0
	}
	si := p.stageIndex(stage)
	if si == -2 {
		return 0
	}
	var n int64
	for _, c := range p.Cells {
		if si < 0 || c.Stage == si {
			n += c.Samples
		}
	}
	return n
}

// PyStageRow is one stage's samples: all threads', and the step thread's
// by state. NsPerStep is the step thread's sampled time in the stage per
// step (its weights over PyProfile.Steps), ns; 0 without steps.
type PyStageRow struct {
	Stage            string
	Samples          int64
	StepSamples      int64
	StepNs           int64 // the step thread's samples' weights, ns
	NsPerStep        int64
	States           [tracer.PyStates]int64 // the step thread's samples by state
	Share, StepShare float64                // of all samples; of the step thread's
}

// PythonShare is the share of the stage's step-thread samples running
// Python: bytecode or C calls outside torch (states python and native),
// not inside torch and not waiting.
func (r *PyStageRow) PythonShare() float64 {
	if r.StepSamples == 0 {
		return 0
	}
	return float64(r.States[tracer.PyRunning]+r.States[tracer.PyNative]) / float64(r.StepSamples)
}

// StageRows returns one row per stage with samples, by samples
// descending, then name.
func (p *PyProfile) StageRows() []PyStageRow {
	if p == nil {
		return nil
	}
	rows := make([]PyStageRow, len(p.Stages))
	for i := range rows {
		rows[i].Stage = p.Stages[i]
	}
	for _, c := range p.Cells {
		r := &rows[c.Stage]
		r.Samples += c.Samples
		if c.StepThread {
			r.StepSamples += c.Samples
			r.StepNs += c.WeightNs
			r.States[c.State] += c.Samples
		}
	}
	out := rows[:0]
	for _, r := range rows {
		if r.Samples == 0 {
			continue
		}
		if p.Samples > 0 {
			r.Share = float64(r.Samples) / float64(p.Samples)
		}
		if p.StepSamples > 0 {
			r.StepShare = float64(r.StepSamples) / float64(p.StepSamples)
		}
		if p.Steps > 0 {
			r.NsPerStep = r.StepNs / p.Steps
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b PyStageRow) int {
		return cmp.Or(cmp.Compare(b.Samples, a.Samples), cmp.Compare(a.Stage, b.Stage))
	})
	return out
}

// PyNode is one node of a call tree: a function called along one path.
// Self counts samples whose innermost frame is this node; Total the
// node's and its callees'.
type PyNode struct {
	Func            int32 // index into PyProfile.Funcs; -1 for the root
	Self, Total     int64
	SelfNs, TotalNs int64                  // the samples' weights, ns
	States          [tracer.PyStates]int64 // Self by state
	// Children, by Total descending, then function name.
	Children []*PyNode
}

// Tree returns the call tree of stage ("" = every stage): the root's
// Total is the scope's samples, its children the outermost functions.
func (p *PyProfile) Tree(stage string) *PyNode {
	root := &PyNode{Func: -1}
	if p == nil {
		return root
	}
	si := p.stageIndex(stage)
	if si == -2 {
		return root
	}
	type edge struct {
		parent *PyNode
		f      int32
	}
	kids := map[edge]*PyNode{}
	for _, c := range p.Cells {
		if si >= 0 && c.Stage != si {
			continue
		}
		n := root
		n.Total += c.Samples
		n.TotalNs += c.WeightNs
		for _, f := range p.Stacks[c.Stack] {
			k := edge{n, f}
			ch := kids[k]
			if ch == nil {
				ch = &PyNode{Func: f}
				kids[k] = ch
				n.Children = append(n.Children, ch)
			}
			ch.Total += c.Samples
			ch.TotalNs += c.WeightNs
			n = ch
		}
		n.Self += c.Samples
		n.SelfNs += c.WeightNs
		n.States[c.State] += c.Samples
	}
	var sortTree func(n *PyNode)
	sortTree = func(n *PyNode) {
		slices.SortFunc(n.Children, func(a, b *PyNode) int {
			return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(p.Funcs[a.Func].Function, p.Funcs[b.Func].Function), cmp.Compare(a.Func, b.Func))
		})
		for _, c := range n.Children {
			sortTree(c)
		}
	}
	sortTree(root)
	return root
}

// PyFolded is one line of a folded-stacks file: the frames outermost
// first and the samples with that stack.
type PyFolded struct {
	Frames  []PyFunc
	Samples int64
}

// Folded returns the samples of stage ("" = every stage) by
// function-level stack (states and threads summed), in stack order;
// samples with no Python frame are left out.
func (p *PyProfile) Folded(stage string) []PyFolded {
	if p == nil {
		return nil
	}
	si := p.stageIndex(stage)
	if si == -2 {
		return nil
	}
	by := map[int32]int64{}
	for _, c := range p.Cells {
		if (si >= 0 && c.Stage != si) || len(p.Stacks[c.Stack]) == 0 {
			continue
		}
		by[c.Stack] += c.Samples
	}
	out := make([]PyFolded, 0, len(by))
	for _, st := range slices.Sorted(maps.Keys(by)) {
		fr := make([]PyFunc, len(p.Stacks[st]))
		for i, f := range p.Stacks[st] {
			fr[i] = p.Funcs[f]
		}
		out = append(out, PyFolded{Frames: fr, Samples: by[st]})
	}
	return out
}

// StateSamples returns the samples of stage ("" = every stage) by state;
// stepOnly counts only the step thread's.
func (p *PyProfile) StateSamples(stage string, stepOnly bool) (out [tracer.PyStates]int64) {
	if p == nil {
		return out
	}
	si := p.stageIndex(stage)
	if si == -2 {
		return out
	}
	for _, c := range p.Cells {
		if (si >= 0 && c.Stage != si) || (stepOnly && !c.StepThread) {
			continue
		}
		out[c.State] += c.Samples
	}
	return out
}
