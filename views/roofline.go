package views

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// RooflineKeyMap is the roofline view's bindings.
type RooflineKeyMap struct {
	ListKeyMap
	Kernels key.Binding // k: marks per kernel instead of per category
}

// DefaultRooflineKeyMap: list movement over the legend by the arrows
// (k is taken: it toggles kernels, so j/k do not move here).
func DefaultRooflineKeyMap() RooflineKeyMap {
	lm := DefaultListKeyMap()
	lm.Up = key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "up"))
	lm.Down = key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "down"))
	return RooflineKeyMap{lm, key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "kernels/categories"))}
}

// Roofline is the roofline chart of a snapshot's modelled work
// (Snapshot.Work, attrib.RatesOf): log-log, arithmetic intensity (FLOPs
// per byte) across, achieved FLOP/s up, one mark per category (k: per
// kernel, the largest by time) lettered as in the legend below it, and
// the device's roof (Snapshot.Peak): bandwidth × intensity up to the
// ridge point, the compute peak after it. Without a peak the marks are
// drawn with no roof and the legend says why. Only shown for sources
// that carry work (Available).
type Roofline struct {
	st      *Styles
	keys    RooflineKeyMap
	snap    *attrib.Snapshot
	kernels bool
	marks   []rmark
	list    list
	w, h    int
	focused bool
}

type rmark struct {
	label string
	rate  attrib.Rates
	ns    int64
}

// NewRoofline returns an empty roofline view.
func NewRoofline(st *Styles) *Roofline { return &Roofline{st: st, keys: DefaultRooflineKeyMap()} }

func (r *Roofline) Title() string { return "Roofline" }

func (r *Roofline) Info() string {
	if r.snap == nil || r.snap.Peak == nil {
		return "no device peak"
	}
	what := "categories"
	if r.kernels {
		what = "kernels"
	}
	return fmt.Sprintf("%s · %s", what, r.snap.Peak.Device)
}

// Available: only sources that carry modelled work.
func (r *Roofline) Available() bool { return r.snap != nil && r.snap.HasWork() }

// Marks returns the marks' labels in legend order.
func (r *Roofline) Marks() []string {
	out := make([]string, len(r.marks))
	for i, m := range r.marks {
		out[i] = m.label
	}
	return out
}

func (r *Roofline) SetSnapshot(s *attrib.Snapshot) {
	r.snap = s
	r.build()
}

func (r *Roofline) build() {
	r.marks = r.marks[:0]
	s := r.snap
	if s == nil {
		r.list.setLen(0)
		return
	}
	add := func(label string, w attrib.Work) {
		if w.Ns > 0 && w.Flops > 0 && w.Bytes > 0 {
			r.marks = append(r.marks, rmark{label, attrib.RatesOf(w, s.Peak), w.Ns})
		}
	}
	if r.kernels {
		for _, k := range s.Kernels {
			add(k.DisplayName, k.Work)
		}
		slices.SortStableFunc(r.marks, func(a, b rmark) int { return int(min(max(b.ns-a.ns, -1), 1)) })
		r.marks = r.marks[:min(len(r.marks), 26)]
	} else {
		for _, g := range s.Categories {
			add(g.Key, g.Work)
		}
	}
	r.list.setLen(len(r.marks))
}

func (r *Roofline) SetSize(w, h int)  { r.w, r.h = w, h; r.list.setPage(max(h/3, 1)) }
func (r *Roofline) SetFocused(f bool) { r.focused = f }
func (r *Roofline) Capturing() bool   { return false }
func (r *Roofline) ShortHelp() []key.Binding {
	return []key.Binding{r.keys.move(), r.keys.Kernels}
}
func (r *Roofline) FullHelp() [][]key.Binding {
	return [][]key.Binding{r.keys.bindings(), {r.keys.Kernels}}
}

