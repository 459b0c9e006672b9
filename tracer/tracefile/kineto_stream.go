package tracefile

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/steps"
)

// Streaming a Kineto file window by window (OpenStream), so that a large
// trace is linked and aggregated while it is read and its events are never
// held all at once.
//
// Kineto writes each torch.profiler window as all of its CPU events
// (cpu_op, user_annotation with ProfilerStep#N, python_function), then its
// runtime launches interleaved with their GPU ops, then metadata. A window
// ends when a CPU event (operator, range, step, Python frame) comes after
// launches or GPU ops and starts after the end of every event read so far;
// the window's events are then cut into steps, linked
// (tracer.CaptureLinker), handed to the caller and dropped. Memory is one
// window's events (64 bytes each) and its linking state, plus the trace's
// steps: flat as a file of many windows grows. A window past PartWindow
// events (a file that is one long torch.profiler window) is not held: it
// is linked while it is read (tracer.CaptureLinker Begin/Add/Op/End) and
// handed out in parts (Window.Part, Window.Last): its steps, then its GPU
// ops in file order, each as soon as its launch was read. Its operator and
// range intervals go through an external sort to a temporary file
// (tracer.Linker.SpillIntervals), its CPU-thread intervals for the nesting
// check too (nestRecs), and its launch correlation ids past 2^18 (with
// their contexts) to another; it keeps in memory its ranges and steps
// until its first launch (the step rule is decided per window), the GPU
// ops read before their launch together with those after them (so that the
// ops go out in file order), and the part's contexts (each part has its
// own, Window.Contexts). Memory is flat as such a window grows: report of
// one-window copies of hta_diff_control_a100 of 0.31, 2.83 and 10.19 GB
// peaked at 71, 88 and 86 MB.

// ErrNotStreamable is wrapped by OpenStream's error when the input cannot
// be streamed with the same result as Open (not Kineto JSON, no GPU work,
// an operator, range or step after the launches of a window read in parts,
// step-like annotation ranges first seen after the first window, windows that overlap in time or whose
// correlation ids reach back, process_labels that move GPU ops to another
// device, a read error); the error says which. The caller should read the
// file with Open instead and discard what the windows gave.
var ErrNotStreamable = errors.New("cannot be streamed window by window")

// ErrOtherFormat is wrapped, beside ErrNotStreamable, by OpenStream's error
// for a file of another format than Kineto JSON: Open reads it with that
// format's own reader and bounds, so there is nothing to warn about.
var ErrOtherFormat = errors.New("not Kineto JSON")

// Capture is one window of a streamed trace, or one part of it: its events
// in file order, steps cut and GPU ops linked. A window of up to
// Options.PartWindow events comes whole (Part 0, Last) with every event; a longer
// one comes in parts 0, 1, … (the last has Last set) that hold only its
// steps (all in part 0, before any GPU op) and its GPU ops (kernel, memcpy,
// memset). Contexts indexes Event.Ctx: each window's (and each part's)
// are its own, so an ID means nothing in another window or part (a trace
// has one context per operator stack and step: holding them all grew
// with the trace). Every event of the
// window starts after After ns (the end of the earlier windows' events;
// math.MinInt64 for the first), which OpenStream checks. Rank is the
// trace's distributed rank as read so far (Kineto writes distributedInfo
// before traceEvents; -1 unknown): a caller that writes it with each
// window checks it against the returned trace's Rank. Events and
// Contexts are valid only during the callback.
type Capture struct {
	Index    int
	Part     int
	Last     bool
	After    int64
	Rank     int
	Events   []tracer.Event
	Strings  *tracer.Strings
	Contexts []tracer.Context
	// Shapes: the window's operators recorded shapes, so its kernels
	// carry modelled work (an aggregator should then count kernels without
	// it as unmodelled: attrib.SourceStream.ExpectWork).
	Shapes bool
	// MemoryEvents counts the torch.profiler [memory] events read so far
	// (kineto_memory.go).
	MemoryEvents int
	// Memory holds, for a capture held whole (Part 0 and Last), the
	// memory events not handed before whose time is at most the capture's
	// latest end (every one left, for the file's last capture), in file
	// order: those Open's Trace.Memory has at that place. Captures read in
	// parts carry none; their memory events go to the next capture held
	// whole, so a caller that needs each attributed within its capture
	// reads a file whose MemoryEvents exceed what it was handed whole.
	Memory []tracer.MemEvent
}

