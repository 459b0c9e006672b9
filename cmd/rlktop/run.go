package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/gpu"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/loop/runrecord"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
	"github.com/rlktop/rlktop/tracer/session"
)

// runFlags are the options `rlktop`, `rlktop run` share.
type runFlags struct {
	flags       []string // --flag K=V (one value each for run)
	headless    bool
	steps       int64
	format      string
	by          string
	top         int
	rulesPath   string
	torchRanges bool
	untraced    bool
	noProfMem   bool // --no-profile-memory
	stepRange   string
	fingerprint []string      // --fingerprint PATH: SHA-256 into the run record
	telemetry   time.Duration // --telemetry-every: sampling period (<0 off)
	tracer      string        // --tracer auto|kineto|none (a command)
	noAgent     bool          // --no-agent
	noShapes    bool          // --no-shapes
	pySampleHz  float64       // --py-sample-hz
	listen      string        // --listen HOST:PORT: ranks on other hosts (listen.go)
	listenFile  string        // --listen-file FILE: the address written there
}

func (rf *runFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	rf.registerCommon(cmd)
	f.BoolVar(&rf.headless, "headless", false, "no TUI: run --steps steps, then print the report")
	f.Int64Var(&rf.steps, "steps", 20, "with --headless: steps to run")
	f.StringVar(&rf.format, "format", "table", "with --headless: "+strings.Join(report.Formats(), "|"))
	f.StringVar(&rf.by, "by", report.ByKernel, "with --headless: the table to print, "+strings.Join(report.Views(), "|")+" (json holds every view), or "+report.ByFinding+" (the ranked findings)")
	f.IntVar(&rf.top, "top", -1, "with --headless: rows to show (0 = all; the kernel table shows up to this many kernels and as many memcpy/memset rows)")
	f.StringVar(&rf.listen, "listen", "", "also accept ranks on other hosts over TCP on HOST:PORT (e.g. 0.0.0.0:29600); prints the address with its token for 'rlktop agent-env --connect'")
	f.StringVar(&rf.listenFile, "listen-file", "", "with --listen: write the address (token included) to this file, mode 0600")
}

// registerCommon adds the flags of every live run (run, record).
func (rf *runFlags) registerCommon(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&rf.flags, "flag", nil, "flag K=V in force at start (built-in loop: attention, qkv, scan, sampler, head, envs, layers, width, …; a command: an environment variable)")
	f.StringVar(&rf.rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones")
	f.BoolVar(&rf.torchRanges, "torch-ranges", false, "a command: wrap nn.Module.forward and scaled_dot_product_attention in NVTX ranges (Python shim on PYTHONPATH)")
	f.BoolVar(&rf.untraced, "untraced", false, "a command: run without the injection library")
	f.BoolVar(&rf.noProfMem, "no-profile-memory", false, "a command: torch.profiler windows without profile_memory (no memory view; saves its cost)")
	f.StringVar(&rf.stepRange, "step-range", "", "a command: regex of the NVTX range names whose ends cut training steps (default: ranges named like step/iteration, else ProfilerStep#N)")
	f.StringArrayVar(&rf.fingerprint, "fingerprint", nil, "PATH: record the file's SHA-256 in the run record (repeatable)")
	f.StringVar(&rf.tracer, "tracer", "auto", "a command: auto (CUPTI / rocprofiler-sdk when they attach, else torch.profiler windows from the Python agent), kineto (torch.profiler windows only), none (the agent's steps, stages and flags only)")
	f.BoolVar(&rf.noAgent, "no-agent", false, "a command: do not put rlktop's Python agent on PYTHONPATH")
	f.BoolVar(&rf.noShapes, "no-shapes", false, "a command: torch.profiler windows record no input shapes (no FLOPs, bytes or roofline; "+pyagent.EnvKinetoShapes+"=0)")
	f.Float64Var(&rf.pySampleHz, "py-sample-hz", pyagent.DefaultSampleHz, "a Python command: Python stack samples a second, every thread (0: off)")
	f.DurationVar(&rf.telemetry, "telemetry-every", gpu.DefaultInterval, "GPU and child CPU/RSS sampling period, recorded as counter tracks (min 20ms; negative: off)")
}

