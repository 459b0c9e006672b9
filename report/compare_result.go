package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// WriteCompareResult writes what `rlktop compare` prints: "json" is res
// whole (o.Top > 0 keeps that many rows); table (default) and "md" are
// WriteComparison of each pair (B vs A, then C vs A, …), the sweep of a
// numeric flag over three or more values (SweepOf), output consistency,
// NaN checks, metrics, audits, the schedule's counts and the notes. o.By
// keeps one group's rows (kernel, category or stage). Names are escaped
// (escape.Control; md: escape.Markdown). Errors: ErrOption for an
// unknown format or group; write errors.
func WriteCompareResult(w io.Writer, res *livestate.CompareResult, o Options) error {
	if o.Format == "json" {
		out := *res
		if o.Top > 0 && len(out.Rows) > o.Top {
			out.Rows = out.Rows[:o.Top]
		}
		return encodeJSON(w, &out)
	}
	md := o.Format == "md"
	pairs := res.Pairs
	if len(pairs) == 0 {
		pairs = []*attrib.Comparison{{Arms: res.Arms, Ratio: res.Ratio, Verdict: res.Verdict, Noise: res.Noise, Rows: res.Rows, Method: res.Method}}
	}
	for i, p := range pairs {
		if len(pairs) > 1 {
			h := fmt.Sprintf("%s vs %s", p.Arms[1].Name, p.Arms[0].Name)
			if md {
				fmt.Fprintf(w, "### %s\n\n", escape.Markdown(h))
			} else {
				fmt.Fprintf(w, "== %s ==\n", escape.Control(h))
			}
		}
		if err := WriteComparison(w, p, o); err != nil {
			return err
		}
		if i < len(pairs)-1 {
			fmt.Fprintln(w)
		}
	}
	// One numeric flag over three or more values (--flag envs=1,4,16,…):
	// step time and time per item against the value, table and plot.
	if key, pts, ok := SweepOf(res.Arms, res.Pairs); ok {
		fmt.Fprintln(w)
		if err := WriteSweep(w, key, pts, o); err != nil {
			return err
		}
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, p := range pairs {
		writeCompareWork(&b, p, md)
	}
	writeConsistency(&b, res.Consistency, md)
	writeChecks(&b, res.Checks, md)
	writeMetrics(&b, res.Metrics, md)
	writeAudits(&b, res.Audits, md)
	writeArmMemory(&b, res.Memory, md)  // memory_compare.go
	writePythonArms(&b, res.Python, md) // python.go
	var steps int
	for _, s := range res.Schedule {
		if s.Phase != livestate.PhaseCounted {
			steps++
		}
	}
	counted := len(res.Schedule) - steps
	meta := fmt.Sprintf("mode %s; %d steps run (%d counted, %d warm-up or switching); wall %s",
		res.Mode, len(res.Schedule), counted, steps, units.Duration(res.WallNs))
	if md {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(meta))
		for _, n := range res.Notes {
			fmt.Fprintf(&b, "\n_Note: %s_\n", escape.Markdown(n))
		}
	} else {
		fmt.Fprintf(&b, "\n%s\n", escape.Control(meta))
		for _, n := range res.Notes {
			fmt.Fprintf(&b, "note: %s\n", escape.Control(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteGate writes the CI gate's outcome (attrib.Gate.Check's why) under
// a comparison: a line in table, a bold line in "md", nothing in "json"
// (whose readers apply the gate themselves) or when why is "". Of o only
// Format is read. Errors: write errors.
func WriteGate(w io.Writer, why string, o Options) error {
	format := o.Format
	var err error
	switch {
	case why == "" || format == "json":
	case format == "md":
		_, err = fmt.Fprintf(w, "\n**%s**\n", escape.Markdown(why))
	default:
		_, err = fmt.Fprintf(w, "%s\n", escape.Control(why))
	}
	return err
}

func writeConsistency(b *strings.Builder, cs []livestate.ArmConsistency, md bool) {
	if len(cs) == 0 {
		if md {
			b.WriteString("_Output consistency: not available (a command's outputs are not compared)._\n")
		} else {
			b.WriteString("consistency: not available (a command's outputs are not compared)\n")
		}
		return
	}
	agent := cs[0].Probe != ""
	header := []string{"arm", "probe values", "max abs Δ vs A", "max ulp vs A", "NaN", "bitwise = A"}
	what := "built-in loop probe batch: legal-move logits and values, initial weights; arm A's row: A evaluated twice"
	if agent {
		header = []string{"arm", "probe", "switches", "values", "max abs Δ vs A", "max ulp vs A", "NaN rows", "bitwise = A"}
		what = "rlktop.probe outputs evaluated under the old and the new arm at every switch between the arm and A, same weights"
	}
	var rows [][]string
	for _, c := range cs {
		bw := "no"
		if c.Bitwise {
			bw = "yes"
		}
		row := []string{c.Arm, fmt.Sprint(c.Len), fmt.Sprintf("%.3g", c.MaxAbs), fmt.Sprint(c.MaxULP), fmt.Sprint(c.NaN), bw}
		if c.Err != "" {
			row = []string{c.Arm, "-", "-", "-", "-", "error: " + c.Err}
		}
		if agent {
			row = append([]string{row[0], c.Probe, fmt.Sprint(c.Switches)}, row[1:]...)
			for len(row) < len(header) {
				row = append(row, "-")
			}
		}
		rows = append(rows, row)
	}
	writeSmallTable(b, "output consistency ("+what+")", header, rows, md)
}

// writeMetrics prints each rlktop.log metric per arm against the A/A′
// envelope (livestate.MetricCompare).
func writeMetrics(b *strings.Builder, ms []livestate.MetricCompare, md bool) {
	if len(ms) == 0 {
		return
	}
	header := []string{"metric", "arm", "steps", "mean", "A/A′ envelope", "verdict", "steps inside/edge/outside"}
	var rows [][]string
	for _, m := range ms {
		env, verdict, split := "-", "-", "-"
		if m.Verdict != "" {
			env = fmt.Sprintf("[%.4g, %.4g]", m.EnvLow, m.EnvHigh)
			verdict = m.Verdict
			split = fmt.Sprintf("%d/%d/%d", m.Inside, m.Edge, m.Outside)
		}
		rows = append(rows, []string{m.Metric, m.Arm, fmt.Sprint(m.Steps), fmt.Sprintf("%.4g", m.Mean), env, verdict, split})
	}
	writeSmallTable(b, "learning curves (rlktop.log) against the A/A′ envelope (edge: outside by at most the envelope's width)", header, rows, md)
}

// writeAudits prints each rlktop.audit tensor per arm against A.
func writeAudits(b *strings.Builder, as []livestate.AuditCompare, md bool) {
	if len(as) == 0 {
		return
	}
	header := []string{"audit", "arm", "steps", "values", "result"}
	var rows [][]string
	for _, a := range as {
		res := fmt.Sprintf("bitwise equal over %d values", a.Values)
		switch {
		case a.Note != "":
			res = a.Note
		case !a.Bitwise && a.FirstDiffElem >= 0:
			res = fmt.Sprintf("differs from step %d, element %d: %.9g vs %.9g", a.FirstDiff, a.FirstDiffElem, a.AValue, a.BValue)
		case !a.Bitwise:
			res = fmt.Sprintf("differs from step %d (beyond the sampled values)", a.FirstDiff)
		}
		rows = append(rows, []string{a.Name, a.Arm, fmt.Sprint(a.Steps), fmt.Sprint(a.Values), res})
	}
	writeSmallTable(b, "audits (rlktop.audit: raw-bits hash per step, against arm A at the same step numbers)", header, rows, md)
}

// writeChecks prints each rlktop.check name per arm: steps checked and
// those with NaN or Inf.
func writeChecks(b *strings.Builder, cs []livestate.CheckSummary, md bool) {
	if len(cs) == 0 {
		return
	}
	header := []string{"check", "arm", "steps", "NaN/Inf"}
	var rows [][]string
	for _, c := range cs {
		nan := "none"
		if len(c.NaNSteps) > 0 {
			ss := make([]string, len(c.NaNSteps))
			for i, s := range c.NaNSteps {
				ss[i] = fmt.Sprint(s)
			}
			nan = fmt.Sprintf("%d steps: %s (arm invalid)", len(c.NaNSteps), strings.Join(ss, ", "))
		}
		rows = append(rows, []string{c.Name, c.Arm, fmt.Sprint(c.Steps), nan})
	}
	writeSmallTable(b, "NaN/Inf checks (rlktop.check)", header, rows, md)
}

// writeSmallTable writes a titled table after a blank line: md a bold
// title and a Markdown table (writeMDGrid: cells through escape.Markdown),
// else "title:" and writeTextGrid's columns (cells through
// escape.Control). Every column is left-aligned.
func writeSmallTable(b *strings.Builder, title string, header []string, rows [][]string, md bool) {
	b.WriteString("\n")
	g := grid{header: header, right: make([]bool, len(header)), rows: rows}
	if md {
		fmt.Fprintf(b, "**%s**\n\n", title)
		writeMDGrid(b, g)
		return
	}
	fmt.Fprintf(b, "%s:\n", title)
	writeTextGrid(b, g)
}
