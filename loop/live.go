package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/loop/runrecord"
	"github.com/rlktop/rlktop/tracer/cupti/launch"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
	rocplaunch "github.com/rlktop/rlktop/tracer/rocprof/launch"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/steps"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// LiveOptions configure a live run: the built-in loop (Command empty) or a
// command with the tracer attached.
type LiveOptions struct {
	// Command is the program and arguments; empty runs the built-in loop
	// (Exe DemoChildCommand).
	Command []string
	// Exe is the rlktop binary (for the built-in loop's child); "" uses
	// os.Executable.
	Exe string
	// Flags in force at start. For the built-in loop they are loop flags
	// (backends and sizes, passed as arguments and switched live over the
	// control channel); for a command they are environment variables (a
	// switch restarts the command).
	Flags map[string]string
	// Steps makes the built-in loop stop by itself after that many steps
	// (0: run until stopped).
	Steps int64
	// TorchRanges adds the PyTorch NVTX shim to a command's environment.
	TorchRanges bool
	// Untraced launches a command without the injection library (and
	// without the Python agent's sampler).
	Untraced bool
	// NoProfileMemory turns torch.profiler's profile_memory off in the
	// Python agent's windows (RLKTOP_PROFILE_MEMORY=0): no memory model,
	// and windows without its cost.
	NoProfileMemory bool
	// PySampleHz is the Python agent's stack sampling rate, samples a
	// second (0: the agent's default, 100; negative: off).
	PySampleHz float64
	// StepRange is `--step-range REGEX` for a command: the NVTX ranges
	// whose ends cut training steps (tracer/cupti/launch.Options.StepRange;
	// "" = ranges named like step/iteration, else ProfilerStep#N). The
	// built-in loop cuts its own steps and ignores it.
	StepRange string
	// RecordPath, when set, records the session to that file from before
	// the child starts (Session.RecordFile), so the recording holds the
	// child's hello and every frame.
	RecordPath string
	// RunRecord, when set, collects the run record at start
	// (loop/runrecord.Collect; StartLive fills Command, EnvSet and GPUs)
	// and sends it as session Meta; Close (or Finish) adds the end time
	// and exit status.
	RunRecord *runrecord.Options
	// Telemetry is the GPU / child-process sampling period (gpu.Poller);
	// 0 is gpu.DefaultInterval (500 ms), negative turns telemetry off.
	// Samples go to the session as counters (so recordings carry them)
	// and to Telemetry.
	Telemetry time.Duration
	// Tracer chooses a command's tracer: TracerAuto (""), TracerKineto or
	// TracerNone.
	Tracer string
	// NoAgent keeps the Python agent off a command's PYTHONPATH.
	NoAgent bool
	// CacheDir is where embedded files (the agent, the CUPTI library) are
	// extracted; "" is the user's cache folder.
	CacheDir string
	// Session configures the session that receives the frames.
	Session session.Options
	// Stdout receives the child's stdout; StderrCopy a copy of its stderr
	// (nil: kept only as the tail the TUI shows).
	Stdout, StderrCopy io.Writer
	// Attach, when set, is the pid of a running Python process to attach
	// to instead of launching anything (StartAttach; Command stays empty);
	// AttachTimeout bounds attaching (0: DefaultAttachTimeout).
	Attach        int
	AttachTimeout time.Duration
}

// Live is a running traced child and the session receiving its frames.
type Live struct {
	Session *session.Session
	Sup     *Supervisor
	Banner  string // why a command runs untraced, or "" when traced
	Builtin bool

	mu    sync.Mutex
	opts  LiveOptions
	addr  string
	flags map[string]string // rlktop's settings: start flags, flips, a comparison's arm
	// asked are flips (SetFlag) not yet in force, refused or failed: the
	// pending part of FlagState.
	asked map[string]flagRequest
	env   map[string]string // variables rlktop set for the current child

	tel telemetry
	rec *runrecord.Record // nil without LiveOptions.RunRecord
	att *attachment       // attached to a running process (StartAttach); nil when launched
}

