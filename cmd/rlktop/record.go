package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/loop/runrecord"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// recordFlags are `rlktop record`'s own options.
type recordFlags struct {
	out     string
	steps   int64
	seconds float64
	attach  int           // --attach PID: record a running process
	timeout time.Duration // --timeout with --attach
}

func init() {
	var (
		rf runFlags
		rc recordFlags
	)
	cmd := &cobra.Command{
		Use:   "record -o FILE [--steps N | --seconds S] [flags] [-- CMD...]",
		Short: "record CMD (or the built-in RL loop) to a file, headless",
		Long: `record launches a command with rlktop's tracer attached (or the built-in RL
training loop when no command is given) and writes everything the session
receives to FILE: a gzip-compressed wire stream flushed frame by frame, so
a recorder killed even with SIGKILL leaves a file readable up to its last
whole frame. The run record (command line, working directory, flags,
environment, git revision, --fingerprint hashes, versions, machine, start
and end times, exit status) is stored in it.

It stops after --steps steps, after --seconds seconds, or when the command
exits (the built-in loop without --steps runs until interrupted). Read the
file with rlktop report, report --meta, open, diff and export.

A command's non-zero exit status becomes rlktop's.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecord(cmd.OutOrStdout(), cmd.ErrOrStderr(), &rf, &rc, args)
		},
	}
	rf.registerCommon(cmd)
	f := cmd.Flags()
	f.StringVarP(&rc.out, "output", "o", "", "recording file to write (e.g. run.rlk)")
	f.Int64Var(&rc.steps, "steps", 0, "stop after this many steps (0: no step limit)")
	f.Float64Var(&rc.seconds, "seconds", 0, "stop after this many seconds (0: no time limit)")
	f.IntVar(&rc.attach, "attach", 0, "PID: record this running Python process (rlktop attach) instead of launching a command; detaches at the end")
	f.DurationVar(&rc.timeout, "timeout", loop.DefaultAttachTimeout, "with --attach: the longest wait for the process to reach Python code and its agent to connect")
	rootCmd.AddCommand(cmd)
}

// runRecord runs the child with the session recording to rc.out from
// before the child starts, stops it at the first limit reached (or when it
// exits, or on SIGINT/SIGTERM), completes the run record with the child's
// exit status, ends the recording and prints a one-line summary on stdout.
func runRecord(stdout, stderr io.Writer, rf *runFlags, rc *recordFlags, command []string) error {
	if rc.out == "" {
		return fmt.Errorf("record: no output file: add -o FILE (e.g. -o run.rlk)")
	}
	if rc.steps < 0 || rc.seconds < 0 {
		return fmt.Errorf("record: --steps and --seconds must not be negative")
	}
	if rc.steps > 0 && rc.seconds > 0 {
		return fmt.Errorf("record: give --steps or --seconds, not both")
	}
	var o loop.LiveOptions
	var err error
	if rc.attach != 0 {
		if len(command) > 0 || len(rf.flags) > 0 {
			return fmt.Errorf("record --attach %d records that running process: give no command and no --flag", rc.attach)
		}
		o, err = attachOptions(rf, rc.attach, rc.timeout)
		o.RunRecord = &runrecord.Options{Fingerprint: rf.fingerprint}
	} else {
		o, err = rf.liveOptions(command)
	}
	if err != nil {
		return err
	}
	o.RecordPath = rc.out
	if len(command) == 0 && rc.attach == 0 {
		o.Steps = rc.steps // the built-in loop stops itself after them
	} else {
		o.Stdout = stderr
	}
	o.StderrCopy = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	live, err := loop.StartLive(o)
	if live == nil {
		return err
	}
	defer live.Close()
	startErr := err
	if live.Banner != "" {
		fmt.Fprintln(stderr, "rlktop:", live.Banner)
	}
	warnFingerprints(stderr, live)

	var deadline <-chan time.Time
	if rc.seconds > 0 {
		t := time.NewTimer(time.Duration(rc.seconds * float64(time.Second)))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	interrupted := false
wait:
	for startErr == nil {
		snap := live.Session.Snapshot()
		// The steps in the file: attach starts the recording after the
		// agent's hello, when steps may already have come.
		if rc.steps > 0 && snap.Recording != nil && snap.Recording.Steps >= int64(rc.steps) {
			break
		}
		if snap.Recording != nil && snap.Recording.Err != "" {
			break // the first write error ends the run: nothing more reaches the file
		}
		if live.Sup.Status().State != livestate.Running {
			break
		}
		select {
		case <-ctx.Done():
			interrupted = true
			break wait
		case <-deadline:
			break wait
		case <-tick.C:
		}
	}
	live.StopChild(context.Background(), 2*time.Second, 2*time.Second)
	live.Session.Wait(3 * time.Second)
	exit := live.Sup.Status()
	live.Finish(loop.ExitStatus(exit))
	st := live.Session.Snapshot()
	warnSession(stderr, st)
	ri, recErr := live.Session.StopRecording()
	var dur time.Duration
	if !ri.Started.IsZero() {
		dur = time.Since(ri.Started)
	}
	if recErr != nil {
		// Say what the file holds, not what was received.
		fmt.Fprintf(stdout, "recording %s stopped at a write error after %s, %.1f s: %s (received: %d steps, %d events)\n",
			rc.out, units.Bytes(ri.Bytes), dur.Seconds(), recordingHolds(rc.out, ri.Bytes), st.StepCount, st.Events)
		return fmt.Errorf("record %s: %w (the file keeps what was written before)", rc.out, recErr)
	}
	// Steps per rank with a distributed job's ranks ("16 steps"
	// for two ranks of 8, whose report then lists 8 per rank).
	inFile := ""
	if n := st.StepsPerRank(); n == st.StepCount && ri.Steps < n {
		// Attach starts the recording after the agent's hello.
		inFile = fmt.Sprintf(" (%d in the file)", ri.Steps)
	}
	fmt.Fprintf(stdout, "recorded %s: %s, %.1f s, %d steps%s%s, %d events, %d dropped\n",
		rc.out, units.Bytes(ri.Bytes), dur.Seconds(), st.StepsPerRank(), inFile, perRank(st), ri.Events, st.Dropped)
	switch {
	case startErr != nil:
		return startErr
	case interrupted:
		return fmt.Errorf("interrupted (the recording is complete up to now)")
	}
	if rc.attach != 0 {
		if exit.Detached != "" {
			return fmt.Errorf("pid %d: %s (the recording holds what came before)", rc.attach, exit.Describe())
		}
		return nil // detached (or the process exited by itself): no status of ours
	}
	if len(command) == 0 {
		if err := loop.ChildError(exit); err != nil && exit.State == livestate.Exited {
			return err
		}
		if rc.steps > 0 && st.StepCount < rc.steps {
			return fmt.Errorf("the built-in loop stopped after %d of %d steps", st.StepCount, rc.steps)
		}
		return nil
	}
	if exit.State == livestate.Exited && exit.ExitCode != 0 {
		return exitError{code: max(exit.ExitCode, 1)}
	}
	return nil
}

// recordingHolds reads back a recording that stopped at a write error and
// says what it holds ("it holds 5 steps, 286 events"): the figures of the
// file, which the session's counts overstate. written is the bytes the
// recorder wrote.
func recordingHolds(path string, written int64) string {
	if written == 0 {
		return "it holds nothing"
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "not read back (not a regular file)"
	}
	t, err := tracefile.Open(path, tracefile.Options{Own: true})
	if t == nil {
		return fmt.Sprintf("nothing in it can be read back (%v)", err)
	}
	return fmt.Sprintf("it holds %d steps, %d events", countStepEvents(t), len(t.Events))
}

// countStepEvents is the number of step events of t.
func countStepEvents(t *tracer.Trace) int {
	n := 0
	for i := range t.Events {
		if t.Events[i].Kind == tracer.KindStep {
			n++
		}
	}
	return n
}
