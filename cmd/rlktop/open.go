package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/load"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tui"
)

func init() {
	var rulesPath string
	cmd := &cobra.Command{
		Use:   "open FILE...",
		Short: "the TUI on recorded or imported trace files",
		Long: `open shows trace files (Kineto / Chrome trace JSON, .json or .json.gz, and
the other formats rlktop imports) in the TUI: kernels, categories, stages and
steps. Several files are summed in the kernel, category and stage views;
each file stays a source of its own (its rank from Kineto's distributedInfo,
else its position): the Ranks view shows each source's numbers.

The TUI starts at once with a loading screen that shows the bytes read; the
files are read and attributed in the background. If a file cannot be read,
the TUI closes and the error (file, byte offset, what was expected) is
printed to stderr; the exit status is then 1. If a file is damaged part way
(truncated JSON or gzip) the events before the damage are shown with the
error in the status bar, and on quitting the error is printed and the exit
status is 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules, err := attrib.RulesFor(rulesPath)
			if err != nil {
				return err
			}
			// Fail fast, before the screen switches, on a path that is not there.
			for _, p := range args {
				if _, err := os.Stat(p); err != nil {
					return &tracefile.Error{Path: p, Offset: -1, Msg: "cannot open", Err: tracefile.OpenCause(err)}
				}
			}
			feed := make(chan tea.Msg, 64)
			partial := make(chan error, len(args))
			m := tui.New(tui.Options{Source: strings.Join(args, ", "), Feed: feed})
			go loadTraces(args, rules, feed, partial)
			final, err := tea.NewProgram(m).Run()
			if err != nil {
				return fmt.Errorf("%w (rlktop open needs a terminal; `rlktop report FILE` prints the same tables as text)", err)
			}
			if fm, ok := final.(*tui.Model); ok && fm.Err() != nil {
				return fm.Err()
			}
			select {
			case err := <-partial:
				return err
			default:
				return nil
			}
		},
	}
	cmd.Flags().StringVar(&rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones (see tracer/attrib/rules.toml)")
	rootCmd.AddCommand(cmd)
}

// loadTraces reads and attributes the files, reporting progress, the
// snapshot or a fatal error on feed, then closes it. It runs on its own
// goroutine and talks to the TUI only through feed. Progress messages are
// dropped when the TUI is behind (the reader never waits on the screen);
// the snapshot and errors are always delivered. A file damaged part way
// whose importer returned the events before the damage is kept: its error
// goes to the status bar and to partial, for the exit status.
func loadTraces(paths []string, rules *attrib.Rules, feed chan<- tea.Msg, partial chan<- error) {
	defer close(feed)
	// The files are read in parallel (one worker per core); progress is
	// the bytes read over all of them, the results come in argument order.
	phase := "reading"
	if len(paths) > 1 {
		phase = fmt.Sprintf("reading %d files", len(paths))
	}
	var size int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	feed <- tui.ProgressMsg{Phase: phase, Read: 0, Size: size}
	loaded, err := load.Read(paths, load.Options{Progress: func(n, size int64) {
		select {
		case feed <- tui.ProgressMsg{Phase: phase, Read: n, Size: size}:
		default:
		}
	}})
	if err != nil {
		feed <- tui.ErrMsg{Err: err, Fatal: true}
		return
	}
	for _, d := range loaded.Damaged {
		partial <- d.Err
		feed <- tui.ErrMsg{Err: d.Err}
	}
	traces := loaded.Traces
	// The bar stays full while attributing (the loading screen said
	// "0 B read · attributing…" after reading the whole file).
	feed <- tui.ProgressMsg{Phase: "attributing", Read: size, Size: size}
	// A rocprofv3 run's several CSV files link only when merged; each
	// run (file) is then one source (its own steps and span; the Ranks
	// view shows each).
	runs := loaded.Runs()
	snap := attrib.CombineSources(runs, rules)
	applyPeak(snap, attrib.DefaultPeaks(), traces...)
	tl := timelineOf(runs, snap, rules)
	steps := stepSnapshots(runs, rules, maxStepSnapshots)
	for _, st := range steps {
		applyPeak(st.Snapshot, attrib.DefaultPeaks(), traces...)
	}
	// The Findings view sees what `report --by finding` sees: the agent
	// outputs of every file and, for one run, its counters and flags; its
	// timeline is tl (the idle finding covers the ops tl holds: all of
	// them up to attrib.DefaultTimelineOps).
	var outputs []attrib.OutputRow
	for _, t := range traces {
		outputs = append(outputs, attrib.Outputs(t)...)
	}
	in := findingsInputOf(snap, traces, rules, outputs, tl)
	feed <- tui.SnapshotMsg{Snapshot: snap, Timeline: tl, Steps: steps, Findings: &in}
}

// maxStepSnapshots bounds the steps `open` aggregates one by one (the
// first ones, in step order): each is a snapshot of its own.
const maxStepSnapshots = 1000

// timelineOf is the Timeline view's data for runs (one source each, in
// source order, as CombineSources numbered them in snap): one source's
// timeline, or every source's merged (attrib.MergeTimelines: lanes per
// rank, named "r3" when the ranks came from the traces, else "f2" by
// position), the attrib.DefaultTimelineOps bound shared among them.
// Summary-only runs have no timeline (their lanes are absent); nil when
// no run has events.
func timelineOf(runs []*tracer.Trace, snap *attrib.Snapshot, rules *attrib.Rules) *attrib.Timeline {
	parts := make([]*attrib.Timeline, len(runs))
	labels := make([]string, len(runs))
	some := false
	for i, t := range runs {
		labels[i] = fmt.Sprintf("f%d", i)
		if r := snap.Ranks.Source(i); r != nil && snap.Ranks.ByRank {
			labels[i] = fmt.Sprintf("r%d", r.Rank)
		}
		if t.SummaryOnly {
			continue
		}
		parts[i] = attrib.BuildTimeline(t.Events, t.Strings, t.Contexts, rules, max(attrib.DefaultTimelineOps/len(runs), 1))
		some = true
	}
	if !some {
		return nil
	}
	if len(runs) == 1 {
		return parts[0]
	}
	return attrib.MergeTimelines(parts, labels)
}

// stepSnapshots aggregates runs (one source each, in source order) one
// step at a time: for each step number (the first max, ascending), the
// events whose launch context is in that step (tracer.Context.Step, the
// step window of the launching process) and the step ranges numbered so,
// of every run (attrib.CombineSources with the same source order, so a
// step's Ranks compare the ranks' step k). Events in no step (context
// step -1, or no context) belong to none. A step with no event but its
// own range, nor memory event, in any run (not traced) gets none. nil
// when no run has a traced step.
func stepSnapshots(runs []*tracer.Trace, rules *attrib.Rules, max int) []tui.StepSnapshot {
	by := make([]map[int64][]tracer.Event, len(runs))
	all := map[int64]bool{}
	for r, t := range runs {
		by[r] = map[int64][]tracer.Event{}
		for i := range t.Events {
			e := &t.Events[i]
			step := int64(-1)
			switch {
			case e.Kind == tracer.KindStep:
				step = e.Value
			case e.Ctx != 0 && int(e.Ctx) < len(t.Contexts):
				step = t.Contexts[e.Ctx].Step
			}
			if step >= 0 {
				by[r][step] = append(by[r][step], *e)
				// A step with nothing but its own range was not traced
				// (a Python command's agent profiles some steps only):
				// scrubbing to it would show empty tables.
				all[step] = all[step] || e.Kind != tracer.KindStep
			}
		}
	}
	mem := stepMemory(runs)
	for k := range mem {
		if _, ok := all[k]; ok {
			all[k] = true
		}
	}
	var keys []int64
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if all[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) > max {
		keys = keys[:max]
	}
	out := make([]tui.StepSnapshot, 0, len(keys))
	for _, k := range keys {
		var snap *attrib.Snapshot
		if len(runs) == 1 {
			a := attrib.NewAggregator(rules)
			one := *runs[0]
			one.Events, one.Warnings, one.Dropped = by[0][k], nil, 0
			a.AddTrace(&one)
			snap = a.Snapshot()
		} else {
			parts := make([]*tracer.Trace, len(runs))
			for r, t := range runs {
				one := *t
				one.Events, one.Warnings, one.Dropped, one.PySamples, one.Memory = by[r][k], nil, 0, nil, nil
				parts[r] = &one
			}
			snap = attrib.CombineSources(parts, rules)
		}
		snap.Python = stepPython(runs, k) // python.go
		if m := mem[k]; len(m.recs) > 0 {
			snap.Memory = attrib.BuildMemory(m.recs, m.windows)
		}
		out = append(out, tui.StepSnapshot{Step: k, Snapshot: snap})
	}
	return out
}

// memOfStep is one step's memory events, attributed over the whole
// trace, and its windows.
type memOfStep struct {
	recs    []attrib.MemRecord
	windows []attrib.MemStepWindow
}

// stepMemory groups runs' memory events by the step they ran in (each
// attributed once, over its whole trace: its operator, stage and step),
// for each step snapshot's own memory model. The allocator's totals
// travel with each event, so a step's levels and peaks are the run's;
// a block allocated in an earlier step and freed in this one counts as
// a free without its allocation, one freed later as live at the step's
// end.
func stepMemory(runs []*tracer.Trace) map[int64]memOfStep {
	out := map[int64]memOfStep{}
	for r, t := range runs {
		recs, windows := attrib.TraceMemory(t, r)
		for _, rec := range recs {
			if rec.Step >= 0 {
				m := out[rec.Step]
				m.recs = append(m.recs, rec)
				out[rec.Step] = m
			}
		}
		for _, w := range windows {
			if m, ok := out[w.Step]; ok {
				m.windows = append(m.windows, w)
				out[w.Step] = m
			}
		}
	}
	return out
}
