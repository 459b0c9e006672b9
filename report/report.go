// Package report writes an attrib.Snapshot as text: an aligned table, JSON
// (the contract other tools read), CSV or a GitHub Markdown table. Writers
// only format; every number comes from the snapshot.
package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Views a report can be grouped by.
const (
	ByKernel   = "kernel"
	ByCategory = "category"
	ByStage    = "stage"
	ByStep     = "step"
)

// ErrOption is wrapped by errors about bad Options.
var ErrOption = errors.New("bad report option")

// Options select what a report shows.
type Options struct {
	By     string // ByKernel (default), ByCategory, ByStage, ByStep, ByRank or ByFile
	Format string // "table" (default), "json", "csv", "md"
	// Top limits the rows of the chosen view (and, in JSON, of "kernels"
	// and "transfers"); 0 = all rows, < 0 = the format's default (25 rows
	// for table and md, all for json and csv).
	Top int
	// Sort orders the kernel and transfer rows by an attrib.KernelSorts
	// column ("" = total), descending (name: ascending), as the TUI's
	// kernels table does.
	Sort string
	// Filter keeps the kernel and transfer rows attrib.ParseKernelFilter
	// accepts (a regular expression on the name, cat:NAME, stage:NAME),
	// as the TUI's / filter does; "" keeps all. Totals, categories,
	// stages and steps are not filtered.
	Filter string
	// Outputs are the traces' agent outputs (attrib.Outputs: rlktop.log
	// metrics, rlktop.check NaN checks); JSON gets "metrics" and
	// "checks", table and md a section after the table.
	Outputs []attrib.OutputRow
	// Width, for the table format, is the columns a line may take (the
	// terminal's width; 0 = no limit). A wider table cuts its name column
	// (to MinNameWidth runes at least), then leaves columns out (timing
	// spreads and rates first, never name, count, total or share) and
	// names them under it; longer lines of prose wrap.
	Width int
	// Stage, for WriteFolded, keeps one stage's Python samples ("" = all).
	Stage string
}

// writer is one output format.
type writer func(w io.Writer, s *attrib.Snapshot, o Options) error

var writers = map[string]writer{
	"table": writeTable,
	"json":  writeJSON,
	"csv":   writeCSV,
	"md":    writeMarkdown,
}

// Formats lists the output formats, sorted.
func Formats() []string {
	var f []string
	for k := range writers {
		f = append(f, k)
	}
	slices.Sort(f)
	return f
}

// Views lists the --by values.
func Views() []string {
	return []string{ByKernel, ByCategory, ByStage, ByStep, ByRank, ByFile, ByMemory, ByPython}
}

// Write writes s to w in o.Format grouped by o.By. Errors: ErrOption for an
// unknown format or view; write errors from w.
func Write(w io.Writer, s *attrib.Snapshot, o Options) error {
	if o.Format == "" {
		o.Format = "table"
	}
	if o.By == "" {
		o.By = ByKernel
	}
	wr, ok := writers[o.Format]
	if !ok {
		return fmt.Errorf("%w: unknown format %q (use one of %s)", ErrOption, o.Format, strings.Join(Formats(), ", "))
	}
	if !slices.Contains(Views(), o.By) {
		return fmt.Errorf("%w: unknown view %q for --by (use one of %s)", ErrOption, o.By, strings.Join(Views(), ", "))
	}
	if o.Sort != "" || o.Filter != "" {
		q, err := query(s, o)
		if err != nil {
			return err
		}
		s = q
	}
	if o.Top < 0 {
		switch o.Format {
		case "table", "md":
			o.Top = 25
		default:
			o.Top = 0
		}
	}
	if o.By == ByMemory && o.Format != "json" { // memory.go
		wr = writeMemory
	}
	if o.By == ByPython { // python.go
		wr = writePython
	}
	if err := wr(w, s, o); err != nil {
		return err
	}
	if o.Format == "table" || o.Format == "md" {
		return writeOutputs(w, o.Outputs, o.Format == "md")
	}
	return nil
}

// query returns a shallow copy of s whose kernel and transfer rows are
// filtered by o.Filter and sorted by o.Sort.
func query(s *attrib.Snapshot, o Options) (*attrib.Snapshot, error) {
	by := attrib.ByTotal
	if o.Sort != "" {
		k, err := attrib.ParseKernelSort(o.Sort)
		if err != nil {
			return nil, fmt.Errorf("%w: --sort: %w", ErrOption, err)
		}
		by = k
	}
	f, err := attrib.ParseKernelFilterStrict(o.Filter)
	if err != nil {
		return nil, FilterError(o.Filter, err)
	}
	c := *s
	pick := func(rows []attrib.KernelRow) []attrib.KernelRow {
		var out []attrib.KernelRow
		for i := range rows {
			if f.Match(&rows[i]) {
				out = append(out, rows[i])
			}
		}
		attrib.SortKernels(out, by, by != attrib.ByName)
		return out
	}
	c.Kernels, c.Transfers = pick(s.Kernels), pick(s.Transfers)
	return &c, nil
}

// FilterError is the error of a --filter whose name pattern is not a
// valid regular expression (err, from attrib.ParseKernelFilterStrict):
// it names the filter and what regexp found wrong.
func FilterError(filter string, err error) error {
	return fmt.Errorf("%w: --filter %q: the name pattern is not a valid regular expression: %v (escape ( ) [ ] * + ? . with \\ to match them as text)", ErrOption, filter, err)
}

// Unavailable returns why view cannot be shown for s, or "" when it can.
// Summary-only inputs (sums per kernel, no events) have no stages, steps,
// busy time or p99.
func Unavailable(s *attrib.Snapshot, view string) string {
	if view == ByPython && s.Python == nil {
		return NoPythonText
	}
	if (view == ByRank || view == ByFile) && s.Ranks == nil {
		return "no per-source numbers in this input (rlktop report and open give them for files)"
	}
	if !s.SummaryOnly {
		if view == ByStep && len(s.Steps) == 0 {
			return attrib.NoStepsText
		}
		return ""
	}
	switch view {
	case ByStage:
		return fmt.Sprintf("stages unavailable: the %s input holds only per-kernel sums, no events, so no launch ranges", formatName(s))
	case ByStep:
		return fmt.Sprintf("steps unavailable: the %s input holds only per-kernel sums, no events, so no steps", formatName(s))
	}
	return ""
}

// UnavailableViews lists the views Unavailable rejects for s (the
// per-source views rank and file excepted: JSON gives them as "sources";
// and python, which JSON gives as "python" when there are samples).
func UnavailableViews(s *attrib.Snapshot) []string {
	var v []string
	for _, view := range Views() {
		if view != ByRank && view != ByFile && view != ByPython && Unavailable(s, view) != "" {
			v = append(v, view)
		}
	}
	return v
}

func formatName(s *attrib.Snapshot) string {
	if s.Format == "" {
		return "unknown-format"
	}
	return s.Format
}

func top[T any](rows []T, n int) []T {
	if n > 0 && len(rows) > n {
		return rows[:n]
	}
	return rows
}

// Duration is units.Duration: "850 ns", "12.3 µs", "1.00 ms" (the unit
// chosen after rounding), "1.23 s", from 999.5 s "16 m 40 s", "102 d 04 h".
func Duration(ns int64) string { return units.Duration(ns) }

// Percent is units.Share: a share (0..1) as "12.3%".
func Percent(x float64) string { return units.Share(x) }
