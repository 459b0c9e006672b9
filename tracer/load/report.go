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
	// MemoryReread counts the streamed files read a second time, whole,
	// for the memory model: those with memory events in a capture read in
	// parts.
	MemoryReread int
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
	ss := attrib.NewSourceStream(opts.rules(), opts.Spill)
	r := Result{Files: Files{Streamed: true}}
	mem := make([]streamMem, len(paths))
	err := Stream(paths, opts, func(i int, w *tracefile.Capture) error {
		if w.Shapes {
			ss.ExpectWork()
		}
		mem[i].add(w, i)
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
	m, reread, err := memoryOf(paths, mem)
	if err != nil {
		return Result{}, err
	}
	r.Snapshot.Memory, r.MemoryReread = m, reread
	r.Outputs = outputs(r.Traces)
	return r, nil
}

// streamMem is what a streamed file gives the memory model: its memory
// events attributed capture by capture (attrib.TraceMemory over each
// capture held whole, whose operators, ranges and steps are all there),
// the step windows of all its captures, and how many memory events came
// in all and with captures held whole.
type streamMem struct {
	recs          []attrib.MemRecord
	steps         []attrib.MemStepWindow
	seen          map[[2]int64]bool
	events, whole int
}

func (m *streamMem) add(w *tracefile.Capture, source int) {
	m.events = w.MemoryEvents
	if m.seen == nil {
		m.seen = map[[2]int64]bool{}
	}
	// Every step, as TraceMemory takes them from a whole trace: the
	// first of each (pid, step).
	for i := range w.Events {
		if e := &w.Events[i]; e.Kind == tracer.KindStep {
			if k := [2]int64{int64(e.PID), e.Value}; !m.seen[k] {
				m.seen[k] = true
				m.steps = append(m.steps, attrib.MemStepWindow{Source: source, PID: e.PID, Step: e.Value, StartNs: e.Start, EndNs: e.End()})
			}
		}
	}
	if len(w.Memory) == 0 || w.Part != 0 || !w.Last {
		return
	}
	recs, _ := attrib.TraceMemory(&tracer.Trace{Events: w.Events, Strings: w.Strings, Memory: w.Memory}, source)
	m.recs = append(m.recs, recs...)
	m.whole += len(w.Memory)
}

// memoryOf is the memory model of streamed files (sources in order): each
// file's records from its captures, except a file with memory events in a
// capture read in parts, which is read whole a second time (its operators
// were not held; reread counts such files). The files without memory
// events count as empty sources; nil when no file has memory events.
func memoryOf(paths []string, mem []streamMem) (_ *attrib.Memory, reread int, _ error) {
	var recs []attrib.MemRecord
	var steps []attrib.MemStepWindow
	for i, m := range mem {
		if m.events == 0 {
			continue
		}
		if m.whole == m.events {
			recs = append(recs, m.recs...)
			steps = append(steps, m.steps...)
			continue
		}
		t, err := tracefile.Open(paths[i], tracefile.Options{})
		if err != nil {
			return nil, 0, err
		}
		r, s := attrib.TraceMemory(t, i)
		recs, steps = append(recs, r...), append(steps, s...)
		reread++
	}
	if len(recs) == 0 {
		return nil, reread, nil
	}
	return attrib.BuildMemory(recs, steps), reread, nil
}
