package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// How the agent gets into a running CPython (inject):
//
//   - Python 3.14 and later: sys.remote_exec(pid, boot.py) run by the
//     target's own interpreter (PEP 768). The target runs the file at its
//     next safe point (between bytecodes, with the GIL); rlktop only waits
//     for the agent's hello.
//   - Before 3.14: the debugger route memray and pyrasite take, with gdb.
//     gdb attaches (ptrace), puts a breakpoint on PyEval_SaveThread and
//     lets the process run. The first thread to call it is at a function
//     entry, holding the GIL, outside the allocator — a point where running
//     Python is safe. There gdb removes the breakpoint and calls
//     PyGILState_Ensure, PyRun_SimpleString of a line that runs boot.py
//     in a namespace of its own, and PyGILState_Release, then detaches.
//     boot.py imports the agent and starts a thread of its own, so the
//     calls return in milliseconds.
//     gdb loads the symbols of the executable and of libpython only (not
//     libtorch's): about 0.6 s here.
//
// A process that does not reach PyEval_SaveThread within the time limit
// (one long C call, which released the GIL before it began, or
// pure-Python code that never blocks) is left as it was: rlktop sends its
// main thread a SIGCONT, which gdb stops at and swallows; the script then
// deletes the breakpoint and detaches without calling anything. gdb's own
// interrupt is never used: it sends SIGINT to the process's whole group
// (a KeyboardInterrupt in the job and in its workers). Once the calls
// began ("RLKTOP-INJECTING") a SIGCONT is swallowed without stopping
// them, and gdb runs in its own session so that a Ctrl-C at rlktop's
// terminal never reaches it. boot.py carries a
// deadline: run after it (remote_exec's late safe point), it does nothing
// but remove the agent's folder.

// Markers the gdb script prints.
const (
	gdbInjecting  = "RLKTOP-INJECTING"
	gdbInjected   = "RLKTOP-INJECTED"
	gdbNotReached = "RLKTOP-NOT-REACHED"
)

