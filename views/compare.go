package views

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
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
	Result   *livestate.CompareResult
	Err      string
	// CoTenant is set when another process shared a GPU while the
	// comparison ran: its numbers are marked.
	CoTenant bool
	// Hint names the flag the compare key would compare now.
	Hint string
	// Flag is the flag compared ("attention"): the rows of its category
	// come first.
	Flag string
	// Confirm is set while C waits for a second press: the view says
	// what a comparison will stop and lose.
	Confirm string
}

// CompareRule is the verdict rule of attrib.CompareArms in words, for the
// view and its help: the same sentence the md report's method line gives.
const CompareRule = "a row is faster or slower only when its 95% interval excludes 1 and its ratio lies outside the A/A′ envelope (how far a second run of A moved); otherwise it is within noise"

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
			c.rows = flagFirst(SortByAbsDelta(s.Result.Rows), s.Flag)
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

// flagFirst moves the category rows of the compared flag to the front
// (a category named like the flag: attention, qkv, scan; sampler's is
// sample), keeping the order otherwise.
func flagFirst(rows []attrib.RowComparison, flag string) []attrib.RowComparison {
	if flag == "" {
		return rows
	}
	own := func(r attrib.RowComparison) bool {
		return r.Group == attrib.GroupCategory && r.Key != "" && (strings.HasPrefix(flag, r.Key) || strings.HasPrefix(r.Key, flag))
	}
	slices.SortStableFunc(rows, func(a, b attrib.RowComparison) int {
		switch oa, ob := own(a), own(b); {
		case oa && !ob:
			return -1
		case ob && !oa:
			return 1
		}
		return 0
	})
	return rows
}

// Envelope writes a row's A/A′ envelope (ln units: a ratio r is inside
// when |ln r| ≤ ln) for a table column: as a percentage below a factor of
// 2 ("±12%"), beyond as the factor ("×3.8": from 1/3.8 to 3.8, where
// "±284%" read as if 0.3 were inside), or "—" without one.
func Envelope(ln float64) string {
	switch {
	case ln <= 0:
		return "—"
	case math.Exp(ln) < 2:
		return fmt.Sprintf("±%.0f%%", 100*(math.Exp(ln)-1))
	}
	return fmt.Sprintf("×%.1f", math.Exp(ln))
}

// envelopeBand writes the A/A′ envelope envLn as the ratios it holds,
// "[0.93, 1.08]".
func envelopeBand(envLn float64) string {
	return units.Interval(math.Exp(-envLn), math.Exp(envLn))
}

// VerdictReason says which part of CompareRule gave verdict v to a ratio
// with interval [lo, hi] and envelope envLn (ln units; ≤ 0: no A′).
func VerdictReason(v string, ratio, lo, hi, envLn float64) string {
	switch {
	case v == attrib.VerdictInvalid:
		return "an arm is invalid: no verdict"
	case v == attrib.VerdictNew || v == attrib.VerdictGone:
		return "runs in one arm only"
	case v == attrib.VerdictFew:
		return "an arm has too few (profiled) steps for an interval: the ratio alone, no verdict"
	case lo <= 1 && 1 <= hi:
		return "the interval " + units.Interval(lo, hi) + " holds 1 → within noise"
	case envLn > 0 && math.Abs(math.Log(ratio)) <= envLn:
		return fmt.Sprintf("the interval excludes 1, but %.3f is inside the A/A′ envelope %s → within noise", ratio, envelopeBand(envLn))
	case envLn > 0:
		return fmt.Sprintf("the interval excludes 1 and %.3f is outside the A/A′ envelope %s → %s", ratio, envelopeBand(envLn), v)
	}
	return fmt.Sprintf("the interval excludes 1 (no A′ envelope) → %s", v)
}