// OpenStream reads the Kineto trace at path as Open does but hands its
// events to fn window by window (see Window) instead of keeping them: the
// returned trace has everything Open's has (Format, Path, Strings,
// Devices, Rank, World, StepRule, Meta, Warnings, Counters) except Events,
// which holds only its steps (KindStep events, in file order), and
// Contexts (nil: each window had its own). fn's windows together are
// Open's Events, each GPU op's context (Window.Contexts[Ctx]) equal to its
// Open context, and fn's error stops the reading and is returned.
//
// When the input cannot be streamed exactly, OpenStream returns an error
// wrapping ErrNotStreamable, possibly after fn has seen some windows. A
// damaged file gives Open's *Error (the windows before the damage were
// handed to fn). opts.Progress is called as by Open.
func OpenStream(path string, opts Options, fn func(w *Capture) error) (*tracer.Trace, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ks := &kstream{fn: fn, link: tracer.NewCaptureLinker(opts.Spill), partWindow: opts.partWindow()}
	ks.inc.nest.runRecs = opts.Spill.RunRecs
	ks.work.model = opts.OpModel
	opts.stream = ks
	t, err := Read(f, path, size, opts)
	var damage *Error
	if errors.As(err, &damage) && !errors.Is(err, ErrNotStreamable) {
		// Damage first: what the stream found after it (no GPU work in
		// a file cut before its first kernel) is not the file's fault
		// the user must hear.
		return t, err
	}
	if ks.err != nil {
		return nil, ks.err
	}
	if err != nil {
		return t, err
	}
	if t == nil || !ks.ran {
		return nil, fmt.Errorf("%s: not Kineto JSON: %w", path, ErrNotStreamable)
	}
	return t, nil
}

// kstream is the Kineto decoder's streaming state (kdec.stream).
type kstream struct {
	fn   func(w *Capture) error
	link *tracer.CaptureLinker
	err  error // set once: ErrNotStreamable's reason, or fn's error

	memEvents int               // [memory] events read (Capture.MemoryEvents)
	mem       []tracer.MemEvent // those not handed out yet (Capture.Memory)
	ran       bool              // the Kineto reader used it
	ending    bool              // the input is read: the window flushed is the last

	// The window's events: full chunks, then cur (as Open's reader keeps
	// them, so that a window is not grown by copying); joined at the
	// window's end when there are several.
	chunks  [][]tracer.Event
	cur     []tracer.Event
	n       int   // events of the window so far
	inGPU   bool  // the window has launches or GPU ops
	maxEnd  int64 // latest end of the events read, ns
	after   int64 // maxEnd before the window's first event (Window.After)
	base    int   // events in earlier windows
	gpuWork bool

	devPIDs map[int32]bool // pids of GPU ops whose device came from the pid

	steps   *steps.TraceCaptures
	stepEvs []tracer.Event

	nestN        int
	nestA, nestB tracer.Event // the first partly overlapping pair

	partWindow int             // Options.PartWindow, resolved
	inc        incStream       // the window read in parts, past partWindow events
	work       streamWork      // the window's operator calls (kineto_shapes.go)
	strs       *tracer.Strings // the trace's
	t          *tracer.Trace   // the trace being read (its header: Rank)
}

func (ks *kstream) fail(err error) {
	if ks.err == nil {
		ks.err = err
	}
}

