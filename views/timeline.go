package views

import (
	"cmp"
	"fmt"
	"github.com/rlktop/rlktop/internal/units"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TimelineMark is a flag switch drawn on the timeline's step row.
type TimelineMark struct {
	AtNs  int64 // same timebase as the timeline (live: wall ns)
	Label string
}

// TimelineKeyMap is the timeline's bindings.
type TimelineKeyMap struct {
	ZoomIn, ZoomOut, Fit, Left, Right, LaneUp, LaneDown, PrevOp, NextOp, Follow key.Binding
}

// DefaultTimelineKeyMap: +/- zoom, 0 fits everything, ←/→ pan, ↑/↓ pick a
// lane, [ ] previous/next block on it, f follows the newest work.
func DefaultTimelineKeyMap() TimelineKeyMap {
	return TimelineKeyMap{
		ZoomIn:   key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/-", "zoom")),
		ZoomOut:  key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "zoom out")),
		Fit:      key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "fit all")),
		Left:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/→", "pan")),
		Right:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "pan right")),
		LaneUp:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "lane")),
		LaneDown: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "lane down")),
		PrevOp:   key.NewBinding(key.WithKeys("["), key.WithHelp("[ ]", "prev/next block")),
		NextOp:   key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next block")),
		Follow:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow newest")),
	}
}

// timelineLabelW is the width of the lane labels on the left.
const timelineLabelW = 9

// Timeline draws an attrib.Timeline: a time axis, a step row (step
// boundaries │ with their numbers, flag switches ▲), CPU lanes (ranges by
// nesting depth, launch calls), then one lane per device stream with GPU
// ops as blocks. Each cell shows the letter of the category that covers
// most of it (upper case when ops cover at least half of the cell, lower
// case less; a legend maps letters to categories), coloured by category in
// the colour theme; idle cells are blank. A block wide enough shows its
// kernel's name. The selected block is reversed and described at the
// bottom: full name, category, stage, step, start, duration, launch
// context.
//
// The visible range starts as the last two steps (everything when there
// are no steps) and, while following (f; the default), keeps its width and
// ends at the newest work as new timelines arrive. Fit (0) shows the range
// that has ops (widened to the steps around them) and keeps fitting each
// new timeline, so a live window never scrolls its blocks out of view.
// Zoom (+/-, the wheel, a drag across the lanes) and pan (←/→) stop
// following and fitting. The axis counts from the start of the first
// timeline shown (origin), so its labels do not slide as a live window
// moves.
type Timeline struct {
	mem     memLane // the memory lane (timeline_memory.go)
	st      *Styles
	keys    TimelineKeyMap
	tl      *attrib.Timeline
	marks   []TimelineMark
	from    int64 // visible range start, ns
	span    int64 // visible range width, ns (0: not yet set)
	follow  bool
	auto    bool  // the range is the default one (no zoom or pan yet)
	fit     bool  // the range fits the ops of every new timeline (0)
	origin  int64 // ns the axis and "at +" count from
	hasOrig bool
	lane    int // selected GPU lane
	sel     int // selected op index into tl.Ops, -1 none
	selKey  attrib.TimelineOp
	dragX   int // drag start column, -1 none
	dragTo  int
	w, h    int
	focused bool
	letters map[string]rune
	maxDur  int64                // the longest op's DurNs (-1: not yet known for tl)
	paints  map[string][2]string // per category: its style's escapes before and after the text (paint)
	cpuDev  map[int32]bool       // devices that are the host CPU (the built-in loop)
	note    string               // said when no op is in view (SetNote)
}

// NewTimeline returns an empty timeline view, following.
func NewTimeline(st *Styles) *Timeline {
	return &Timeline{st: st, keys: DefaultTimelineKeyMap(), follow: true, auto: true, sel: -1, dragX: -1, maxDur: -1}
}

func (t *Timeline) Title() string { return "Timeline" }

func (t *Timeline) Info() string {
	if t.tl == nil || len(t.tl.Ops) == 0 {
		return ""
	}
	s := fmt.Sprintf("%s wide · %s/cell", FormatNs(t.span), FormatNs(t.perCell()))
	switch {
	case t.fit:
		s += " · fit"
	case t.follow:
		s += " · following"
	}
	return s
}

// SetNote sets what the view says, after "no operators in this view",
// when no op is in the visible range ("" says only that): a live Python
// run has operators only in the steps its torch.profiler windows cover.
func (t *Timeline) SetNote(s string) { t.note = s }

// Available reports whether there is anything to draw.
func (t *Timeline) Available() bool { return t.tl != nil && (len(t.tl.Ops) > 0 || len(t.tl.Steps) > 0) }

func (t *Timeline) SetSnapshot(s *attrib.Snapshot) { t.setMemory(s) } // timeline_memory.go

// SetTimeline replaces the data drawn and the flag switches marked. The
// timeline is never mutated.
func (t *Timeline) SetTimeline(tl *attrib.Timeline, marks []TimelineMark) {
	old := t.tl
	t.tl, t.marks = tl, marks
	if tl != old {
		t.letters, t.maxDur = nil, -1
	}
	if tl == nil {
		t.sel = -1
		return
	}
	// The origin stays put while a live window slides forward; an earlier
	// start (another file, a restarted clock) moves it back.
	if has := len(tl.Ops) > 0 || len(tl.Steps) > 0 || len(tl.CPU) > 0; has && (!t.hasOrig || tl.StartNs < t.origin) {
		t.origin, t.hasOrig = tl.StartNs, true
	}
	switch {
	case t.fit:
		t.from, t.span = t.fitRange()
	case t.span <= 0 || old == nil || t.auto:
		t.initialRange()
	case t.follow:
		t.from = tl.EndNs - t.span
	}
	// Keep the selection on the same op when it is still there.
	t.sel = -1
	if t.selKey.Name != "" {
		i, _ := slices.BinarySearchFunc(tl.Ops, t.selKey.StartNs, func(o attrib.TimelineOp, s int64) int {
			return cmp.Compare(o.StartNs, s)
		})
		for ; i < len(tl.Ops) && tl.Ops[i].StartNs == t.selKey.StartNs; i++ {
			if tl.Ops[i].Name == t.selKey.Name && tl.Ops[i].Lane == t.selKey.Lane {
				t.sel = i
				break
			}
		}
	}
	t.lane = min(t.lane, max(len(tl.Lanes)-1, 0))
}

