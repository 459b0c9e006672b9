package load

import (
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// Result is what Report returns: the files and their snapshot.
type Result struct {
	Files
	// Snapshot attributes the files, each run a source of its own
	// (attrib.CombineSources of Files.Runs, or the same tables made window
	// by window).
	Snapshot *attrib.Snapshot
	// Outputs are the agent outputs of every file, in argument order.
	Outputs []attrib.OutputRow
	// Windows and Parts count what a streamed read handed the aggregator:
	// torch.profiler windows, and the parts they came in (a long window
	// is read in parts, never held); when the stream was refused part way
	// and the files were read whole, what it had handed before.
	Windows, Parts int
}

// Report reads paths and attributes them. Inputs of the stream size
// together (Streamable) are read window by window and aggregated as they
// come (attrib.SourceStream), so that memory stays about one window's
// events and the tables; when that is refused (tracefile.ErrNotStreamable,
// told to opts.ReadWhole) or a file is damaged, they are read whole again
// from the start (Read), which reports the damage. The error is Read's.
func Report(paths []string, opts Options) (Result, error) {
	var windows, parts int
	if Streamable(paths, opts) {
		r, err := streamReport(paths, opts)
		if err == nil {
			return r, nil
		}
		opts.StreamRefused(err)
		windows, parts = r.Windows, r.Parts
	}
	f, err := Read(paths, opts)
	if err != nil {
		return Result{}, err
	}
	r := Result{Files: f, Snapshot: attrib.CombineSources(f.Runs(), opts.rules()), Windows: windows, Parts: parts}
	r.Outputs = outputs(f.Traces)
	return r, nil
}

func outputs(ts []*tracer.Trace) []attrib.OutputRow {
	var out []attrib.OutputRow
	for _, t := range ts {
		out = append(out, attrib.Outputs(t)...)
	}
	return out
}

// streamReport is Report window by window: one source per path, in order.
func streamReport(paths []string, opts Options) (Result, error) {
	ss := attrib.NewSourceStream(opts.rules())
	r := Result{Files: Files{Streamed: true}}
	memFiles := map[int]bool{} // files with torch.profiler memory events
	err := Stream(paths, opts, func(i int, w *tracefile.Capture) error {
		if w.Shapes {
			ss.ExpectWork()
		}
		if w.MemoryEvents > 0 {
			memFiles[i] = true
		}
		ss.AddPart(w.Events, w.Strings, w.Contexts, w.Part == 0, w.Last, w.After+1)
		r.Parts++
		if w.Last {
			r.Windows++
		}
		return nil
	}, func(_ int, t *tracer.Trace) error {
		ss.EndSource(t)
		r.Traces = append(r.Traces, t)
		return nil
	})
	if err != nil {
		return Result{Windows: r.Windows, Parts: r.Parts}, err
	}
	r.Snapshot = ss.Snapshot()
	if len(memFiles) > 0 {
		m, err := streamMemory(paths, memFiles)
		if err != nil {
			return Result{}, err
		}
		r.Snapshot.Memory = m
	}
	r.Outputs = outputs(r.Traces)
	return r, nil
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
