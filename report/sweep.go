package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// SweepPoint is one value of a swept flag (`rlktop compare --flag
// envs=1,4,16,64`): the arm run with it and its median step time against
// the first arm's.
type SweepPoint struct {
	Label string  // the value as given ("256")
	Value float64 // the value as a number: the items a step handles
	Arm   attrib.ArmStats
	// Ratio is this arm's median step time over the first arm's, with its
	// bootstrap interval (attrib.CompareArms); the first arm's is 1 [1–1].
	Ratio attrib.Ratio
}

// StepNs returns the point's median step time and its interval, ns: the
// ratio's interval times the first arm's median (first: its own median,
// no interval).
func (p SweepPoint) StepNs(firstMedianNs int64) (v, lo, hi float64) {
	m := float64(firstMedianNs)
	return p.Ratio.Value * m, p.Ratio.CILow * m, p.Ratio.CIHigh * m
}

// SweepOf recognises a sweep: at least three arms that differ from the
// first in one flag only, whose values are all positive numbers. arms are
// the comparison's arms (an A′ after them is ignored), pairs[i] arm i+1
// against arm 0 (livestate.CompareResult.Pairs). ok is false otherwise.
func SweepOf(arms []attrib.ArmStats, pairs []*attrib.Comparison) (key string, pts []SweepPoint, ok bool) {
	n := len(pairs) + 1
	if n < 3 || len(arms) < n {
		return "", nil, false
	}
	for k, v0 := range arms[0].Flags {
		if arms[1].Flags[k] != v0 {
			key = k
		}
	}
	if key == "" {
		return "", nil, false
	}
	for i := 0; i < n; i++ {
		a := arms[i]
		for k, v := range a.Flags {
			if k != key && arms[0].Flags[k] != v {
				return "", nil, false // a second flag varies
			}
		}
		f, err := strconv.ParseFloat(a.Flags[key], 64)
		if err != nil || f <= 0 {
			return "", nil, false
		}
		p := SweepPoint{Label: a.Flags[key], Value: f, Arm: a, Ratio: attrib.Ratio{Value: 1, CILow: 1, CIHigh: 1}}
		if i > 0 {
			p.Ratio = pairs[i-1].Ratio
		}
		pts = append(pts, p)
	}
	return key, pts, true
}

// WriteSweep writes a sweep as a table and a plot: per value the median
// step time and the time per item (step time / value), each with its 95%
// interval, and bars of both on a log scale (the shape of a batch-size
// study: flat per-call latency, falling per-item cost). o.Format "md"
// writes a GitHub table and a fenced plot, any other a text table and
// plot. Errors: write errors.
func WriteSweep(w io.Writer, key string, pts []SweepPoint, o Options) error {
	md := o.Format == "md"
	if len(pts) == 0 {
		return nil
	}
	m0 := pts[0].Arm.MedianNs
	type row struct {
		label           string
		step, per       float64
		stepTxt, perTxt string
		valid           bool
	}
	var rows []row
	for i, p := range pts {
		v, lo, hi := p.StepNs(m0)
		r := row{label: escape.Control(p.Label), step: v, per: v / p.Value, valid: p.Arm.Valid}
		if i == 0 {
			r.stepTxt = Duration(int64(v)) + " (reference)"
			r.perTxt = Duration(int64(v / p.Value))
		} else {
			r.stepTxt = Duration(int64(v)) + " " + units.DurationInterval(int64(lo), int64(hi))
			r.perTxt = Duration(int64(v/p.Value)) + " " + units.DurationInterval(int64(lo/p.Value), int64(hi/p.Value))
		}
		if !p.Arm.Valid {
			r.stepTxt, r.perTxt = "invalid: "+p.Arm.Reason, "—"
		}
		rows = append(rows, r)
	}
	first, last := rows[0], rows[len(rows)-1]
	summary := fmt.Sprintf("sweep of %s: step time ×%.3g and time per item ×%.3g from %s=%s to %s=%s (intervals: 95%% bootstrap of the ratio to the first value, times its median)",
		escape.Control(key), last.step/first.step, last.per/first.per, escape.Control(key), first.label, escape.Control(key), last.label)
	var b strings.Builder
	if md {
		fmt.Fprintf(&b, "### Sweep of %s\n\n", escape.Markdown(key))
		g := grid{header: []string{key, "steps", "step time (median) [95% CI]", "time per item [95% CI]"}, right: []bool{true, true, false, false}}
		for i, r := range rows {
			g.rows = append(g.rows, []string{r.label, fmt.Sprint(pts[i].Arm.Steps), r.stepTxt, r.perTxt})
		}
		writeMDGrid(&b, g)
		fmt.Fprintf(&b, "\n_%s_\n\n```\n", escape.Markdown(summary))
	} else {
		lw := len(key)
		for _, r := range rows {
			lw = max(lw, len(r.label))
		}
		sw, pw := len("step time (median) [95% CI]"), len("time per item [95% CI]")
		for _, r := range rows {
			sw, pw = max(sw, len([]rune(r.stepTxt))), max(pw, len([]rune(r.perTxt)))
		}
		fmt.Fprintf(&b, "%-*s  %5s  %-*s  %-*s\n", lw, escape.Control(key), "steps", sw, "step time (median) [95% CI]", pw, "time per item [95% CI]")
		for i, r := range rows {
			fmt.Fprintf(&b, "%-*s  %5d  %s  %s\n", lw, r.label, pts[i].Arm.Steps, padRunes(r.stepTxt, sw), padRunes(r.perTxt, pw))
		}
		fmt.Fprintf(&b, "%s\n\n", summary)
	}
	// The plot: both series on one log scale so their slopes compare.
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		if r.valid {
			lo, hi = math.Min(lo, math.Min(r.step, r.per)), math.Max(hi, math.Max(r.step, r.per))
		}
	}
	const bw = 30
	bar := func(v float64) string {
		n := 1
		if hi > lo && v > 0 {
			n = 1 + int(math.Round(float64(bw-1)*math.Log(v/lo)/math.Log(hi/lo)))
		}
		return strings.Repeat("█", n) + strings.Repeat(" ", bw-n)
	}
	lw := len(key)
	for _, r := range rows {
		lw = max(lw, len(r.label))
	}
	fmt.Fprintf(&b, "%-*s  %-*s  %s\n", lw, escape.Control(key), bw, "step time (log scale)", "time per item (same scale)")
	for _, r := range rows {
		if !r.valid {
			fmt.Fprintf(&b, "%-*s  %s\n", lw, r.label, "invalid")
			continue
		}
		fmt.Fprintf(&b, "%-*s  %s  %s\n", lw, r.label, bar(r.step), strings.TrimRight(bar(r.per), " "))
	}
	if hi > lo {
		fmt.Fprintf(&b, "%-*s  %s%*s\n", lw, "", Duration(int64(lo)), bw-len([]rune(Duration(int64(lo)))), Duration(int64(hi)))
	}
	if md {
		b.WriteString("```\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func padRunes(s string, w int) string {
	if n := len([]rune(s)); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}
