package loop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rlktop/rlktop/tracer/cupti/launch"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/wire"
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
	// Untraced launches a command without the injection library.
	Untraced bool
	// Session configures the session that receives the frames.
	Session session.Options
	// Stdout receives the child's stdout; StderrCopy a copy of its stderr
	// (nil: kept only as the tail the TUI shows).
	Stdout, StderrCopy io.Writer
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
	flags map[string]string
}

// StartLive starts the session's listener and the child. The caller owns
// Close.
func StartLive(o LiveOptions) (*Live, error) {
	s := session.New(o.Session)
	addr, err := s.Listen()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("starting the trace listener: %w", err)
	}
	l := &Live{Session: s, Builtin: len(o.Command) == 0, opts: o, addr: addr, flags: map[string]string{}}
	for k, v := range o.Flags {
		l.flags[k] = v
	}
	spec, err := l.spec()
	if err != nil {
		s.Close()
		return nil, err
	}
	l.Sup = NewSupervisor(spec)
	if err := l.Sup.Start(); err != nil {
		return l, err // the session stays open so the TUI can show the failure
	}
	return l, nil
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
		for _, k := range sortedKeys(l.flags) {
			argv = append(argv, "--flag", k+"="+l.flags[k])
		}
		env := Environ(os.Environ(), map[string]string{wire.EnvSocket: l.addr})
		return Spec{Argv: argv, Env: env, Stdout: o.Stdout, StderrCopy: o.StderrCopy}, nil
	}
	base := Environ(os.Environ(), l.flags)
	plan, err := launch.Prepare(launch.Options{Socket: l.addr, Trace: !o.Untraced, TorchRanges: o.TorchRanges, Env: base})
	if err != nil {
		return Spec{}, err
	}
	l.Banner = plan.Banner
	return Spec{Argv: o.Command, Env: plan.Env, Stdout: o.Stdout, StderrCopy: o.StderrCopy}, nil
}

// Flags returns the flags in force: those rlktop set, overlaid with every
// flag the newest child reported in its last acknowledgement (the built-in
// loop reports all of its flags, defaults included).
func (l *Live) Flags() map[string]string {
	l.mu.Lock()
	out := make(map[string]string, len(l.flags))
	for k, v := range l.flags {
		out[k] = v
	}
	l.mu.Unlock()
	if st := l.Session.Snapshot(); len(st.Children) > 0 {
		for _, kv := range st.Children[len(st.Children)-1].Flags {
			out[kv.Key] = kv.Value
		}
	}
	return out
}

// SetFlag applies key=value: over the control channel at the next step
// boundary for the built-in loop (sizes that need a restart restart it), or
// by restarting a command with the new environment. It returns the control
// sequence number (0 when the child was restarted).
func (l *Live) SetFlag(key, value string) (uint64, error) {
	l.mu.Lock()
	l.flags[key] = value
	l.mu.Unlock()
	if l.Builtin && l.Sup.Status().State == Running {
		if _, live := builtinLiveFlags[key]; live {
			return l.Session.Control(key, value)
		}
	}
	return 0, l.Restart()
}

// builtinLiveFlags are the built-in loop's flags it applies without a
// restart (demo.Loop.Set accepts them).
var builtinLiveFlags = map[string]bool{
	"attention": true, "qkv": true, "scan": true, "sampler": true, "head": true,
	"temperature": true, "top_p": true, "lr": true, "weight_decay": true, "adv_floor": true, "value_coef": true,
}

// Restart stops the child and starts it again with the current flags.
func (l *Live) Restart() error {
	l.mu.Lock()
	spec, err := l.spec()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	l.Sup.Stop(3 * time.Second)
	l.Sup.mu.Lock()
	l.Sup.spec = spec
	l.Sup.mu.Unlock()
	return l.Sup.Start()
}

// Close stops the child (asking politely over the control channel first)
// and the session.
func (l *Live) Close() error {
	if l.Sup != nil && l.Sup.Status().State == Running {
		if _, err := l.Session.StopChildren(); err == nil {
			done := make(chan struct{})
			go func() { l.Sup.Wait(ctxTimeout(2 * time.Second)); close(done) }()
			<-done
		}
		l.Sup.Stop(2 * time.Second)
	}
	return l.Session.Close()
}

// ErrChildFailed is returned when the child ended with a non-zero status.
var ErrChildFailed = errors.New("traced process failed")

// ChildError describes a failed child for the user: its status and the
// tail of its stderr.
func ChildError(st Status) error {
	if st.State == Running || (st.ExitCode == 0 && st.Signal == "" && st.Err == "") {
		return nil
	}
	msg := st.Describe()
	if len(st.StderrTail) > 0 {
		msg += "; last stderr lines:\n  " + strings.Join(st.StderrTail, "\n  ")
	}
	return fmt.Errorf("%w: %s", ErrChildFailed, msg)
}

func sortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
