// Package loop supervises the traced training process: it launches the
// child with the tracer's environment, watches it, keeps the tail of its
// stderr, restarts it on request, and builds the arms and schedules of a
// comparison. loop/demo is the built-in RL training loop.
package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// State is the child's lifecycle state.
type State int

// Child states.
const (
	NotStarted State = iota
	Running
	Exited // exited by itself (Status tells how)
	Stopped
)

func (s State) String() string {
	switch s {
	case NotStarted:
		return "not started"
	case Running:
		return "running"
	case Exited:
		return "exited"
	case Stopped:
		return "stopped"
	}
	return "?"
}

// Status describes the child at one moment.
type Status struct {
	State    State
	PID      int
	Started  time.Time
	ExitCode int    // valid when State is Exited or Stopped; -1 when killed by a signal
	Signal   string // signal name when killed by one
	Err      string // start failure
	// StderrTail is the last lines the child wrote to stderr (at most
	// TailLines lines), kept across a crash.
	StderrTail []string
	Restarts   int
}

// Describe is a one-line human summary ("running (pid 123)", "exited with
// status 2", "killed by signal: killed").
func (s Status) Describe() string {
	switch s.State {
	case Running:
		return fmt.Sprintf("running (pid %d)", s.PID)
	case Exited, Stopped:
		switch {
		case s.Err != "":
			return "failed to start: " + s.Err
		case s.Signal != "":
			return "killed by signal: " + s.Signal
		default:
			return fmt.Sprintf("%s with status %d", s.State, s.ExitCode)
		}
	}
	return s.State.String()
}

// TailLines is how many stderr lines Status keeps.
const TailLines = 20

// Spec is what to launch.
type Spec struct {
	Argv []string // program and arguments
	Env  []string // full environment (os.Environ() plus rlktop's variables)
	Dir  string   // working directory; "" = current
	// Stdout receives the child's stdout (nil: discarded). Stderr is
	// always captured for the tail and also copied to StderrCopy if set.
	Stdout     io.Writer
	StderrCopy io.Writer
}

// Supervisor runs one child at a time. Safe for concurrent use.
type Supervisor struct {
	mu       sync.Mutex
	spec     Spec
	cmd      *exec.Cmd
	status   Status
	tail     *tailBuffer
	done     chan struct{}
	stopping bool
	// Exits receives the final Status each time the child ends (buffered;
	// a slow reader loses old notifications, never blocks the supervisor).
	Exits chan Status
}

// NewSupervisor returns a supervisor for spec; nothing runs until Start.
func NewSupervisor(spec Spec) *Supervisor {
	return &Supervisor{spec: spec, Exits: make(chan Status, 8)}
}

// SetEnv replaces the environment used by the next Start/Restart (arms
// that differ in environment variables restart the child with this).
func (s *Supervisor) SetEnv(env []string) {
	s.mu.Lock()
	s.spec.Env = env
	s.mu.Unlock()
}

// Start launches the child. It returns an error when the program cannot be
// started (the error names the program and the OS error).
func (s *Supervisor) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status.State == Running {
		return errors.New("child already running")
	}
	if len(s.spec.Argv) == 0 {
		return errors.New("no command to run")
	}
	cmd := exec.Command(s.spec.Argv[0], s.spec.Argv[1:]...)
	cmd.Env = s.spec.Env
	cmd.Dir = s.spec.Dir
	cmd.Stdout = s.spec.Stdout
	s.tail = newTailBuffer(TailLines)
	if s.spec.StderrCopy != nil {
		cmd.Stderr = io.MultiWriter(s.tail, s.spec.StderrCopy)
	} else {
		cmd.Stderr = s.tail
	}
	// Own process group, so Stop reaches the child's children (torchrun ranks).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	restarts := s.status.Restarts
	if s.status.State != NotStarted {
		restarts++
	}
	if err := cmd.Start(); err != nil {
		s.status = Status{State: Exited, ExitCode: 127, Err: err.Error(), Restarts: restarts}
		return fmt.Errorf("starting %s: %w", s.spec.Argv[0], err)
	}
	s.cmd = cmd
	s.stopping = false
	s.status = Status{State: Running, PID: cmd.Process.Pid, Started: time.Now(), Restarts: restarts}
	s.done = make(chan struct{})
	go s.wait(cmd, s.done)
	return nil
}

func (s *Supervisor) wait(cmd *exec.Cmd, done chan struct{}) {
	err := cmd.Wait()
	s.mu.Lock()
	st := s.status
	st.State = Exited
	if s.stopping {
		st.State = Stopped
	}
	st.ExitCode = 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		st.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st.Signal = ws.Signal().String()
			st.ExitCode = -1
		}
	} else if err != nil {
		st.Err = err.Error()
		st.ExitCode = -1
	}
	st.StderrTail = s.tail.Lines()
	s.status = st
	s.mu.Unlock()
	close(done)
	select {
	case s.Exits <- st:
	default:
	}
}

// Status returns the child's current status, with the stderr tail so far.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	if s.tail != nil {
		st.StderrTail = s.tail.Lines()
	}
	return st
}

// Stop ends the child: SIGTERM to its process group, SIGKILL after grace.
// It returns when the child has exited. Stopping a child that is not
// running does nothing.
func (s *Supervisor) Stop(grace time.Duration) {
	s.mu.Lock()
	if s.status.State != Running {
		s.mu.Unlock()
		return
	}
	s.stopping = true
	pid, done := s.cmd.Process.Pid, s.done
	s.mu.Unlock()
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-done
}

// Restart stops the child (if running) and starts it again.
func (s *Supervisor) Restart(grace time.Duration) error {
	s.Stop(grace)
	return s.Start()
}

// Wait blocks until the current child exits or ctx ends, and returns its
// status.
func (s *Supervisor) Wait(ctx context.Context) Status {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	return s.Status()
}

// tailBuffer keeps the last n lines written to it.
type tailBuffer struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial []byte
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := append(t.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		t.push(string(data[:i]))
		data = data[i+1:]
	}
	const maxPartial = 4096 // a line longer than this is cut
	if len(data) > maxPartial {
		t.push(string(data[:maxPartial]))
		data = nil
	}
	t.partial = append([]byte(nil), data...)
	return len(p), nil
}

func (t *tailBuffer) push(line string) {
	t.lines = append(t.lines, line)
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
}

// Lines returns the kept lines, the unterminated last one included.
func (t *tailBuffer) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
		if len(out) > t.n {
			out = out[1:]
		}
	}
	return out
}

// Environ returns base with the given KEY=VALUE pairs set (replacing any
// existing value of the same key).
func Environ(base []string, set map[string]string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k := kv
		if i := bytes.IndexByte([]byte(kv), '='); i >= 0 {
			k = kv[:i]
		}
		if _, ok := set[k]; ok {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// WaitFor is Wait with a timeout instead of a context.
func (s *Supervisor) WaitFor(d time.Duration) Status {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Wait(ctx)
}
