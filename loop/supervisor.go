// Package loop supervises the traced training process: it launches the
// child with the tracer's environment, watches it, tails its output (files,
// never pipes: see output.go), restarts it on request, and builds the arms and schedules of a
// comparison. loop/demo is the built-in RL training loop.
package loop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
)

// Spec is what to launch.
type Spec struct {
	Argv []string // program and arguments
	Env  []string // full environment (os.Environ() plus rlktop's variables)
	Dir  string   // working directory; "" = current
	// Stdout receives the child's stdout (nil: discarded). Stderr is
	// always captured for the tail and also copied to StderrCopy if set.
	// Both are written by rlktop's tailer from the child's output files,
	// so a slow or blocked writer delays only rlktop, never the child.
	Stdout     io.Writer
	StderrCopy io.Writer
}

// Supervisor runs one child at a time. Safe for concurrent use.
type Supervisor struct {
	mu       sync.Mutex
	spec     Spec
	cmd      *exec.Cmd
	status   livestate.Status
	out      *outputLog
	done     chan struct{}
	stopping bool
	// mark is the environment line ("RLKTOP_RUN=<random>") the current
	// child and everything it starts inherit, by which Stop finds the
	// processes it left (leftovers_linux.go); ended lists those Stop ended.
	mark  string
	ended []Leftover
	// attached, set for a process rlktop attached to (StartAttach), is how
	// Stop detaches from it: such a process is not rlktop's child and is
	// never signalled.
	attached func(grace time.Duration)
	// Exits receives the final Status each time the child ends (buffered;
	// a slow reader loses old notifications, never blocks the supervisor).
	Exits chan livestate.Status
}

// NewSupervisor returns a supervisor for spec; nothing runs until Start.
func NewSupervisor(spec Spec) *Supervisor {
	return &Supervisor{spec: spec, out: newOutputLog(), Exits: make(chan livestate.Status, 8)}
}

// SetEnv replaces the environment used by the next Start/Restart (arms
// that differ in environment variables restart the child with this).
func (s *Supervisor) SetEnv(env []string) {
	s.mu.Lock()
	s.spec.Env = env
	s.mu.Unlock()
}

// SetSpec replaces the argv, environment and outputs used by the next
// Start/Restart (Live.Restart with the flags in force).
func (s *Supervisor) SetSpec(spec Spec) {
	s.mu.Lock()
	s.spec = spec
	s.mu.Unlock()
}

// Start launches the child. It returns an error when the program cannot be
// started (the error names the program and the OS error).
func (s *Supervisor) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attached != nil {
		return ErrAttachedRestart
	}
	if s.status.State == livestate.Running {
		return errors.New("child already running")
	}
	if len(s.spec.Argv) == 0 {
		return errors.New("no command to run")
	}
	cmd := exec.Command(s.spec.Argv[0], s.spec.Argv[1:]...)
	env := s.spec.Env
	if env == nil {
		env = os.Environ()
	}
	var id [8]byte
	rand.Read(id[:])
	s.mark = RunMarkEnv + "=" + hex.EncodeToString(id[:])
	cmd.Env = append(slices.Clip(env), s.mark)
	cmd.Dir = s.spec.Dir
	// Own process group, so Stop reaches the child's children (torchrun ranks).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	restarts := s.status.Restarts
	if s.status.State != livestate.NotStarted {
		restarts++
	}
	s.out.reset(s.spec.Stdout, s.spec.StderrCopy)
	files, err := openOutputFiles(s.out)
	if err != nil {
		s.status = livestate.Status{State: livestate.Exited, ExitCode: 127, Err: err.Error(), Restarts: restarts}
		return fmt.Errorf("starting %s: %w", s.spec.Argv[0], err)
	}
	cmd.Stdout, cmd.Stderr = files.w[livestate.Stdout], files.w[livestate.Stderr]
	if err := cmd.Start(); err != nil {
		files.remove()
		s.status = livestate.Status{State: livestate.Exited, ExitCode: 127, Err: err.Error(), Restarts: restarts}
		return fmt.Errorf("starting %s: %w", s.spec.Argv[0], err)
	}
	files.closeChildEnds()
	go files.run()
	s.cmd = cmd
	s.stopping = false
	s.status = livestate.Status{State: livestate.Running, PID: cmd.Process.Pid, Started: time.Now(), Restarts: restarts, OutputDir: files.dir}
	s.done = make(chan struct{})
	go s.wait(cmd, s.done, files)
	return nil
}

