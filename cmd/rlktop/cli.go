package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/fileout"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// setupCLI adds what spans the subcommands: --version, shell completion
// of flag values, and the argument checks that must run before a command
// starts anything (a run that would never end, a file about to be
// overwritten). main calls it once before Execute; tests call it on
// rootCmd.
func setupCLI(root *cobra.Command) {
	if root.Version != "" {
		return // done already
	}
	root.Version = version()
	root.SetVersionTemplate("rlktop {{.Version}}\n")
	wrapHelp(root)
	for _, c := range root.Commands() {
		complete(c)
		limitFlags(c)
		if f := c.Flags().Lookup("top"); f != nil && f.DefValue == "-1" {
			// -1 stands for the format's default; help says which.
			f.DefValue = "25 for table and md, all for json and csv"
		}
		if c.Args != nil {
			c.Args = argsWithUsage(c.Args)
		}
		switch c.Name() {
		case "run":
			c.PreRunE = chainPre(c.PreRunE, checkRunSteps)
		case "record":
			if c.Flags().Lookup("force") == nil {
				c.Flags().Bool("force", false, "overwrite the -o file if it exists")
			}
			c.PreRunE = chainPre(c.PreRunE, checkRecordOutput)
		}
	}
}

// argsWithUsage wraps a command's argument check so that its error
// ("requires at least 1 arg(s), only received 0") says how to call the
// command: the usage line and where the help is.
func argsWithUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return fmt.Errorf("%w\nusage: %s (rlktop %s --help for more)", err, c.UseLine(), c.Name())
		}
		return nil
	}
}

