package views

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// ComparePhase is where a TUI comparison stands.
type ComparePhase int

// Comparison phases.
const (
	CompareIdle ComparePhase = iota
	CompareRunning
	CompareDone
	CompareFailed
)

// CompareState is what the compare view shows.
type CompareState struct {
	Phase ComparePhase
	// What is compared: "attention: math vs fused".
	What string
	// Elapsed since the comparison started (running) or its wall time.
	Elapsed time.Duration
	// Progress holds the comparison's progress lines, newest last.
	Progress []string
	Result   *loop.CompareResult
	Err      string
	// CoTenant is set when another process shared a GPU while the
	// comparison ran: its numbers are marked.
	CoTenant bool
	// Hint names the flag the compare key would compare now.
	Hint string
}

// CompareKeyMap is the compare view's own bindings (the key that starts a
// comparison is global).
type CompareKeyMap struct{ ListKeyMap }

// DefaultCompareKeyMap: list movement over the rows.
func DefaultCompareKeyMap() CompareKeyMap { return CompareKeyMap{DefaultListKeyMap()} }

// Compare shows a comparison of a flag's values run from the TUI
// (loop.Compare): the overall ratio of median step times B/A with its
// confidence interval, verdict and A/A′ noise, each arm's steps, the probe
// consistency, the schedule as a sparkline marked by arm, and per kernel,
// category and stage A, B, Δ, ratio [CI] and verdict sorted by |Δ|.
type Compare struct {
	st      *Styles
	keys    CompareKeyMap
	state   CompareState
	rows    []attrib.RowComparison
	list    list
	w, h    int
	focused bool
}

// NewCompare returns an idle compare view.
func NewCompare(st *Styles) *Compare { return &Compare{st: st, keys: DefaultCompareKeyMap()} }

func (c *Compare) Title() string { return "Compare" }

func (c *Compare) Info() string {
	switch c.state.Phase {
	case CompareRunning:
		return "running · " + FormatDuration(c.state.Elapsed)
	case CompareDone:
		return fmt.Sprintf("%d rows · sorted by |Δ|", len(c.rows))
	}
	return ""
}

// SetSnapshot is a no-op: the view shows SetState's data.
func (c *Compare) SetSnapshot(*attrib.Snapshot) {}

// SetState replaces what is shown; rows are re-sorted by |Δ| descending
// (ties by group, then key).
func (c *Compare) SetState(s CompareState) {
	prev := c.state.Result
	c.state = s
	if s.Result != prev {
		c.rows = nil
		if s.Result != nil {
			c.rows = SortByAbsDelta(s.Result.Rows)
		}
		c.list = list{page: c.list.page}
	}
	c.list.setLen(len(c.rows))
}

// State returns what is shown.
func (c *Compare) State() CompareState { return c.state }

// Rows returns the result rows in display order.
func (c *Compare) Rows() []attrib.RowComparison { return c.rows }

// SortByAbsDelta returns a copy of rows sorted by |DeltaNs| descending,
// then group and key.
func SortByAbsDelta(rows []attrib.RowComparison) []attrib.RowComparison {
	out := slices.Clone(rows)
	abs := func(v int64) int64 {
		if v < 0 {
			return -v
		}
		return v
	}
	slices.SortStableFunc(out, func(a, b attrib.RowComparison) int {
		if d := abs(b.DeltaNs) - abs(a.DeltaNs); d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

func (c *Compare) SetSize(w, h int)  { c.w, c.h = w, h; c.list.setPage(max(h-c.headLines(), 1)) }
func (c *Compare) SetFocused(f bool) { c.focused = f }
func (c *Compare) Capturing() bool   { return false }

func (c *Compare) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		c.list.handle(km, c.keys.ListKeyMap)
	}
	return nil
}

func (c *Compare) ShortHelp() []key.Binding  { return []key.Binding{c.keys.move()} }
func (c *Compare) FullHelp() [][]key.Binding { return [][]key.Binding{c.keys.bindings()} }

// FormatDuration writes d as "42 s" or "3 m 05 s".
func FormatDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 60 {
		return fmt.Sprintf("%d s", s)
	}
	return fmt.Sprintf("%d m %02d s", s/60, s%60)
}

// FormatRatio writes r with its interval: "0.62 [0.58–0.66]".
func FormatRatio(v, lo, hi float64) string {
	if v == 0 && lo == 0 && hi == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f [%.3f–%.3f]", v, lo, hi)
}

// verdict renders v in its colour, padded to w cells (0: not padded).
func (c *Compare) verdict(v string, w int) string { return c.verdictAs(v, v, w) }

