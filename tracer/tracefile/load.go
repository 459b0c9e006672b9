package tracefile

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
)

// Loaded is what Load read from a list of files.
type Loaded struct {
	// Traces holds one trace per path, in argument order (never nil).
	Traces []*tracer.Trace
	// Damaged lists the files read only in part, in argument order: each
	// one's trace holds what came before the damage.
	Damaged []Damage
}

// Damage is one file read only in part: Err names the file and the offset
// (a *Error), Trace is its entry in Loaded.Traces.
type Damage struct {
	Err   error
	Trace *tracer.Trace
}

// Runs is GroupRuns of the traces: a rocprofv3 run's several CSV files
// merged into one source, every other file a source of its own.
func (l Loaded) Runs() []*tracer.Trace { return GroupRuns(l.Traces) }

// Load reads paths with OpenAll (in parallel, results in argument order)
// and applies the rule every command shares for damage: a file damaged
// part way is kept with what was read before the damage and listed in
// Damaged; a file that yielded nothing (no trace, or one without events,
// counters, memory events, Python samples or summary rows) stops the load
// with its error, the first such in argument order. The error is Open's
// (*Error: the file, the offset, what to do).
func Load(paths []string, opts Options) (Loaded, error) {
	read, errs := OpenAll(paths, opts)
	l := Loaded{Traces: make([]*tracer.Trace, 0, len(paths))}
	for i, t := range read {
		err := errs[i]
		if err == nil {
			l.Traces = append(l.Traces, t)
			continue
		}
		if t == nil || empty(t) {
			return Loaded{}, err
		}
		l.Traces = append(l.Traces, t)
		l.Damaged = append(l.Damaged, Damage{Err: err, Trace: t})
	}
	return l, nil
}

// empty says a trace damaged part way kept nothing worth showing.
func empty(t *tracer.Trace) bool {
	return len(t.Events) == 0 && len(t.Counters) == 0 && len(t.Memory) == 0 &&
		len(t.PySamples) == 0 && len(t.Summary) == 0
}

// Kept says what a trace damaged part way kept, for the line under its
// error: "N events". A Kineto error counts the traceEvents records before
// the damage ("inside event N"), and not all of them become events:
// metadata, counters and flows do not, and a "B" and its "E" make one; the
// line says so, or its count looks wrong.
func (d Damage) Kept() string {
	t := d.Trace
	s := fmt.Sprintf("%d events", len(t.Events))
	if t.Format == "kineto" {
		s += " (metadata, counter and flow records are not events, and a B/E pair is one)"
	}
	if len(t.PySamples) > 0 {
		s += fmt.Sprintf(", %d Python samples", len(t.PySamples))
	}
	return s
}