// initialRange shows the last two steps, or everything.
func (t *Timeline) initialRange() {
	tl := t.tl
	t.from, t.span = tl.StartNs, max(tl.EndNs-tl.StartNs, 1)
	if n := len(tl.Steps); n >= 2 {
		a := tl.Steps[n-2]
		t.from = a.StartNs
		t.span = max(tl.EndNs-a.StartNs, 1)
	}
}

// fitRange is the range fit (0) shows: from the first op's start to the
// last op's end, widened to the steps that overlap it; the whole timeline
// when it has no ops. A live window's steps and CPU ranges may reach back
// before its oldest kept op: fitting those would leave the lanes blank.
func (t *Timeline) fitRange() (from, span int64) {
	tl := t.tl
	if len(tl.Ops) == 0 {
		return tl.StartNs, max(tl.EndNs-tl.StartNs, 1)
	}
	lo, hi := tl.Ops[0].StartNs, tl.Ops[0].EndNs()
	for i := range tl.Ops {
		lo, hi = min(lo, tl.Ops[i].StartNs), max(hi, tl.Ops[i].EndNs())
	}
	a, b := lo, hi
	for _, s := range tl.Steps {
		if s.StartNs < b && s.StartNs+s.DurNs > a {
			lo, hi = min(lo, s.StartNs), max(hi, s.StartNs+s.DurNs)
		}
	}
	return lo, max(hi-lo, 1)
}

// SetCPUDevices names the devices that are the host CPU (a CPU-only
// source such as the built-in loop): their lanes say CPU, not GPU.
func (t *Timeline) SetCPUDevices(ids []int32) {
	t.cpuDev = map[int32]bool{}
	for _, id := range ids {
		t.cpuDev[id] = true
	}
}

// laneName is "GPU0 s7", or "CPU s0" for a host device.
func (t *Timeline) laneName(l attrib.TimelineLane) string {
	if t.multi() {
		// "r1 G0 s7": the source's label first (ranks repeat devices).
		src := ""
		if int(l.Source) < len(t.tl.Sources) {
			src = t.tl.Sources[l.Source] + " "
		}
		switch {
		case l.Device < 0:
			return fmt.Sprintf("%sC t%d", src, l.Stream)
		case t.cpuDev[l.Device]:
			return fmt.Sprintf("%sC s%d", src, l.Stream)
		}
		return fmt.Sprintf("%sG%d s%d", src, l.Device, l.Stream)
	}
	if l.Device < 0 {
		// CPU operators by self time (a trace without GPU work,
		// tracer.Trace.CPUOpKernels): device -1, one lane per thread.
		return fmt.Sprintf("CPU t%d", l.Stream)
	}
	if t.cpuDev[l.Device] {
		return fmt.Sprintf("CPU s%d", l.Stream)
	}
	return fmt.Sprintf("GPU%d s%d", l.Device, l.Stream)
}

// multi reports whether the timeline holds several sources (ranks,
// files: attrib.MergeTimelines).
func (t *Timeline) multi() bool { return t.tl != nil && len(t.tl.Sources) > 1 }

// shownSource is the source whose steps and CPU rows are drawn: that of
// the lane under the cursor when the timeline holds several sources (its
// ranges and step marks belong to that rank's clock and thread), -1 (all)
// otherwise.
func (t *Timeline) shownSource() int32 {
	if !t.multi() || t.lane >= len(t.tl.Lanes) {
		return -1
	}
	return t.tl.Lanes[t.lane].Source
}

// ofShown reports whether an item of source src is drawn in the step and
// CPU rows.
func (t *Timeline) ofShown(src int32) bool {
	s := t.shownSource()
	return s < 0 || s == src
}

// SetFollow turns following the newest work on or off (a file has no
// newer work: the root turns it off for files).
func (t *Timeline) SetFollow(on bool) { t.follow = on }

// Range returns the visible range [from, from+span) in ns.
func (t *Timeline) Range() (from, span int64) { return t.from, t.span }

// Following reports whether the view keeps to the newest work.
func (t *Timeline) Following() bool { return t.follow }

// Fitting reports whether the view fits every new timeline's ops (0).
func (t *Timeline) Fitting() bool { return t.fit }

// ShowStep shows step n: from its start to its end or the end of the
// last op launched in it, whichever is later (with several sources, from
// the earliest start of step n in any of them); false (nothing changed)
// when the timeline does not hold that step.
func (t *Timeline) ShowStep(n int64) bool {
	if t.tl == nil {
		return false
	}
	lo, hi, found := int64(0), int64(0), false
	for _, s := range t.tl.Steps {
		if s.Step != n {
			continue
		}
		// Several sources (ranks) each have a step n: show them all, so
		// the late rank shows late.
		if !found {
			lo, hi, found = s.StartNs, s.StartNs+s.DurNs, true
		}
		lo, hi = min(lo, s.StartNs), max(hi, s.StartNs+s.DurNs)
	}
	if !found {
		return false
	}
	for i := range t.tl.Ops {
		if o := &t.tl.Ops[i]; o.Step == n {
			hi = max(hi, o.EndNs())
		}
	}
	t.ShowRange(lo, hi-lo)
	return true
}

