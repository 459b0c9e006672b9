package session

import "github.com/rlktop/rlktop/tracer/livestate"

// The session's picture (State and its parts) is plain types in package
// livestate, which the view layer imports instead of this package; these
// aliases keep their session names.
type (
	// State is an immutable picture of the session; see livestate.State.
	State = livestate.State
	// Child is one connected (or formerly connected) traced process.
	Child = livestate.Child
	// CounterValue is the latest sample of one counter track.
	CounterValue = livestate.CounterValue
	// RecordingInfo describes a running or finished recording.
	RecordingInfo = livestate.RecordingInfo
	// StepTime is one completed training step.
	StepTime = livestate.StepTime
	// Mark is a flag change acknowledged by a child, for the sparkline.
	Mark = livestate.Mark
	// Refusal is a control command a child refused.
	Refusal = livestate.Refusal
)