// StartLive starts the session's listener, opens telemetry (gpu.Open),
// collects the run record and starts the recording when asked, and starts
// the child. The caller owns Close. A nil *Live comes with the error that
// prevented the session (listener, environment, run record, recording
// file); a non-nil one with an error means the child did not start (the
// session stays open so the TUI can show the failure).
func StartLive(o LiveOptions) (*Live, error) {
	if o.Attach != 0 {
		return StartAttach(context.Background(), o)
	}
	s := session.New(o.Session)
	addr, err := s.Listen()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("starting the trace listener: %w", err)
	}
	l := &Live{Session: s, Builtin: len(o.Command) == 0, opts: o, addr: addr, flags: map[string]string{},
		asked: map[string]flagRequest{}}
	for k, v := range o.Flags {
		l.flags[k] = v
	}
	spec, err := l.spec()
	if err != nil {
		s.Close()
		return nil, err
	}
	if o.Telemetry >= 0 {
		l.tel.open()
	}
	if o.RunRecord != nil {
		ro := *o.RunRecord
		ro.Command = o.Command
		ro.EnvSet = l.envSet()
		if ro.GPUs == nil && l.tel.mon != nil {
			ro.GPUs = l.tel.mon.Infos()
		}
		rec, err := runrecord.Collect(ro)
		if err != nil {
			l.tel.close()
			s.Close()
			return nil, err
		}
		l.rec = rec
		for _, f := range rec.Files {
			if f.Err != "" {
				s.Warn(fmt.Sprintf("--fingerprint %s: %s", f.Path, f.Err))
			}
		}
		s.Meta(msg.SortedKVs(rec.Meta()))
	}
	if o.RecordPath != "" {
		if err := s.RecordFile(o.RecordPath); err != nil {
			l.tel.close()
			s.Close()
			return nil, err
		}
	}
	l.Sup = NewSupervisor(spec)
	err = l.Sup.Start()
	if l.tel.mon != nil {
		if st := l.Sup.Status(); st.State == livestate.Running {
			l.tel.mon.Watch(st.PID)
		}
		l.tel.start(l.Session, l.Sup, o.Telemetry)
	}
	if err != nil {
		return l, err // the session stays open so the TUI can show the failure
	}
	return l, nil
}

// envSet is the environment rlktop sets for the current child: the
// variables whose value differs from rlktop's own environment.
func (l *Live) envSet() map[string]string {
	out := make(map[string]string, len(l.env))
	for k, v := range l.env {
		out[k] = v
	}
	return out
}

// diffEnv returns the variables of env that are absent from, or differ
// in, base (both "K=V" lists).
func diffEnv(base, env []string) map[string]string {
	b := make(map[string]string, len(base))
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			b[k] = v
		}
	}
	out := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if old, had := b[k]; !had || old != v {
			out[k] = v
		}
	}
	return out
}

