package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// WriteComparison writes c as a table (default), "json" or "md" (the table
// a performance report carries); its JSON is the comparison's "arms",
// "ratio", "verdict", "noise", "rows" and "method". o.Top limits the rows (0 = all; < 0 = 25 for
// table/md, all for json); o.By, when set to kernel, category or stage,
// keeps only that group's rows. Errors: ErrOption for an unknown format or
// group; write errors.
func WriteComparison(w io.Writer, c *attrib.Comparison, o Options) error {
	if o.Format == "" {
		o.Format = "table"
	}
	switch o.By {
	case "", attrib.GroupKernel, attrib.GroupCategory, attrib.GroupStage:
	default:
		return fmt.Errorf("%w: unknown group %q (use kernel, category or stage)", ErrOption, o.By)
	}
	if o.Top < 0 {
		o.Top = 25
		if o.Format == "json" {
			o.Top = 0
		}
	}
	rows := c.Rows
	if o.By != "" {
		rows = nil
		for _, r := range c.Rows {
			if r.Group == o.By {
				rows = append(rows, r)
			}
		}
	}
	more := 0
	if o.Top > 0 && len(rows) > o.Top {
		more = len(rows) - o.Top
		rows = rows[:o.Top]
	}
	switch o.Format {
	case "json":
		cc := *c
		cc.Rows = append([]attrib.RowComparison{}, rows...)
		return encodeJSON(w, &cc)
	case "table", "md":
		return writeCompareText(w, c, rows, more, o.Format == "md")
	}
	return fmt.Errorf("%w: unknown format %q for a comparison (use table, json or md)", ErrOption, o.Format)
}

// flagText is flagPairs, "-" without flags.
func flagText(f map[string]string) string {
	if len(f) == 0 {
		return "-"
	}
	return flagPairs(f)
}

// flagPairs writes flags as "K=V K=V", sorted by key ("" without flags).
func flagPairs(f map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, k+"="+f[k])
	}
	return strings.Join(parts, " ")
}

// RatioText is units.Ratio: "1.043 [1.012, 1.071]", "1.043" without an
// interval, "—" without a ratio.
func RatioText(v, lo, hi float64) string { return units.Ratio(v, lo, hi) }

func writeCompareText(w io.Writer, c *attrib.Comparison, rows []attrib.RowComparison, more int, md bool) error {
	var b strings.Builder
	table := func(header []string, right []bool, cells [][]string) {
		g := grid{header: header, right: right, rows: cells}
		if md {
			writeMDGrid(&b, g)
		} else {
			writeTextGrid(&b, g)
		}
	}
	armRows := [][]string{}
	for _, a := range c.Arms {
		valid := "yes"
		if !a.Valid {
			valid = "NO: " + a.Reason
		}
		armRows = append(armRows, []string{a.Name, flagText(a.Flags), fmt.Sprint(a.Steps), Duration(a.MedianNs), Duration(a.P10Ns), Duration(a.P90Ns), valid})
	}
	table([]string{"arm", "flags", "steps", "median step", "p10", "p90", "valid"},
		[]bool{false, false, true, true, true, true, false}, armRows)
	b.WriteString("\n")
	line := fmt.Sprintf("step time B/A: %s — %s", RatioText(c.Ratio.Value, c.Ratio.CILow, c.Ratio.CIHigh), strings.ToUpper(c.Verdict))
	if c.Verdict == attrib.VerdictInvalid {
		// No ratio of an invalid arm is worth reading.
		line = "step time B/A: — INVALID (see the arms' valid column)"
	}
	switch {
	case c.Noise != nil:
		line += fmt.Sprintf("; noise A′/A: %s", RatioText(c.Noise.Ratio, c.Noise.CILow, c.Noise.CIHigh))
	case len(c.Arms) > 2 && !c.Arms[2].Valid:
		line += "; A′ was invalid, so no noise envelope"
	default:
		line += "; no A′ run, so no noise envelope"
	}
	if md {
		line = "**" + escape.Markdown(line) + "**"
	}
	b.WriteString(line + "\n")
	b.WriteString("\n")
	var cells [][]string
	for _, r := range rows {
		key := r.Key
		if r.Group == attrib.GroupKernel {
			key = attrib.DisplayName(r.Key)
		}
		ratio := "-"
		if r.Ratio != 0 {
			ratio = RatioText(r.Ratio, r.CILow, r.CIHigh)
		}
		delta := Duration(r.DeltaNs)
		if r.DeltaNs > 0 {
			delta = "+" + delta
		}
		cells = append(cells, []string{r.Group, key, Duration(r.ANs), Duration(r.BNs), delta, ratio, r.Verdict})
	}
	if len(cells) == 0 {
		b.WriteString("no per-kernel, category or stage rows (the arms carried no per-step GPU times)\n")
	} else {
		table([]string{"group", "name", "A /step", "B /step", "Δ", "B/A [95% CI]", "verdict"},
			[]bool{false, false, true, true, true, true, false}, cells)
	}
	if more > 0 {
		fmt.Fprintf(&b, "… %d more rows\n", more)
	}
	if c.Method != "" {
		if md {
			fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(c.Method))
		} else {
			fmt.Fprintf(&b, "\nmethod: %s\n", escape.Control(c.Method))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
