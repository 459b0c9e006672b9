package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// writeOutputs prints the agent's outputs (attrib.Outputs) after a table:
// learning curves (first, last, mean, min, max over the steps logged) and
// NaN/Inf checks (the steps with NaN named); the "compile" row (frames
// torch.compile compiled per step) and the "input" row (ns per step in
// DataLoader next()) print like a metric.
func writeOutputs(w io.Writer, rows []attrib.OutputRow, md bool) error {
	if len(rows) == 0 {
		return nil
	}
	g := grid{header: []string{"output", "kind", "steps", "first", "last", "mean", "min", "max", "NaN/Inf steps"},
		right: []bool{false, false, true, true, true, true, true, true, false}}
	for _, r := range rows {
		if r.Kind == "check" {
			nan := "none"
			if len(r.NaNSteps) > 0 {
				ss := make([]string, len(r.NaNSteps))
				for i, s := range r.NaNSteps {
					ss[i] = fmt.Sprint(s)
				}
				nan = strings.Join(ss, ", ")
			}
			g.rows = append(g.rows, []string{r.Name, "check", fmt.Sprint(r.Steps), "", "", "", "", "", nan})
			continue
		}
		f := func(v float64) string { return fmt.Sprintf("%.4g", v) }
		g.rows = append(g.rows, []string{r.Name, r.Kind, fmt.Sprint(r.Steps), f(r.First), f(r.Last), f(r.Mean), f(r.Min), f(r.Max), ""})
	}
	var b strings.Builder
	if md {
		b.WriteString("\n**Outputs the command reported** (rlktop.log metrics, rlktop.check NaN/Inf checks)\n\n")
		b.WriteString("| " + strings.Join(g.header, " | ") + " |\n|" + strings.Repeat("---|", len(g.header)) + "\n")
		for _, r := range g.rows {
			for i := range r {
				r[i] = strings.ReplaceAll(escape.Control(r[i]), "|", `\|`)
			}
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
	} else {
		b.WriteString("\noutputs the command reported (rlktop.log metrics, rlktop.check NaN/Inf checks):\n")
		writeTextGrid(&b, g)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
