package views

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// sparkRunes are the eight block heights of a sparkline, lowest first.
var sparkRunes = [...]rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// Sparkline draws one cell per value: the block height is the value's
// place between lo and hi in eighths (lo draws ▁, hi █; lo == hi draws
// every value as ▄). Values are step times in ns.
func Sparkline(vals []int64, lo, hi int64) string {
	var b strings.Builder
	for _, v := range vals {
		i := 3
		if hi > lo {
			i = int((v - lo) * 7 / (hi - lo))
			i = min(max(i, 0), 7)
		}
		b.WriteRune(sparkRunes[i])
	}
	return b.String()
}

// minMax returns the least and greatest of vals (0, 0 when empty).
func minMax(vals []int64) (lo, hi int64) {
	if len(vals) == 0 {
		return 0, 0
	}
	return slices.Min(vals), slices.Max(vals)
}

// StepTimes is the step-time panel: a sparkline of the most recent steps
// (one cell per step, newest on the right), flag changes marked under the
// step at which the child applied them (livestate.Mark), the rate in steps/s
// and the last, median and range of the steps shown.
type StepTimes struct {
	st      *Styles
	steps   []livestate.StepTime
	marks   []livestate.Mark
	perSec  float64
	count   int64
	off     bool   // tracing off: no new steps arrive
	gone    string // why no step will come (the child ended); "" while one may
	w, h    int
	focused bool
	// cmp is non-nil while a comparison runs: the panel then draws the
	// comparison's steps with the arm that ran each (SetCompare).
	cmp      []ArmStep
	cmpNames []string
}

// ArmStep is one step of a running comparison as the step chart draws it
// (from livestate.StepLabel, mapped to an arm index by the caller).
type ArmStep struct {
	Arm     int   // 0 = arm A, 1 = arm B, …; ignored when Noise
	Noise   bool  // the A′ arm (arm A run again for the noise envelope)
	Counted bool  // false: a warm-up or extra step, not measured
	DurNs   int64 // step time, ns
}

// SetCompare switches the panel to a running comparison: steps are the
// comparison's steps so far, oldest first, and names the arms' names (A's
// first) for the legend. A nil steps switches back to the live steps.
// The arm row under the sparkline draws A, B, … (a for A′) in the compare
// view's arm colours, and · for a step that was not counted.
func (s *StepTimes) SetCompare(steps []ArmStep, names []string) {
	s.cmp, s.cmpNames = steps, names
}

// armLetter is the letter of a comparison step's arm: A, B, … (a for A′).
func armLetter(a ArmStep) string {
	if a.Noise {
		return "a"
	}
	return string(rune('A' + min(a.Arm, 25)))
}

func (s *StepTimes) armStyle(a ArmStep) lipgloss.Style {
	if a.Noise {
		return s.st.Live.Arms[2]
	}
	return s.st.Live.Arms[min(a.Arm, 1)]
}

// compareView draws the comparison's steps: sparkline, arm row, legend
// with the counted steps per arm.
func (s *StepTimes) compareView() string {
	st := s.st
	if len(s.cmp) == 0 {
		return block([]string{st.Table.Dim.Render("comparison starting: waiting for its first step…")}, s.w, s.h)
	}
	shown := s.cmp
	if n := max(s.w-2, 1); len(shown) > n {
		shown = shown[len(shown)-n:]
	}
	durs := make([]int64, len(shown))
	var arms strings.Builder
	for i, a := range shown {
		durs[i] = a.DurNs
		if a.Counted {
			arms.WriteString(s.armStyle(a).Render(armLetter(a)))
		} else {
			arms.WriteString(st.Table.Dim.Render("·"))
		}
	}
	lo, hi := minMax(durs)
	counted := map[ArmStep]int{}
	for _, a := range s.cmp {
		if a.Counted {
			counted[ArmStep{Arm: a.Arm, Noise: a.Noise}]++
		}
	}
	var legend []string
	for i, name := range s.cmpNames {
		a := ArmStep{Arm: i}
		legend = append(legend, s.armStyle(a).Render(armLetter(a))+fmt.Sprintf(" %s %d", name, counted[a]))
	}
	if n, ok := counted[ArmStep{Noise: true}]; ok || len(s.cmpNames) > 0 {
		a := ArmStep{Noise: true}
		legend = append(legend, s.armStyle(a).Render("a")+fmt.Sprintf(" A′ %d", n))
	}
	legend = append(legend, st.Table.Dim.Render("·")+" not counted")
	lines := []string{
		" " + st.Live.Spark.Render(Sparkline(durs, lo, hi)),
		" " + arms.String(),
		" " + strings.Join(legend, " · ") + fmt.Sprintf(" · last %s", FormatNs(durs[len(durs)-1])),
	}
	return block(lines, s.w, s.h)
}