// spec builds the child's argv and environment from the current flags.
func (l *Live) spec() (Spec, error) {
	o := l.opts
	if l.Builtin {
		exe := o.Exe
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				return Spec{}, fmt.Errorf("finding the rlktop binary for the built-in loop: %w", err)
			}
		}
		argv := []string{exe, DemoChildCommand}
		if o.Steps > 0 {
			argv = append(argv, fmt.Sprintf("--steps=%d", o.Steps))
		}
		for _, k := range slices.Sorted(maps.Keys(l.flags)) {
			argv = append(argv, "--flag", k+"="+l.flags[k])
		}
		env := Environ(os.Environ(), map[string]string{wire.EnvSocket: l.addr})
		l.env = diffEnv(os.Environ(), env)
		return Spec{Argv: argv, Env: env, Stdout: o.Stdout, StderrCopy: o.StderrCopy}, nil
	}
	base, err := l.agentEnv()
	if err != nil {
		return Spec{}, err
	}
	kineto := o.Tracer == TracerKineto
	plan, err := launch.Prepare(launch.Options{Socket: l.addr, Trace: !o.Untraced && !kineto, TorchRanges: o.TorchRanges, StepRange: o.StepRange, Env: base})
	if err != nil {
		return Spec{}, err
	}
	env, banner, gpuTraced := plan.Env, plan.Banner, plan.Traced
	noTracer := false // neither vendor tracer is here: banner holds their reasons only
	if !o.Untraced && !kineto && !plan.Traced && !plan.Driver.Present {
		// No NVIDIA driver: the AMD tracer (rocprofiler-sdk) if ROCm is here.
		rbase := base
		if o.StepRange != "" {
			rbase = Environ(base, map[string]string{steps.EnvStepRange: o.StepRange})
		}
		rp, err := rocplaunch.Prepare(rocplaunch.Options{Socket: l.addr, Trace: true, TorchRanges: o.TorchRanges, Env: rbase})
		switch {
		case err != nil:
			banner = fmt.Sprintf("%s; ROCm tracer: %v", banner, err)
		case rp.Traced:
			env, banner, gpuTraced = rp.Env, rp.Banner, true
		default:
			noTracer = true
			banner = "CUPTI (NVIDIA): " + bannerReason(plan.Banner) + "; rocprofiler-sdk (AMD): " + bannerReason(rp.Banner)
		}
	}
	if noTracer {
		// What is still collected first (the Python agent's steps, stages,
		// flags, and torch.profiler windows unless --tracer none), the
		// tracers' reasons after.
		what := "steps, stages, flags and torch.profiler operators (2 of every 10 steps)"
		if o.Tracer == TracerNone {
			what = "steps, stages and flags (no operators: --tracer none)"
		}
		banner = "no GPU tracer on this machine: a Python command reports " + what + ", any other runs untraced; " + banner
	}
	if o.NoProfileMemory {
		env = Environ(env, map[string]string{pyagent.EnvProfileMemory: "0"})
	}
	if o.Untraced || o.Tracer == TracerNone {
		env = Environ(env, map[string]string{pyagent.EnvKineto: "0"})
	} else if kineto || !gpuTraced {
		// No vendor tracer attached: the Python agent's torch.profiler
		// windows give operators (a user's own RLKTOP_KINETO wins).
		if _, set := os.LookupEnv(pyagent.EnvKineto); !set {
			env = Environ(env, map[string]string{pyagent.EnvKineto: "1"})
		}
		if kineto {
			banner = "--tracer kineto: operators from torch.profiler windows (2 of every 10 steps) of Python commands"
		} else if banner != "" && !noTracer {
			banner += "; a Python command still reports steps, stages and flags, and operators from torch.profiler windows (2 of every 10 steps)"
		}
	}
	if filepath.IsAbs(l.addr) {
		// The windows' folder inside the session's private socket
		// directory, which Session.Close removes.
		env = Environ(env, map[string]string{pyagent.EnvKinetoDir: filepath.Dir(l.addr)})
	}
	l.Banner = banner
	l.env = diffEnv(os.Environ(), env)
	return Spec{Argv: o.Command, Env: env, Stdout: o.Stdout, StderrCopy: o.StderrCopy}, nil
}

// Tracer choices for a command (LiveOptions.Tracer).
const (
	TracerAuto   = ""       // the vendor tracer when it attaches, else Kineto windows
	TracerKineto = "kineto" // torch.profiler windows from the Python agent, no vendor tracer
	TracerNone   = "none"   // steps, stages and flags from the Python agent only
)

