// Package msg holds the plain values wire frames carry — a sender's
// Hello, control commands and acknowledgements (Control, ControlOp), Drops,
// Bye and key/value pairs — with no codec and no transport, so packages
// that only read them (tracer/livestate, and through it views, tui and
// report) need not import tracer/wire and its net and crypto dependencies.
// tracer/wire encodes and decodes them (FORMAT.md).
package msg

import (
	"maps"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// KV is one key/value pair (flags, meta, device properties).
type KV struct{ Key, Value string }

// SortedKVs returns m's pairs in key order (a run record's meta frame is
// then the same bytes for the same map).
func SortedKVs(m map[string]string) []KV {
	kv := make([]KV, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, KV{Key: k, Value: m[k]})
	}
	return kv
}

// Hello identifies a sender. It is the first frame a traced process sends.
type Hello struct {
	// Source names the tracer: "gotrace", "cupti", "rocprof"; a recording's
	// own hellos keep the child's value.
	Source string
	PID    int64 // OS process id of the traced process
	Rank   int64 // distributed rank; -1 unknown
	World  int64 // distributed world size; 0 unknown
	Host   string
	// Device is a one-line description ("NVIDIA H200 (sm_90, 141 GiB)",
	// "cpu: 2 cores").
	Device string
	// ClockOffsetNs maps the sender's tracer clock to host CLOCK_REALTIME:
	// realtime_ns = tracer_ns + ClockOffsetNs.
	ClockOffsetNs int64
	// StartNs is the host CLOCK_REALTIME (ns since the Unix epoch) at which
	// the hello was written.
	StartNs int64
	Cmdline []string
	Devices []tracer.Device
}

// ControlOp is what a Control frame asks or reports.
type ControlOp uint8

// Control operations.
const (
	ControlSet    ControlOp = 1 // set flag Key to Value (applied at the next step boundary)
	ControlPause  ControlOp = 2 // pause tracing (the loop keeps running, untraced)
	ControlResume ControlOp = 3 // resume tracing
	ControlStop   ControlOp = 4 // stop the loop cleanly
	ControlAck    ControlOp = 5 // child → rlktop: Seq applied (or refused: Err); Flags in force
	// ControlDetach asks an attached Python agent (rlktop attach) to leave
	// the process: undo what it installed, say bye, close; the process runs on.
	ControlDetach ControlOp = 6
)

func (o ControlOp) String() string {
	switch o {
	case ControlSet:
		return "set"
	case ControlPause:
		return "pause"
	case ControlResume:
		return "resume"
	case ControlStop:
		return "stop"
	case ControlAck:
		return "ack"
	case ControlDetach:
		return "detach"
	}
	return "op?"
}

// Control is a command (rlktop → child) or its acknowledgement.
type Control struct {
	Op  ControlOp
	Seq uint64 // command number chosen by rlktop; an ack repeats it
	Key string // ControlSet: flag name
	// Value is ControlSet's new value.
	Value string
	// Flags (acks only) lists every flag in force after the command, sorted
	// by key.
	Flags []KV
	// Tracing (acks only) is whether tracing is on after the command.
	Tracing bool
	// Step (acks only) is the step number at which the command took effect;
	// -1 unknown.
	Step int64
	// Err (acks only) is why the command was refused; "" when applied.
	Err string
}

// Drops counts what a sender discarded because its buffer was full. Both
// counts are cumulative since the sender started.
type Drops struct {
	Events  uint64 // tracer.Event records dropped
	Batches uint64 // Send calls whose batch was dropped
}

// Bye ends a stream in an orderly way.
type Bye struct {
	Reason string // "exit", "stop", …
	// ExitCode is the process exit status when known, else -1.
	ExitCode int64
}