// StepsToDecide estimates the counted steps per arm that would let a
// ratio with interval [lo, hi] from n steps per arm, and an A/A′ envelope
// envLn (ln units; ≤ 0: none), give a verdict: both the interval's and the
// envelope's half-widths shrink as 1/√n, and each must come under
// |ln ratio|. A ratio within 1% of 1 is asked to resolve a 5% difference
// instead. 0 when the verdict is already decided by both.
func StepsToDecide(ratio, lo, hi, envLn float64, n int) int {
	if n <= 0 || lo <= 0 || hi <= 0 || ratio <= 0 {
		return 0
	}
	d := math.Abs(math.Log(ratio))
	if d < math.Log(1.01) {
		d = math.Log(1.05)
	}
	need := 0.0
	if lo <= 1 && 1 <= hi {
		half := (math.Log(hi) - math.Log(lo)) / 2
		need = float64(n) * (half / d) * (half / d)
	}
	if envLn > 0 && math.Abs(math.Log(ratio)) <= envLn {
		need = math.Max(need, float64(n)*(envLn/d)*(envLn/d))
	}
	return int(math.Ceil(need))
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

func (c *Compare) ShortHelp() []key.Binding { return []key.Binding{c.keys.move()} }

// FullHelp lists the movement keys and states the verdict rule (a help
// entry with no key, so `?` explains the verdicts).
func (c *Compare) FullHelp() [][]key.Binding {
	rule := key.NewBinding(key.WithKeys("verdict"), key.WithHelp("verdict:", "faster/slower only if the 95% CI excludes 1 AND the ratio is outside the A/A′ envelope"))
	return [][]key.Binding{c.keys.bindings(), {rule}}
}

// FormatDuration is units.Elapsed: "42 s", "3 m 05 s", "1 h 15 m".
func FormatDuration(d time.Duration) string { return units.Elapsed(d) }

// FormatRatio is units.Ratio: "1.043 [1.012, 1.071]", "—" without one.
func FormatRatio(v, lo, hi float64) string { return units.Ratio(v, lo, hi) }

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

// wrapStyled wraps text at words to w cells and styles each line.
func wrapStyled(text string, w int, style func(...string) string) []string {
	lines := WrapLines(text, w)
	for i, l := range lines {
		lines[i] = style(l)
	}
	return lines
}

// armStyle picks the colour of arm i (0 = A, 1 = B, else A′/more).
func (c *Compare) armStyle(i int) func(...string) string {
	return c.st.Live.Arms[min(i, 2)].Render
}

// header is everything above the rows table.
func (c *Compare) header() []string {
	st := c.st
	s := c.state
	if s.Confirm != "" {
		return wrapStyled(s.Confirm, max(c.w-1, 20), st.Live.Pending.Render)
	}
	switch s.Phase {
	case CompareIdle:
		what := s.Hint
		if what == "" {
			what = "attention: math vs fused"
		}
		text := "No comparison yet. Press C to compare " + what + " (select another flag in Flags first to compare it). " +
			"The live child stops; a separate run interleaves the arms (A B A B …, and A′, a second run of A, for noise); " +
			"then the live child restarts. Press C again while it runs to cancel. Verdicts: " + CompareRule + "."
		return WrapLines(text, max(c.w-1, 20))
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
	env := -1.0
	if r.Noise != nil && r.Noise.CILow > 0 && r.Noise.CIHigh > 0 {
		env = math.Max(math.Abs(math.Log(r.Noise.CILow)), math.Abs(math.Log(r.Noise.CIHigh)))
	}
	why := "why: " + VerdictReason(r.Verdict, r.Ratio.Value, r.Ratio.CILow, r.Ratio.CIHigh, env)
	out = append(out, wrapStyled(why, max(c.w-1, 20), st.Table.Dim.Render)...)
	if len(r.Arms) >= 2 {
		n := min(r.Arms[0].Steps, r.Arms[1].Steps)
		if need := StepsToDecide(r.Ratio.Value, r.Ratio.CILow, r.Ratio.CIHigh, env, n); need > n {
			warn := fmt.Sprintf("⚠ the interval or the A/A′ envelope is too wide to decide with %d steps per arm: about %d would resolve a ratio of %.3f (rlktop compare --steps %d)",
				n, need, r.Ratio.Value, need)
			out = append(out, wrapStyled(warn, max(c.w-1, 20), st.Live.Warn.Render)...)
		}
	}
	if s.CoTenant {
		out = append(out, st.Live.Warn.Render("⚠ a co-tenant shared the GPU during this comparison: the numbers are suspect"))
	}
	for i, a := range r.Arms {
		tag := string(rune('A' + min(i, 25)))
		armName := a.Name
		if i == len(r.Arms)-1 && r.Noise != nil {
			tag = "A′"
			armName = r.Arms[0].Name + " again" // not "A′ A′ (…)"
		}
		nw, vw := 24, 9
		if c.w < 100 {
			nw, vw = max(min(24, c.w-55), 8), 7
		}
		l := c.armStyle(i)(fit(tag, 2)) + " " + fit(armName, nw) + fmt.Sprintf(" %3d steps  median %s  p10 %s  p90 %s",
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
		// The arm by its letter (its name is on its row above), so the
		// line fits 80 columns; longer ones wrap at word boundaries.
		arm := cs.Arm
		for i := range r.Arms {
			if r.Arms[i].Name == cs.Arm {
				arm = string(rune('A' + min(i, 25)))
				if i == len(r.Arms)-1 && r.Noise != nil {
					arm = "A′"
				}
			}
		}
		l := fmt.Sprintf("consistency %s vs A: max |Δ| %.3g · ulp %d · NaN %d · bitwise %s", arm, cs.MaxAbs, cs.MaxULP, cs.NaN, bw)
		if cs.Err != "" {
			l += " · " + cs.Err
		}
		out = append(out, wrapStyled(l, max(c.w-1, 20), func(s ...string) string { return strings.Join(s, "") })...)
	}
	out = append(out, c.metricLines(r)...)
	out = append(out, c.memoryLines(r)...) // compare_memory.go
	out = append(out, c.schedule(r)...)
	return out
}

// metricLines plots each learning curve (rlktop.log, livestate.MetricCompare)
// of an arm against arm A's on one scale, with its verdict against the
// A/A′ envelope.
func (c *Compare) metricLines(r *livestate.CompareResult) []string {
	var out []string
	room := max((c.w-40)/2, 8)
	for _, m := range r.Metrics {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range append(slices.Clone(m.PerStep), m.APerStep...) {
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if math.IsInf(lo, 0) {
			continue
		}
		curve := func(vs []float64) string {
			if len(vs) > room {
				vs = vs[len(vs)-room:]
			}
			iv := make([]int64, len(vs))
			for i, v := range vs {
				if math.IsNaN(v) {
					v = lo
				}
				iv[i] = int64((v - lo) / max(hi-lo, 1e-300) * 1e6)
			}
			return Sparkline(iv, 0, 1e6)
		}
		verdict := m.Verdict
		if verdict == "" {
			verdict = "no A′"
		}
		out = append(out, fmt.Sprintf("%s A %s  %s %s  mean %.4g (%s)", fit(escape.Control(m.Metric), 10),
			curve(m.APerStep), fit(m.Arm, 12), curve(m.PerStep), m.Mean, verdict))
	}
	return out
}

// schedule draws the comparison's steps as a sparkline with the arm of
// each step under it (A, B, a for A′; · for a warm-up or extra step).
func (c *Compare) schedule(r *livestate.CompareResult) []string {
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
		if s.Phase != livestate.PhaseCounted {
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
		n += 1 + c.footLines() // the table heading, the selected row's reason
	}
	return n
}

// footLines is the lines under the table: why the selected row got its
// verdict, wrapped.
func (c *Compare) footLines() int {
	if c.state.Phase != CompareDone || len(c.rows) == 0 {
		return 0
	}
	return len(c.foot())
}

func (c *Compare) foot() []string {
	if c.list.cursor >= len(c.rows) {
		return nil
	}
	r := c.rows[c.list.cursor]
	why := r.Key + ": " + VerdictReason(r.Verdict, r.Ratio, r.CILow, r.CIHigh, r.NoiseLn)
	return wrapStyled(why, max(c.w-1, 20), c.st.Table.Dim.Render)
}

func (c *Compare) View() string {
	st := c.st
	lines := c.header()
	if c.state.Phase != CompareDone || c.state.Result == nil || c.state.Confirm != "" {
		return block(lines, c.w, c.h)
	}
	foot := c.foot()
	c.list.setPage(max(c.h-len(lines)-1-len(foot), 1))
	gw, tw, rw, ew, vw := 8, 9, 21, 6, 12
	short := c.w < 120
	if short {
		gw, tw, rw, ew, vw = 4, 8, 20, 5, 7
	}
	kw := max(c.w-1-gw-tw*3-rw-ew-vw-7, 8)
	glabel, elabel := "group", "A/A′"
	if short {
		glabel = "grp"
	}
	lines = append(lines, " "+st.Table.Header.Render(fit(glabel, gw))+" "+st.Table.Header.Render(fit("name", kw))+
		" "+st.Table.Header.Render(fitRight("A/step", tw))+" "+st.Table.Header.Render(fitRight("B/step", tw))+
		" "+st.Table.Header.Render(fitRight("Δ", tw))+" "+st.Table.Header.Render(fit("B/A [95% CI]", rw))+
		" "+st.Table.Header.Render(fitRight(elabel, ew))+" "+st.Table.Header.Render(fit("verdict", vw)))
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
			switch verdict {
			case attrib.VerdictNoise:
				verdict = "noise"
			case attrib.VerdictFew:
				verdict = "few"
			}
		}
		lines = append(lines, gut+st.Table.Dim.Render(fit(group, gw))+" "+fit(escape.Control(r.Key), kw)+" "+fitRight(FormatNs(r.ANs), tw)+
			" "+fitRight(FormatNs(r.BNs), tw)+" "+fitRight(d, tw)+" "+fit(ratio, rw)+" "+
			st.Table.Dim.Render(fitRight(Envelope(r.NoiseLn), ew))+" "+c.verdictAs(r.Verdict, verdict, vw))
	}
	if len(c.rows) == 0 {
		lines = append(lines, st.Table.Dim.Render(" no per-kernel rows (the recording held no GPU events)"))
	}
	for len(lines) < c.h-len(foot) {
		lines = append(lines, "")
	}
	lines = append(lines, foot...)
	return block(lines, c.w, c.h)
}