func (ks *kstream) start(d *kdec, opts Options) {
	ks.ran = true
	ks.strs, ks.t = d.t.Strings, d.t
	ks.devPIDs = map[int32]bool{}
	ks.steps = steps.NewTraceCaptures()
	ks.maxEnd = -1 << 63
}

// add takes one event from the decoder; a CPU event after GPU work that
// starts after everything read so far closes the window.
func (ks *kstream) add(d *kdec, e tracer.Event, fromPid bool) {
	if ks.err != nil {
		return
	}
	switch e.Kind {
	case tracer.KindCPUOp, tracer.KindRange, tracer.KindStep, tracer.KindPython:
		if ks.inGPU && e.Start > ks.maxEnd {
			ks.flush(d)
		}
	}
	if e.Kind.IsGPU() || e.Kind.IsLaunch() {
		ks.inGPU = true
	}
	if fromPid {
		ks.devPIDs[e.PID] = true
	}
	if ks.n == 0 {
		ks.after = ks.maxEnd
	}
	ks.maxEnd = max(ks.maxEnd, e.Start+max(e.Dur, 0))
	ks.n++
	d.nOut++
	ks.work.take(ks, d, &e)
	if ks.inc.on {
		ks.incAdd(d, e)
		return
	}
	if len(ks.cur) == cap(ks.cur) {
		ks.grow()
	}
	ks.cur = append(ks.cur, e)
	if ks.n > ks.partWindow {
		ks.toParts(d)
	}
}

// DefaultPartWindow: a window past this many events (18 MiB of events)
// is not held: what was read of it is linked as a window read in parts,
// and so is the rest as it comes (Options.PartWindow replaces it).
const DefaultPartWindow = 1 << 18

// partWindow returns the number of events past which a window is read in
// parts (Options.PartWindow).
func (o Options) partWindow() int {
	switch {
	case o.PartWindow == 0:
		return DefaultPartWindow
	case o.PartWindow < 0:
		return 0
	}
	return o.PartWindow
}

// partEvents is the most events a part of a window holds.
const partEvents = 4096

// grow makes room in cur: a new chunk (4096 events, doubling up to 65536).
func (ks *kstream) grow() {
	c := len(ks.cur)
	if c > 0 {
		ks.chunks = append(ks.chunks, ks.cur)
	}
	ks.cur = make([]tracer.Event, 0, min(max(2*c, 4096), 1<<16))
}

// flush cuts, links and hands on the window read so far.
func (ks *kstream) flush(d *kdec) {
	defer func() { ks.n, ks.inGPU = 0, false }()
	if ks.inc.on {
		ks.incEnd(d)
		ks.base += ks.n
		return
	}
	evs := ks.cur
	if len(ks.chunks) > 0 {
		n := len(ks.cur)
		for _, c := range ks.chunks {
			n += len(c)
		}
		evs = make([]tracer.Event, 0, n)
		for i, c := range ks.chunks {
			evs = append(evs, c...)
			ks.chunks[i] = nil
		}
		evs = append(evs, ks.cur...)
		ks.chunks = ks.chunks[:0]
		// The next window fills this array (fn is done with it by then),
		// unless it is large: a long window's array is not kept.
		ks.cur = nil
		if n <= 1<<20 {
			ks.cur = evs
		} else if n > 1<<20/72*16 {
			// As Open's joinEvents: hand the chunks back to the heap now.
			runtime.GC()
		}
	}

	ks.cur = ks.cur[:0]
	if ks.err != nil || len(evs) == 0 {
		return
	}
	wt := &tracer.Trace{Format: "kineto", Path: d.path, Strings: d.t.Strings, Events: evs}
	if err := ks.steps.Apply(wt); err != nil {
		ks.fail(fmt.Errorf("%s: %v: %w", d.path, err, ErrNotStreamable))
		return
	}
	if n, a, b, _ := nestingScan(evs); n > 0 {
		ks.nested(n, *a, *b)
	}
	ks.link.SetStrings(d.t.Strings)
	ks.link.SetCalls(ks.work.calls)
	err := ks.link.Window(evs)
	ks.link.SetCalls(nil)
	if err != nil {
		ks.fail(fmt.Errorf("%s: %v: %w", d.path, err, ErrNotStreamable))
		return
	}
	shapes := len(ks.work.calls) > 1
	ks.work.assign(d, wt)
	for i := range evs {
		switch e := &evs[i]; e.Kind {
		case tracer.KindStep:
			ks.stepEvs = append(ks.stepEvs, *e)
		case tracer.KindKernel, tracer.KindMemcpy, tracer.KindMemset:
			ks.gpuWork = true
		}
	}
	w := &Capture{Index: ks.link.Windows() - 1, Last: true, After: ks.after, Rank: d.t.Rank, Events: evs, Strings: d.t.Strings, Contexts: ks.link.Contexts(), Shapes: shapes, MemoryEvents: ks.memEvents}
	w.Memory = ks.takeMemory(ks.maxEnd, ks.ending)
	if err := ks.fn(w); err != nil {
		ks.fail(err)
	}
	ks.base += len(evs)
}

