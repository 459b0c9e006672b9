package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/gpu"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

func init() {
	var (
		rf      runFlags
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "attach PID [--headless [--steps N]]",
		Short: "trace a Python training job that is already running, then leave it as it was",
		Long: `attach injects rlktop's Python agent into the running CPython process PID
(through sys.remote_exec on Python 3.14+, else gdb: PyGILState_Ensure and
PyRun_SimpleString at a point where a thread holds the GIL) and shows it as
'rlktop run' would: steps from optimizer steps, stages, CPU operators (and
GPU kernels where CUDA is initialised) from torch.profiler windows, flags
flipped in place at step boundaries.

q (or the end of --headless, Ctrl-C, rlktop being killed) detaches: the
agent removes its hooks, stops its profiler, puts back the flags rlktop
flipped, ends its threads and removes its files; the process runs on.
rlktop never signals it. Its output stays where it goes.

It refuses, with the reason and what to do, and leaves the process
untouched: a process that is not Python, of another user, launched by
rlktop run, already attached, where ptrace is forbidden, without gdb (before
3.14), without the symbols gdb calls, or that does not reach Python code
within --timeout (one long C call).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, err := strconv.Atoi(args[0])
			if err != nil || pid <= 0 {
				return fmt.Errorf("attach %q: want the pid of a running Python process (a positive number)", args[0])
			}
			o, err := attachOptions(&rf, pid, timeout)
			if err != nil {
				return err
			}
			if rf.headless {
				if err := checkHeadlessOptions(&rf); err != nil {
					return err
				}
				return runHeadless(cmd.OutOrStdout(), cmd.ErrOrStderr(), &rf, o)
			}
			return runTUI(o, nil)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&rf.headless, "headless", false, "no TUI: trace --steps steps, detach, then print the report")
	f.Int64Var(&rf.steps, "steps", 20, "with --headless: steps to trace")
	f.StringVar(&rf.format, "format", "table", "with --headless: "+strings.Join(report.Formats(), "|"))
	f.StringVar(&rf.by, "by", report.ByKernel, "with --headless: the table to print, "+strings.Join(report.Views(), "|")+", or "+report.ByFinding)
	f.IntVar(&rf.top, "top", -1, "with --headless: rows to show (0 = all; the kernel table shows up to this many kernels and as many memcpy/memset rows)")
	registerAttachFlags(cmd, &rf, &timeout)
	rootCmd.AddCommand(cmd)
}

// registerAttachFlags adds the options attach, record --attach and
// compare --attach share: category rules, the tracer, telemetry, the
// time limit.
func registerAttachFlags(cmd *cobra.Command, rf *runFlags, timeout *time.Duration) {
	f := cmd.Flags()
	if f.Lookup("rules") == nil {
		f.StringVar(&rf.rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones")
	}
	if f.Lookup("tracer") == nil {
		f.StringVar(&rf.tracer, "tracer", "auto", "auto or kineto (torch.profiler windows, RLKTOP_KINETO=EVERY:LEN sets their schedule), none (steps, stages and flags only)")
	}
	if f.Lookup("telemetry-every") == nil {
		f.DurationVar(&rf.telemetry, "telemetry-every", gpu.DefaultInterval, "GPU and process CPU/RSS sampling period (negative: off)")
	}
	f.DurationVar(timeout, "timeout", loop.DefaultAttachTimeout, "attach: the longest wait for the process to reach Python code and its agent to connect")
}

// attachOptions are the live options of attaching to pid.
func attachOptions(rf *runFlags, pid int, timeout time.Duration) (loop.LiveOptions, error) {
	rules, err := attrib.RulesFor(rf.rulesPath)
	if err != nil {
		return loop.LiveOptions{}, err
	}
	tr, err := parseTracer(rf.tracer)
	if err != nil {
		return loop.LiveOptions{}, err
	}
	return loop.LiveOptions{
		Attach:        pid,
		AttachTimeout: timeout,
		Tracer:        tr,
		Telemetry:     rf.telemetry,
		Session:       session.Options{Rules: rules, Source: fmt.Sprintf("attached: pid %d", pid), Peak: attachPeak},
	}, nil
}

// attachEnd is what attach --headless says after its report: how long
// attaching took was in the banner; here whether the process runs on.
func attachEnd(stderr io.Writer, pid int, exit livestate.Status, st *livestate.State, interrupted bool) error {
	switch {
	case exit.Detached != "":
		return fmt.Errorf("pid %d after %d steps: %s", pid, st.StepsPerRank(), exit.Describe())
	case exit.State == livestate.Running:
		fmt.Fprintf(stderr, "rlktop: detached from pid %d after %d steps: it runs on as before\n", pid, st.StepsPerRank())
	default:
		fmt.Fprintf(stderr, "rlktop: pid %d exited while attached, after %d steps\n", pid, st.StepsPerRank())
	}
	if interrupted {
		return fmt.Errorf("interrupted: the report above holds the %d steps received before the signal", st.StepsPerRank())
	}
	return nil
}
