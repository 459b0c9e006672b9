package livestate

import (
	"fmt"
	"time"
)

// ChildState is the child's lifecycle state (loop.Supervisor's).
type ChildState int

// Child states.
const (
	NotStarted ChildState = iota
	Running
	Exited // exited by itself (Status tells how)
	Stopped
)

func (s ChildState) String() string {
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
	State    ChildState
	PID      int
	Started  time.Time
	ExitCode int    // valid when State is Exited or Stopped; -1 when killed by a signal
	Signal   string // signal name when killed by one
	Err      string // start failure
	// StderrTail is the last lines the child wrote to stderr (at most
	// loop.TailLines lines), kept across a crash.
	StderrTail []string
	Restarts   int
	// OutputDir is the directory of the child's "stdout" and "stderr"
	// files while it runs ("" once it exited: the directory is removed).
	// If rlktop dies, the directory stays and the child writes on there.
	OutputDir string
	// Attached is set for a process rlktop attached to (rlktop attach):
	// not its child, so its exit status is unknown to rlktop.
	Attached bool
	// Detached, for an attached process only, says why its agent left
	// while the process runs on (its connection to rlktop ended without
	// rlktop asking); State is then Stopped. "" while attached, and after
	// rlktop itself detached.
	Detached string
}

// Describe is a one-line human summary ("running (pid 123)", "exited with
// status 2", "killed by signal: killed").
func (s Status) Describe() string {
	if s.Attached && s.Detached != "" {
		return fmt.Sprintf("no longer traced: %s (pid %d runs on untraced)", s.Detached, s.PID)
	}
	switch s.State {
	case Running:
		return fmt.Sprintf("running (pid %d)", s.PID)
	case Exited, Stopped:
		switch {
		case s.Attached:
			return "exited (rlktop attached to it and did not start it: its exit status is its parent's)"
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