// verdictAs renders text in verdict v's colour.
func (c *Compare) verdictAs(v, text string, w int) string {
	st := c.st
	txt := text
	if w > 0 {
		txt = fit(text, w)
	}
	switch v {
	case attrib.VerdictFaster:
		return st.Live.Faster.Render(txt)
	case attrib.VerdictSlower:
		return st.Live.Slower.Render(txt)
	case attrib.VerdictInvalid:
		return st.Live.Invalid.Render(txt)
	}
	return st.Live.Noise.Render(txt)
}

// armStyle picks the colour of arm i (0 = A, 1 = B, else A′/more).
func (c *Compare) armStyle(i int) func(...string) string {
	return c.st.Live.Arms[min(i, 2)].Render
}

// header is everything above the rows table.
func (c *Compare) header() []string {
	st := c.st
	s := c.state
	switch s.Phase {
	case CompareIdle:
		what := s.Hint
		if what == "" {
			what = "attention: math vs fused"
		}
		text := "No comparison yet. Press C to compare " + what + " (select another flag in Flags first to compare it). " +
			"The live child stops; a separate run interleaves the arms (A B A B …, and A′, a second run of A, for noise); " +
			"then the live child restarts. Press C again while it runs to cancel."
		return strings.Split(ansi.Wrap(text, max(c.w-1, 20), " "), "\n")
	case CompareRunning:
		out := []string{"comparing " + st.Header.Value.Render(s.What) + " · " + FormatDuration(s.Elapsed) + st.Table.Dim.Render(" · C cancels")}
		p := s.Progress
		if len(p) > 6 {
			p = p[len(p)-6:]
		}
		for _, l := range p {
			out = append(out, st.Table.Dim.Render("  "+l))
		}
		if s.CoTenant {
			out = append(out, st.Live.Warn.Render("⚠ a co-tenant shares the GPU during this comparison"))
		}
		return out
	case CompareFailed:
		head := st.Status.Error.Render("comparison of " + s.What + " failed: " + s.Err)
		if s.Err == "cancelled" {
			head = st.Live.Pending.Render("comparison of "+s.What+" cancelled") + st.Table.Dim.Render(" · C starts another")
		}
		out := []string{head}
		for _, l := range s.Progress[max(len(s.Progress)-3, 0):] {
			out = append(out, st.Table.Dim.Render("  "+l))
		}
		return out
	}
	r := s.Result
	if r == nil {
		return []string{st.Table.Dim.Render("no result")}
	}
	var out []string
	name := func(i int) string {
		if i < len(r.Arms) {
			return r.Arms[i].Name
		}
		return "?"
	}
	line := st.Header.Value.Render(name(1)+" / "+name(0)) + "  ratio " + FormatRatio(r.Ratio.Value, r.Ratio.CILow, r.Ratio.CIHigh) +
		"  " + c.verdict(r.Verdict, 0)
	tail := ""
	if r.Noise != nil {
		tail = "noise A′/A " + FormatRatio(r.Noise.Ratio, r.Noise.CILow, r.Noise.CIHigh) + " · "
	}
	tail += fmt.Sprintf("%s · %s", r.Mode, FormatDuration(time.Duration(r.WallNs)))
	if width(line)+2+width(tail) <= c.w {
		out = append(out, line+"  "+st.Table.Dim.Render(tail))
	} else {
		out = append(out, line, st.Table.Dim.Render(tail))
	}
	if s.CoTenant {
		out = append(out, st.Live.Warn.Render("⚠ a co-tenant shared the GPU during this comparison: the numbers are suspect"))
	}
	for i, a := range r.Arms {
		tag := string(rune('A' + min(i, 25)))
		if i == len(r.Arms)-1 && r.Noise != nil {
			tag = "A′"
		}
		nw, vw := 24, 9
		if c.w < 100 {
			nw, vw = max(min(24, c.w-55), 8), 7
		}
		l := c.armStyle(i)(fit(tag, 2)) + " " + fit(a.Name, nw) + fmt.Sprintf(" %3d steps  median %s  p10 %s  p90 %s",
			a.Steps, fitRight(FormatNs(a.MedianNs), vw), fitRight(FormatNs(a.P10Ns), vw), fitRight(FormatNs(a.P90Ns), vw))
		if !a.Valid {
			l += "  " + st.Live.Invalid.Render("invalid") + " " + a.Reason
		}
		out = append(out, l)
	}
	for _, cs := range r.Consistency {
		if cs.Arm == name(0) {
			continue
		}
		bw := "no"
		if cs.Bitwise {
			bw = "yes"
		}
		l := fmt.Sprintf("consistency %s vs A: max |Δ| %.3g · ulp %d · NaN %d · bitwise %s", cs.Arm, cs.MaxAbs, cs.MaxULP, cs.NaN, bw)
		if cs.Err != "" {
			l += " · " + cs.Err
		}
		out = append(out, l)
	}
	out = append(out, c.schedule(r)...)
	return out
}