// agentEnv is rlktop's environment plus, for a command, the Python agent
// (tracer/pyagent) first on PYTHONPATH and the flags in force: agent
// flags in RLKTOP_FLAGS, the others as environment variables (a command
// reads those at start; switching them restarts it). Flags the agent does
// not know may be ones the script declares with rlktop.flag(): they go
// both ways.
func (l *Live) agentEnv() ([]string, error) {
	envFlags := map[string]string{}
	for k, v := range l.flags {
		if !pyagent.IsLive(k, nil) {
			envFlags[k] = v
		}
	}
	env := Environ(os.Environ(), envFlags)
	if l.opts.NoAgent {
		return Environ(env, map[string]string{pyagent.EnvAgent: "0"}), nil
	}
	dir, err := launch.ShimDir(l.opts.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("the Python agent: %w", err)
	}
	pp := dir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pp += string(os.PathListSeparator) + old
	}
	agent := map[string]string{"PYTHONPATH": pp, pyagent.EnvFlags: pyagent.FlagsEnv(l.flags)}
	if hz := l.opts.PySampleHz; hz != 0 || l.opts.Untraced {
		agent[pyagent.EnvSampleHz] = pyagent.SampleHzEnv(hz, l.opts.Untraced)
	}
	return Environ(env, agent), nil
}

// AgentConnected reports whether a Python agent (tracer/pyagent) of the
// command is connected now, so that the command can be asked to stop at
// its next step boundary (Session.StopChildren) before it is signalled.
func (l *Live) AgentConnected() bool { return agentFlags(l.Session.Snapshot()) != nil }

// agentFlags returns the flags the newest Python agent connection listed
// in its last acknowledgement (built-in agent flags and the script's own),
// or nil when no agent is connected.
func agentFlags(st *livestate.State) map[string]string {
	for i := len(st.Children) - 1; i >= 0; i-- {
		c := &st.Children[i]
		if c.Hello.Source == pyagent.Source && c.Connected {
			m := make(map[string]string, len(c.Flags))
			for _, kv := range c.Flags {
				m[kv.Key] = kv.Value
			}
			return m
		}
	}
	return nil
}

// Flags returns the flags in force: those rlktop set, overlaid with every
// flag the newest child reported in its last acknowledgement (the built-in
// loop reports all of its flags, defaults included).
func (l *Live) Flags() map[string]string { return l.FlagsIn(l.Session.Snapshot()) }

// FlagsIn is Flags with the children's flags taken from st, a session
// state the caller already holds (a poller need not take a second one).
func (l *Live) FlagsIn(st *livestate.State) map[string]string {
	l.mu.Lock()
	out := maps.Clone(l.flags)
	l.mu.Unlock()
	if len(st.Children) > 0 {
		for _, kv := range st.Children[len(st.Children)-1].Flags {
			out[kv.Key] = kv.Value
		}
	}
	return out
}

// flagRequest is one flip SetFlag sent: the value asked for and the
// control command's sequence number (0 until it is sent, and for a flip
// carried out by a restart).
type flagRequest struct {
	value string
	seq   uint64
}