// limitFlags adds the flags of the documented input limits (README
// "Limits") to the commands they bound: import limits where files are
// read (report, diff, export, open, record's read-back, compare), the live
// session's connection limits where a session runs (run, record,
// compare). A flag given wins over its environment variable; the values
// are set process-wide (tracefile.Set…, session.SetDefaultLimits) before
// the command's own checks run.
func limitFlags(c *cobra.Command) {
	imports := slices.Contains([]string{"report", "diff", "export", "open", "record", "compare"}, c.Name())
	sessions := slices.Contains([]string{"run", "record", "compare"}, c.Name())
	if !imports && !sessions || c.Flags().Lookup(tracefile.SQLiteTimeoutFlag) != nil || c.Flags().Lookup(session.MaxConnsFlag) != nil {
		return
	}
	f := c.Flags()
	if imports {
		f.Uint64(tracefile.MaxRecordingEventsFlag, 0, fmt.Sprintf("events and counters one recording import may hold (0 = no limit; default %d, about %d bytes each; env %s)", tracefile.MaxRecordingEvents, tracefile.RecordingEventBytes, tracefile.MaxRecordingEventsEnv))
		f.Uint64(tracefile.MaxEventsFlag, 0, fmt.Sprintf("events one Kineto JSON import read whole may hold (report streams large ones; 0 = no limit; default %d, about %d bytes each; env %s)", tracefile.MaxKinetoEvents, tracefile.KinetoEventBytes, tracefile.MaxEventsEnv))
		f.Uint64(tracefile.MaxImportNameBytesFlag, 0, fmt.Sprintf("bytes of distinct names (kernels, operators, ranges) one import may hold (0 = no limit; default %d, about %d bytes of memory each; env %s)", tracefile.MaxImportNameBytes, tracefile.NameByteCost, tracefile.MaxImportNameBytesEnv))
		f.Duration(tracefile.SQLiteTimeoutFlag, 0, "how long the queries of one SQLite import may run (0 = no limit; default 10m; env "+tracefile.SQLiteTimeoutEnv+")")
		f.Uint64(tracefile.MaxCSVRowsFlag, 0, fmt.Sprintf("data rows one CSV import, and buffer records one rocprofv3 JSON import, may read (0 = no limit; default %d rows, about %d bytes each; JSON %d records, about %d bytes each; env %s)", tracefile.MaxCSVRows, tracefile.CSVRowBytes, tracefile.MaxJSONRecords, tracefile.JSONRecordBytes, tracefile.MaxCSVRowsEnv))
		f.Int64(tracefile.MaxSQLiteCopyFlag, 0, "bytes of the temporary uncompressed copy of a gzipped SQLite file (0 = no limit; default 8 GiB; env "+tracefile.MaxSQLiteCopyEnv+")")
	}
	if sessions {
		f.Int(session.MaxConnsFlag, 0, "traced processes connected at once (default 1024)")
		f.Int(session.MaxNamesPerConnFlag, 0, "names (kernel, op names) one traced process may define (default 1048576)")
		f.Int64(session.MaxNameBytesPerConnFlag, 0, "bytes of names one traced process may define (default 64 MiB)")
	}
	prev := c.PreRunE
	c.PreRunE = func(c *cobra.Command, args []string) error {
		if err := applyLimitFlags(c); err != nil {
			return err
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// applyLimitFlags hands the limit flags the user gave to tracefile and
// session.
func applyLimitFlags(c *cobra.Command) error {
	f := c.Flags()
	if f.Changed(tracefile.MaxRecordingEventsFlag) {
		n, _ := f.GetUint64(tracefile.MaxRecordingEventsFlag)
		tracefile.SetMaxRecordingEvents(n)
	}
	if f.Changed(tracefile.MaxEventsFlag) {
		n, _ := f.GetUint64(tracefile.MaxEventsFlag)
		tracefile.SetMaxEvents(n)
	}
	if f.Changed(tracefile.MaxImportNameBytesFlag) {
		n, _ := f.GetUint64(tracefile.MaxImportNameBytesFlag)
		tracefile.SetMaxImportNameBytes(n)
	}
	if f.Changed(tracefile.MaxCSVRowsFlag) {
		n, _ := f.GetUint64(tracefile.MaxCSVRowsFlag)
		tracefile.SetMaxCSVRows(n)
	}
	if f.Changed(tracefile.SQLiteTimeoutFlag) {
		d, _ := f.GetDuration(tracefile.SQLiteTimeoutFlag)
		if d < 0 {
			return fmt.Errorf("--%s %s: give a duration ≥ 0 (0 = no limit)", tracefile.SQLiteTimeoutFlag, d)
		}
		tracefile.SetSQLiteTimeout(d)
	}
	if f.Changed(tracefile.MaxSQLiteCopyFlag) {
		n, _ := f.GetInt64(tracefile.MaxSQLiteCopyFlag)
		if n < 0 {
			return fmt.Errorf("--%s %d: give a number of bytes ≥ 0 (0 = no limit)", tracefile.MaxSQLiteCopyFlag, n)
		}
		tracefile.SetMaxSQLiteCopyBytes(n)
	}
	var l session.Limits
	set := false
	for _, x := range []struct {
		name string
		dst  any
	}{{session.MaxConnsFlag, &l.MaxConns}, {session.MaxNamesPerConnFlag, &l.MaxNamesPerConn}, {session.MaxNameBytesPerConnFlag, &l.MaxNameBytesPerConn}} {
		if !f.Changed(x.name) {
			continue
		}
		set = true
		var v int64
		if p, ok := x.dst.(*int); ok {
			n, _ := f.GetInt(x.name)
			*p, v = n, int64(n)
		} else {
			v, _ = f.GetInt64(x.name)
			*x.dst.(*int64) = v
		}
		if v < 1 {
			return fmt.Errorf("--%s %d: give a number ≥ 1", x.name, v)
		}
	}
	if set {
		session.SetDefaultLimits(l)
	}
	return nil
}

// version is the module version and VCS revision rlktop was built from
// ("(devel) 1a2b3c4d5e6f, modified" for a work tree build).
func version() string { return versionStamped(revision) }

// versionStamped is version with stamped as the revision -ldflags set
// (used when Go stamped none).
func versionStamped(stamped string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version: built without module information)"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" && stamped != "" {
		rev, dirty = stamped, ""
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + " (" + bi.GoVersion + ")"
}

// revision is set by scripts/setup.sh (-ldflags -X main.revision=…: the
// short git revision, ", modified" for a changed work tree) for builds
// where Go does not stamp the VCS revision itself (-buildvcs=false).
var revision string

func chainPre(prev, next func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(c, args); err != nil {
				return err
			}
		}
		return next(c, args)
	}
}

// checkRunSteps: run --headless --steps N needs N ≥ 1 for the built-in
// loop (0 or less would run forever, and the report would never come); a
// command may take 0, "until it exits" (scripts/gpu-check.sh and the CUPTI
// stand-in run use it), but not less.
func checkRunSteps(c *cobra.Command, args []string) error {
	h, _ := c.Flags().GetBool("headless")
	n, err := c.Flags().GetInt64("steps")
	if err != nil || !h {
		return nil
	}
	if n < 0 || n == 0 && len(args) == 0 {
		return fmt.Errorf("--steps %d: a headless run needs at least 1 step (it stops after them and prints the report; with a command, 0 runs it until it exits)", n)
	}
	return nil
}

// checkRecordOutput refuses to overwrite an existing -o file without
// --force.
func checkRecordOutput(c *cobra.Command, _ []string) error {
	out, _ := c.Flags().GetString("output")
	force, _ := c.Flags().GetBool("force")
	if out == "" {
		return nil
	}
	// Lstat: a symbolic link at the name (dangling or not) is what is
	// there; the recording never writes through it.
	st, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("record -o %s: %w", out, err)
	case st.IsDir():
		return fmt.Errorf("record -o %s: is a directory; give a file name (e.g. -o %s/run.rlk)", out, strings.TrimSuffix(out, "/"))
	case fileout.IsNode(st):
		return nil // a device or FIFO: written in place (RecordFile), nothing to overwrite
	case !force && st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("record -o %s: a symbolic link is there; pass --force to replace the link (its target is never written) or choose another name", out)
	case !force:
		return fmt.Errorf("record -o %s: the file exists (%s); pass --force to overwrite it or choose another name", out, units.Bytes(st.Size()))
	case st.Mode().IsRegular() || st.Mode()&fs.ModeSymlink != 0:
		// The recording creates a new file (session.RecordFile: O_EXCL):
		// the old one, or the link, is removed, never written through.
		if err := os.Remove(out); err != nil {
			return fmt.Errorf("record -o %s --force: %w", out, err)
		}
		return nil
	}
	return fmt.Errorf("record -o %s: not a regular file (%v); give a file name", out, st.Mode().Type())
}