// FitAll does what 0 does: fit the ops, and keep fitting.
func (t *Timeline) FitAll() {
	if t.tl == nil {
		return
	}
	t.from, t.span = t.fitRange()
	t.follow, t.auto, t.fit = false, false, true
}

// ShowRange shows [from, from+span) ns and stops following and fitting
// (the root uses it to bring a scrubbed step into view).
func (t *Timeline) ShowRange(from, span int64) {
	t.from, t.span = from, max(span, 1)
	t.follow, t.auto, t.fit = false, false, false
}

// Selected returns the selected op, or nil.
func (t *Timeline) Selected() *attrib.TimelineOp {
	if t.tl == nil || t.sel < 0 || t.sel >= len(t.tl.Ops) {
		return nil
	}
	return &t.tl.Ops[t.sel]
}

func (t *Timeline) SetSize(w, h int)  { t.w, t.h = w, h }
func (t *Timeline) SetFocused(f bool) { t.focused = f }
func (t *Timeline) Capturing() bool   { return false }

func (t *Timeline) ShortHelp() []key.Binding {
	k := t.keys
	return []key.Binding{k.ZoomIn, k.Left, k.PrevOp, k.Fit}
}

func (t *Timeline) FullHelp() [][]key.Binding {
	k := t.keys
	return [][]key.Binding{{k.ZoomIn, k.Left, k.Fit, k.Follow}, {k.LaneUp, k.PrevOp,
		key.NewBinding(key.WithKeys("mouse"), key.WithHelp("drag/wheel", "zoom"))}}
}

// gridW is the width of the time grid (right of the labels).
func (t *Timeline) gridW() int { return max(t.w-timelineLabelW-1, 1) }

func (t *Timeline) perCell() int64 { return max(t.span/int64(t.gridW()), 1) }

// zoom scales the visible width by f around the time at grid column x.
func (t *Timeline) zoom(f float64, x int) {
	if t.tl == nil {
		return
	}
	at := t.from + t.span*int64(x)/int64(t.gridW())
	ns := int64(float64(t.span) * f)
	ns = max(ns, int64(t.gridW())) // at least 1 ns per cell
	if full := (t.tl.EndNs - t.tl.StartNs) * 2; ns > full && full > 0 {
		ns = full
	}
	t.from = at - (at-t.from)*ns/max(t.span, 1)
	t.span = ns
	t.follow, t.auto, t.fit = false, false, false
}

func (t *Timeline) pan(cells int) {
	t.from += t.perCell() * int64(cells)
	t.follow, t.auto, t.fit = false, false, false
}

// ZoomTo shows [from, to) ns.
func (t *Timeline) ZoomTo(from, to int64) {
	if to <= from {
		return
	}
	t.from, t.span = from, max(to-from, int64(t.gridW()))
	t.follow, t.auto, t.fit = false, false, false
}

// laneOps returns the indices of the ops on lane l (in start order).
func (t *Timeline) laneOps(l int) []int {
	var out []int
	for i := range t.tl.Ops {
		if int(t.tl.Ops[i].Lane) == l {
			out = append(out, i)
		}
	}
	return out
}

// step selects the previous (d<0) or next op on the selected lane and
// brings it into view.
func (t *Timeline) step(d int) {
	if t.tl == nil || len(t.tl.Lanes) == 0 {
		return
	}
	ops := t.laneOps(t.lane)
	if len(ops) == 0 {
		return
	}
	j := -1
	if s := t.Selected(); s != nil && int(s.Lane) == t.lane {
		j = slices.Index(ops, t.sel)
	}
	switch {
	case j < 0 && d > 0: // first op starting in view
		j = len(ops) - 1
		for k, i := range ops {
			if t.tl.Ops[i].StartNs >= t.from {
				j = k
				break
			}
		}
	case j < 0:
		j = 0
		for k, i := range ops {
			if t.tl.Ops[i].StartNs < t.from+t.span {
				j = k
			}
		}
	default:
		j = min(max(j+d, 0), len(ops)-1)
	}
	t.selectOp(ops[j])
	o := &t.tl.Ops[t.sel]
	if o.StartNs < t.from || o.EndNs() > t.from+t.span {
		t.from = o.StartNs - t.span/4
		t.follow, t.auto, t.fit = false, false, false
	}
}

func (t *Timeline) selectOp(i int) {
	t.sel = i
	if i >= 0 {
		t.selKey = t.tl.Ops[i]
		t.lane = int(t.selKey.Lane)
	} else {
		t.selKey = attrib.TimelineOp{}
	}
}

