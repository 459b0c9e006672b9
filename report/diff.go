package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// DiffRowDoc is one JSON row of `rlktop diff`.
type DiffRowDoc struct {
	Key        string   `json:"key"`
	Display    string   `json:"display"`
	MatchBy    string   `json:"match_by"` // name, display_name, only_a, only_b
	CountA     int64    `json:"count_a"`
	CountB     int64    `json:"count_b"`
	CountDelta int64    `json:"count_delta"`
	TotalANs   int64    `json:"total_a_ns"`
	TotalBNs   int64    `json:"total_b_ns"`
	DeltaNs    int64    `json:"delta_ns"`
	Ratio      *float64 `json:"ratio"` // B/A; null when only in B
	NamesA     []string `json:"names_a,omitempty"`
	NamesB     []string `json:"names_b,omitempty"`
	Category   string   `json:"category,omitempty"`
}

// DiffDoc is the JSON of `rlktop diff`: both sides' totals (TotalsDoc, as
// in report's JSON: busy_ns kernels only, gpu_busy_ns with copies), the
// kernel rows only in A or B, and the kernel, category and stage rows.
type DiffDoc struct {
	A          string       `json:"a"`
	B          string       `json:"b"`
	TotalsA    TotalsDoc    `json:"totals_a"`
	TotalsB    TotalsDoc    `json:"totals_b"`
	OnlyA      int          `json:"only_a"` // kernel rows only in A
	OnlyB      int          `json:"only_b"`
	Kernels    []DiffRowDoc `json:"kernels"`
	Categories []DiffRowDoc `json:"categories"`
	Stages     []DiffRowDoc `json:"stages"`
}

func diffRows(rows []attrib.DiffRow, top int) []DiffRowDoc {
	if top > 0 && len(rows) > top {
		rows = rows[:top]
	}
	out := make([]DiffRowDoc, 0, len(rows))
	for _, r := range rows {
		d := DiffRowDoc{Key: r.Key, Display: r.Display, MatchBy: r.MatchBy, CountA: r.CountA, CountB: r.CountB,
			CountDelta: r.CountB - r.CountA, TotalANs: r.TotalA, TotalBNs: r.TotalB, DeltaNs: r.DeltaNs,
			NamesA: r.NamesA, NamesB: r.NamesB, Category: r.Category}
		if !math.IsInf(r.Ratio, 0) {
			v := r.Ratio
			d.Ratio = &v
		}
		out = append(out, d)
	}
	return out
}

// WriteDiff writes d (B against A, attrib.DiffSnapshots) as a table (default),
// "json" (DiffDoc, all three groups) or "md". o.By picks the rows of the
// text formats: attrib.GroupKernel (default), GroupCategory or GroupStage.
// o.Top limits the rows (0 = all; < 0 = 25 for table/md, all for json).
// Names are escaped (escape.Control; md: escape.Markdown); rows whose
// display names collide show what tells them apart
// (attrib.DistinctNames). Errors: ErrOption for an unknown format or
// group; write errors.
func WriteDiff(w io.Writer, d *attrib.Diff, o Options) error {
	by := o.By
	if by == "" {
		by = attrib.GroupKernel
	}
	rows := d.Kernels
	switch by {
	case attrib.GroupKernel:
	case attrib.GroupCategory:
		rows = d.Categories
	case attrib.GroupStage:
		rows = d.Stages
	default:
		return fmt.Errorf("%w: unknown --by %q for a diff (use kernel, category or stage)", ErrOption, by)
	}
	format := o.Format
	if format == "" {
		format = "table"
	}
	top := o.Top
	if top < 0 {
		top = 25
		if format == "json" {
			top = 0
		}
	}
	switch format {
	case "json":
		doc := DiffDoc{A: d.A, B: d.B, TotalsA: totalsDoc(d.TotalsA), TotalsB: totalsDoc(d.TotalsB), OnlyA: d.OnlyA, OnlyB: d.OnlyB,
			Kernels: diffRows(d.Kernels, top), Categories: diffRows(d.Categories, top), Stages: diffRows(d.Stages, top)}
		return encodeJSON(w, doc)
	case "table", "md":
	default:
		return fmt.Errorf("%w: unknown format %q for a diff (use table, json or md)", ErrOption, format)
	}
	md := format == "md"
	more := 0
	if top > 0 && len(rows) > top {
		more = len(rows) - top
		rows = rows[:top]
	}
	ga, gb := d.TotalsA.GPUTotalNs, d.TotalsB.GPUTotalNs
	head := []string{
		fmt.Sprintf("A: %s — %d kernels, GPU time %s", escape.Control(d.A), d.TotalsA.KernelCount, units.Duration(ga)),
		fmt.Sprintf("B: %s — %d kernels, GPU time %s", escape.Control(d.B), d.TotalsB.KernelCount, units.Duration(gb)),
		fmt.Sprintf("GPU time B/A %s; kernel names only in A: %d, only in B: %d", units.RatioOf(ga, gb), d.OnlyA, d.OnlyB),
	}
	header := []string{by, "match", "count A", "count B", "Δ count", "time A", "time B", "Δ time", "B/A"}
	right := []bool{false, false, true, true, true, true, true, true, true} // numbers right-aligned
	keys, disps := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		keys[i], disps[i] = r.Key, r.Display
	}
	shown := attrib.DistinctNames(keys, disps)
	var cells [][]string
	for i, r := range rows {
		match := map[string]string{"name": "name", "display_name": "display name", "only_a": "only in A", "only_b": "only in B"}[r.MatchBy]
		if r.MatchBy == "display_name" {
			match = fmt.Sprintf("display name (%d↔%d names)", len(r.NamesA), len(r.NamesB))
		}
		delta := units.Duration(r.DeltaNs)
		if r.DeltaNs > 0 {
			delta = "+" + delta
		}
		cells = append(cells, []string{escape.Control(shown[i]), match, fmt.Sprint(r.CountA), fmt.Sprint(r.CountB), fmt.Sprintf("%+d", r.CountB-r.CountA),
			units.Duration(r.TotalA), units.Duration(r.TotalB), delta, units.RatioOf(r.TotalA, r.TotalB)})
	}
	var b strings.Builder
	if md {
		for _, h := range head {
			fmt.Fprintf(&b, "%s  \n", escape.Markdown(h))
		}
		b.WriteString("\n")
		writeMDGrid(&b, grid{header: header, right: right, rows: cells})
		if more > 0 {
			fmt.Fprintf(&b, "\n_… %d more rows (--top 0 for all)_\n", more)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, h := range head {
		b.WriteString(h + "\n")
	}
	b.WriteString("\n")
	fitNameColumn(cells, NameColumnWidth)
	writeTextGrid(&b, grid{header: header, right: right, rows: cells})
	if more > 0 {
		fmt.Fprintf(&b, "… %d more rows (--top 0 for all)\n", more)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