// complete registers shell completion of the values of --by, --format,
// --sort and --flag where a command has them.
func complete(c *cobra.Command) {
	fixed := func(name string, vals []string) {
		if c.Flags().Lookup(name) == nil {
			return
		}
		_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
	}
	switch c.Name() {
	case "report", "run", "record":
		fixed("by", report.Views())
		fixed("format", report.Formats())
	case "diff", "compare":
		fixed("by", []string{attrib.GroupKernel, attrib.GroupCategory, attrib.GroupStage})
		fixed("format", formatsOf(c))
	}
	fixed("sort", attrib.KernelSorts())
	if c.Flags().Lookup("flag") != nil {
		_ = c.RegisterFlagCompletionFunc("flag", completeLoopFlag)
	}
}

// formatsOf reads a command's --format values from its usage text
// ("table|json|md"), so the completion follows what the command takes.
func formatsOf(c *cobra.Command) []string {
	f := c.Flags().Lookup("format")
	if f == nil {
		return nil
	}
	for _, w := range strings.Fields(f.Usage) {
		if strings.Contains(w, "|") {
			return strings.Split(strings.Trim(w, "(),;:"), "|")
		}
	}
	return report.Formats()
}

// completeLoopFlag completes --flag K=V for the built-in loop
// (demo.FlagTable): the keys (attention=, envs=, …) and, after a choice
// flag's '=', its values.
func completeLoopFlag(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if k, _, ok := strings.Cut(prefix, "="); ok {
		d, _ := demo.FlagTable.Lookup(k)
		var out []string
		for _, v := range d.Choices {
			out = append(out, k+"="+v)
		}
		if len(out) > 1 {
			out = append(out, k+"="+strings.Join(d.Choices, ","))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	var keys []string
	for _, d := range demo.FlagTable {
		keys = append(keys, d.Name+"=")
	}
	slices.Sort(keys)
	return keys, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