func (rf *runFlags) liveOptions(command []string) (loop.LiveOptions, error) {
	if rf.noShapes {
		// The child inherits rlktop's environment (loop.Live).
		os.Setenv(pyagent.EnvKinetoShapes, "0")
	}
	flags := map[string]string{}
	for _, s := range rf.flags {
		sp, err := loop.ParseFlagSpec(s)
		if err != nil {
			return loop.LiveOptions{}, err
		}
		if len(sp.Values) != 1 {
			return loop.LiveOptions{}, fmt.Errorf("--flag %s: run takes one value per flag (several values make arms: use `rlktop compare`)", s)
		}
		flags[sp.Key] = sp.Values[0]
	}
	if len(command) == 0 {
		// Check the built-in loop's flags here, before a child starts.
		cfg := demo.DefaultConfig()
		for _, k := range slices.Sorted(maps.Keys(flags)) {
			if err := cfg.ParseFlag(k, flags[k]); err != nil {
				return loop.LiveOptions{}, err
			}
		}
	}
	rules, err := attrib.RulesFor(rf.rulesPath)
	if err != nil {
		return loop.LiveOptions{}, err
	}
	src := "live: built-in RL loop"
	if len(command) == 0 || !gpuDriverPresent() {
		// A command on a machine without a GPU driver runs on the CPU: its
		// peak too is measured before it starts, not beside it.
		measurePeakFirst()
	}
	if len(command) > 0 {
		src = "live: " + strings.Join(command, " ")
	}
	tr, err := parseTracer(rf.tracer)
	if err != nil {
		return loop.LiveOptions{}, err
	}
	return loop.LiveOptions{
		Tracer:          tr,
		NoAgent:         rf.noAgent,
		Command:         command,
		Flags:           flags,
		TorchRanges:     rf.torchRanges,
		Untraced:        rf.untraced,
		NoProfileMemory: rf.noProfMem,
		PySampleHz:      pySampleOption(rf.pySampleHz),
		StepRange:       rf.stepRange,
		Telemetry:       rf.telemetry,
		Session:         session.Options{Rules: rules, Source: src, Peak: livePeak},
		RunRecord:       &runrecord.Options{Flags: rf.flags, Fingerprint: rf.fingerprint},
	}, nil
}

// parseTracer checks --tracer and returns loop's value for it.
func parseTracer(s string) (string, error) {
	switch s {
	case "auto", "":
		return loop.TracerAuto, nil
	case "kineto":
		return loop.TracerKineto, nil
	case "none":
		return loop.TracerNone, nil
	}
	return "", fmt.Errorf("--tracer %q: want auto, kineto or none", s)
}