func (r *Roofline) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		if key.Matches(km, r.keys.Kernels) {
			r.kernels = !r.kernels
			r.build()
			return nil
		}
		r.list.handle(km, r.keys.ListKeyMap)
	}
	return nil
}

// markLetter names mark i on the chart.
func markLetter(i int) byte { return "abcdefghijklmnopqrstuvwxyz"[i%26] }

func (r *Roofline) View() string {
	st := r.st
	s := r.snap
	if s == nil {
		return block([]string{st.Table.Dim.Render("waiting for data…")}, r.w, r.h)
	}
	if len(r.marks) == 0 {
		return block([]string{st.Table.Dim.Render("no modelled work: the source recorded no shapes (torch.profiler record_shapes=True gives them)")}, r.w, r.h)
	}
	// The legend: the selected mark and its neighbours, one line each.
	legendH := min(len(r.marks), max(r.h/3, 1))
	r.list.setPage(legendH)
	chartH := r.h - legendH - 2 // x-axis line and a note
	if chartH < 4 {
		chartH, legendH = max(r.h-2, 1), 0
	}
	const yw = 8 // y-axis labels
	cw := max(r.w-yw-1, 10)
	// Ranges, in decades, covering the marks and the roof's ridge.
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, m := range r.marks {
		xlo, xhi = min(xlo, m.rate.Intensity), max(xhi, m.rate.Intensity)
		ylo, yhi = min(ylo, m.rate.FlopsPerS), max(yhi, m.rate.FlopsPerS)
	}
	p := s.Peak
	dt := s.Work.DType()
	if p != nil {
		ridge := p.Ridge(dt)
		xlo, xhi = min(xlo, ridge/10), max(xhi, ridge*10)
		yhi = max(yhi, p.FlopsFor(dt))
	}
	lx0, lx1 := math.Floor(math.Log10(xlo)), math.Ceil(math.Log10(xhi))
	ly0, ly1 := math.Floor(math.Log10(ylo)), math.Ceil(math.Log10(yhi)+0.1)
	if lx1 <= lx0 {
		lx1 = lx0 + 1
	}
	if ly1 <= ly0 {
		ly1 = ly0 + 1
	}
	col := func(x float64) int {
		return int(math.Round((math.Log10(x) - lx0) / (lx1 - lx0) * float64(cw-1)))
	}
	row := func(y float64) int { // 0 = top
		return chartH - 1 - int(math.Round((math.Log10(y)-ly0)/(ly1-ly0)*float64(chartH-1)))
	}
	grid := make([][]byte, chartH)
	for i := range grid {
		grid[i] = []byte(strings.Repeat(" ", cw))
	}
	if p != nil {
		for c := 0; c < cw; c++ {
			x := math.Pow(10, lx0+(lx1-lx0)*float64(c)/float64(cw-1))
			roof := min(p.FlopsFor(dt), p.BytesPerS*x)
			if y := row(roof); y >= 0 && y < chartH {
				ch := byte('_')
				if roof < p.FlopsFor(dt) {
					ch = '/'
				}
				grid[y][c] = ch
			}
		}
	}
	for i, m := range r.marks {
		c, y := col(m.rate.Intensity), row(m.rate.FlopsPerS)
		if c >= 0 && c < cw && y >= 0 && y < chartH {
			grid[y][c] = markLetter(i)
		}
	}
	var lines []string
	for i, g := range grid {
		label := ""
		// A label at the top, the bottom and each decade's row.
		for d := ly0; d <= ly1; d++ {
			if row(math.Pow(10, d)) == i {
				label = units.SI(math.Pow(10, d), "")
			}
		}
		line := st.Table.Dim.Render(fitRight(label, yw)) + "│"
		for _, b := range string(g) {
			switch {
			case b >= 'a' && b <= 'z':
				line += st.Bar.Value.Render(string(b))
			case b == '/' || b == '_':
				line += st.Table.Dim.Render(string(b))
			default:
				line += string(b)
			}
		}
		lines = append(lines, line)
	}
	axis := strings.Repeat(" ", yw) + "└"
	xl := make([]byte, cw)
	for i := range xl {
		xl[i] = ' '
	}
	// A label that would run past the chart's edge ends at the edge; one
	// that would then touch the label before it is left out.
	end := -1
	for d := lx0; d <= lx1; d++ {
		t := decadeLabel(int(d))
		c := min(col(math.Pow(10, d)), cw-len(t))
		if c <= end || c < 0 {
			continue
		}
		copy(xl[c:], t)
		end = c + len(t)
	}
	lines = append(lines, axis+st.Table.Dim.Render(string(xl)))
	note := "FLOP/s against FLOP/B (log-log)"
	if p == nil {
		why := s.PeakNote
		if why == "" {
			why = "unknown device"
		}
		note += " · no roof: " + why
	} else {
		note += fmt.Sprintf(" · roof %s, %s (%s)", units.SI(p.BytesPerS, "B/s"), units.SI(p.FlopsFor(dt), "FLOP/s"), dtOr(dt.String()))
		if p.Measured {
			note += " measured"
			if s.PeakNote != "" {
				note += " · " + escape.Control(s.PeakNote)
			}
		}
	}
	lines = append(lines, st.Table.Dim.Render(fit(note, r.w)))
	if legendH > 0 {
		r.list.setLen(len(r.marks))
		from, to := r.list.visible()
		for i := from; i < to && i < from+legendH; i++ {
			m := r.marks[i]
			gut := " "
			if r.focused && i == r.list.cursor {
				gut = "›"
			}
			bound := "-"
			if m.rate.Bound != "" {
				bound = fmt.Sprintf("%s %s", m.rate.Bound, units.Share(m.rate.OfPeak))
			}
			line := fmt.Sprintf("%s%c %s %6s FLOP/B %12s %10s  %s", gut, markLetter(i), fit(escape.Control(m.label), max(min(30, r.w-60), 8)),
				units.Sig3(m.rate.Intensity), units.SI(m.rate.FlopsPerS, "FLOP/s"), units.SI(m.rate.BytesPerS, "B/s"), bound)
			lines = append(lines, line)
		}
	}
	return block(lines, r.w, r.h)
}

