package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/fileout"
	"github.com/rlktop/rlktop/report/columnar"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/load"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

func init() { rootCmd.AddCommand(newExportCmd()) }

// newExportCmd builds `rlktop export` (a fresh command per call, so tests
// need not touch rootCmd).
func newExportCmd() *cobra.Command {
	var (
		out, stepsOut, format, rulesPath, stage string
		opts                                    tracefile.ExportOptions
		lo                                      load.Options
	)
	cmd := &cobra.Command{
		Use:   "export FILE... -o OUT",
		Short: "write a trace as Chrome trace-event JSON (Perfetto, HTA) or Parquet tables (DuckDB, Spark, Polars)",
		Long: `export reads FILE in any format rlktop opens (rlktop recordings, Kineto /
Chrome trace JSON, …) and writes

  --format chrome (default): Chrome trace-event JSON that Perfetto UI,
    chrome://tracing and Holistic Trace Analysis open; OUT ending in .gz is
    gzip-compressed. One FILE.
  --format parquet: two Parquet files, OUT (its name must end in .parquet)
    with one row per GPU op (source, rank, device, stream, kind, name,
    display_name, category, stage ("" outside every stage), step,
    start_ns, end_ns, dur_ns, correlation, bytes: a memcpy's or memset's
    bytes, 0 for kernels, whose modelled bytes are in report's JSON) and
    OUT's name with
    .steps.parquet (or --steps-output) with one row per step (source, rank,
    step, start_ns, end_ns, dur_ns, gpu_ns, gpu_ops); a FILE without GPU
    work gives its CPU operators as rows (device -1). Several FILEs (e.g.
    one per rank) go into the same two files, read in parallel; "source" is
    the FILE's position. Kineto FILEs of 256 MiB or more together are read
    one after another, window by window, and never held whole. Schema:
    report/columnar's package doc.
  --format folded: the Python agent's stack samples of rlktop recordings
    as folded stacks, one line per stack, "f (file:line);g (file:line) N"
    (outermost first, N samples), which flamegraph.pl and speedscope read;
    --stage keeps one stage's samples. Several FILEs are summed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("export: no output file: add -o OUT.json, -o OUT.json.gz or (--format parquet) -o OUT.parquet")
			}
			switch format {
			case "chrome":
				if len(args) != 1 {
					return fmt.Errorf("export --format chrome takes one FILE (got %d); --format parquet takes several", len(args))
				}
				return exportChrome(cmd, args[0], out, opts)
			case "parquet":
				if err := parquetName("-o", out); err != nil {
					return err
				}
				if stepsOut != "" {
					if err := parquetName("--steps-output", stepsOut); err != nil {
						return err
					}
				}
				rules, err := attrib.RulesFor(rulesPath)
				if err != nil {
					return err
				}
				steps := stepsOut
				if steps == "" {
					steps = strings.TrimSuffix(out, ".parquet") + ".steps.parquet"
				}
				lo.Rules = rules
				return exportParquet(cmd, args, out, steps, lo)
			case "folded": // python.go
				return exportFolded(cmd, args, out, stage)
			}
			return fmt.Errorf("export --format %q: give chrome, parquet or folded", format)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (.json, or .json.gz for gzip; .parquet with --format parquet)")
	cmd.Flags().StringVar(&format, "format", "chrome", "output format: chrome|parquet|folded (Python samples as folded stacks: flamegraph.pl, speedscope)")
	cmd.Flags().StringVar(&stage, "stage", "", "--format folded: only the samples of this stage")
	cmd.Flags().StringVar(&stepsOut, "steps-output", "", "--format parquet: the steps file (default: OUT with .steps.parquet)")
	cmd.Flags().StringVar(&rulesPath, "rules", "", "--format parquet: TOML file of category rules tried before the built-in ones")
	cmd.Flags().BoolVar(&opts.NoFlows, "no-flows", false, "leave out the launch→kernel flow arrows")
	cmd.Flags().BoolVar(&opts.NoCounters, "no-counters", false, "leave out counter tracks (telemetry)")
	addStreamFlag(cmd.Flags(), &lo)
	return cmd
}

// parquetName refuses a Parquet output whose name does not end in
// .parquet (case-insensitive): DuckDB, Polars and Spark pick the reader
// by that suffix (DuckDB's FROM 'x.json' reads JSON), and a x.json
// holding Parquet misleads every later reader, rlktop included.
func parquetName(flag, path string) error {
	if strings.HasSuffix(strings.ToLower(path), ".parquet") {
		return nil
	}
	base := strings.TrimSuffix(path, filepath.Ext(path))
	if strings.HasSuffix(strings.ToLower(path), ".json.gz") {
		base = path[:len(path)-len(".json.gz")]
	}
	chrome := ""
	if lp := strings.ToLower(path); strings.HasSuffix(lp, ".json") || strings.HasSuffix(lp, ".json.gz") {
		chrome = "; for a trace-event JSON file use --format chrome"
	}
	return fmt.Errorf("export --format parquet %s %s: the name must end in .parquet (e.g. %s %s.parquet: DuckDB, Polars and Spark choose their reader by it)%s", flag, path, flag, base, chrome)
}

// exportChrome writes one file as Chrome trace-event JSON.
func exportChrome(cmd *cobra.Command, in, out string, opts tracefile.ExportOptions) error {
	loaded, err := load.Read([]string{in}, load.Options{Progress: loadProgress(cmd.ErrOrStderr(), []string{in})})
	if err != nil {
		return fmt.Errorf("%w; nothing was written to %s", err, out)
	}
	t := loaded.Traces[0]
	warnImports(cmd.ErrOrStderr(), t.Warnings)
	// A damaged input: export what its reader kept, say so, exit 1
	// (README, "Damaged input").
	sayDamaged(cmd.ErrOrStderr(), loaded.Damaged, exportedKept)
	if err := tracefile.ExportFile(out, t, opts); err != nil {
		return fmt.Errorf("%w (%s may be incomplete)", err, out)
	}
	if st, err := os.Stat(out); err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d events, %d counters, %d bytes)\n",
			out, len(t.Events), len(t.Counters), st.Size())
	}
	if len(loaded.Damaged) > 0 {
		return exitError{code: 1}
	}
	return nil
}

// exportParquet reads the files in parallel and writes the ops and steps
// Parquet files (report/columnar). A file damaged part way is exported
// with what its reader kept, said on stderr, exit 1; an unreadable one
// stops the export before anything is written.
//
// Large inputs (load.Streamable) are tried window by window first
// (exportParquetStream).
func exportParquet(cmd *cobra.Command, ins []string, out, stepsOut string, lo load.Options) error {
	lo.Progress = loadProgress(cmd.ErrOrStderr(), ins)
	lo.ReadWhole = readWholeSaid(cmd.ErrOrStderr())
	rules := lo.Rules
	if load.Streamable(ins, lo) {
		if ok, err := exportParquetStream(cmd.ErrOrStderr(), ins, out, stepsOut, lo); ok {
			return err
		}
	}
	loaded, err := load.Read(ins, load.Options{Progress: lo.Progress})
	if err != nil {
		return fmt.Errorf("%w; nothing was written to %s", err, out)
	}
	sayDamaged(cmd.ErrOrStderr(), loaded.Damaged, exportedKept)
	damaged := len(loaded.Damaged) > 0
	read := loaded.Traces
	for _, t := range read {
		warnImports(cmd.ErrOrStderr(), t.Warnings)
	}
	// A rocprofv3 run's several CSV files link only when merged: one source.
	sources := loaded.Runs()
	nOps, err := writeFileWith(out, func(w io.Writer) (int64, error) { return columnar.WriteOps(w, sources, rules) })
	if err != nil {
		return err
	}
	nSteps, err := writeFileWith(stepsOut, func(w io.Writer) (int64, error) { return columnar.WriteSteps(w, sources, rules) })
	if err != nil {
		return err
	}
	wroteParquet(cmd.ErrOrStderr(), out, nOps, opRowsWhat(read), stepsOut, nSteps)
	if damaged {
		return exitError{code: 1}
	}
	return nil
}

// opRowsWhat names the rows of the ops file written from traces: "GPU
// ops", or, when a trace has no GPU work and its CPU operators stand in
// for kernels (tracer.Trace.CPUOpKernels: device -1), "CPU operators: the
// input has no GPU work" or, with GPU work in other traces, "GPU ops and
// CPU operators: …".
func opRowsWhat(traces []*tracer.Trace) string {
	gpu, cpu := false, false
	for _, t := range traces {
		for i := range t.Events {
			e := &t.Events[i]
			if e.Kind == tracer.KindKernel || e.Kind == tracer.KindMemcpy || e.Kind == tracer.KindMemset {
				if e.Device < 0 {
					cpu = true
				} else {
					gpu = true
				}
			}
		}
	}
	switch {
	case cpu && gpu:
		return "GPU ops and CPU operators: some inputs have no GPU work"
	case cpu:
		return cpuOpRows
	}
	return "GPU ops"
}

// singular is each of wroteParquet's row names for one row.
var singular = map[string]string{"GPU ops": "GPU op", "steps": "step", cpuOpRows: "CPU operator: the input has no GPU work"}

// cpuOpRows names the ops file's rows of a trace without GPU work.
const cpuOpRows = "CPU operators: the input has no GPU work"

// wroteParquet says on w what the two Parquet files hold: nOps rows of
// what (opRowsWhat) and nSteps steps.
func wroteParquet(w io.Writer, out string, nOps int64, what, stepsOut string, nSteps int64) {
	for _, p := range []struct {
		path string
		rows int64
		what string
	}{{out, nOps, what}, {stepsOut, nSteps, "steps"}} {
		if st, err := os.Stat(p.path); err == nil {
			sep := ","
			if strings.Contains(p.what, ":") {
				sep = ";"
			}
			if one, ok := singular[p.what]; ok && p.rows == 1 {
				p.what = one
			}
			fmt.Fprintf(w, "wrote %s (%d %s%s %d bytes)\n", p.path, p.rows, p.what, sep, st.Size())
		}
	}
}

// exportParquetStream is exportParquet's path for large inputs: each
// Kineto file is read window by window (load.Stream, as report's large
// inputs), its GPU ops written as they come (columnar.OpWriter) and its
// steps counted by an attrib.SourceStream of its own (the step table an
// Aggregator of that file alone gives), so no trace is held whole: memory
// stays about one window's events and one row group. The files equal the
// whole-file path's (TestExportParquetStream). ok false sends the caller
// to the whole-file path, which also reports damage: a file that is not
// Kineto, cannot be streamed exactly (said to lo.ReadWhole) or is damaged. The ops
// file is then not written (fileout drops its temporary file).
func exportParquetStream(errw io.Writer, ins []string, out, stepsOut string, lo load.Options) (ok bool, err error) {
	rules := lo.Rules
	var (
		sets      []columnar.StepSet
		nOps      int64
		streamErr error
	)
	err = fileout.Write(out, func(w io.Writer) error {
		ow := columnar.NewOpWriter(w, rules)
		var ss *attrib.SourceStream
		rank := -1
		so := lo
		so.NoShapes = true // GPU op rows carry no modelled work
		streamErr = load.Stream(ins, so, func(i int, win *tracefile.Capture) error {
			if win.Index == 0 && win.Part == 0 {
				ss, rank = attrib.NewSourceStream(rules, lo.Spill), win.Rank
				ow.Source(i, ins[i], rank)
			}
			ss.AddPart(win.Events, win.Strings, win.Contexts, win.Part == 0, win.Last, win.After+1)
			return ow.Add(win.Events, win.Strings, win.Contexts)
		}, func(i int, t *tracer.Trace) error {
			if t.Rank != rank {
				return fmt.Errorf("%s: its distributedInfo (rank %d) comes after its first window, written with rank %d: %w", ins[i], t.Rank, rank, tracefile.ErrNotStreamable)
			}
			ss.EndSource(t)
			sets = append(sets, columnar.StepSet{File: t.Path, Rank: t.Rank, Rows: ss.Snapshot().Steps})
			return nil
		})
		if streamErr != nil {
			return streamErr
		}
		var err error
		nOps, err = ow.Close()
		return err
	})
	if streamErr != nil {
		lo.StreamRefused(streamErr)
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("export: %w (nothing was written to %s)", err, out)
	}
	nSteps, err := writeFileWith(stepsOut, func(w io.Writer) (int64, error) { return columnar.WriteStepSets(w, sets) })
	if err != nil {
		return true, err
	}
	wroteParquet(errw, out, nOps, "GPU ops", stepsOut, nSteps) // only inputs with GPU work are streamed
	return true, nil
}

// writeFileWith creates path and writes it through a 1 MiB buffer with
// write; a failure names the file and says it may be incomplete.
func writeFileWith(path string, write func(io.Writer) (int64, error)) (int64, error) {
	var n int64
	err := fileout.Write(path, func(w io.Writer) error {
		var err error
		n, err = write(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("export: %w (nothing was written to %s)", err, path)
	}
	return n, nil
}
