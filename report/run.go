package report

import (
	"fmt"
	"io"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// WriteRun writes what `rlktop run --headless` prints when the run ends:
// "json" is the snapshot's Doc (o.Top rows) with "steps" (the step
// summary), "step_rows" (the Doc's steps again, under the name run has
// always used) and "flags" (in force); the other formats are Write's
// report, then — except CSV, which stays one table — a "steps:" line
// (count, median, p10, p90 as units.Duration; "steps: 0 reported" without
// any) and a "flags:" line (K=V, sorted by key; "none reported" without
// any). Errors: Write's, write errors.
func WriteRun(w io.Writer, snap *attrib.Snapshot, steps attrib.StepSummary, flags map[string]string, o Options) error {
	if o.Format == "json" {
		type stepsDoc struct {
			attrib.StepSummary
			// FlopsMedian and MFU: the median over the steps with
			// modelled work of their FLOPs and MFU (work.go); absent
			// without work (MFU: without a device peak).
			FlopsMedian *float64 `json:"flops_median,omitempty"`
			MFU         *float64 `json:"mfu,omitempty"`
			Convention  string   `json:"convention,omitempty"`
		}
		doc := struct {
			*Doc
			Steps    stepsDoc          `json:"steps"`
			StepRows []StepDoc         `json:"step_rows"`
			Flags    map[string]string `json:"flags"`
		}{Flags: flags, Steps: stepsDoc{StepSummary: steps}}
		doc.Doc = NewDoc(snap, o.Top)
		if w := doc.Doc.Work; w != nil {
			doc.Steps.FlopsMedian, doc.Steps.MFU, doc.Steps.Convention = w.FlopsMedian, w.MFU, w.Convention
		}
		doc.StepRows = doc.Doc.Steps
		return encodeJSON(w, doc)
	}
	if err := Write(w, snap, o); err != nil {
		return err
	}
	if o.Format == "csv" {
		// CSV is one table a program reads; lines after it would be
		// rows of the wrong shape (the JSON holds steps and flags).
		return nil
	}
	// A command that reported no step (or no flag) gets a word for it, not
	// a median of "0 ns" and an empty line.
	line := fmt.Sprintf("steps: %d  median %s  p10 %s  p90 %s", steps.Count,
		units.Duration(steps.MedianNs), units.Duration(steps.P10Ns), units.Duration(steps.P90Ns))
	if steps.Count == 0 {
		line = "steps: 0 reported"
	}
	fl := flagPairs(flags)
	if fl == "" {
		fl = "none reported"
	}
	_, err := fmt.Fprintf(w, "\n%s\nflags: %s\n", line, fl)
	return err
}