// schedule draws the comparison's steps as a sparkline with the arm of
// each step under it (A, B, a for A′; · for a warm-up or extra step).
func (c *Compare) schedule(r *loop.CompareResult) []string {
	st := c.st
	sc := r.Schedule
	room := max(c.w-10, 8)
	if len(sc) == 0 {
		return nil
	}
	if len(sc) > room {
		sc = sc[len(sc)-room:]
	}
	idx := map[string]int{}
	for i, a := range r.Arms {
		idx[a.Name] = i
	}
	durs := make([]int64, len(sc))
	for i, s := range sc {
		durs[i] = s.DurNs
	}
	lo, hi := minMax(durs)
	var bars, arms strings.Builder
	for i, s := range sc {
		ai := idx[s.Arm]
		ch := Sparkline(durs[i:i+1], lo, hi)
		letter := string(rune('A' + min(ai, 25)))
		if r.Noise != nil && ai == len(r.Arms)-1 {
			letter = "a"
		}
		if s.Phase != loop.PhaseCounted {
			letter = "·"
			bars.WriteString(st.Table.Dim.Render(ch))
		} else {
			bars.WriteString(c.armStyle(ai)(ch))
		}
		arms.WriteString(c.armStyle(ai)(letter))
	}
	return []string{
		"steps     " + bars.String(),
		"arm       " + arms.String(),
		st.Table.Dim.Render(fmt.Sprintf("          %d steps, %s–%s; A/B/a = arm A/B/A′ counted, · warm-up", len(r.Schedule), FormatNs(lo), FormatNs(hi))),
	}
}

func (c *Compare) headLines() int {
	n := len(c.header())
	if c.state.Phase == CompareDone {
		n++ // the table heading
	}
	return n
}

func (c *Compare) View() string {
	st := c.st
	lines := c.header()
	if c.state.Phase != CompareDone || c.state.Result == nil {
		return block(lines, c.w, c.h)
	}
	c.list.setPage(max(c.h-len(lines)-1, 1))
	gw, tw, rw, vw := 8, 9, 21, 12
	short := c.w < 120
	if short {
		gw, tw, rw, vw = 4, 8, 20, 7
	}
	kw := max(c.w-1-gw-tw*3-rw-vw-6, 8)
	glabel := "group"
	if short {
		glabel = "grp"
	}
	lines = append(lines, " "+st.Table.Header.Render(fit(glabel, gw))+" "+st.Table.Header.Render(fit("name", kw))+
		" "+st.Table.Header.Render(fitRight("A/step", tw))+" "+st.Table.Header.Render(fitRight("B/step", tw))+
		" "+st.Table.Header.Render(fitRight("Δ", tw))+" "+st.Table.Header.Render(fit("B/A [95% CI]", rw))+
		" "+st.Table.Header.Render(fit("verdict", vw)))
	from, to := c.list.visible()
	for i := from; i < to; i++ {
		r := c.rows[i]
		gut := " "
		if c.focused && i == c.list.cursor {
			gut = "›"
		}
		d := FormatNs(r.DeltaNs)
		if r.DeltaNs > 0 {
			d = "+" + d
		} else if r.DeltaNs < 0 {
			d = "−" + FormatNs(-r.DeltaNs)
		}
		ratio := FormatRatio(r.Ratio, r.CILow, r.CIHigh)
		if r.ANs == 0 || math.IsInf(r.Ratio, 0) {
			ratio = "only in B"
		} else if r.BNs == 0 {
			ratio = "only in A"
		}
		group, verdict := r.Group, r.Verdict
		if short {
			group = map[string]string{"kernel": "kern", "category": "cat", "stage": "stg"}[group]
			if verdict == attrib.VerdictNoise {
				verdict = "noise"
			}
		}
		lines = append(lines, gut+st.Table.Dim.Render(fit(group, gw))+" "+fit(r.Key, kw)+" "+fitRight(FormatNs(r.ANs), tw)+
			" "+fitRight(FormatNs(r.BNs), tw)+" "+fitRight(d, tw)+" "+fit(ratio, rw)+" "+c.verdictAs(r.Verdict, verdict, vw))
	}
	if len(c.rows) == 0 {
		lines = append(lines, st.Table.Dim.Render(" no per-kernel rows (the recording held no GPU events)"))
	}
	return block(lines, c.w, c.h)
}