func dtOr(s string) string {
	if s == "" {
		return "fp32"
	}
	return s
}

// workCols is the width of workCells: " FLOP/s" (10) and " bound" (12).
const workCols = 1 + 9 + 1 + 11

// workCells are a row's achieved FLOP/s and roofline bound ("mem 38%",
// "comp 64%"; "-" without modelled work or a peak), workCols wide.
func workCells(w attrib.Work, p *attrib.Peak) string {
	if w.Ns <= 0 {
		return " " + fitRight("-", 9) + " " + fitRight("-", 11)
	}
	r := attrib.RatesOf(w, p)
	bound := "-"
	switch r.Bound {
	case attrib.BoundMemory:
		bound = "mem " + units.Share(r.OfPeak)
	case attrib.BoundCompute:
		bound = "comp " + units.Share(r.OfPeak)
	}
	return " " + fitRight(units.SI(r.FlopsPerS, "F/s"), 9) + " " + fitRight(bound, 11)
}

// decadeLabel names 10^d on a log axis exactly: "0.001", "0.1", "1",
// "100", "1k", "10M" (units.SI printed 10^-3 as "0.00", which a log axis
// cannot hold, and 10^3 as "1.00 k").
func decadeLabel(d int) string {
	if d < 0 {
		return strconv.FormatFloat(math.Pow10(d), 'f', -d, 64)
	}
	const prefixes = " kMGTPE"
	p := min(d/3, len(prefixes)-1)
	v := strconv.Itoa(int(math.Pow10(d - 3*p)))
	if p > 0 {
		v += string(prefixes[p])
	}
	return v
}
