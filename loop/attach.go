package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rlktop/rlktop/loop/runrecord"
	"github.com/rlktop/rlktop/tracer/cupti/launch"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
	roclaunch "github.com/rlktop/rlktop/tracer/rocprof/launch"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// DefaultAttachTimeout bounds `rlktop attach`: the injection (reaching a
// safe point in the process) and the agent's hello.
const DefaultAttachTimeout = 10 * time.Second

// attachment is what a Live attached to a running process (StartAttach)
// holds besides a launched one's parts.
type attachment struct {
	target Target
	folder string        // the agent's private folder (the attach marker)
	took   time.Duration // from StartAttach to the agent's hello
	route  string        // "gdb" or "sys.remote_exec"
	gpu    agentGPU      // the GPU tracer the agent loads
}

// agentGPU is the GPU tracer the agent loads into the process: rlktop's
// CUPTI library (CUPTI), or rlktop's rocprofiler-sdk tool library
// (Rocprof) attached through the process's rocprofiler-register
// (Register); all "" for none.
type agentGPU struct{ CUPTI, Rocprof, Register string }

// StartAttach attaches to the running Python process o.Attach (StartLive
// calls it when o.Attach is set): it checks the
// target (InspectTarget), starts the session, writes the agent into a
// private folder (mode 0700, $TMPDIR/rlktop-attach-UID/PID-STARTTIME, also
// the marker that says pid is attached), injects it (sys.remote_exec on
// 3.14+, else gdb), and waits for its hello, all within o.AttachTimeout
// (DefaultAttachTimeout when 0). The rest of o configures the session, the recording,
// the run record and telemetry as for StartLive; o.Tracer TracerNone sends
// no torch.profiler windows. The agent's window schedule is RLKTOP_KINETO
// from rlktop's environment, else 2 steps of every 10.
//
// Errors before the agent runs are *AttachError (ErrAttach): the process
// was not changed. The returned Live's Sup never signals the process:
// Stop, StopChild and Close detach (the agent removes what it installed,
// the process runs on); a flag that needs a restart is refused.
func StartAttach(ctx context.Context, o LiveOptions) (*Live, error) {
	t0 := time.Now()
	pid, timeout := o.Attach, o.AttachTimeout
	if len(o.Command) > 0 {
		return nil, errors.New("attach: a command and a pid to attach to: give one")
	}
	if timeout <= 0 {
		timeout = DefaultAttachTimeout
	}
	t, err := InspectTarget(pid)
	if err != nil {
		return nil, err
	}
	gdb := ""
	if !t.RemoteExec() {
		if gdb, err = findGDB(t); err != nil {
			return nil, err
		}
	}
	every, length := attachKineto(o.Tracer)
	folder, err := claimAttachFolder(t)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(folder)
		}
	}()
	s := session.New(o.Session)
	addr, err := s.Listen()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("starting the trace listener: %w", err)
	}
	l := &Live{Session: s, opts: o, addr: addr, flags: map[string]string{}, asked: map[string]flagRequest{},
		att: &attachment{target: t, folder: folder, route: "gdb"}}
	if t.RemoteExec() {
		l.att.route = "sys.remote_exec"
	}
	fail := func(err error) (*Live, error) {
		s.Close()
		return nil, err
	}
	l.att.gpu = pickAgentGPU(s, t, o)
	boot, err := writeAgentFolder(folder, addr, time.Now().Add(timeout), every, length, l.att.gpu)
	if err != nil {
		return fail(err)
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if t.RemoteExec() {
		err = injectRemoteExec(ictx, t, boot, timeout)
	} else {
		script := filepath.Join(folder, "inject.gdb")
		if err = os.WriteFile(script, []byte(gdbScript(boot, t.Libpython)), 0o600); err == nil {
			err = injectGDB(ictx, t, gdb, script, timeout-time.Since(t0), timeout)
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := waitHello(ictx, s, t, folder); err != nil {
		return fail(err)
	}
	l.att.took = time.Since(t0)
	if o.Telemetry >= 0 {
		l.tel.open()
	}
	if o.RunRecord != nil {
		ro := *o.RunRecord
		ro.Command = t.Cmdline
		if ro.GPUs == nil && l.tel.mon != nil {
			ro.GPUs = l.tel.mon.Infos()
		}
		if rec, err := runrecord.Collect(ro); err == nil {
			l.rec = rec
			s.Meta(msg.SortedKVs(rec.Meta()))
		} else {
			s.Warn("run record: " + err.Error())
		}
	}
	if o.RecordPath != "" {
		if err := s.RecordFile(o.RecordPath); err != nil {
			l.detach(3 * time.Second)
			l.tel.close()
			return fail(err)
		}
	}
	l.Sup = newAttachedSupervisor(t, l.detach, l.agentLeft, l.outputNote())
	if l.tel.mon != nil {
		l.tel.mon.Watch(t.PID)
		l.tel.start(l.Session, l.Sup, o.Telemetry)
	}
	l.Banner = l.attachBanner(every, length)
	ok = true
	return l, nil
}

// Attached reports whether l is attached to a process rlktop did not
// launch (StartAttach), and how long attaching took (to the agent's hello).
func (l *Live) Attached() (bool, time.Duration) {
	if l.att == nil {
		return false, 0
	}
	return true, l.att.took
}

func (l *Live) attachBanner(every, length int) string {
	t := l.att.target
	what := "steps, stages and flags"
	switch {
	case l.att.gpu.CUPTI != "" && every > 0:
		what += fmt.Sprintf(", GPU kernels through CUPTI from now on, and CPU operators from torch.profiler windows (%d of every %d steps)", length, every)
	case l.att.gpu.CUPTI != "":
		what += ", and GPU kernels through CUPTI from now on"
	case l.att.gpu.Rocprof != "" && every > 0:
		what += fmt.Sprintf(", GPU kernels through rocprofiler-sdk from now on where its attachment takes the tool, and CPU operators from torch.profiler windows (%d of every %d steps)", length, every)
	case l.att.gpu.Rocprof != "":
		what += ", and GPU kernels through rocprofiler-sdk from now on where its attachment takes the tool"
	case every > 0:
		what += fmt.Sprintf(", and CPU operators (GPU kernels where CUDA is initialised) from torch.profiler windows (%d of every %d steps)", length, every)
	}
	return fmt.Sprintf("attached to pid %d (Python %s, through %s, in %s): %s; detaching leaves it running as it was",
		t.PID, t.PythonVersion(), l.att.route, l.att.took.Round(time.Millisecond), what)
}

// outputNote says where the attached process's output goes: not to
// rlktop, which did not start it.
func (l *Live) outputNote() string {
	t := l.att.target
	where := func(fd int) string {
		p, err := os.Readlink(filepath.Join(procRoot, strconv.Itoa(t.PID), "fd", strconv.Itoa(fd)))
		if err != nil {
			return "unknown"
		}
		return p
	}
	return fmt.Sprintf("attached to pid %d, which rlktop did not start: its output is its own (stdout → %s, stderr → %s) and does not show here",
		t.PID, where(1), where(2))
}

// detach asks the agent to leave and waits up to grace for its
// connection to end, then removes the agent's folder (the agent removes
// it too; this covers an agent that could not).
func (l *Live) detach(grace time.Duration) {
	if _, err := l.Session.DetachChildren(); err != nil {
		// Some connection did not take it; the agent's may have: wait for
		// it all the same (it puts the process's settings back first).
		l.Session.Warn("detach: " + err.Error())
	}
	l.Session.Wait(grace)
	os.RemoveAll(l.att.folder)
}

// attachKineto is the agent's torch.profiler window schedule (every,
// length steps): none with TracerNone, else RLKTOP_KINETO ("EVERY:LEN",
// "1" = 10:2, "0" none) from rlktop's environment, else 10:2.
func attachKineto(tracer string) (int, int) {
	if tracer == TracerNone {
		return 0, 0
	}
	v := os.Getenv(pyagent.EnvKineto)
	switch v {
	case "", "1":
		return 10, 2
	case "0":
		return 0, 0
	}
	e, n, _ := strings.Cut(v, ":")
	every, err1 := strconv.Atoi(e)
	length, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || length <= 0 || length >= every {
		return 10, 2
	}
	return every, length
}

// claimAttachFolder makes the agent's private folder for t: under
// $TMPDIR/rlktop-attach-UID (0700, this user's), named PID-STARTTIME. It
// exists only while an agent is attached: finding it says t is attached
// already (unless the rlktop that made it is gone and the agent did not
// clean up within 2 s, when it is taken over).
func claimAttachFolder(t Target) (string, error) {
	base := filepath.Join(os.TempDir(), fmt.Sprintf("rlktop-attach-%d", os.Geteuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("the agent's folder: %w", err)
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", fmt.Errorf("the agent's folder: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s is not a private folder of this user (want a directory of mode 0700 owned by uid %d, found %s): remove it", base, os.Geteuid(), fi.Mode())
	}
	if !safePath(base) {
		return "", fmt.Errorf("the agent's folder %s: %w (set TMPDIR to a plain path)", base, errNotSafePath)
	}
	folder := filepath.Join(base, fmt.Sprintf("%d-%d", t.PID, t.StartTime))
	for try := 0; ; try++ {
		err := os.Mkdir(folder, 0o700)
		if err == nil {
			return folder, nil
		}
		if !errors.Is(err, fs.ErrExist) || try > 0 {
			return "", fmt.Errorf("the agent's folder: %w", err)
		}
		owner := readOwner(folder)
		if owner.PID > 0 && pidAlive(owner.PID) {
			return "", &AttachError{PID: t.PID, Reason: fmt.Sprintf("rlktop (pid %d) is attached to it already", owner.PID),
				Hint: "use that rlktop, or quit it (q detaches) and attach again"}
		}
		// That rlktop is gone; its agent leaves when it sees so.
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(folder); err != nil {
				break
			}
		}
		os.RemoveAll(folder)
	}
}

// attachOwner is the folder's "owner" file: which rlktop attached.
type attachOwner struct {
	PID  int    `json:"pid"`
	Addr string `json:"addr"`
}

func readOwner(folder string) attachOwner {
	var o attachOwner
	if b, err := os.ReadFile(filepath.Join(folder, "owner")); err == nil {
		json.Unmarshal(b, &o)
	}
	return o
}

func pidAlive(pid int) bool {
	_, ok := procStartTime(pid)
	return ok
}

// pickAgentGPU chooses the GPU tracer the agent loads into t (ARCHITECTURE.md,
// "Attaching to a running process"): with CUDA mapped, rlktop's CUPTI
// library; with rocprofiler-register mapped, rlktop's rocprofiler-sdk tool
// library; none with another tracer asked for, where the process maps a Go
// shared library of its own (rlktop's libraries are Go: a second runtime),
// or where rlktop has no such library (each said as a warning on s).
func pickAgentGPU(s *session.Session, t Target, o LiveOptions) agentGPU {
	if o.Tracer != TracerAuto || t.CUDA == "" && t.ROCm == "" {
		return agentGPU{}
	}
	lib := filepath.Base(cmp.Or(t.CUDA, t.ROCm))
	if t.GoLib != "" {
		s.Warn(fmt.Sprintf("pid %d maps %s and the Go shared library %s: rlktop's GPU tracer, Go too, would be a second Go runtime in it, so GPU kernels come only from torch.profiler windows", t.PID, lib, t.GoLib))
		return agentGPU{}
	}
	if t.CUDA != "" {
		p, err := launch.FindLibrary("", o.CacheDir)
		if err != nil {
			s.Warn(fmt.Sprintf("pid %d maps %s but rlktop has no CUPTI library to load into it (%v): GPU kernels come only from torch.profiler windows", t.PID, lib, err))
			return agentGPU{}
		}
		return agentGPU{CUPTI: p}
	}
	p, err := roclaunch.FindLibrary("", os.Environ())
	if err != nil {
		s.Warn(fmt.Sprintf("pid %d maps %s but rlktop has no rocprofiler-sdk tool library to attach (%v): GPU kernels come only from torch.profiler windows", t.PID, lib, err))
		return agentGPU{}
	}
	if !t.ROCmAttach {
		// The register may have been built with default attachment:
		// the agent tries, and says so when it is refused.
		s.Warn(fmt.Sprintf("pid %d was not started with ROCP_TOOL_ATTACH=1: rocprofiler-sdk takes rlktop's tool after start only if its rocprofiler-register was built with default attachment; otherwise GPU kernels come only from torch.profiler windows (start the job with ROCP_TOOL_ATTACH=1 to attach its GPU tracing later)", t.PID))
	}
	return agentGPU{Rocprof: p, Register: t.ROCm}
}

// writeAgentFolder writes the agent (folder/py), the owner file and
// boot.py, the file the process runs, and returns boot.py's path.
func writeAgentFolder(folder, addr string, deadline time.Time, every, length int, gpu agentGPU) (string, error) {
	home := filepath.Join(folder, "py")
	for rel, b := range pyagent.Files() {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", fmt.Errorf("writing the agent: %w", err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return "", fmt.Errorf("writing the agent: %w", err)
		}
	}
	// The launch bootstrap is not used here: importing it would run the
	// process's own sitecustomize again.
	os.Remove(filepath.Join(home, "sitecustomize.py"))
	own, _ := json.Marshal(attachOwner{PID: os.Getpid(), Addr: addr})
	if err := os.WriteFile(filepath.Join(folder, "owner"), own, 0o600); err != nil {
		return "", fmt.Errorf("writing the agent: %w", err)
	}
	boot := filepath.Join(folder, "boot.py")
	if !safePath(boot) || !safePath(strings.TrimPrefix(addr, "unix:")) || slices.ContainsFunc([]string{gpu.CUPTI, gpu.Rocprof, gpu.Register}, func(p string) bool { return p != "" && !safePath(p) }) {
		return "", fmt.Errorf("%s: %w", boot, errNotSafePath)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // ASCII: a Python literal too
	src := fmt.Sprintf(`# rlktop attach: run once inside the process, in a namespace of its own
# (the program's globals are not touched); see rlktop/_attach.py.
import sys
home, folder = %s, %s
if sys.modules.get("rlktop") is None:
    sys.path.insert(0, home)
    try:
        import rlktop._attach
        rlktop._attach.start(%s, home, folder, %d.0, %d, %d, %s, %s, %s)
    except Exception as e:
        try:
            with open(folder + "/failed", "w") as f:
                f.write(repr(e))
        except Exception:
            pass
    finally:
        while home in sys.path:
            sys.path.remove(home)
else:
    try:
        with open(folder + "/failed", "w") as f:
            f.write("a module named rlktop is loaded already, from " + str(getattr(sys.modules["rlktop"], "__file__", "?")))
    except Exception:
        pass
`, q(home), q(folder), q(addr), deadline.Unix(), every, length, q(gpu.CUPTI), q(gpu.Rocprof), q(gpu.Register))
	if err := os.WriteFile(boot, []byte(src), 0o600); err != nil {
		return "", fmt.Errorf("writing the agent: %w", err)
	}
	return boot, nil
}

// waitHello waits for the agent of t to connect (its hello), until ctx
// ends; the error says what boot.py reported, if anything.
func waitHello(ctx context.Context, s *session.Session, t Target, folder string) error {
	for {
		for _, c := range s.Snapshot().Children {
			if c.Hello.PID == int64(t.PID) && c.Hello.Source == pyagent.Source {
				return nil
			}
		}
		if b, err := os.ReadFile(filepath.Join(folder, "failed")); err == nil {
			return &AttachError{PID: t.PID, Reason: "the agent did not start inside it: " + string(b)}
		}
		if _, ok := procStartTime(t.PID); !ok {
			return &AttachError{PID: t.PID, Reason: "the process exited while rlktop attached"}
		}
		select {
		case <-ctx.Done():
			return &AttachError{PID: t.PID, Reason: "the agent was injected but did not connect in time",
				Hint: "it does nothing once its deadline passed; try again"}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newAttachedSupervisor is the Supervisor of a process rlktop attached to:
// its status follows the process (exited once its pid is gone or reused)
// and its agent (Stopped, with Status.Detached saying why, once agentLeft
// reports the agent gone without rlktop detaching it), Output holds only
// note, Start refuses, and Stop detaches through detach, never
// signalling the process.
func newAttachedSupervisor(t Target, detach func(time.Duration), agentLeft func() string, note string) *Supervisor {
	s := NewSupervisor(Spec{})
	s.attached = detach
	s.status = livestate.Status{State: livestate.Running, PID: t.PID, Started: time.Now(), Attached: true}
	s.done = make(chan struct{})
	s.out.notice(note)
	go s.watchAttached(t, agentLeft)
	return s
}

// watchAttached polls the attached process and its agent (every 100 ms)
// until the process exits or the agent leaves by itself: a waiter for
// steps (compare, record --attach, attach --headless) then ends at once
// instead of at its step timeout.
func (s *Supervisor) watchAttached(t Target, agentLeft func() string) {
	why := ""
	for {
		if st, ok := procStartTime(t.PID); !ok || st != t.StartTime {
			break
		}
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		if !stopping {
			if why = agentLeft(); why != "" {
				// A program that ends closes its agent's connection a
				// moment before its pid goes, and the interpreter's
				// teardown can end the agent's sender before its goodbye:
				// a pid gone within exitGrace ended, it did not detach.
				if pidGoneWithin(t, exitGrace) {
					why = ""
				}
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.mu.Lock()
	st := s.status
	st.ExitCode = -1 // not rlktop's child: its status is its parent's to read
	if why != "" {
		st.State = livestate.Stopped
		st.Detached = why
	} else {
		st.State = livestate.Exited
	}
	s.status = st
	s.mu.Unlock()
	close(s.done)
	select {
	case s.Exits <- st:
	default:
	}
}

// exitGrace is how long an attached process whose agent left without a
// goodbye may take to exit before the agent's departure is reported.
const exitGrace = 2 * time.Second

// pidGoneWithin polls t's pid every 20 ms for up to d and reports whether
// it exited (or was replaced by another process with the same pid).
func pidGoneWithin(t Target, d time.Duration) bool {
	for end := time.Now().Add(d); ; {
		if st, ok := procStartTime(t.PID); !ok || st != t.StartTime {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agentLeft says why the agent of the attached process is gone when its
// connection ended, "" while it is connected. rlktop's own detach (Stop)
// is not asked about: the supervisor stops polling first.
func (l *Live) agentLeft() string {
	pid := int64(l.att.target.PID)
	for _, c := range slices.Backward(l.Session.Children()) {
		if c.Hello.PID != pid || c.Hello.Source != pyagent.Source {
			continue
		}
		switch {
		case c.Connected:
			return ""
		case c.Err != "":
			return "the connection to its agent failed: " + c.Err
		case c.Bye != nil && c.Bye.Reason == "exit":
			// The program is ending; watchAttached sees its pid go.
			return ""
		case c.Bye != nil && strings.HasPrefix(c.Bye.Reason, "left: "):
			return "its agent " + c.Bye.Reason
		case c.Bye != nil:
			return fmt.Sprintf("its agent left (%s)", c.Bye.Reason)
		}
		return "its agent left without a goodbye (it leaves by itself when rlktop stops reading its sends for 10 s; it wrote its reason to the process's stderr)"
	}
	return ""
}

// ErrAttachedRestart is returned for what would restart a process rlktop
// attached to (a flag set through the environment, Restart).
var ErrAttachedRestart = errors.New("rlktop attached to this process and does not restart it (a flag set through the environment needs a restart: launch the job under rlktop run or compare to flip it)")