func init() {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] [-- CMD...]",
		Short: "launch CMD (or the built-in RL loop) with the tracer attached",
		Long: `run launches a command with rlktop's tracer attached — CUPTI on NVIDIA
(CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH), or the built-in RL training
loop when no command is given — and shows kernels, categories and stages
live. With --headless it runs --steps steps and prints the report instead.

A command's exit status becomes rlktop's.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLive(cmd, &rf, args)
		},
	}
	rf.register(cmd)
	rootCmd.AddCommand(cmd)

	// `rlktop` alone runs the built-in loop in the TUI.
	rf0 := &runFlags{}
	rf0.register(rootCmd)
	rootCmd.Args = cobra.NoArgs
	rootCmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runLive(cmd, rf0, nil)
	}
}

func runLive(cmd *cobra.Command, rf *runFlags, command []string) error {
	o, err := rf.liveOptions(command)
	if err != nil {
		return err
	}
	if rf.headless {
		// A bad --by or --format is said before the run, not after it.
		if err := checkHeadlessOptions(rf); err != nil {
			return err
		}
		return runHeadless(cmd.OutOrStdout(), cmd.ErrOrStderr(), rf, o)
	}
	o.StderrCopy = nil // the TUI keeps the tail; nothing may write to the terminal
	return runTUI(o, rf.listenRanks)
}

// runHeadless runs the child until rf.steps steps were received (built-in
// loop: it stops itself after them), the command exits or SIGINT/SIGTERM
// arrives, then prints the report with the step-time summary and the flags
// in force, and on stderr the connections that ended in an error. An
// interrupted run still prints what it received, then returns an error
// saying so (exit status 1); a second signal ends rlktop at once.
func runHeadless(stdout, stderr io.Writer, rf *runFlags, o loop.LiveOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	builtin := len(o.Command) == 0 && o.Attach == 0
	if builtin {
		o.Steps = rf.steps
	} else {
		o.Stdout = stderr
	}
	o.StderrCopy = stderr
	live, err := loop.StartLive(o)
	if live == nil {
		return err
	}
	defer live.Close()
	if err != nil {
		return err
	}
	if live.Banner != "" {
		fmt.Fprintln(stderr, "rlktop:", live.Banner)
	}
	if note, err := rf.listenRanks(live); err != nil {
		return err
	} else if note != "" {
		fmt.Fprintln(stderr, "rlktop:", note)
	}
	warnFingerprints(stderr, live)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	interrupted := false
wait:
	for {
		st := live.Session.Snapshot()
		if rf.steps > 0 && stepsDone(st) >= rf.steps {
			break
		}
		if live.Sup.Status().State != livestate.Running {
			break
		}
		select {
		case <-ctx.Done():
			interrupted = true
			stop() // a second signal ends rlktop at once
			break wait
		case <-tick.C:
		}
	}
	stoppedByUs := false // the command ran its --steps and rlktop ended it: not a failure
	switch {
	case interrupted:
		live.Sup.Stop(3 * time.Second) // the child's last frames arrive as it ends
		live.Session.Wait(time.Second)
	case !builtin && live.Sup.Status().State == livestate.Running:
		// The command ran its --steps: end it now (asking its Python agent
		// first, which ends it as Ctrl-C would), so that the report holds
		// those steps and not what it ran while rlktop waited. An attached
		// process is not ended: its agent detaches.
		if live.AgentConnected() {
			live.StopChild(context.Background(), 2*time.Second, 3*time.Second)
		} else {
			live.Sup.Stop(3 * time.Second)
		}
		live.Session.Wait(time.Second)
		stoppedByUs = true
	default:
		live.Session.Wait(3 * time.Second)
	}
	st := live.Session.Snapshot()
	exit := live.Sup.Status()
	if err := writeRunReport(stdout, st, live.FlagsIn(st), rf, !builtin); err != nil {
		return err
	}
	warnConnErrors(stderr, st)
	if o.Attach != 0 {
		return attachEnd(stderr, o.Attach, exit, st, interrupted)
	}
	if len(o.Command) > 0 && !interrupted && !stoppedByUs {
		if line := childEndLine(o.Command, exit, st.StepsPerRank()); line != "" {
			fmt.Fprintln(stderr, "rlktop:", line)
		}
	}
	if interrupted {
		return fmt.Errorf("interrupted: the report above holds the %d steps%s received before the signal", st.StepsPerRank(), perRank(st))
	}
	if builtin {
		if err := loop.ChildError(exit); err != nil {
			return err
		}
		if rf.steps > 0 && st.StepCount < rf.steps {
			return fmt.Errorf("the built-in loop stopped after %d of %d steps", st.StepCount, rf.steps)
		}
		return nil
	}
	if exit.State != livestate.Running && exit.ExitCode != 0 && !stoppedByUs {
		return exitError{code: max(exit.ExitCode, 1)}
	}
	return nil
}

// childEndLine says, after run --headless's report, that the command
// ended by itself before rlktop had its --steps (a
// Python command failing at import printed an empty report and exit 1,
// nothing else): how it ended (status, signal or start failure) and how
// many steps it reported; "" when it exited with status 0 after at least
// one step (a script with fewer steps than --steps ends so normally).
func childEndLine(command []string, exit livestate.Status, steps int64) string {
	if exit.State == livestate.Running || (exit.ExitCode == 0 && exit.Signal == "" && exit.Err == "" && steps > 0) {
		return ""
	}
	how := fmt.Sprintf("exited with status %d", exit.ExitCode)
	switch {
	case exit.Err != "":
		how = "failed: " + exit.Err
	case exit.Signal != "":
		how = "was killed by signal " + exit.Signal
	}
	cmd := escape.Control(runrecord.ShellJoin(command))
	switch {
	case steps > 0:
		return fmt.Sprintf("the command (%s) %s after %d steps; the report above holds them", cmd, how, steps)
	case exit.ExitCode == 0 && exit.Signal == "" && exit.Err == "":
		return fmt.Sprintf("the command (%s) %s without reporting a step, so the report above is empty "+
			"(steps come from NVTX ranges named like step, or in Python from rlktop.step(), optimizer.step() or torch.profiler's prof.step())", cmd, how)
	}
	return fmt.Sprintf("the command (%s) %s before its first step: no step was reported, so the report above is empty (its output is above)", cmd, how)
}

// warnConnErrors tells the user about traced processes whose connection
// ended in an error (a corrupt or oversized frame, a protocol violation):
// rlktop closed it and the report lacks what that process sent after.
func warnConnErrors(w io.Writer, st *livestate.State) {
	for _, c := range st.Children {
		if c.Err != "" {
			fmt.Fprintf(w, "rlktop: warning: %s\n", connErrText(c))
		}
	}
}

// warnSession prints the session's warnings (the agent's, a trace
// window's import, --listen refusals) for a command that prints no
// report (record); a report carries them (livestate.State's snapshots).
func warnSession(w io.Writer, st *livestate.State) {
	for _, m := range st.Warnings {
		fmt.Fprintf(w, "rlktop: warning: %s\n", escape.Control(m))
	}
}

// connErrText says which connection rlktop closed and why.
func connErrText(c livestate.Child) string {
	who := fmt.Sprintf("the connection of pid %d", c.Hello.PID)
	if c.Hello.PID == 0 {
		who = "a connection that sent no hello"
	}
	return fmt.Sprintf("%s was closed: %s (its later events are missing)", who, escape.Control(c.Err))
}

// warnFingerprints tells the user about --fingerprint files that could
// not be read (the run record keeps the error).
func warnFingerprints(w io.Writer, live *loop.Live) {
	if rec := live.RunRecord(); rec != nil {
		for _, f := range rec.Files {
			if f.Err != "" {
				fmt.Fprintf(w, "rlktop: warning: --fingerprint %s: %s\n", f.Path, f.Err)
			}
		}
	}
}

// summarizeSteps is the "steps" object of a run report (attrib.StepSummary,
// the same summary compare's arms use).
func summarizeSteps(st *livestate.State) attrib.StepSummary {
	steps := st.Steps
	if rs := st.RankSteps(); rs != nil {
		steps = rs // a distributed job: one step per step every rank finished
	}
	d := make([]int64, 0, len(steps))
	for _, s := range steps {
		d = append(d, s.DurNs)
	}
	return attrib.SummarizeSteps(d)
}

// perRank is " per rank" when st's steps are a distributed job's
// (State.RankSteps), whose StepsPerRank counts one rank's; else "".
func perRank(st *livestate.State) string {
	if st.RankSteps() != nil {
		return " per rank"
	}
	return ""
}

// stepsDone is the steps --steps counts: with the ranks of a distributed
// job (livestate.State.RankSteps), those every rank has finished; else every
// step received.
func stepsDone(st *livestate.State) int64 {
	if rs := st.RankSteps(); rs != nil {
		return int64(len(rs))
	}
	return st.StepCount
}

// writeRunReport is report.WriteRun of st's cumulative snapshot and step
// summary with run's --format, --by and --top.
func writeRunReport(w io.Writer, st *livestate.State, flags map[string]string, rf *runFlags, command bool) error {
	if rf.by == report.ByFinding {
		// The findings the live TUI shows, over the whole run
		// (run --headless --by finding was refused).
		in := livestate.FindingInputOf(st, flags, command)
		in.Snapshot = st.Cumulative
		return report.WriteFindings(w, st.Cumulative, attrib.EvaluateFindings(attrib.DefaultFindings(), in), report.Options{Format: rf.format, Top: rf.top, Width: outputWidth(w)})
	}
	return report.WriteRun(w, st.Cumulative, summarizeSteps(st), flags, report.Options{By: rf.by, Format: rf.format, Top: rf.top, Width: outputWidth(w)})
}

// checkHeadlessOptions says what is wrong with run --headless's --by and
// --format before anything runs.
func checkHeadlessOptions(rf *runFlags) error {
	if rf.by != report.ByFinding && !slices.Contains(report.Views(), rf.by) {
		return fmt.Errorf("--by %q: use one of %s or %s", rf.by, strings.Join(report.Views(), ", "), report.ByFinding)
	}
	if !slices.Contains(report.Formats(), rf.format) {
		return fmt.Errorf("--format %q: use one of %s", rf.format, strings.Join(report.Formats(), ", "))
	}
	return nil
}