// SetGone says why no step will arrive ("the child exited 1 before its
// first step"); "" while the child runs.
func (s *StepTimes) SetGone(why string) { s.gone = why }

// NewStepTimes returns an empty step-time panel.
func NewStepTimes(st *Styles) *StepTimes { return &StepTimes{st: st} }

func (s *StepTimes) Title() string { return "Step time" }

func (s *StepTimes) Info() string {
	if len(s.steps) == 0 {
		return ""
	}
	return fmt.Sprintf("%s steps/s · %s", units.Sig3(s.perSec), units.Plural(s.count, "step"))
}

// SetSnapshot is a no-op: the panel shows SetSteps' data.
func (s *StepTimes) SetSnapshot(*attrib.Snapshot) {}

// SetSteps replaces what is shown: steps oldest first, the marks, the
// rate in steps/s and the count of every step received.
func (s *StepTimes) SetSteps(steps []livestate.StepTime, marks []livestate.Mark, perSec float64, count int64) {
	s.steps, s.marks, s.perSec, s.count = steps, marks, perSec, count
}

// SetTracing tells the panel whether the child traces (steps are trace
// events: with tracing off none arrive, and the panel says so).
func (s *StepTimes) SetTracing(on bool) { s.off = !on }

func (s *StepTimes) SetSize(w, h int)          { s.w, s.h = w, h }
func (s *StepTimes) SetFocused(f bool)         { s.focused = f }
func (s *StepTimes) Capturing() bool           { return false }
func (s *StepTimes) Update(tea.Msg) tea.Cmd    { return nil }
func (s *StepTimes) ShortHelp() []key.Binding  { return nil }
func (s *StepTimes) FullHelp() [][]key.Binding { return nil }
func (s *StepTimes) Available() bool           { return true }
func (s *StepTimes) Height() int {
	if s.cmp != nil {
		return 3
	}
	return 3 + min(len(s.visibleMarks(s.shown())), 3)
}
func (s *StepTimes) shown() []livestate.StepTime { return s.tail(max(s.w-2, 1)) }
func (s *StepTimes) tail(n int) []livestate.StepTime {
	st := s.steps
	// One process only (the newest): a restarted child numbers from 0.
	if len(st) > 0 {
		pid := st[len(st)-1].PID
		i := len(st)
		for i > 0 && st[i-1].PID == pid {
			i--
		}
		st = st[i:]
	}
	if len(st) > n {
		st = st[len(st)-n:]
	}
	return st
}

// visibleMarks returns, for each shown step index, the marks applied at
// that step, newest mark last.
type shownMark struct {
	idx int
	m   livestate.Mark
}

func (s *StepTimes) visibleMarks(shown []livestate.StepTime) []shownMark {
	if len(shown) == 0 {
		return nil
	}
	pid := int64(shown[0].PID)
	var out []shownMark
	for _, m := range s.marks {
		if m.PID != pid || m.Step < 0 {
			continue
		}
		for i, st := range shown {
			if st.Step == m.Step {
				out = append(out, shownMark{i, m})
				break
			}
		}
	}
	return out
}

func (s *StepTimes) View() string {
	st := s.st
	if s.cmp != nil {
		return s.compareView()
	}
	shown := s.shown()
	if len(shown) == 0 {
		if s.gone != "" {
			return block([]string{st.Table.Dim.Render("no steps: " + s.gone)}, s.w, s.h)
		}
		return block([]string{st.Table.Dim.Render("waiting for the first step…")}, s.w, s.h)
	}
	durs := make([]int64, len(shown))
	for i, x := range shown {
		durs[i] = x.DurNs
	}
	lo, hi := minMax(durs)
	lines := []string{" " + st.Live.Spark.Render(Sparkline(durs, lo, hi))}
	marks := s.visibleMarks(shown)
	row := []rune(strings.Repeat(" ", len(shown)))
	for _, m := range marks {
		row[m.idx] = '▲'
	}
	lines = append(lines, " "+st.Live.Mark.Render(string(row)))
	sorted := slices.Clone(durs)
	slices.Sort(sorted)
	stats := fmt.Sprintf(" last %s · median %s · min %s · max %s",
		FormatNs(durs[len(durs)-1]), FormatNs(sorted[(len(sorted)-1)/2]), FormatNs(lo), FormatNs(hi))
	if s.off {
		stats = " " + st.Live.Pending.Render("tracing off: the loop runs untraced, no step times (T resumes)")
	}
	lines = append(lines, stats)
	for i := len(marks) - 1; i >= 0 && len(marks)-i <= 3; i-- {
		m := marks[i].m
		lines = append(lines, " "+st.Live.Mark.Render("▲")+fmt.Sprintf(" step %d: %s=%s", m.Step, m.Key, m.Value))
	}
	return block(lines, s.w, s.h)
}
