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

// streamMinBytes: `report` of one trace file at least this large (bytes as
// stored) aggregates it window by window while it is read
// (tracefile.OpenStream → attrib.SourceStream) instead of holding every
// event: peak memory stays about one torch.profiler window's events plus
// the tables. Smaller files take the whole-trace path (the same result;
// tests lower this to check that).
var streamMinBytes int64 = progressMinBytes

// streamReport reports path window by window: the snapshot, the trace
// OpenStream returned (metadata and steps, for attrib.Outputs) and the
// number of windows. An error wrapping tracefile.ErrNotStreamable, or any
// read error, means the caller should read the file whole (Open), which
// also reports damage as usual.
func streamReport(path string, rules *attrib.Rules, progress func(int64, int64)) (*attrib.Snapshot, *tracer.Trace, int, error) {
	ss := attrib.NewSourceStream(rules)
	windows := 0
	t, err := tracefile.OpenStream(path, tracefile.Options{Progress: progress}, func(w *tracefile.Window) error {
		ss.AddWindow(w.Events, w.Strings, w.Contexts)
		windows++
		return nil
	})
	if err != nil {
		return nil, nil, windows, err
	}
	return ss.Snapshot(t), t, windows, nil
}

// streamable reports whether report should stream paths: one file of at
// least streamMinBytes.
func streamable(paths []string) bool {
	if len(paths) != 1 {
		return false
	}
	st, err := os.Stat(paths[0])
	return err == nil && st.Mode().IsRegular() && st.Size() >= streamMinBytes
}

// tryStreamReport is report's large-input path: ok false (after a line on
// errw when the file could not be streamed) sends the caller to the
// whole-trace path.
func tryStreamReport(errw io.Writer, path string, rules *attrib.Rules, progress func(int64, int64)) (*attrib.Snapshot, *tracer.Trace, bool) {
	snap, t, _, err := streamReport(path, rules, progress)
	if err != nil {
		if errors.Is(err, tracefile.ErrNotStreamable) {
			fmt.Fprintf(errw, "rlktop: %v; reading it whole (memory grows with the file)\n", err)
		}
		return nil, nil, false
	}
	return snap, t, true
}
