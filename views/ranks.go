package views

import (
	"fmt"
	"slices"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Ranks is the per-source view: one row per rank (or file, for
// inputs without ranks) of Snapshot.Ranks with its kernel time, busy and
// idle time, communication exposed and overlapped with compute, step
// median, its wait for late arrivals in collectives and how often it
// arrived last; below, the selected source's detail, the late rank and
// the widest step spread. Every number is on the source's own clock.
type Ranks struct {
	st      *Styles
	keys    ListKeyMap
	snap    *attrib.Snapshot
	rows    []attrib.SourceRow
	mfu     map[int]attrib.StepWorkSummary // per source, with work and a peak (nil: no MFU column)
	list    list
	w, h    int
	focused bool
}

// NewRanks returns an empty ranks view.
func NewRanks(st *Styles) *Ranks { return &Ranks{st: st, keys: DefaultListKeyMap()} }

func (r *Ranks) Title() string { return "Ranks" }

func (r *Ranks) Info() string {
	if r.snap == nil || r.snap.Ranks == nil {
		return ""
	}
	what := "ranks"
	if !r.snap.Ranks.ByRank {
		what = "files"
	}
	return fmt.Sprintf("%d %s · each on its own clock", len(r.rows), what)
}

// Rows returns the sources shown, in rank order.
func (r *Ranks) Rows() []attrib.SourceRow { return r.rows }

// SetSnapshot shows s's sources; the cursor stays on the same index.
func (r *Ranks) SetSnapshot(s *attrib.Snapshot) {
	r.snap, r.rows, r.mfu = s, nil, nil
	if s != nil && s.Ranks != nil {
		r.rows = s.Ranks.Sources
		if s.HasWork() && s.HasStepPeak() {
			r.mfu = s.StepWorkBySource() // once per snapshot, not per frame
		}
	}
	r.list.setLen(len(r.rows))
}

func (r *Ranks) SetSize(w, h int) {
	r.w, r.h = w, h
	r.list.setPage(max(h-5, 1)) // View sets it from the wrapped detail lines
}
func (r *Ranks) SetFocused(f bool)        { r.focused = f }
func (r *Ranks) Capturing() bool          { return false }
func (r *Ranks) ShortHelp() []key.Binding { return []key.Binding{r.keys.move()} }
func (r *Ranks) FullHelp() [][]key.Binding {
	return [][]key.Binding{r.keys.bindings()}
}

// Update moves the cursor.
func (r *Ranks) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		r.list.handle(km, r.keys)
	}
	return nil
}

// Click selects the source at line y (line 0 is the column header).
func (r *Ranks) Click(x, y int) tea.Cmd {
	i := r.list.offset + y - 1
	if y < 1 || i >= len(r.rows) {
		return nil
	}
	r.list.cursor = i
	r.list.clamp()
	return nil
}

// rankCol is one column of the table: its title, width and cell.
type rankCol struct {
	title string
	w     int
	cell  func(*attrib.SourceRow) string
}

func (r *Ranks) label(s *attrib.SourceRow) string {
	if r.snap.Ranks.ByRank {
		return strconv.Itoa(s.Rank)
	}
	return escape.Control(s.Name)
}

func (r *Ranks) View() string {
	st := r.st
	if r.snap == nil {
		return block([]string{st.Table.Dim.Render("waiting for data…")}, r.w, r.h)
	}
	if len(r.rows) == 0 {
		return block([]string{st.Table.Dim.Render("no per-source numbers for this source")}, r.w, r.h)
	}
	ns := func(f func(*attrib.SourceRow) int64) func(*attrib.SourceRow) string {
		return func(s *attrib.SourceRow) string { return FormatNs(f(s)) }
	}
	first := "rank"
	if !r.snap.Ranks.ByRank {
		first = "file"
	}
	lw := len(first)
	for i := range r.rows {
		lw = max(lw, width(r.label(&r.rows[i])))
	}
	lw = min(lw, 24)
	// Most important first; columns that do not fit are dropped from the
	// right.
	all := []rankCol{
		{"kernel", 8, ns(func(s *attrib.SourceRow) int64 { return s.KernelNs })},
		// GPU busy counts kernels, copies and communication; the header's
		// busy counts kernels only, so the column says which it is.
		{"gpu busy", 8, ns(func(s *attrib.SourceRow) int64 { return s.BusyNs })},
		{"idle", 8, ns(func(s *attrib.SourceRow) int64 { return s.IdleNs })},
		{"comm", 8, ns(func(s *attrib.SourceRow) int64 { return s.CommNs })},
		{"exposed", 8, ns(func(s *attrib.SourceRow) int64 { return s.CommExposedNs })},
		{"step p50", 8, ns(func(s *attrib.SourceRow) int64 { return s.StepMedianNs })},
		{"waited", 8, func(s *attrib.SourceRow) string {
			if r.snap.Ranks.CollectivesUnknown { // merged JSON reports: unknown, not 0
				return "-"
			}
			return FormatNs(s.CollWaitNs)
		}},
		{"last", 5, func(s *attrib.SourceRow) string {
			if r.snap.Ranks.CollectivesUnknown {
				return "-"
			}
			return strconv.Itoa(s.LastArrivals)
		}},
		{"overlap", 8, ns(func(s *attrib.SourceRow) int64 { return s.CommOverlapNs })},
		{"steps", 6, func(s *attrib.SourceRow) string { return strconv.Itoa(s.Steps) }},
	}
	if r.mfu != nil {
		// Each source's steps against its own device's peak, beside the
		// step time (it fits at 80 columns there).
		all = slices.Insert(all, 6, rankCol{"MFU", 6, func(s *attrib.SourceRow) string {
			if sw := r.mfu[s.Index]; sw.NMFU > 0 {
				return FormatShare(sw.MFUMedian)
			}
			return "-"
		}})
	}
	width := 1 + lw
	var cols []rankCol
	for _, c := range all {
		if width+1+c.w > r.w {
			break
		}
		width += 1 + c.w
		cols = append(cols, c)
	}
	head := " " + st.Table.Header.Render(fit(first, lw))
	for _, c := range cols {
		head += " " + st.Table.Header.Render(fitRight(c.title, c.w))
	}
	// The lines under the table wrap (hanging indent) rather than lose
	// their ends; the table gets the height left.
	details := r.details(first)
	r.list.setPage(max(r.h-2-len(details), 1))
	lines := []string{head}
	from, to := r.list.visible()
	for i := from; i < to; i++ {
		s := &r.rows[i]
		line := fit(r.label(s), lw)
		for _, c := range cols {
			line += " " + fitRight(c.cell(s), c.w)
		}
		gut := " "
		if r.focused && i == r.list.cursor {
			gut = "›"
			line = st.Table.Selected.Render(line)
		}
		lines = append(lines, gut+line)
	}
	lines = append(lines, "")
	return block(append(lines, details...), r.w, r.h)
}

