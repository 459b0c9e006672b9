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

// SuggestDoc is the JSON of `rlktop compare --suggest`: the findings of
// the profile run (ranked, attrib.Finding) and one livestate.Tried per
// flag-testable finding, in rank order.
type SuggestDoc struct {
	ProfileSteps int64             `json:"profile_steps"`
	Flags        map[string]string `json:"flags"` // in force during the profile
	Findings     []attrib.Finding  `json:"findings"`
	Tried        []livestate.Tried `json:"tried"`
}

// WriteSuggest writes doc: "json" whole; table (default) and "md" the
// findings, one line each, then one table of the tried flags (step B/A
// and the finding's category B/A as units.Ratio, verdict, outputs) and a
// note per comparison another process shared the GPU with. Names are
// escaped (escape.Control; md: escape.Markdown). Of o only Format is
// read. Errors: write errors.
func WriteSuggest(w io.Writer, doc *SuggestDoc, o Options) error {
	format := o.Format
	if format == "json" {
		return encodeJSON(w, doc)
	}
	md := format == "md"
	esc := escape.Control
	if md {
		esc = escape.Markdown
	}
	var b strings.Builder
	if md {
		fmt.Fprintf(&b, "**Findings** (profile of %d steps; flags %s)\n\n", doc.ProfileSteps, esc(flagPairs(doc.Flags)))
	} else {
		fmt.Fprintf(&b, "findings (profile of %d steps; flags %s):\n", doc.ProfileSteps, esc(flagPairs(doc.Flags)))
	}
	if len(doc.Findings) == 0 {
		b.WriteString("  none: no rule of the findings table fired\n")
	}
	for i, f := range doc.Findings {
		test := "no flag to test"
		if f.Flag != nil {
			test = "test " + FlagTest(&f)
		}
		ev := ""
		if len(f.Evidence) > 0 {
			ev = f.Evidence[0]
		}
		line := esc(fmt.Sprintf("%s [%s]: %s; %s", f.Title, f.ID, ev, test))
		if md {
			fmt.Fprintf(&b, "%d. %s\n", i+1, line)
		} else {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, line)
		}
	}
	header := []string{"finding", "flag", "A (now)", "B (suggested)", "step B/A [95% CI]", "verdict", "category B/A", "outputs"}
	var rows [][]string
	for _, t := range doc.Tried {
		from := t.From
		if from == "" {
			from = "(unset)"
		}
		r := []string{t.FindingID, t.Key, from, t.To, "-", "-", "-", "-"}
		switch {
		case t.Err != "":
			r[5] = "error: " + t.Err
		default:
			r[4] = units.Ratio(t.Step.Value, t.Step.CILow, t.Step.CIHigh)
			r[5] = t.Verdict
			if !t.Valid {
				r[5] = "invalid: " + t.Reason
			}
			if t.Row != "" && t.RowRatio.Value > 0 {
				r[6] = t.Row + " " + units.Ratio(t.RowRatio.Value, t.RowRatio.CILow, t.RowRatio.CIHigh)
			}
			if t.HaveOutputs {
				bw := "not bitwise"
				if t.Bitwise {
					bw = "bitwise"
				}
				r[7] = fmt.Sprintf("max |Δ| %.2g, %s", t.MaxAbs, bw)
				if t.NaN > 0 {
					r[7] += fmt.Sprintf(", %d NaN", t.NaN)
				}
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		b.WriteString("\nno finding names a flag to test here\n")
	} else {
		writeSmallTable(&b, "suggested flags, each compared with the current setting (interleaved arms, A/A′ noise)", header, rows, md)
		for _, t := range doc.Tried {
			if t.CoTenant {
				fmt.Fprintf(&b, "note: %s: another process shared the GPU while it was compared; its timing is not the command's alone\n", esc(t.FindingID))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