// FlagState returns the flags in force in st (FlagsIn) and the flips
// (SetFlag) still pending: a flip stops pending once its value is in force
// or st holds the child's refusal of its command (State.Refusals, by
// sequence number); a failed SetFlag never pends. Settled flips are
// forgotten.
func (l *Live) FlagState(st *livestate.State) livestate.FlagState {
	fs := livestate.FlagState{InForce: l.FlagsIn(st)}
	refused := map[uint64]bool{}
	for _, rf := range st.Refusals {
		refused[rf.Seq] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, rq := range l.asked {
		if fs.InForce[k] == rq.value || rq.seq != 0 && refused[rq.seq] {
			delete(l.asked, k)
			continue
		}
		if fs.Pending == nil {
			fs.Pending = map[string]string{}
		}
		fs.Pending[k] = rq.value
	}
	return fs
}

// noteFlags records flags set by other means than SetFlag (a comparison's
// switch between arms) as rlktop's flags in force; with replace, m
// replaces them all (a restart into another arm).
func (l *Live) noteFlags(m map[string]string, replace bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if replace {
		l.flags = map[string]string{}
	}
	for k, v := range m {
		l.flags[k] = v
	}
}

// SetFlag applies key=value: over the control channel at the next step
// boundary for the built-in loop (sizes that need a restart restart it), or
// by restarting a command with the new environment. It returns the control
// sequence number (0 when the child was restarted).
func (l *Live) SetFlag(key, value string) (uint64, error) {
	l.mu.Lock()
	l.flags[key] = value
	l.asked[key] = flagRequest{value: value}
	l.mu.Unlock()
	seq, err := l.setFlag(key, value)
	l.mu.Lock()
	if rq, ok := l.asked[key]; ok && rq.value == value {
		if err != nil {
			delete(l.asked, key)
		} else {
			l.asked[key] = flagRequest{value: value, seq: seq}
		}
	}
	l.mu.Unlock()
	return seq, err
}

// setFlag sends key=value to the running child when it switches the flag
// live (FlagTableOf; a Python agent also takes the flags the script
// declared), else restarts it with the new settings.
func (l *Live) setFlag(key, value string) (uint64, error) {
	if l.att != nil {
		if af := agentFlags(l.Session.Snapshot()); af != nil && pyagent.IsLive(key, af) {
			return l.Session.Control(key, value)
		}
		return 0, fmt.Errorf("%s: %w", key, ErrAttachedRestart)
	}
	if l.Sup.Status().State == livestate.Running {
		if l.Builtin && FlagTableOf(l.opts).IsLive(key) {
			return l.Session.Control(key, value)
		}
		if af := agentFlags(l.Session.Snapshot()); !l.Builtin && af != nil && pyagent.IsLive(key, af) {
			return l.Session.Control(key, value)
		}
	}
	return 0, l.Restart()
}

// Restart stops the child and starts it again with the current flags.
// The session's aggregates, step times and marks start afresh
// (Session.Reset: a restarted child numbers its steps from 0 again, and
// steps are keyed by number); a recording in progress goes on, and the
// old child's frames still in flight (up to 1 s) land before the reset.
func (l *Live) Restart() error {
	if l.att != nil {
		return ErrAttachedRestart
	}
	l.mu.Lock()
	spec, err := l.spec()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	l.Sup.Stop(3 * time.Second)
	l.Session.Wait(time.Second)
	l.Session.Reset()
	l.Sup.SetSpec(spec)
	err = l.Sup.Start()
	if st := l.Sup.Status(); st.State == livestate.Running && l.tel.mon != nil {
		l.tel.mon.Watch(st.PID)
	}
	return err
}

// Telemetry returns the latest telemetry sample of the device panel (GPU
// devices, the child tree's CPU% and RSS, co-tenants; see reading.Sample),
// the status line of what is sampled and, calmly, what is absent (e.g.
// "no NVIDIA driver: libnvidia-ml.so.1 not found; …; CPU only: the
// child's CPU% and RSS"), and whether a sample was taken yet. With
// telemetry off (LiveOptions.Telemetry < 0) the status says so.
func (l *Live) Telemetry() (reading.Sample, string, bool) { return l.tel.latest() }

// CoTenantNotes returns the co-tenant warnings given so far (also in
// the session's State.Warnings), for a comparison's notes.
func (l *Live) CoTenantNotes() []string { return l.tel.coTenantNotes() }

// RunRecord returns the run record (nil without LiveOptions.RunRecord).
// It is shared: read it, do not modify it.
func (l *Live) RunRecord() *runrecord.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// Finish completes the run record with the end time and exit (0
// success; 128+signal for a child killed by a signal, see ExitStatus) and
// sends it as session Meta again (a recording keeps the last value of
// each key), so call it before StopRecording. Only the first call counts;
// Close calls it with the child's status when nobody did. No-op without
// a run record.
func (l *Live) Finish(exit int) {
	l.mu.Lock()
	rec := l.rec
	if rec == nil || rec.Finished {
		l.mu.Unlock()
		return
	}
	rec.Finish(exit)
	m := rec.Meta()
	l.mu.Unlock()
	maps.Copy(m, memoryMeta(l.Session.Snapshot().Cumulative.Memory)) // live_memory.go
	l.Session.Meta(msg.SortedKVs(m))
}

// ExitStatus is a child's exit status as a shell reports it: its exit
// code, 128+N when killed by signal N, 127 when it did not start, -1
// while it runs.
func ExitStatus(st livestate.Status) int {
	switch {
	case st.State == livestate.Running || st.State == livestate.NotStarted:
		return -1
	case st.Err != "" && st.Signal == "":
		if st.ExitCode > 0 {
			return st.ExitCode
		}
		return 127
	case st.Signal != "":
		for n := 1; n < 65; n++ {
			if syscall.Signal(n).String() == st.Signal {
				return 128 + n
			}
		}
		return 128
	}
	return st.ExitCode
}

// StopChild ends a running child: it is asked over the control channel
// first (the built-in loop and the Python agent finish their step and
// exit) and given up to ask, or until ctx ends, to do so; then its process
// group gets SIGTERM and, grace later, SIGKILL. No-op when the child is
// not running. A process rlktop attached to is not ended: its agent
// detaches (Supervisor.Stop) and it runs on.
func (l *Live) StopChild(ctx context.Context, ask, grace time.Duration) {
	if l.Sup.Status().State != livestate.Running {
		return
	}
	if l.att != nil {
		l.Sup.Stop(ask + grace)
		return
	}
	if _, err := l.Session.StopChildren(); err == nil {
		wctx, cancel := context.WithTimeout(ctx, ask)
		l.Sup.Wait(wctx)
		cancel()
	}
	l.Sup.Stop(grace)
}

// Close stops the child (asking politely over the control channel first),
// finishes the run record with the child's exit status (if Finish was not
// called), stops telemetry and closes the session (ending a recording).
func (l *Live) Close() error {
	if l.Sup != nil {
		l.StopChild(context.Background(), 2*time.Second, 2*time.Second)
		l.Sup.Stop(2 * time.Second) // the processes the command left running
		if msg := LeftoverNote(l.Sup.Ended()); msg != "" {
			l.Session.Warn(msg)
			w := l.opts.StderrCopy
			if w == nil {
				w = os.Stderr
			}
			fmt.Fprintf(w, "rlktop: %s\n", msg)
		}
		l.Session.Wait(time.Second)
		l.Finish(ExitStatus(l.Sup.Status()))
	}
	l.tel.close()
	if l.att != nil {
		os.RemoveAll(l.att.folder)
	}
	return l.Session.Close()
}

// LeftoverNote says which processes the command left running were ended
// ("" for none): "ended 2 processes the command left running: 4242
// (python3), 4250 (sleep)", at most 10 named.
func LeftoverNote(ended []Leftover) string {
	if len(ended) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ended %d processes the command left running:", len(ended))
	for i, p := range ended {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(ended)-10)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d (%s)", p.PID, p.Comm)
	}
	return b.String()
}

// ErrChildFailed is returned when the child ended with a non-zero status.
var ErrChildFailed = errors.New("traced process failed")

// ChildError describes a failed child for the user: its status and the
// tail of its stderr.
func ChildError(st livestate.Status) error {
	if st.State == livestate.Running || (st.ExitCode == 0 && st.Signal == "" && st.Err == "") {
		return nil
	}
	msg := st.Describe()
	if len(st.StderrTail) > 0 {
		msg += "; last stderr lines:\n  " + strings.Join(st.StderrTail, "\n  ")
	}
	return fmt.Errorf("%w: %s", ErrChildFailed, msg)
}

// bannerReason cuts a launcher banner down to its reason (no "rlktop: "
// prefix, no "— running the command untraced" tail), to join two of them.
func bannerReason(b string) string {
	b = strings.TrimPrefix(b, "rlktop: ")
	if i := strings.Index(b, " — running the command untraced"); i >= 0 {
		b = b[:i]
	}
	return b
}