// Update handles keys and mouse messages (coordinates relative to the
// view's top-left cell).
func (t *Timeline) Update(msg tea.Msg) tea.Cmd {
	if t.tl == nil {
		return nil
	}
	k := t.keys
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.ZoomIn):
			t.zoom(0.5, t.focusCol())
		case key.Matches(msg, k.ZoomOut):
			t.zoom(2, t.focusCol())
		case key.Matches(msg, k.Fit):
			t.FitAll()
		case key.Matches(msg, k.Left):
			t.pan(-t.gridW() / 4)
		case key.Matches(msg, k.Right):
			t.pan(t.gridW() / 4)
		case key.Matches(msg, k.LaneUp):
			t.lane = max(t.lane-1, 0)
		case key.Matches(msg, k.LaneDown):
			t.lane = min(t.lane+1, max(len(t.tl.Lanes)-1, 0))
		case key.Matches(msg, k.PrevOp):
			t.step(-1)
		case key.Matches(msg, k.NextOp):
			t.step(1)
		case key.Matches(msg, k.Follow):
			t.follow = !t.follow
			t.fit = false
			if t.follow {
				t.from = t.tl.EndNs - t.span
			}
		}
	case tea.MouseWheelMsg:
		x := msg.X - timelineLabelW - 1
		switch msg.Button {
		case tea.MouseWheelUp:
			t.zoom(0.5, max(x, 0))
		case tea.MouseWheelDown:
			t.zoom(2, max(x, 0))
		case tea.MouseWheelLeft:
			t.pan(-t.gridW() / 8)
		case tea.MouseWheelRight:
			t.pan(t.gridW() / 8)
		}
	case tea.MouseClickMsg:
		if msg.Button == tea.MouseLeft && msg.X > timelineLabelW {
			t.dragX, t.dragTo = msg.X-timelineLabelW-1, msg.X-timelineLabelW-1
		}
	case tea.MouseMotionMsg:
		if t.dragX >= 0 {
			t.dragTo = max(msg.X-timelineLabelW-1, 0)
		}
	case tea.MouseReleaseMsg:
		if t.dragX < 0 {
			break
		}
		x0, x1 := t.dragX, max(msg.X-timelineLabelW-1, 0)
		t.dragX = -1
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		if x1-x0 >= 2 { // a drag: zoom to the columns dragged over
			pc := t.perCell()
			t.ZoomTo(t.from+int64(x0)*pc, t.from+int64(x1+1)*pc)
			break
		}
		t.clickAt(x0, msg.Y)
	}
	return nil
}

// focusCol is the grid column zoom keys zoom around: the selected op
// when it is in view, else the middle.
func (t *Timeline) focusCol() int {
	if o := t.Selected(); o != nil && o.StartNs >= t.from && o.StartNs < t.from+t.span {
		return int((o.StartNs - t.from) / t.perCell())
	}
	return t.gridW() / 2
}

// clickAt selects the op under grid column x on the lane drawn at row y.
func (t *Timeline) clickAt(x, y int) {
	lay := t.layout()
	l := y - lay.firstLane
	if l < 0 || l >= lay.lanes {
		return
	}
	l += lay.laneOff
	t.lane = l
	pc := t.perCell()
	c0, c1 := t.from+int64(x)*pc, t.from+int64(x+1)*pc
	best, bestOv := -1, int64(0)
	for _, i := range t.laneOps(l) {
		o := &t.tl.Ops[i]
		ov := min(o.EndNs(), c1) - max(o.StartNs, c0)
		if o.DurNs == 0 && o.StartNs >= c0 && o.StartNs < c1 {
			ov = 1
		}
		if ov > bestOv {
			best, bestOv = i, ov
		}
	}
	t.selectOp(best)
}

// tlLayout is where the rows go.
type tlLayout struct {
	cpuRows   int // CPU range depths shown
	launch    bool
	firstLane int // row of the first GPU lane
	lanes     int // GPU lanes shown
	laneOff   int // first GPU lane shown
	detail    int // detail lines at the bottom
	legend    int // legend lines
}

func (t *Timeline) layout() tlLayout {
	var lay tlLayout
	depth := 0
	for _, s := range t.tl.CPU {
		if s.StartNs+s.DurNs < t.from || s.StartNs >= t.from+t.span || !t.ofShown(s.Source) {
			continue // rows only for what is in view
		}
		if s.Kind == tracer.KindRange {
			depth = max(depth, s.Depth+1)
		} else {
			lay.launch = true
		}
	}
	lay.cpuRows = min(depth, 2)
	lay.detail = 3
	if t.h < 12 {
		lay.detail = 1
	}
	lay.legend = min(len(t.legendLines()), 2)
	if t.h < 12 {
		lay.legend = 1
	}
	rows := t.h - 2 /*axis, steps*/ - lay.legend - lay.detail - t.memRows()
	// CPU rows give way to GPU lanes on short screens.
	need := len(t.tl.Lanes)
	if lay.launch && rows-lay.cpuRows-1 >= min(need, 2) {
		rows--
	} else {
		lay.launch = false
	}
	for lay.cpuRows > 0 && rows-lay.cpuRows < min(need, 2) {
		lay.cpuRows--
	}
	rows -= lay.cpuRows
	lay.firstLane = 2 + lay.cpuRows
	if lay.launch {
		lay.firstLane++
	}
	lay.lanes = max(min(need, rows), 0)
	if lay.lanes > 0 && t.lane >= lay.lanes {
		lay.laneOff = t.lane - lay.lanes + 1
	}
	return lay
}

// Letter returns the letter drawn for category cat on this timeline: the
// first letter of its name not taken by a category with more GPU time,
// else a digit.
func (t *Timeline) Letter(cat string) rune {
	if t.letters == nil {
		t.assignLetters()
	}
	return t.letters[cat]
}

// categoryLetters are the built-in categories' letters (tracer/attrib's
// rules.toml), the same in every trace so that a letter read once keeps
// its meaning: the first letter where it is free, else a letter of the
// name, else one left over. A category of the user's rules takes the
// first letter of its name no other category holds.
var categoryLetters = map[string]rune{
	"attention": 'a', "collective": 'c', "conv": 'v', "copy": 'o', "elementwise": 'e', "embedding": 'b',
	"env": 'i', "gemm": 'g', "kv-cache": 'k', "loss": 'l', "memcpy": 'm', "memset": 't', "norm": 'n',
	"optimizer": 'p', "other": 'x', "pool": 'u', "qkv": 'q', "reduce": 'r', "rope": 'w', "sample": 's',
	"scan": 'd', "softmax": 'f', "sort": 'z', "sync": 'y',
}

