package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// SnapshotMsg delivers a new snapshot (a loaded file once, a live session
// about 10 times a second). The snapshot must not be mutated afterwards.
type SnapshotMsg struct {
	Snapshot *attrib.Snapshot
	// Timeline, when non-nil, is drawn by the Timeline view (a file's
	// events, attrib.BuildTimeline); never mutated afterwards.
	Timeline *attrib.Timeline
	// Steps, when set, are the same trace aggregated one step at a time
	// (step order): `,` and `.` select one and the Kernels, Categories
	// and Stages views show its numbers. Never mutated afterwards.
	Steps []StepSnapshot
	// Findings, when non-nil, is what the Findings view evaluates besides
	// the snapshot shown: the file's agent outputs (NaN checks,
	// recompiles, input wait), counter tracks and, for a recording, the
	// flags in force (cmd/rlktop findingsInputOf). Its Snapshot is
	// ignored. Never mutated afterwards.
	Findings *attrib.FindingInput
}

// StepSnapshot is one step of a file aggregated on its own: the GPU
// events whose launch context is in step Step (tracer.Context.Step), and
// that step's range.
type StepSnapshot struct {
	Step     int64
	Snapshot *attrib.Snapshot
}

// Level is a status message's severity.
type Level int

// Status levels.
const (
	Info Level = iota
	Warn
	Error
)

// StatusMsg sets the status bar's text ("attributing…", "child exited 1").
// An empty Text clears it.
type StatusMsg struct {
	Text  string
	Level Level
}

// ErrMsg reports an error. A non-fatal one is shown in the status bar; a
// fatal one (the file could not be read) ends the program and is returned
// by Model.Err, for the caller to print and exit non-zero.
type ErrMsg struct {
	Err   error
	Fatal bool
}

// ProgressMsg reports loading progress: Read of Size bytes of the source
// file (Size 0: unknown) in Phase ("reading", "attributing").
type ProgressMsg struct {
	Phase      string
	Read, Size int64
}

// feedMsg wraps a message read from Options.Feed; ok is false once the
// feed is closed.
type feedMsg struct {
	msg tea.Msg
	ok  bool
}

// listen returns a command that waits for the next message on ch. The
// model re-issues it after each message, so a source can send at its own
// pace without ever touching the model (the only writer of model state
// is Update).
func listen(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		m, ok := <-ch
		return feedMsg{msg: m, ok: ok}
	}
}