// addMemory keeps a memory event until the capture it falls in is
// handed out.
func (ks *kstream) addMemory(m tracer.MemEvent) {
	ks.memEvents++
	ks.mem = append(ks.mem, m)
}

// takeMemory removes and returns the kept memory events at or before end
// ns (all of them when last), in file order.
func (ks *kstream) takeMemory(end int64, last bool) []tracer.MemEvent {
	if len(ks.mem) == 0 {
		return nil
	}
	var out, rest []tracer.MemEvent
	for _, m := range ks.mem {
		if last || m.TS <= end {
			out = append(out, m)
		} else {
			rest = append(rest, m)
		}
	}
	ks.mem = rest
	return out
}

// nested adds a window's nesting count (n, its first pair a, b).
func (ks *kstream) nested(n int, a, b tracer.Event) {
	if ks.nestN == 0 {
		ks.nestA, ks.nestB = a, b
	}
	ks.nestN += n
}

// end flushes the last window and fills the trace as finish and Read
// would: steps, step rule, contexts.
func (ks *kstream) end(d *kdec) {
	ks.ending = true
	ks.flush(d)
	if ks.err != nil {
		return
	}
	if err := ks.link.Finish(); err != nil {
		ks.fail(fmt.Errorf("%s: %v: %w", d.path, err, ErrNotStreamable))
		return
	}
	if !ks.gpuWork {
		// Open shows CPU operators as kernels then: a whole-trace rule.
		ks.fail(fmt.Errorf("%s: no GPU work: %w", d.path, ErrNotStreamable))
		return
	}
	t := d.t
	t.Events = ks.stepEvs
	t.Contexts = nil // each window had its own (Window.Contexts)
	t.StepRule = ks.steps.Rule()
}

// checkDevices: Open moves a GPU op whose device came from its pid to the
// device of that pid's process_labels "GPU N" (written at the end); the
// windows already went out, so any such move means the stream differs.
func (ks *kstream) checkDevices(d *kdec) {
	for pid := range ks.devPIDs {
		if dev, ok := d.kGpuLabel[pid]; ok && dev != pid {
			ks.fail(fmt.Errorf("%s: process_labels put pid %d's GPU ops on device %d: %w", d.path, pid, dev, ErrNotStreamable))
			return
		}
	}
}

// nestingWarning adds checkNesting's warning, summed over the windows
// (their first example: windows do not overlap in time, so a thread's
// nesting never spans two).
func (ks *kstream) nestingWarning(d *kdec) {
	if ks.nestN > 0 {
		d.t.Warn(nestingWarning(d.path, ks.nestN, d.t.Strings, &ks.nestA, &ks.nestB))
	}
}
