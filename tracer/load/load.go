// Package load is how every command reads trace files: one call per need
// (Read for whole traces, Report for a snapshot, Meta for metadata,
// Stream for window-by-window consumers), one rule for damage, and one
// place that decides whether an input is large enough to be read window
// by window (tracefile.OpenStream) instead of held whole (tracefile.Open).
//
// Its callers are the commands (cmd/rlktop): they choose what they need
// and print what they are given; they do not pick among readers.
package load

import (
	"errors"
	"fmt"
	"os"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/opmodel"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// DefaultStreamMinBytes: inputs of at least this many bytes together
// (decoded: a small .gz can hold gigabytes of events) are read window by
// window by Report, Meta and Stream's callers; smaller ones are held whole
// (the same result: every streamed report is checked against the whole
// one in tests). tracefile.StreamMinBytes (256 MiB): below it a whole read
// takes a few seconds and a few hundred MiB.
const DefaultStreamMinBytes = tracefile.StreamMinBytes

// Options tune a load.
type Options struct {
	// Rules are the category rules a snapshot is made with (nil:
	// attrib.DefaultRules()).
	Rules *attrib.Rules
	// OpModel gives kernels the FLOPs and bytes of the operators that
	// launched them (nil: opmodel.Default()).
	OpModel *opmodel.Model
	// NoShapes ignores recorded shapes (tracefile.Options.NoShapes).
	NoShapes bool
	// Progress, when non-nil, gets the bytes read so far summed over the
	// files (compressed bytes of a .gz) and their summed size; it may be
	// called from several goroutines at once.
	Progress func(read, total int64)
	// StreamMinBytes replaces DefaultStreamMinBytes when positive;
	// negative never streams (every input is held whole).
	StreamMinBytes int64
	// ReadWhole, when non-nil, is told why a large Kineto input could not
	// be streamed and is read whole instead (its memory then grows with
	// the file); never for other formats or damaged files, whose reading
	// whole says what it finds.
	ReadWhole func(reason error)
	// PartWindow is the number of events past which a streamed window is
	// read in parts (tracefile.Options.PartWindow; 0: the default).
	PartWindow int
	// Spill sizes what a window read in parts sorts and keeps on disk
	// (tracefile.Options.Spill, and the report's sorts of its op
	// intervals and durations; zero: the defaults).
	Spill tracer.SpillSizes
}

func (o Options) rules() *attrib.Rules {
	if o.Rules == nil {
		return attrib.DefaultRules()
	}
	return o.Rules
}

func (o Options) file() tracefile.Options {
	return tracefile.Options{OpModel: o.OpModel, NoShapes: o.NoShapes, PartWindow: o.PartWindow, Spill: o.Spill}
}

// Files is what Read returns for a list of paths.
type Files struct {
	// Traces holds one trace per path, in argument order (never nil).
	Traces []*tracer.Trace
	// Damaged lists the files read only in part, in argument order: each
	// one's trace holds what came before the damage.
	Damaged []Damage
	// Streamed says the files were read window by window: their traces
	// then hold metadata and steps, not events, and none is damaged (a
	// damaged file is read whole).
	Streamed bool
}

// Damage is one file read only in part: Err names the file and the offset
// (a *tracefile.Error), Trace is its entry in Files.Traces.
type Damage struct {
	Err   error
	Trace *tracer.Trace
}

// Runs is tracefile.GroupRuns of the traces: a rocprofv3 run's several
// CSV files merged into one source, every other file a source of its own.
func (f Files) Runs() []*tracer.Trace { return tracefile.GroupRuns(f.Traces) }

// Read reads paths whole with tracefile.OpenAll (in parallel, results in
// argument order) and applies the rule every command shares for damage: a
// file damaged part way is kept with what was read before the damage and
// listed in Damaged; a file that yielded nothing (no trace, or one without
// events, counters, memory events, Python samples or summary rows) stops
// the load with its error, the first such in argument order. The error is
// tracefile.Open's (*tracefile.Error: the file, the offset, what to do).
func Read(paths []string, opts Options) (Files, error) {
	fo := opts.file()
	fo.Progress = opts.Progress
	read, errs := tracefile.OpenAll(paths, fo)
	f := Files{Traces: make([]*tracer.Trace, 0, len(paths))}
	for i, t := range read {
		err := errs[i]
		if err == nil {
			f.Traces = append(f.Traces, t)
			continue
		}
		if t == nil || empty(t) {
			return Files{}, err
		}
		f.Traces = append(f.Traces, t)
		f.Damaged = append(f.Damaged, Damage{Err: err, Trace: t})
	}
	return f, nil
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

// Streamable reports whether paths are read window by window: regular
// files of at least opts' stream size together, decoded.
func Streamable(paths []string, opts Options) bool {
	min := opts.StreamMinBytes
	if min == 0 {
		min = DefaultStreamMinBytes
	}
	if min < 0 || len(paths) == 0 {
		return false
	}
	var total int64
	for _, p := range paths {
		n, err := tracefile.DecodedSize(p)
		if err != nil {
			return false
		}
		total += n
	}
	return total >= min
}

// Stream reads paths in order, each with tracefile.OpenStream: part gets
// every window (or part of one) of file i, done its trace once read (the
// trace holds its metadata and steps, not its events). The first error
// (OpenStream's, part's or done's) stops the reading and is returned; one
// wrapping tracefile.ErrNotStreamable means the input must be read whole.
// It streams whatever the size: callers ask Streamable first.
func Stream(paths []string, opts Options, part func(i int, w *tracefile.Capture) error, done func(i int, t *tracer.Trace) error) error {
	var total, base int64
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		if st, err := os.Stat(p); err == nil {
			sizes[i] = st.Size()
			total += st.Size()
		}
	}
	for i, p := range paths {
		fo := opts.file()
		if opts.Progress != nil {
			from := base
			fo.Progress = func(read, _ int64) { opts.Progress(from+read, total) }
		}
		t, err := tracefile.OpenStream(p, fo, func(w *tracefile.Capture) error { return part(i, w) })
		if err != nil {
			return err
		}
		if err := done(i, t); err != nil {
			return err
		}
		base += sizes[i]
	}
	return nil
}

// StreamRefused passes the reason a stream was refused to o.ReadWhole when
// it is one the user should hear (a Kineto input that cannot be streamed
// exactly); other formats' files and read errors say nothing here.
func (o Options) StreamRefused(err error) {
	if o.ReadWhole != nil && errors.Is(err, tracefile.ErrNotStreamable) && !errors.Is(err, tracefile.ErrOtherFormat) {
		o.ReadWhole(err)
	}
}

// Meta reads the metadata of paths (tracer.Trace without its events
// where streamed): large Kineto inputs window by window keeping no event,
// the rest whole. A stream refused part way is read again whole from its
// start, silently (the reading whole reports damage; a refusal costs only
// memory, which metadata does not need).
func Meta(paths []string, opts Options) (Files, error) {
	if Streamable(paths, opts) {
		so := opts
		so.NoShapes = true // shapes matter to modelled work only
		var ts []*tracer.Trace
		err := Stream(paths, so, func(int, *tracefile.Capture) error { return nil },
			func(_ int, t *tracer.Trace) error {
				ts = append(ts, t)
				return nil
			})
		if err == nil {
			return Files{Traces: ts, Streamed: true}, nil
		}
	}
	return Read(paths, opts)
}