// details is the text under the table: the cursor's source, the
// collectives verdict, the widest step; each wrapped to the view's width.
func (r *Ranks) details(first string) []string {
	var texts []string
	if c := r.list.cursor; c < len(r.rows) {
		s := &r.rows[c]
		switch {
		case s.Format == "live" && s.RunNs > 0:
			// A live rank (tracer/session): steps and step p50 over its
			// whole run, the other figures over its steps with operators
			// in the window ("95 steps", "span
			// 4.80 s" in a 20 s run of 399 steps).
			texts = append(texts, fmt.Sprintf("%s %s: %s · %d steps in %s · other columns: its steps with operators in the window, %s · compute %s · comm overlapped %s",
				first, r.label(s), escape.Control(s.Name), s.Steps, FormatNs(s.RunNs), FormatNs(s.SpanNs), FormatNs(s.ComputeNs), FormatNs(s.CommOverlapNs)))
		case s.Format == "live":
			texts = append(texts, fmt.Sprintf("%s %s: %s · %d steps in the window · other columns: its steps with operators, %s · compute %s · comm overlapped %s",
				first, r.label(s), escape.Control(s.Name), s.Steps, FormatNs(s.SpanNs), FormatNs(s.ComputeNs), FormatNs(s.CommOverlapNs)))
		default:
			texts = append(texts, fmt.Sprintf("%s %s: %s · span %s · compute %s · comm overlapped %s · %d steps",
				first, r.label(s), escape.Control(s.Name), FormatNs(s.SpanNs), FormatNs(s.ComputeNs), FormatNs(s.CommOverlapNs), s.Steps))
		}
	}
	texts = append(texts, r.verdict(first))
	if sp := r.widest(); sp != nil {
		texts = append(texts, fmt.Sprintf("widest step: %d, longest %s %s %s, shortest %s %s %s, spread %s", sp.Step,
			first, r.labelOf(sp.SlowSource), FormatNs(sp.SlowNs), first, r.labelOf(sp.FastSource), FormatNs(sp.FastNs), FormatNs(sp.SpreadNs)))
	}
	var out []string
	for _, t := range texts {
		if ansi.StringWidth(t)+1 <= r.w {
			out = append(out, " "+t)
		} else {
			out = append(out, hangingWrap(t, r.w)...)
		}
	}
	return out
}

func (r *Ranks) labelOf(index int) string {
	if s := r.snap.Ranks.Source(index); s != nil {
		return r.label(s)
	}
	return "?"
}

// verdict names the source that arrived last at most collectives.
func (r *Ranks) verdict(first string) string {
	rs := r.snap.Ranks
	if len(rs.Sources) < 2 {
		return "one source: nothing to compare across ranks"
	}
	if rs.NotOneJob != "" {
		return "collectives not matched: " + rs.NotOneJob
	}
	if rs.Collectives == 0 {
		return "no collectives matched across the sources"
	}
	late := rs.Source(rs.LateSource())
	if late == nil {
		return "no collectives matched across the sources"
	}
	v := fmt.Sprintf("late: %s %s arrived last at %d of %d collectives", first, r.label(late), late.LastArrivals, rs.Collectives)
	if ls, ok := rs.LateStage(late.Index); ok {
		// Why it is late (as report --by rank and the straggler finding
		// say it): the stage it spends longer in than the others.
		v += fmt.Sprintf(" · it spends %s per step in stage %q, the others %s", FormatNs(ls.LateNs), ls.Name, FormatNs(ls.OthersNs))
	}
	return v
}

// widest is the step with the largest spread, or nil.
func (r *Ranks) widest() *attrib.StepSpread {
	var w *attrib.StepSpread
	for i := range r.snap.Ranks.Steps {
		if sp := &r.snap.Ranks.Steps[i]; w == nil || sp.SpreadNs > w.SpreadNs {
			w = sp
		}
	}
	return w
}

// Available: only with several sources (one file or process has nothing
// to compare across ranks), so the tab is skipped otherwise.
func (r *Ranks) Available() bool {
	return r.snap != nil && r.snap.Ranks != nil && len(r.snap.Ranks.Sources) > 1
}