// gdbScript is the debugger's program. The calls run at the breakpoint;
// the lines after continue run only when rlktop interrupted the wait.
func gdbScript(boot, libpython string) string {
	var b strings.Builder
	b.WriteString("set pagination off\nset confirm off\nset breakpoint pending off\nset unwindonsignal on\n")
	// rlktop ends the wait with a SIGCONT to the process's main thread
	// (never gdb's interrupt, which signals SIGINT to the whole process
	// group: a job's workers and ranks with it); gdb swallows it.
	b.WriteString("handle SIGCONT stop print nopass\n")
	if libpython != "" {
		fmt.Fprintf(&b, "sharedlibrary %s\n", regexpQuote(filepath.Base(libpython)))
	}
	b.WriteString("break PyEval_SaveThread\ncommands 1\nsilent\n")
	// From here a late SIGCONT must not stop the calls: swallowed silently.
	b.WriteString("handle SIGCONT nostop noprint nopass\ndelete\n")
	b.WriteString("echo " + gdbInjecting + "\\n\n")
	b.WriteString("call (int)PyGILState_Ensure()\n")
	// The file is closed explicitly: a ResourceWarning at its collection
	// would create __warningregistry__ in the program's globals.
	fmt.Fprintf(&b, "call (int)PyRun_SimpleStringFlags(\"(lambda f: [exec(f.read(), {}), f.close()])(open('%s'))\", 0)\n", boot)
	b.WriteString("call (void)PyGILState_Release($1)\n")
	b.WriteString("echo " + gdbInjected + "\\n\ndetach\nquit\nend\n")
	b.WriteString("continue\n")
	b.WriteString("echo " + gdbNotReached + "\\n\ndelete\ndetach\nquit\n")
	return b.String()
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`.+*?()[]{}|^$\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// safePath reports whether p can go inside the script's string literals
// (a C string holding a Python one) without quoting.
func safePath(p string) bool {
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:", r)) {
			return false
		}
	}
	return p != ""
}

// injectGDB runs gdb's script on t within limit (said is the time limit
// the user gave, for the message). It returns nil once the calls ran, an
// *AttachError when the process was left untouched.
func injectGDB(ctx context.Context, t Target, gdb, script string, limit, said time.Duration) error {
	cmd := exec.Command(gdb, "-p", fmt.Sprint(t.PID), "-batch", "-nx",
		"-iex", "set debuginfod enabled off", "-iex", "set auto-solib-add off",
		// gdb 16: an inferior call that does not return in 10 s is unwound
		// (the thread goes on where it was) instead of waited for; its own
		// -ex, so that an older gdb's "undefined command" skips only it.
		"-ex", "set direct-call-timeout 10", "-ex", "set unwind-on-timeout on", "-x", script)
	// Its own session: a terminal's Ctrl-C, or rlktop's process group
	// ending, never reaches gdb (whose SIGINT handling would signal the
	// process's whole group). If rlktop dies while gdb waits, gdb stays
	// until the process reaches the breakpoint, and the boot file, past
	// its deadline, does nothing but remove the agent's folder.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out := &markedOutput{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return &AttachError{PID: t.PID, Reason: "starting gdb: " + err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	interrupted := false
wait:
	for {
		select {
		case <-done:
			break wait
		case <-ctx.Done():
			if !interrupted && !out.has(gdbInjecting) {
				endWait(t.PID)
				interrupted = true
			}
		case <-timer.C:
			// gdb stops at the SIGCONT, runs the script's last lines
			// (delete the breakpoint, detach) and exits. Not once the
			// calls began.
			if !interrupted && !out.has(gdbInjecting) {
				endWait(t.PID)
				interrupted = true
			}
			timer.Reset(15 * time.Second) // the calls time out in gdb itself
		}
	}
	text := out.String()
	switch {
	case strings.Contains(text, gdbInjected):
		return nil
	case strings.Contains(text, gdbInjecting) && strings.Contains(text, "Couldn't write extended state status"):
		// gdb writes the registers it set up for the call before resuming
		// the process: the write failed, so the call never ran.
		return &AttachError{PID: t.PID, Reason: errGDBXState + " (" + lastLines(text, 2) + ")",
			Hint: "put a newer gdb first on PATH (here gdb 13.1 failed and Debian trixie's 16.3 worked), or start the job under `rlktop run`"}
	case strings.Contains(text, gdbInjecting):
		return &AttachError{PID: t.PID, Reason: "gdb began the calls into the process but did not finish them: " + lastLines(text, 4),
			Hint: "the agent may not be running; the process runs on"}
	case interrupted && errors.Is(ctx.Err(), context.Canceled):
		return &AttachError{PID: t.PID, Reason: "interrupted before the agent was injected"}
	case interrupted || strings.Contains(text, gdbNotReached):
		return &AttachError{PID: t.PID,
			Reason: fmt.Sprintf("the process did not reach a point where Python code can run within %s: it is inside one long C call (which let go of the GIL before it began) or in Python code that never blocks", said),
			Hint:   "try again when it is back in Python (between training steps), or give --timeout a longer limit"}
	case strings.Contains(text, "ptrace: Operation not permitted") || strings.Contains(text, "Could not attach to process"):
		return &AttachError{PID: t.PID, Reason: "the kernel refused ptrace: " + lastLines(text, 2), Hint: ptraceHint}
	case strings.Contains(text, `Function "PyEval_SaveThread" not defined`) || strings.Contains(text, "No symbol table"):
		return &AttachError{PID: t.PID, Reason: "its Python exports no PyEval_SaveThread symbol for gdb to call (a static build without symbols?)",
			Hint: "install its debug symbols, use a Python that exports its C API (Debian's, python.org's, conda's do), or start the job under `rlktop run`"}
	}
	return &AttachError{PID: t.PID, Reason: "gdb did not inject the agent: " + lastLines(text, 4)}
}

// errGDBXState is why an older gdb cannot call into a process on a CPU
// whose XSAVE area (AMX tiles, AVX-512) is laid out beyond what that gdb
// release knows (later releases read the layout from CPUID: the "Handle
// variable XSAVE layouts" series of 2023; seen here: 13.1
// fails on a CPU with AMX, 16.3 works).
const errGDBXState = "this gdb cannot write the CPU's extended register state, so its first call into the process failed before it ran"

// endWait ends gdb's wait for the breakpoint: a SIGCONT to the process's
// main thread (tgkill), which gdb stops at and swallows. SIGCONT is the
// signal whose default action changes nothing, should it ever be let
// through.
func endWait(pid int) {
	_ = syscall.Tgkill(pid, pid, syscall.SIGCONT)
}

// injectRemoteExec asks the target's own interpreter (Python 3.14+) to run
// boot.py in the target (sys.remote_exec).
func injectRemoteExec(ctx context.Context, t Target, boot string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Exe, "-I", "-c", "import sys; sys.remote_exec(int(sys.argv[1]), sys.argv[2])", fmt.Sprint(t.PID), boot)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	text := string(out)
	if strings.Contains(text, "PermissionError") || strings.Contains(text, "Operation not permitted") {
		return &AttachError{PID: t.PID, Reason: "the kernel refused to let sys.remote_exec write into the process: " + lastLines(text, 2), Hint: ptraceHint}
	}
	return &AttachError{PID: t.PID, Reason: "sys.remote_exec failed: " + lastLines(strings.TrimSpace(text+" "+err.Error()), 3),
		Hint: "a Python started with -X disable_remote_debug or PYTHON_DISABLE_REMOTE_DEBUG refuses it; start the job under `rlktop run`"}
}

// findGDB is gdb's path, or an *AttachError saying how to get one.
func findGDB(t Target) (string, error) {
	p, err := exec.LookPath("gdb")
	if err != nil {
		return "", &AttachError{PID: t.PID, Reason: fmt.Sprintf("its Python is %s, which has no sys.remote_exec (3.14+), and there is no gdb on PATH to inject the agent with", t.PythonVersion()),
			Hint: "install gdb (apt-get install gdb; dnf install gdb)"}
	}
	return p, nil
}

// markedOutput collects gdb's output for has() while gdb runs.
type markedOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (m *markedOutput) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.b.Len() < 1<<20 {
		m.b.Write(p)
	}
	return len(p), nil
}

func (m *markedOutput) has(s string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Contains(m.b.Bytes(), []byte(s))
}

func (m *markedOutput) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.b.String()
}

// lastLines is the last n non-empty lines of s, joined by " / ".
func lastLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, " / ")
}

var errNotSafePath = errors.New("the path holds characters the injection cannot quote")
