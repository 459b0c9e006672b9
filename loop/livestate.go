package loop

import (
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

// The child's status, its output lines and a comparison's result are plain
// types in package livestate (which the view layer imports instead of this
// package); these aliases keep their loop names.
type (
	// State is the child's lifecycle state; see livestate.ChildState.
	State = livestate.ChildState
	// Status describes the child at one moment; see livestate.Status.
	Status = livestate.Status
	// Stream says which of the child's outputs a line came from.
	Stream = livestate.Stream
	// OutputLine is one line of the child's output; see livestate.OutputLine.
	OutputLine = livestate.OutputLine
	// StepLabel says which arm ran one step of a comparison.
	StepLabel = livestate.StepLabel
	// ArmConsistency compares one arm's probe outputs with arm A's.
	ArmConsistency = livestate.ArmConsistency
	// CompareResult is what `rlktop compare` prints and the TUI renders.
	CompareResult = livestate.CompareResult
	// MetricCompare is one metric of one arm against the A/A′ envelope.
	MetricCompare = livestate.MetricCompare
	// AuditCompare is one audited tensor of one arm against arm A.
	AuditCompare = livestate.AuditCompare
	// CheckSummary is one rlktop.check name of one arm.
	CheckSummary = livestate.CheckSummary
	// FlagSpec is one --flag K=V1,V2[,…] argument.
	FlagSpec = livestate.FlagSpec
	// FlagState is a live run's flags in force and pending (Live.FlagState).
	FlagState = livestate.FlagState
	// Tried is the measured result of testing one finding's flag.
	Tried = livestate.Tried
)

// Child states and output streams; see livestate.
const (
	NotStarted = livestate.NotStarted
	Running    = livestate.Running
	Exited     = livestate.Exited
	Stopped    = livestate.Stopped

	Stdout = livestate.Stdout
	Stderr = livestate.Stderr
	Notice = livestate.Notice
)

// Step phases of a schedule; see livestate.
const (
	PhaseWarmup  = livestate.PhaseWarmup
	PhaseCounted = livestate.PhaseCounted
	PhaseExtra   = livestate.PhaseExtra
)

// NoiseName is the noise arm's name for arm A's name a ("A′ (a)").
func NoiseName(a string) string { return livestate.NoiseName(a) }

// ArmName names an arm by the flags that vary between arms; see
// livestate.ArmName.
func ArmName(flags map[string]string, specs []FlagSpec) string {
	return livestate.ArmName(flags, specs)
}

// TriedOf reduces a comparison to a Tried; see livestate.TriedOf.
func TriedOf(res *CompareResult, findingID, key, from, to, row string) Tried {
	return livestate.TriedOf(res, findingID, key, from, to, row)
}

// FindingRow is the category a finding's comparison quotes; see
// livestate.FindingRow.
func FindingRow(f *attrib.Finding) string { return livestate.FindingRow(f) }

// FindingInputOf is the findings input of a live session's state; see
// livestate.FindingInputOf.
func FindingInputOf(st *session.State, flags map[string]string, command bool) attrib.FindingInput {
	return livestate.FindingInputOf(st, flags, command)
}
