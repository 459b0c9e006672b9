package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/load"
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

JSON: {"a", "b", "totals_a", "totals_b" (as report's "totals": busy_ns
the kernels' busy time, gpu_busy_ns with memcpy/memset), "only_a", "only_b", "kernels",
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
			warnImports(cmd.ErrOrStderr(), d.Warnings)
			if werr := report.WriteDiff(cmd.OutOrStdout(), d, report.Options{By: by, Format: format, Top: top}); werr != nil {
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
	cmd.Flags().IntVar(&top, "top", -1, "rows to show (0 = all; the kernel table shows up to this many kernels and as many memcpy/memset rows)")
	cmd.Flags().StringVar(&rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones")
	rootCmd.AddCommand(cmd)
}

// diffFiles imports and aggregates both files and compares B against A
// (attrib.DiffSnapshots). Errors are the importers' (they name file and offset).
// When an input is damaged but its reader kept what came before the
// damage, the diff of what was kept comes back with a damagedInputs error.
func diffFiles(pathA, pathB string, rules *attrib.Rules) (*attrib.Diff, error) {
	// Both files are read at once (load.Read: one worker per core).
	loaded, err := load.Read([]string{pathA, pathB}, load.Options{})
	if err != nil {
		return nil, err
	}
	var damaged damagedInputs
	for _, d := range loaded.Damaged {
		damaged = append(damaged, d.Err)
	}
	snap := func(t *tracer.Trace) *attrib.Snapshot {
		ag := attrib.NewAggregator(rules)
		ag.AddTrace(t)
		return ag.Snapshot()
	}
	a, b := snap(loaded.Traces[0]), snap(loaded.Traces[1])
	if len(a.Kernels)+len(a.Transfers) == 0 && len(b.Kernels)+len(b.Transfers) == 0 {
		return nil, fmt.Errorf("neither %s nor %s holds GPU kernels or transfers: nothing to diff (a CPU-only trace?)", pathA, pathB)
	}
	if len(damaged) > 0 {
		return attrib.DiffSnapshots(a, b), damaged
	}
	return attrib.DiffSnapshots(a, b), nil
}

// warnImports prints the warnings `report` would show of the inputs
// (their importers' among them), escaped, on w.
func warnImports(w io.Writer, warnings []string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "rlktop: warning: %s\n", escape.Control(m))
	}
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
