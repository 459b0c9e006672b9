package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// streamMinBytes: `report` of trace files at least this large together
// (bytes as stored) aggregates them window by window while they are read
// (tracefile.OpenStream → attrib.SourceStream), one file after the other,
// instead of holding every event: peak memory stays about one
// torch.profiler window's events plus the tables. Smaller inputs take the
// whole-trace path (the same result; tests lower this to check that).
var streamMinBytes int64 = progressMinBytes

// streamStats counts what streamReport was handed: windows, and the parts
// they came in (a window of up to tracefile's partWindow events is one
// part; a longer one is read in parts, never held).
type streamStats struct{ windows, parts int }

// streamReport reports paths (one source each, in order) window by
// window: the snapshot, the traces OpenStream returned (metadata and
// steps, for attrib.Outputs) and the windows and parts in all. An error
// wrapping tracefile.ErrNotStreamable, or any read error, means the caller
// should read the files whole (OpenAll), which also reports damage as
// usual. progress, when set, gets the bytes read summed over the files.
func streamReport(paths []string, rules *attrib.Rules, progress func(int64, int64), noShapes bool) (*attrib.Snapshot, []*tracer.Trace, streamStats, error) {
	ss := attrib.NewSourceStream(rules)
	var n streamStats
	var traces []*tracer.Trace
	memFiles := map[int]bool{} // files with torch.profiler memory events
	err := streamFiles(paths, noShapes, progress, func(i int, w *tracefile.Capture) error {
		if w.Shapes {
			ss.ExpectWork()
		}
		if w.MemoryEvents > 0 {
			memFiles[i] = true
		}
		ss.AddPart(w.Events, w.Strings, w.Contexts, w.Part == 0, w.Last, w.After+1)
		n.parts++
		if w.Last {
			n.windows++
		}
		return nil
	}, func(_ int, t *tracer.Trace) error {
		ss.EndSource(t)
		traces = append(traces, t)
		return nil
	})
	if err != nil {
		return nil, nil, n, err
	}
	snap := ss.Snapshot()
	if len(memFiles) > 0 {
		m, err := streamMemory(paths, memFiles)
		if err != nil {
			return nil, nil, n, err
		}
		snap.Memory = m
	}
	return snap, traces, n, nil
}

// streamMemory is the memory model of the files (sources in order) that
// hold torch.profiler memory events, read whole a second time: windows
// carry no memory events, and each needs the operators around it. The
// files without memory events count as empty sources.
func streamMemory(paths []string, memFiles map[int]bool) (*attrib.Memory, error) {
	ts := make([]*tracer.Trace, len(paths))
	for i, p := range paths {
		ts[i] = tracer.NewTrace("kineto", p)
		if memFiles[i] {
			t, err := tracefile.Open(p, tracefile.Options{})
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
	}
	return attrib.MemoryOf(ts), nil
}

// streamMeta reads paths (report --meta of large Kineto files) with
// tracefile.OpenStream, dropping every window: their traces hold the
// metadata Open's would, and no event is kept. ok false (a file refused,
// damaged or not Kineto) sends the caller to the whole-file path, which
// says what is wrong.
func streamMeta(paths []string, progress func(int64, int64)) (ts []*tracer.Trace, ok bool) {
	err := streamFiles(paths, true, progress, func(int, *tracefile.Capture) error { return nil },
		func(_ int, t *tracer.Trace) error {
			ts = append(ts, t)
			return nil
		})
	return ts, err == nil
}

// streamFiles reads paths in order, each with tracefile.OpenStream: part
// gets every window (or part of one) of file i, done its trace once read.
// The first error (OpenStream's, part's or done's) stops the reading and
// is returned. progress, when set, gets the bytes read summed over the
// files and their total size.
// noShapes ignores recorded shapes (tracefile.Options.NoShapes): what
// needs no modelled work (export, --meta) streams a long window with
// shapes, which a report with work reads whole.
func streamFiles(paths []string, noShapes bool, progress func(int64, int64), part func(i int, w *tracefile.Capture) error, done func(i int, t *tracer.Trace) error) error {
	var total, base int64
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		if st, err := os.Stat(p); err == nil {
			sizes[i] = st.Size()
			total += st.Size()
		}
	}
	for i, p := range paths {
		opts := tracefile.Options{NoShapes: noShapes}
		if progress != nil {
			from := base
			opts.Progress = func(read, _ int64) { progress(from+read, total) }
		}
		t, err := tracefile.OpenStream(p, opts, func(w *tracefile.Capture) error { return part(i, w) })
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

// streamable reports whether report should stream paths: regular files
// of at least streamMinBytes together, decoded (a small .gz can hold
// gigabytes of events).
func streamable(paths []string) bool {
	var total int64
	for _, p := range paths {
		n, err := tracefile.DecodedSize(p)
		if err != nil {
			return false
		}
		total += n
	}
	return len(paths) > 0 && total >= streamMinBytes
}

// sayReadWhole writes, for a Kineto input the stream refused, why it is
// read whole instead; other formats' files (tracefile.ErrOtherFormat) and
// read errors (Open reports those itself) get no line.
func sayReadWhole(errw io.Writer, err error) {
	if errors.Is(err, tracefile.ErrNotStreamable) && !errors.Is(err, tracefile.ErrOtherFormat) {
		fmt.Fprintf(errw, "rlktop: %v; reading the input whole (memory grows with the files)\n", err)
	}
}

// tryStreamReport is report's large-input path: ok false (after a line on
// errw when a file could not be streamed) sends the caller to the
// whole-trace path.
func tryStreamReport(errw io.Writer, paths []string, rules *attrib.Rules, progress func(int64, int64), noShapes bool) (*attrib.Snapshot, []*tracer.Trace, bool) {
	snap, traces, _, err := streamReport(paths, rules, progress, noShapes)
	if err != nil {
		sayReadWhole(errw, err)
		return nil, nil, false
	}
	return snap, traces, true
}