func (s *Supervisor) wait(cmd *exec.Cmd, done chan struct{}, files *outputFiles) {
	err := cmd.Wait()
	files.finish() // the last bytes the child wrote, then the files go
	s.mu.Lock()
	st := s.status
	st.State = livestate.Exited
	if s.stopping {
		st.State = livestate.Stopped
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
	st.StderrTail = s.out.stderrTail()
	st.OutputDir = ""
	s.status = st
	s.mu.Unlock()
	close(done)
	select {
	case s.Exits <- st:
	default:
	}
}

// Status returns the child's current status, with the stderr tail so far.
func (s *Supervisor) Status() livestate.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	if st.State == livestate.Running {
		st.StderrTail = s.out.stderrTail()
	}
	return st
}

// Stop ends the child: SIGTERM to its process group, SIGKILL after grace.
// It returns when the child has exited. Stopping a child that is not
// running does nothing.
//
// Then, running or not, the processes the child started that are still
// running (its DataLoader workers, a setsid daemon, a fork that outlived
// it: each carries the child's RunMarkEnv line) get SIGTERM and, grace
// later, SIGKILL, and Stop waits for them; Ended lists them. Only
// processes this supervisor launched, and their descendants, carry the
// mark: a process rlktop attached to is never signalled.
// Stop detaches from it (within grace) and it runs on.
func (s *Supervisor) Stop(grace time.Duration) {
	s.mu.Lock()
	mark := s.mark
	if s.status.State != livestate.Running {
		s.mu.Unlock()
		s.endLeftovers(mark, grace)
		return
	}
	if detach := s.attached; detach != nil {
		s.stopping = true // watchAttached: the agent's leaving is ours
		s.mu.Unlock()
		detach(grace)
		return
	}
	s.stopping = true
	pid, done := s.cmd.Process.Pid, s.done
	s.mu.Unlock()
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	s.endLeftovers(mark, grace)
}

// RunMarkEnv is the variable whose random value marks one child and the
// processes it starts (Supervisor.Stop).
const RunMarkEnv = "RLKTOP_RUN"

func (s *Supervisor) endLeftovers(mark string, grace time.Duration) {
	if mark == "" {
		return
	}
	if ended := endMarked(mark, grace); len(ended) > 0 {
		s.mu.Lock()
		s.ended = append(s.ended, ended...)
		s.mu.Unlock()
	}
}

// Ended returns the processes Stop ended that the command had left
// running, oldest first.
func (s *Supervisor) Ended() []Leftover {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ended)
}

// Restart stops the child (if running) and starts it again.
func (s *Supervisor) Restart(grace time.Duration) error {
	s.Stop(grace)
	return s.Start()
}

// Wait blocks until the current child exits or ctx ends, and returns its
// status.
func (s *Supervisor) Wait(ctx context.Context) livestate.Status {
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
func (s *Supervisor) WaitFor(d time.Duration) livestate.Status {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Wait(ctx)
}

// Output returns the lines of the child's output (both streams, in the
// order rlktop read them: each stream's lines keep their order; between
// the streams the order is exact only to within OutputPoll) with Seq
// greater than after, oldest first, at most OutputLines of them, and the
// unterminated line each stream is writing now (nil when none). Pass the
// last Seq seen (0 at first). When lines[0].Seq > after+1, the ring
// dropped the lines in between (more than OutputLines arrived since).
// Safe for concurrent use; the result is a copy.
//
// This is what a live output pane polls: keep the last Seq, call Output
// each tick, append.
func (s *Supervisor) Output(after uint64) (lines []livestate.OutputLine, partial []livestate.OutputLine) {
	return s.out.since(after)
}
