package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/loop/runrecord"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/load"
)

func init() { rootCmd.AddCommand(newReportCmd()) }

// newReportCmd builds `rlktop report` (a fresh command per call, so tests
// need not touch rootCmd).
func newReportCmd() *cobra.Command { return newReportCmdWith(load.Options{}) }

// newReportCmdWith is newReportCmd loading with base, in which the flags
// then set what they set: tests pass the sizes no flag offers
// (load.Options.PartWindow, Spill) to take small traces through a long
// window's path, as an argument rather than a hidden flag or a package
// variable.
func newReportCmdWith(base load.Options) *cobra.Command {
	var opts report.Options
	var rulesPath, findingsPath string
	var meta bool
	var wf workFlags
	lo := base
	cmd := &cobra.Command{
		Use:   "report FILE...",
		Short: "print kernel, category, stage or step tables of trace files",
		Long: `report reads one or more trace files (Kineto / Chrome trace JSON, .json or
.json.gz, and the other formats rlktop imports), attributes GPU time to
kernels, categories, stages and steps, and prints one view. Several files
are summed in the kernel, category and stage tables, but each file is a
source of its own (its rank from Kineto's distributedInfo, else its
position in the arguments): the header lists each source's span and steps,
steps are per source, and --by rank (or --by file) shows per source kernel
time, busy and idle time, communication exposed and overlapped with
compute, the step median, and who arrived last at the collectives.
In --by step, "gpu time" sums the durations of the GPU ops launched in the
step: ops on several streams overlap and work can end after the step, so it
can exceed the step's duration (wall time).

JSON output always holds every view: {"totals", "kernels", "categories",
"stages", …}; times are integer nanoseconds.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Top < 0 && cmd.Flags().Changed("top") {
				return fmt.Errorf("--top %d: give 0 (all rows) or a positive number of rows", opts.Top)
			}
			// --by is checked before any file is read (a large one takes
			// minutes), naming every view report has, finding included.
			if views := append(report.Views(), report.ByFinding); !slices.Contains(views, opts.By) {
				return fmt.Errorf("%w: unknown view %q for --by (use one of %s)", report.ErrOption, opts.By, strings.Join(views, ", "))
			}
			// So is --filter's regular expression (report.Write checks it
			// too).
			if _, err := attrib.ParseKernelFilterStrict(opts.Filter); err != nil {
				return report.FilterError(opts.Filter, err)
			}
			rules, err := attrib.RulesFor(rulesPath)
			if err != nil {
				return err
			}
			model, peaks, err := wf.load()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			opts.Width = outputWidth(out)
			// JSON reports of separate ranks (report --format json
			// outputs) merge into what reporting their traces gives.
			if docs, ok, err := readReportDocs(args); err != nil || ok {
				if err != nil {
					return err
				}
				snap, err := report.MergeDocs(docs, args)
				if err != nil {
					return err
				}
				if opts.By == report.ByFinding {
					// Only the snapshot's findings: no timeline,
					// counters or agent outputs travel in a JSON report.
					return findingsWriter(nil, rules, findingsPath)(out, snap, opts)
				}
				applyPeak(snap, peaks)
				return report.Write(out, snap, opts)
			}
			lo.Rules, lo.OpModel, lo.NoShapes = rules, model, wf.noShapes
			lo.Progress = loadProgress(cmd.ErrOrStderr(), args)
			lo.ReadWhole = readWholeSaid(cmd.ErrOrStderr())
			if meta {
				// Large traces are read window by window keeping none of
				// their events.
				loaded, err := load.Meta(args, lo)
				if err != nil {
					return err
				}
				sayDamaged(cmd.ErrOrStderr(), loaded.Damaged, "the report below holds what was read before that point")
				for i, t := range loaded.Traces {
					if err := printMeta(out, i, args, t); err != nil {
						return err
					}
				}
				return nil
			}
			if opts.By == report.ByFinding {
				// Findings need every event: never streamed.
				lo.StreamMinBytes = -1
			}
			loaded, err := load.Report(args, lo)
			if err != nil {
				return err
			}
			// Damaged part way: report what was read before the damage,
			// say so, and exit non-zero.
			sayDamaged(cmd.ErrOrStderr(), loaded.Damaged, "the report below holds what was read before that point")
			partial := len(loaded.Damaged) > 0
			traces := loaded.Traces
			snap := loaded.Snapshot
			applyPeak(snap, peaks, traces...)
			opts.Outputs = append(opts.Outputs, loaded.Outputs...)
			write := report.Write
			if opts.By == report.ByFinding { // findings.go
				write = findingsWriter(traces, rules, findingsPath)
			}
			if err := write(cmd.OutOrStdout(), snap, opts); err != nil {
				return err
			}
			if partial {
				return exitError{code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.By, "by", report.ByKernel, "group by: "+strings.Join(report.Views(), "|")+"|"+report.ByFinding+" (the ranked findings: what owns the step, what to try)")
	f.StringVar(&opts.Format, "format", "table", "output format: "+strings.Join(report.Formats(), "|"))
	f.IntVar(&opts.Top, "top", -1, "rows to show (0 = all; the kernel table shows up to this many kernels and as many memcpy/memset rows)")
	f.StringVar(&opts.Sort, "sort", "", "order kernel rows by: "+strings.Join(attrib.KernelSorts(), "|")+" (default total; name ascending, the rest descending)")
	f.StringVar(&opts.Filter, "filter", "", "keep kernel rows matching: a regular expression on the name (an invalid one is an error), cat:NAME, stage:NAME (as / in the TUI)")
	f.BoolVar(&meta, "meta", false, "print each file's metadata (the run record of rlktop recordings) instead of the tables")
	f.StringVar(&rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones (see tracer/attrib/rules.toml)")
	wf.add(f)
	addStreamFlag(f, &lo)
	f.StringVar(&findingsPath, "findings", "", "with --by finding: TOML file of findings rules layered on the built-in ones (see tracer/attrib/findings.toml)")
	cmd.SetErr(os.Stderr)
	return cmd
}

// printMeta writes the metadata of t, the i-th of paths (report --meta):
// under a "== PATH (format F)" line when there are several.
func printMeta(out io.Writer, i int, paths []string, t *tracer.Trace) error {
	if len(paths) > 1 {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "== %s (format %s)\n", paths[i], t.Format)
	}
	return runrecord.PrintMeta(out, t.Meta)
}
