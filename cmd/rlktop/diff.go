package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

func init() {
	var by, format, rulesPath string
	var top int
	cmd := &cobra.Command{
		Use:   "diff A B [--by kernel|category|stage] [--format table|json|md] [--top N]",
		Short: "diff two trace files: kernels only in A or B, count and time deltas per kernel, category and stage",
		Long: `diff reads two trace files (any format rlktop imports), aggregates each, and
compares B against A: kernels only in A, only in B, and for the rest the
count and total-time deltas. Kernels are matched by exact name first; the
remaining ones by display name (demangled, template arguments shortened),
so the same kernel built with other template arguments still pairs up
(match "display_name", with the names merged on each side). Categories and
stages are matched by key. Rows are sorted by |Δ time|.

JSON: {"a", "b", "totals_a", "totals_b", "only_a", "only_b", "kernels",
"categories", "stages"}; each row {"key", "display", "match_by",
"count_a", "count_b", "count_delta", "total_a_ns", "total_b_ns",
"delta_ns", "ratio" (B/A; null when only in B), "names_a", "names_b",
"category"}. Times are integer ns.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch by {
			case attrib.GroupKernel, attrib.GroupCategory, attrib.GroupStage:
			default:
				return fmt.Errorf("unknown --by %q (use kernel, category or stage)", by)
			}
			switch format {
			case "table", "json", "md":
			default:
				return fmt.Errorf("unknown --format %q (use table, json or md)", format)
			}
			rules, err := attrib.RulesFor(rulesPath)
			if err != nil {
				return err
			}
			d, err := diffFiles(args[0], args[1], rules)
			if d == nil {
				return err
			}
			if err != nil {
				// Damaged inputs: diff what they held before the damage,
				// say so, exit 1 (README, "Damaged input").
				fmt.Fprintf(cmd.ErrOrStderr(), "rlktop: %v\nrlktop: the diff below covers what the damaged input held before the damage\n", err)
			}
			if werr := writeDiff(cmd.OutOrStdout(), d, by, format, top); werr != nil {
				return werr
			}
			if err != nil {
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", attrib.GroupKernel, "kernel|category|stage (table/md; JSON holds all three)")
	cmd.Flags().StringVar(&format, "format", "table", "table|json|md")
	cmd.Flags().IntVar(&top, "top", -1, "rows to show (0 = all; default 25 for table/md, all for json)")
	cmd.Flags().StringVar(&rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones")
	rootCmd.AddCommand(cmd)
}

// diffFiles imports and aggregates both files and compares B against A
// (attrib.Compare). Errors are the importers' (they name file and offset).
// When an input is damaged but its reader kept what came before the
// damage, the diff of what was kept comes back with a damagedInputs error.
func diffFiles(pathA, pathB string, rules *attrib.Rules) (*attrib.Diff, error) {
	var damaged damagedInputs
	snap := func(path string) (*attrib.Snapshot, error) {
		t, err := tracefile.Open(path, tracefile.Options{})
		if t == nil {
			return nil, err
		}
		if err != nil {
			damaged = append(damaged, err)
		}
		a := attrib.NewAggregator(rules)
		a.AddTrace(t)
		return a.Snapshot(), nil
	}
	a, err := snap(pathA)
	if err != nil {
		return nil, err
	}
	b, err := snap(pathB)
	if err != nil {
		return nil, err
	}
	if len(a.Kernels)+len(a.Transfers) == 0 && len(b.Kernels)+len(b.Transfers) == 0 {
		return nil, fmt.Errorf("neither %s nor %s holds GPU kernels or transfers: nothing to diff (a CPU-only trace?)", pathA, pathB)
	}
	if len(damaged) > 0 {
		return attrib.Compare(a, b), damaged
	}
	return attrib.Compare(a, b), nil
}

// damagedInputs are the importers' errors of inputs whose start was kept.
type damagedInputs []error

func (d damagedInputs) Error() string {
	s := make([]string, len(d))
	for i, e := range d {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// diffRowDoc is one JSON row of `rlktop diff`.
type diffRowDoc struct {
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

type totalsDoc struct {
	KernelCount   int64 `json:"kernel_count"`
	KernelTotalNs int64 `json:"kernel_total_ns"`
	TransferCount int64 `json:"transfer_count"`
	TransferNs    int64 `json:"transfer_ns"`
	GPUTotalNs    int64 `json:"gpu_total_ns"`
	BusyNs        int64 `json:"busy_ns"`
	SpanNs        int64 `json:"span_ns"`
}

type diffDoc struct {
	A          string       `json:"a"`
	B          string       `json:"b"`
	TotalsA    totalsDoc    `json:"totals_a"`
	TotalsB    totalsDoc    `json:"totals_b"`
	OnlyA      int          `json:"only_a"` // kernel rows only in A
	OnlyB      int          `json:"only_b"`
	Kernels    []diffRowDoc `json:"kernels"`
	Categories []diffRowDoc `json:"categories"`
	Stages     []diffRowDoc `json:"stages"`
}

func totals(t attrib.Totals) totalsDoc {
	return totalsDoc{t.KernelCount, t.KernelTotalNs, t.TransferCount, t.TransferNs, t.GPUTotalNs, t.BusyNs, t.SpanNs}
}

func diffRows(rows []attrib.DiffRow, top int) []diffRowDoc {
	if top > 0 && len(rows) > top {
		rows = rows[:top]
	}
	out := make([]diffRowDoc, 0, len(rows))
	for _, r := range rows {
		d := diffRowDoc{Key: r.Key, Display: r.Display, MatchBy: r.MatchBy, CountA: r.CountA, CountB: r.CountB,
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

func writeDiff(w io.Writer, d *attrib.Diff, by, format string, top int) error {
	if top < 0 {
		top = 25
		if format == "json" {
			top = 0
		}
	}
	if format == "json" {
		doc := diffDoc{A: d.A, B: d.B, TotalsA: totals(d.TotalsA), TotalsB: totals(d.TotalsB), OnlyA: d.OnlyA, OnlyB: d.OnlyB,
			Kernels: diffRows(d.Kernels, top), Categories: diffRows(d.Categories, top), Stages: diffRows(d.Stages, top)}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(doc)
	}
	md := format == "md"
	rows := d.Kernels
	switch by {
	case attrib.GroupCategory:
		rows = d.Categories
	case attrib.GroupStage:
		rows = d.Stages
	}
	more := 0
	if top > 0 && len(rows) > top {
		more = len(rows) - top
		rows = rows[:top]
	}
	ga, gb := d.TotalsA.GPUTotalNs, d.TotalsB.GPUTotalNs
	head := []string{
		fmt.Sprintf("A: %s — %d kernels, GPU time %s", escape.Control(d.A), d.TotalsA.KernelCount, report.Duration(ga)),
		fmt.Sprintf("B: %s — %d kernels, GPU time %s", escape.Control(d.B), d.TotalsB.KernelCount, report.Duration(gb)),
		fmt.Sprintf("GPU time B/A %s; kernel names only in A: %d, only in B: %d", ratioText(ga, gb), d.OnlyA, d.OnlyB),
	}
	header := []string{by, "match", "count A", "count B", "Δ count", "time A", "time B", "Δ time", "B/A"}
	// Rows whose display names collide show what tells them apart
	// (attrib.DistinctNames, the rule of the kernels table).
	keys, disps := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		keys[i], disps[i] = r.Key, r.Display
	}
	shown := attrib.DistinctNames(keys, disps)
	var cells [][]string
	for i, r := range rows {
		name := shown[i]
		match := map[string]string{"name": "name", "display_name": "display name", "only_a": "only in A", "only_b": "only in B"}[r.MatchBy]
		if r.MatchBy == "display_name" {
			match = fmt.Sprintf("display name (%d↔%d names)", len(r.NamesA), len(r.NamesB))
		}
		delta := report.Duration(r.DeltaNs)
		if r.DeltaNs > 0 {
			delta = "+" + delta
		}
		cells = append(cells, []string{escape.Control(name), match, fmt.Sprint(r.CountA), fmt.Sprint(r.CountB), fmt.Sprintf("%+d", r.CountB-r.CountA),
			report.Duration(r.TotalA), report.Duration(r.TotalB), delta, ratioText(r.TotalA, r.TotalB)})
	}
	if md {
		for _, h := range head {
			fmt.Fprintf(w, "%s  \n", mdCell(h))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, c := range cells {
			for i := range c {
				c[i] = mdCell(c[i])
			}
			fmt.Fprintln(w, "| "+strings.Join(c, " | ")+" |")
		}
		if more > 0 {
			fmt.Fprintf(w, "\n_… %d more rows (--top 0 for all)_\n", more)
		}
		return nil
	}
	for _, h := range head {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, c := range cells {
		c[0] = elide(c[0], 72)
		fmt.Fprintln(tw, strings.Join(c, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more > 0 {
		fmt.Fprintf(w, "… %d more rows (--top 0 for all)\n", more)
	}
	return nil
}

// ratioText is B/A to three decimals, "only in B" when A is 0.
func ratioText(a, b int64) string {
	switch {
	case a == 0 && b == 0:
		return "-"
	case a == 0:
		return "new"
	}
	return fmt.Sprintf("%.3f", float64(b)/float64(a))
}

func mdCell(s string) string {
	r := strings.NewReplacer("|", `\|`, "<", `\<`, ">", `\>`, "*", `\*`, "_", `\_`, "`", "\\`")
	return r.Replace(s)
}

// elide shortens s to n runes (n >= 16), keeping its start and its last
// 12 runes, where kernel names differ most.
func elide(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-13]) + "…" + string(r[len(r)-12:])
}