func (t *Timeline) assignLetters() {
	tot := map[string]int64{}
	// Neighbouring ops mostly share a category: their time is summed
	// before it goes into the map.
	cat, ns := "", int64(0)
	for i := range t.tl.Ops {
		o := &t.tl.Ops[i]
		if i > 0 && o.Category != cat {
			tot[cat] += ns
			ns = 0
		}
		cat = o.Category
		ns += o.DurNs
	}
	if len(t.tl.Ops) > 0 {
		tot[cat] += ns
	}
	cats := make([]string, 0, len(tot))
	for c := range tot {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int {
		if c := cmp.Compare(tot[b], tot[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	t.letters = map[string]rune{}
	used := map[rune]bool{}
	for _, c := range cats {
		if r, ok := categoryLetters[c]; ok {
			t.letters[c] = r
			used[r] = true
		}
	}
	for i, c := range cats {
		if _, ok := t.letters[c]; ok {
			continue
		}
		var r rune
		for _, ch := range strings.ToLower(c) {
			if ch >= 'a' && ch <= 'z' && !used[ch] {
				r = ch
				break
			}
		}
		if r == 0 {
			r = rune('0' + i%10)
		}
		used[r] = true
		t.letters[c] = r
	}
}

// catStyle is the colour of category c: one of the theme's colours picked
// by a hash of the name, so a category keeps its colour across screens.
func (t *Timeline) catStyle(c string) lipgloss.Style {
	p := t.st.Timeline.Cats
	if len(p) == 0 {
		return lipgloss.NewStyle()
	}
	h := fnv.New32a()
	h.Write([]byte(c))
	return p[int(h.Sum32()%uint32(len(p)))]
}

// paint is catStyle(cat).Render(s) for s of one line without escapes,
// from the style's escape sequences rendered once per category (a lane
// row has a block per op: rendering each costs more than the rest of the
// row).
func (t *Timeline) paint(cat, s string) string {
	p, ok := t.paints[cat]
	if !ok {
		r := t.catStyle(cat).Render("x")
		i := strings.IndexByte(r, 'x')
		p = [2]string{r[:i], r[i+1:]}
		if t.paints == nil {
			t.paints = map[string][2]string{}
		}
		t.paints[cat] = p
	}
	return p[0] + s + p[1]
}

func (t *Timeline) View() string {
	st := t.st
	if t.tl == nil || !t.Available() {
		return block([]string{st.Table.Dim.Render("no GPU work to draw yet")}, t.w, t.h)
	}
	lay := t.layout()
	gw := t.gridW()
	pc := t.perCell()
	label := func(s string) string { return st.Detail.Label.Render(fit(s, timelineLabelW)) + " " }
	var lines []string
	lines = append(lines, label("")+t.axis(gw, pc))
	rowsOf := "" // several sources: the step and CPU rows are the cursor lane's source's
	if src := t.shownSource(); src >= 0 && int(src) < len(t.tl.Sources) {
		rowsOf = " " + t.tl.Sources[src]
	}
	lines = append(lines, label("steps"+rowsOf)+t.stepRow(gw, pc))
	for d := 0; d < lay.cpuRows; d++ {
		name := "CPU" + rowsOf
		if d > 0 {
			name = "  ranges"
		}
		lines = append(lines, label(name)+t.cpuRow(d, lay.cpuRows, gw, pc))
	}
	if lay.launch {
		lines = append(lines, label("launch")+t.launchRow(gw, pc))
	}
	for i := 0; i < lay.lanes; i++ {
		l := lay.laneOff + i
		ln := t.tl.Lanes[l]
		name := t.laneName(ln)
		lb := label(name)
		if l == t.lane && t.focused {
			lb = st.Table.Selected.Render(fit("›"+name, timelineLabelW)) + " "
		}
		lines = append(lines, lb+t.laneRow(l, gw, pc))
	}
	if (t.note != "" || len(t.tl.Ops) == 0) && !t.opsInView() {
		// The lanes are blank: say why (a live Python run
		// showed step markers and nothing else). A file zoomed between
		// ops has the detail line's hint instead.
		msg := "no operators in this view"
		if t.note != "" {
			msg += ": " + t.note
		}
		n := len(lines)
		for i, l := range WrapLines(msg, gw) {
			row := label("") + st.Table.Dim.Render(l)
			if i < lay.lanes {
				lines[n-lay.lanes+i] = row
			} else {
				lines = append(lines, row)
			}
		}
	}
	if more := len(t.tl.Lanes) - lay.lanes; more > 0 {
		// The last lane row says how many lanes did not fit.
		if n := len(lines); lay.lanes > 0 {
			lines[n-1] = ansi.Truncate(lines[n-1], t.w-14, "") + st.Table.Dim.Render(fmt.Sprintf(" +%d lanes ↓", more))
		}
	}
	if t.memRows() > 0 {
		lines = append(lines, label("memory")+t.memRow(gw, pc))
	}
	leg := t.legendLines()
	if len(leg) > lay.legend {
		leg = leg[:lay.legend]
		last := ansi.Truncate(leg[len(leg)-1], t.w-1, "")
		if i := strings.LastIndex(last, "  "); i > 0 {
			last = last[:i]
		}
		leg[len(leg)-1] = last + "…"
	}
	lines = append(lines, leg...)
	for len(lines) < t.h-lay.detail {
		lines = append(lines, "")
	}
	lines = append(lines, t.detail(lay.detail)...)
	return block(lines, t.w, t.h)
}

// axis labels the grid with ticks at round times (1, 2 or 5 × 10^k ns
// from the origin), each written with the digits its tick spacing needs
// ("34.25 s ┊34.30 s", never "34.2 s ┊34.2 s"), as close
// together as their labels allow. A ┊ stands in the cell that holds its
// tick's time. Zoomed so far from the origin that a label would need
// more than timelineAbsMax characters, the first column says where the
// view starts (three digits) and the ticks are round offsets from there
// ("┊60.4 s ┊+10.0 µs ┊+20.0 µs"); so is a view whose absolute labels
// would repeat (a live run an hour in: "┊1 h 13 m ┊+50 ms ┊+100 ms").
func (t *Timeline) axis(gw int, pc int64) string {
	row := []rune(strings.Repeat(" ", gw))
	put := func(c int, s string) {
		for i, r := range []rune(s) {
			if c+i < gw {
				row[c+i] = r
			}
		}
	}
	for _, tk := range axisTicks(t.from-t.origin, pc, gw) {
		put(tk.col, "┊"+tk.label)
	}
	return t.st.Table.Dim.Render(string(row))
}

// timelineAbsMax is the widest absolute axis label (without ┊) before the
// axis switches to offsets from the view's start.
const timelineAbsMax = 9

// axisTick is one labelled column of the time axis.
type axisTick struct {
	col   int
	label string
}

// axisTicks places the labels of a grid gw cells wide whose column 0
// starts from ns after the origin, pc ns a cell: the smallest round
// spacing whose labels leave at least two blank cells between them (and
// ticks at least timelineTickMin cells apart), labels never cut at the
// right edge.
func axisTicks(from, pc int64, gw int) []axisTick {
	span := pc * int64(gw)
	for d := int64(1); d > 0 && d <= 4*span; d = nextRound(d) {
		if d < pc*timelineTickMin {
			continue
		}
		if ts, ok := ticksAt(from, pc, gw, d, false); ok {
			if tooWide(ts) {
				break
			}
			return ts
		}
	}
	// Relative: the start, then round offsets from it.
	for d := int64(1); d > 0 && d <= 4*span; d = nextRound(d) {
		if d < pc*timelineTickMin {
			continue
		}
		if ts, ok := ticksAt(from, pc, gw, d, true); ok {
			return ts
		}
	}
	return []axisTick{{0, FormatNs(from)}}
}

// timelineTickMin is the fewest cells between two ticks.
const timelineTickMin = 12

// tooWide reports whether an absolute label would be longer than
// timelineAbsMax.
func tooWide(ts []axisTick) bool {
	for _, tk := range ts {
		if ansi.StringWidth(tk.label) > timelineAbsMax {
			return true
		}
	}
	return false
}

// ticksAt lays out ticks every d ns: at multiples of d from the origin,
// or (rel) column 0 labelled with the start and then from + k·d labelled
// "+k·d". ok is false when two labels would come closer than two cells
// or no tick fits.
func ticksAt(from, pc int64, gw int, d int64, rel bool) ([]axisTick, bool) {
	var ts []axisTick
	first := ceilDiv(from, d) * d
	if rel {
		ts = append(ts, axisTick{0, FormatNs(from)})
		first = from + d
	}
	end := from + pc*int64(gw)
	for v := first; v < end; v += d {
		c := int(floorDiv(v-from, pc))
		var s string
		if rel {
			s = "+" + tickLabel(v-from, d)
		} else {
			s = tickLabel(v, d)
		}
		if c+1+ansi.StringWidth(s) > gw {
			break // no label cut short
		}
		if n := len(ts); n > 0 && ts[n-1].col+1+ansi.StringWidth(ts[n-1].label)+2 > c {
			return nil, false
		}
		if _, long := units.LongDuration(v); long && !rel {
			// From 999.5 s on a time is printed to the minute or
			// second ("1 h 13 m"): such a label does not name its
			// tick, and ticks closer than that would all read the
			// same, so offsets from the view's start are used.
			return nil, false
		}
		ts = append(ts, axisTick{c, s})
	}
	return ts, len(ts) > 1 || (len(ts) == 1 && !rel)
}

// nextRound is the round spacing after d: 1, 2, 5, 10, 20, 50, …
func nextRound(d int64) int64 {
	m := d
	for m >= 10 && m%10 == 0 {
		m /= 10
	}
	if m == 2 {
		return d / 2 * 5
	}
	return d * 2
}

// tickLabel formats v ns like FormatNs, with more decimals when the
// tick spacing d ns needs them to tell neighbours apart (v 34.25 s, d
// 50 ms: "34.25 s" where FormatNs says "34.3 s").
func tickLabel(v, d int64) string {
	s := FormatNs(v)
	// FormatNs's unit for |v| (units.Duration's thresholds).
	var unit int64
	switch a := max(v, -v); {
	case a < 999_500:
		return s // whole ns
	case a < 999_500_000:
		unit = 1_000
		if a >= 999_500 {
			unit = 1_000_000
		}
	case a < 999_500_000_000:
		unit = 1_000_000_000
	default:
		return s // minutes and more: round already
	}
	dec := 0
	for u := unit; u > 1 && d%u != 0; u /= 10 {
		dec++
	}
	num, name, _ := strings.Cut(s, " ")
	if i := strings.IndexByte(num, '.'); i >= 0 && len(num)-i-1 >= dec || i < 0 && dec == 0 {
		return s
	}
	return strconv.FormatFloat(float64(v)/float64(unit), 'f', dec, 64) + " " + name
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// stepRow marks step starts │ with the step number, and flag switches ▲.
func (t *Timeline) stepRow(gw int, pc int64) string {
	row := []rune(strings.Repeat(" ", gw))
	put := func(c int, s string) {
		for i, r := range []rune(s) {
			if c+i >= 0 && c+i < gw {
				row[c+i] = r
			}
		}
	}
	// A step's number is written only when it fits before the next
	// boundary, so crowded steps show their boundaries, never digits
	// run together ("│2││3│31").
	type bound struct {
		c     int
		label string
	}
	var bs []bound
	for _, s := range t.tl.Steps {
		if s.StartNs+s.DurNs < t.from || s.StartNs >= t.from+t.span || !t.ofShown(s.Source) {
			continue
		}
		if s.StartNs < t.from {
			bs = append(bs, bound{0, fmt.Sprintf("…%d", s.Step)})
			continue
		}
		bs = append(bs, bound{int((s.StartNs - t.from) / pc), fmt.Sprintf("│%d", s.Step)})
	}
	slices.SortStableFunc(bs, func(a, b bound) int { return a.c - b.c })
	for i, b := range bs {
		next := gw
		if i+1 < len(bs) {
			next = bs[i+1].c
		}
		if b.c+len([]rune(b.label)) <= next {
			put(b.c, b.label)
		} else {
			put(b.c, string([]rune(b.label)[0]))
		}
	}
	type mk struct {
		c     int
		label string
	}
	var marks []mk
	for _, m := range t.marks {
		if m.AtNs >= t.from && m.AtNs < t.from+t.span {
			marks = append(marks, mk{int((m.AtNs - t.from) / pc), m.Label})
		}
	}
	slices.SortStableFunc(marks, func(a, b mk) int { return a.c - b.c })
	isMark := make([]bool, gw)
	for _, m := range marks {
		// A mark goes to the first free cell at or after its time, so a
		// step number there stays readable.
		c := m.c
		for c < gw && row[c] != ' ' {
			c++
		}
		s := []rune("▲" + m.label)
		put(c, string(s))
		for i := range s {
			if c+i < gw {
				isMark[c+i] = true
			}
		}
	}
	var out strings.Builder
	for i, r := range row {
		if isMark[i] {
			out.WriteString(t.st.Live.Mark.Render(string(r)))
		} else {
			out.WriteRune(r)
		}
	}
	return out.String()
}

// spanRow draws intervals (start, dur, name) into gw cells: each cell
// shows the interval covering most of it; an interval wide enough shows
// its name, others fill with fill (or, when fill is 0, the name's
// letters are not shown and '▬' fills).
func spanRow(gw int, from, pc int64, n int, get func(i int) (s, d int64, name string)) []string {
	cells := make([]string, gw)
	cov := make([]int64, gw)
	who := make([]int, gw)
	for i := range who {
		who[i] = -1
	}
	for i := 0; i < n; i++ {
		s, d, _ := get(i)
		e := s + d
		if e < from || s >= from+pc*int64(gw) {
			continue
		}
		c0 := int(max(s-from, 0) / pc)
		c1 := int(min(max(e-1, s)-from, pc*int64(gw)-1) / pc)
		for c := c0; c <= c1 && c < gw; c++ {
			cs, ce := from+int64(c)*pc, from+int64(c+1)*pc
			ov := min(e, ce) - max(s, cs)
			if d == 0 {
				ov = 1
			}
			if ov > cov[c] {
				cov[c], who[c] = ov, i
			}
		}
	}
	for c := 0; c < gw; c++ {
		if who[c] < 0 {
			cells[c] = " "
			continue
		}
		cells[c] = "▬"
	}
	// Names inside runs of one interval.
	for c := 0; c < gw; {
		i := who[c]
		e := c
		for e < gw && who[e] == i {
			e++
		}
		if i >= 0 && e-c >= 4 {
			_, _, name := get(i)
			r := []rune(ansi.Truncate(name, e-c-2, "…"))
			cells[c] = "▕"
			for k, ch := range r {
				cells[c+1+k] = string(ch)
			}
		}
		c = e
	}
	return cells
}

// cpuRow draws the CPU ranges at depth d (the last row shown takes every
// deeper range too).
func (t *Timeline) cpuRow(d, rows, gw int, pc int64) string {
	var sp []attrib.TimelineSpan
	for _, s := range t.tl.CPU {
		if s.Kind == tracer.KindRange && (s.Depth == d || (d == rows-1 && s.Depth > d)) && t.ofShown(s.Source) {
			sp = append(sp, s)
		}
	}
	cells := spanRow(gw, t.from, pc, len(sp), func(i int) (int64, int64, string) {
		return sp[i].StartNs, sp[i].DurNs, sp[i].Name
	})
	return t.st.Detail.Value.Render(strings.Join(cells, ""))
}

// launchRow marks launch calls │.
func (t *Timeline) launchRow(gw int, pc int64) string {
	row := []rune(strings.Repeat(" ", gw))
	for _, s := range t.tl.CPU {
		if s.Kind == tracer.KindRange || s.StartNs+s.DurNs < t.from || s.StartNs >= t.from+t.span || !t.ofShown(s.Source) {
			continue
		}
		c := int(max(s.StartNs-t.from, 0) / pc)
		if c < gw {
			row[c] = '╵'
		}
	}
	return t.st.Table.Dim.Render(string(row))
}

// laneRow draws GPU lane l.
func (t *Timeline) laneRow(l, gw int, pc int64) string {
	ops := t.tl.Ops
	cov := make([]int64, gw) // summed busy ns per cell
	best := make([]int64, gw)
	who := make([]int, gw)
	for i := range who {
		who[i] = -1
	}
	end := t.from + pc*int64(gw)
	for i := t.opsFrom(t.from); i < len(ops); i++ {
		o := &ops[i]
		if int(o.Lane) != l {
			continue
		}
		if o.StartNs >= end {
			break
		}
		if o.EndNs() < t.from {
			continue
		}
		c0 := int(max(o.StartNs-t.from, 0) / pc)
		c1 := int(min(max(o.EndNs()-1, o.StartNs)-t.from, pc*int64(gw)-1) / pc)
		for c := c0; c <= c1 && c < gw; c++ {
			cs, ce := t.from+int64(c)*pc, t.from+int64(c+1)*pc
			ov := min(o.EndNs(), ce) - max(o.StartNs, cs)
			if ov <= 0 {
				ov = 1 // zero-length or sub-ns: still visible
			}
			cov[c] += ov
			if ov > best[c] {
				best[c], who[c] = ov, i
			}
		}
	}
	var b strings.Builder
	for c := 0; c < gw; {
		i := who[c]
		if i < 0 {
			b.WriteByte(' ')
			c++
			continue
		}
		// A run of cells of one op: its name when it fits, else letters.
		e := c
		for e < gw && who[e] == i {
			e++
		}
		o := &ops[i]
		letter := t.Letter(o.Category)
		var seg []rune
		if e-c >= 6 {
			name := ansi.Truncate(o.Display, e-c-1, "…")
			seg = append([]rune{unicode(letter, true)}, []rune(name)...)
		}
		nameEnd := len(seg)
		for k := c; k < e; k++ {
			if k-c < len(seg) {
				continue
			}
			seg = append(seg, unicode(letter, cov[k]*2 >= pc))
		}
		if len(seg) > e-c {
			seg = seg[:e-c]
		}
		s := t.paint(o.Category, string(seg))
		if i == t.sel {
			// The selected block shows without colour too: ▓ for its letters.
			for k := range seg {
				if (k == 0 || k >= nameEnd) && (seg[k] == letter || seg[k] == unicode(letter, true)) {
					seg[k] = '▓'
				}
			}
			s = t.st.Timeline.Selected.Render(string(seg))
		}
		b.WriteString(s)
		c = e
	}
	return b.String()
}

func unicode(r rune, upper bool) rune {
	if upper && r >= 'a' && r <= 'z' {
		return r - 'a' + 'A'
	}
	return r
}

// legendLines maps letters to categories (by name), packed into lines of
// the view's width without cutting an entry.
func (t *Timeline) legendLines() []string {
	if t.letters == nil {
		t.assignLetters()
	}
	type lc struct {
		r rune
		c string
	}
	var ls []lc
	for c, r := range t.letters {
		ls = append(ls, lc{r, c})
	}
	slices.SortFunc(ls, func(a, b lc) int { return strings.Compare(a.c, b.c) })
	var parts []string
	for _, x := range ls {
		parts = append(parts, t.catStyle(x.c).Render(string(unicode(x.r, true)))+" "+x.c)
	}
	if t.tl.Dropped > 0 {
		parts = append(parts, t.st.Table.Dim.Render(fmt.Sprintf("(%s earlier ops not kept)", FormatCount(int64(t.tl.Dropped)))))
	}
	lines := pack(parts, "  ", max(t.w-2, 10))
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return lines
}

// opsFrom is the index of the first op that can reach from or later:
// ops are sorted by start, and none starts more than the longest op's
// duration before from and reaches it.
func (t *Timeline) opsFrom(from int64) int {
	ops := t.tl.Ops
	if t.maxDur < 0 {
		t.maxDur = 0
		for i := range ops {
			t.maxDur = max(t.maxDur, ops[i].DurNs)
		}
	}
	i, _ := slices.BinarySearchFunc(ops, from-t.maxDur, func(o attrib.TimelineOp, s int64) int { return cmp.Compare(o.StartNs, s) })
	return i
}

// opsInView reports whether any op overlaps the visible range.
func (t *Timeline) opsInView() bool {
	for i := t.opsFrom(t.from); i < len(t.tl.Ops); i++ {
		o := &t.tl.Ops[i]
		if o.StartNs >= t.from+t.span {
			break
		}
		if o.EndNs() >= t.from {
			return true
		}
	}
	return false
}

// detail describes the selected op.
func (t *Timeline) detail(n int) []string {
	st := t.st
	o := t.Selected()
	lab := func(s string) string { return st.Detail.Label.Render(s) }
	gone := ""
	if o == nil && t.selKey.Name != "" && int(t.selKey.Lane) < len(t.tl.Lanes) {
		// The selected op left a live window: keep describing it.
		o, gone = &t.selKey, st.Table.Dim.Render("  (no longer in the live window)")
	}
	if o == nil {
		hint := "[ ] or a click selects a block; +/- or the wheel zooms; drag zooms to a range"
		if !t.opsInView() && len(t.tl.Ops) > 0 {
			hint = "no ops in this range: 0 fits the ops, f follows the newest"
		}
		out := []string{st.Table.Dim.Render(fitLeftCut(hint, t.w))}
		if len(t.tl.Ops) > 0 {
			// The legend names the letters; what their case means is said here.
			out = append(out, st.Table.Dim.Render(fitLeftCut("letters: the category busiest in each cell; lower case: under half of it busy", t.w)))
		}
		return out[:min(n, len(out))]
	}
	stage := o.Stage
	if stage == "" {
		stage = "(none)"
	}
	step := "–"
	if o.Step >= 0 {
		step = fmt.Sprint(o.Step)
	}
	ln := t.tl.Lanes[o.Lane]
	facts := lab("category ") + o.Category + lab("  stage ") + stage + lab("  step ") + step +
		lab("  dur ") + FormatNs(o.DurNs) + lab("  at +") + FormatNs(o.StartNs-t.origin) +
		lab("  "+t.laneName(ln))
	out := []string{lab("kernel ") + st.Detail.Name.Render(ansi.Truncate(o.Name, max(t.w-7-ansi.StringWidth(gone), 1), "…")) + gone}
	if n >= 2 {
		out = append(out, facts)
	}
	if n >= 3 {
		ctx := strings.Join(append(append([]string{}, o.Ops...), o.Ranges...), " › ")
		if ctx == "" {
			ctx = "(no operator or range recorded)"
		}
		out = append(out, lab("launch ")+st.Detail.Value.Render(fitLeftCut(ctx, t.w-7)))
	}
	return out
}
