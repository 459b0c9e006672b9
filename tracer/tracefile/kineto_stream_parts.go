package tracefile

import (
	"cmp"
	"encoding/binary"
	"fmt"

	"github.com/rlktop/rlktop/internal/extsort"
	"github.com/rlktop/rlktop/tracer"
)

// A Kineto window read in parts (kstream past Options.PartWindow events):
// linked while it is read, handed out as its steps and then its GPU ops,
// never held whole. See Window and the comment at the top of
// kineto_stream.go.

// incStream is the state of the window read in parts.
type incStream struct {
	on       bool
	switched bool           // the window's first launch or GPU op was read
	index    int            // Window.Index
	part     int            // parts handed out
	rs       []tracer.Event // ranges and steps before switched
	// GPU ops read before their launch, and every op after them (file
	// order): queue[qh:].
	queue []tracer.Event
	qh    int
	out   []tracer.Event // the part being filled
	nest  nestRecs
}

// toParts turns the window held so far into a window read in parts: its
// events are replayed, then dropped.
func (ks *kstream) toParts(d *kdec) {
	if ks.work.refuseParts(ks, d) {
		return
	}
	in := &ks.inc
	in.on, in.switched, in.index, in.part = true, false, ks.link.Windows(), 0
	ks.link.SetStrings(d.t.Strings)
	ks.link.Begin()
	for i, c := range ks.chunks {
		for _, e := range c {
			ks.incAdd(d, e)
		}
		ks.chunks[i] = nil
	}
	ks.chunks = ks.chunks[:0]
	for _, e := range ks.cur {
		ks.incAdd(d, e)
	}
	ks.cur = ks.cur[:0]
}

// incAdd takes the next event of a window read in parts.
func (ks *kstream) incAdd(d *kdec, e tracer.Event) {
	in := &ks.inc
	if ks.err != nil {
		return
	}
	in.nest.add(&e)
	switch {
	case e.Kind == tracer.KindCPUOp || e.Kind == tracer.KindRange || e.Kind == tracer.KindStep:
		if in.switched {
			ks.fail(fmt.Errorf("%s: a %s at %d ns (pid %d tid %d) comes after launches or GPU ops of its window: %w", d.path, e.Kind, e.Start, e.PID, e.TID, ErrNotStreamable))
			return
		}
		if e.Kind == tracer.KindCPUOp {
			ks.link.Add(&e)
		} else {
			in.rs = append(in.rs, e) // the window's step rule first (switch)
		}
	case e.Kind.IsLaunch():
		ks.switchToGPU(d)
		ks.link.Add(&e)
		ks.drain(false)
	case e.Kind.IsGPU():
		ks.switchToGPU(d)
		ks.link.Add(&e)
		if e.Kind == tracer.KindGPURange {
			return // neither linked nor handed out
		}
		ks.gpuWork = true
		e.Ctx = 0
		if in.qh == len(in.queue) {
			if ctx, ok := ks.link.Op(&e); ok {
				e.Ctx = ctx
				ks.emit(e)
				return
			}
		}
		in.queue = append(in.queue, e)
	default:
		ks.link.Add(&e) // its time span only
	}
}

// switchToGPU is the window's first launch or GPU op (or its end): its
// ranges and steps get the step rule and go to the linker, and its steps
// open part 0.
func (ks *kstream) switchToGPU(d *kdec) {
	in := &ks.inc
	if in.switched {
		return
	}
	in.switched = true
	wt := &tracer.Trace{Format: "kineto", Path: d.path, Strings: d.t.Strings, Events: in.rs}
	if err := ks.steps.Apply(wt); err != nil {
		ks.fail(fmt.Errorf("%s: %v: %w", d.path, err, ErrNotStreamable))
		return
	}
	for i := range in.rs {
		e := &in.rs[i]
		ks.link.Add(e)
		if e.Kind == tracer.KindStep {
			ks.stepEvs = append(ks.stepEvs, *e)
			in.out = append(in.out, *e)
		}
	}
	in.rs = in.rs[:0]
	if cap(in.rs) > 1<<16 {
		in.rs = nil
	}
}

// drain hands on the queued GPU ops whose launch is now known, in file
// order; at the window's end (end) those still waiting get their context
// without a launch.
func (ks *kstream) drain(end bool) {
	in := &ks.inc
	for in.qh < len(in.queue) {
		e := &in.queue[in.qh]
		ctx, ok := ks.link.Op(e)
		if !ok {
			if !end {
				break
			}
			ctx = ks.link.Unlaunched(e)
		}
		e.Ctx = ctx
		ks.emit(*e)
		in.qh++
	}
	if in.qh == len(in.queue) {
		in.queue, in.qh = in.queue[:0], 0
		if cap(in.queue) > 1<<16 {
			in.queue = nil
		}
	} else if in.qh >= 4096 && in.qh >= len(in.queue)/2 {
		n := copy(in.queue, in.queue[in.qh:])
		in.queue, in.qh = in.queue[:n], 0
	}
}

// emit adds a step or linked GPU op to the part being filled, handing the
// part on when full.
func (ks *kstream) emit(e tracer.Event) {
	in := &ks.inc
	if in.out == nil {
		in.out = make([]tracer.Event, 0, partEvents)
	}
	in.out = append(in.out, e)
	if len(in.out) >= partEvents {
		ks.handOut(false)
	}
}

// handOut gives the part being filled to fn.
func (ks *kstream) handOut(last bool) {
	in := &ks.inc
	if ks.err != nil {
		return
	}
	w := &Capture{Index: in.index, Part: in.part, Last: last, After: ks.after, Rank: ks.t.Rank, Events: in.out, Strings: ks.strs, Contexts: ks.link.Contexts(), MemoryEvents: ks.memEvents}
	if err := ks.fn(w); err != nil {
		ks.fail(err)
	}
	ks.link.NewPart() // the next part's contexts are its own
	in.part++
	in.out = in.out[:0]
}

// incEnd ends a window read in parts: the ops still waiting for a launch,
// the linker's checks, the nesting check, the last part.
func (ks *kstream) incEnd(d *kdec) {
	in := &ks.inc
	in.on = false
	ks.switchToGPU(d)
	if ks.err == nil {
		ks.drain(true)
	}
	if err := ks.link.End(); err != nil {
		ks.fail(fmt.Errorf("%s: %v: %w", d.path, err, ErrNotStreamable))
	}
	n, a, b, err := in.nest.scan()
	if err != nil {
		ks.fail(fmt.Errorf("%s: the nesting check: %v: %w", d.path, err, ErrNotStreamable))
	}
	if n > 0 {
		ks.nested(n, a, b)
	}
	ks.handOut(true)
	in.queue, in.qh, in.rs = in.queue[:0], 0, in.rs[:0]
	in.nest.reset()
}

// nestRecs keeps, for nestingScan's check of a window read in parts, one
// record per interval event of a CPU thread (what nestingScan looks at):
// its thread, start, end, name and index in file order, in an external
// sort (internal/extsort: a run of runRecs records in memory, 2^17 by
// default, the rest on disk), so that a long window's check holds no
// record per event.
type nestRecs struct {
	sort    *extsort.Sorter[nestRec]
	runRecs int // Options.Spill.RunRecs
	n       uint32
	threads map[[2]int32]uint32
	keys    [][2]int32 // by thread index
	lastKey [2]int32
	lastTh  uint32
	hasLast bool
}

type nestRec struct {
	th, name, i uint32
	s, e        int64
}

// nestCodec orders records as nestingScan's kMergeRuns does per thread:
// earlier start, then longer (later end), then file order.
var nestCodec = extsort.Codec[nestRec]{
	Size: 28,
	Put: func(b []byte, x nestRec) {
		binary.LittleEndian.PutUint32(b, x.th)
		binary.LittleEndian.PutUint32(b[4:], x.name)
		binary.LittleEndian.PutUint32(b[8:], x.i)
		binary.LittleEndian.PutUint64(b[12:], uint64(x.s))
		binary.LittleEndian.PutUint64(b[20:], uint64(x.e))
	},
	Get: func(b []byte) nestRec {
		return nestRec{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:]),
			int64(binary.LittleEndian.Uint64(b[12:])), int64(binary.LittleEndian.Uint64(b[20:]))}
	},
	Cmp: func(a, b nestRec) int {
		if a.th != b.th {
			return cmp.Compare(a.th, b.th)
		}
		if a.s != b.s {
			return cmp.Compare(a.s, b.s)
		}
		if a.e != b.e {
			return cmp.Compare(b.e, a.e)
		}
		return cmp.Compare(a.i, b.i)
	},
}

func (r *nestRecs) reset() {
	if r.sort != nil {
		r.sort.Close()
	}
	r.sort, r.n, r.hasLast = nil, 0, false
	clear(r.threads)
	r.keys = r.keys[:0]
}

// add records e when nestingScan would look at it.
func (r *nestRecs) add(e *tracer.Event) {
	if e.Kind.IsGPU() || e.Kind == tracer.KindInstant || e.Dur <= 0 {
		return
	}
	k := [2]int32{e.PID, e.TID}
	if !r.hasLast || k != r.lastKey {
		if r.threads == nil {
			r.threads = map[[2]int32]uint32{}
		}
		th, ok := r.threads[k]
		if !ok {
			th = uint32(len(r.keys))
			r.threads[k] = th
			r.keys = append(r.keys, k)
		}
		r.lastKey, r.lastTh, r.hasLast = k, th, true
	}
	if r.sort == nil {
		r.sort = extsort.New(nestCodec, r.runRecs)
	}
	r.sort.Add(nestRec{th: r.lastTh, name: uint32(e.Name), i: r.n, s: e.Start, e: e.End()})
	r.n++
}

// scan is nestingScan over the records: the number of intervals that
// partly overlap an enclosing one on their thread, and the first example
// (the one whose later event comes first in the file). err is one of the
// external sort's temporary file.
func (r *nestRecs) scan() (n int, a, b tracer.Event, err error) {
	if r.sort == nil {
		return 0, a, b, nil
	}
	var first [2]nestRec
	var stack nestStack[nestRec]
	th := uint32(1<<32 - 1)
	err = r.sort.Each(func(x nestRec) bool {
		if x.th != th {
			th = x.th
			stack.reset()
		}
		if top, partly := stack.add(x, x.s, x.e); partly {
			if n == 0 || x.i < first[1].i {
				first = [2]nestRec{top, x}
			}
			n++
		}
		return true
	})
	r.sort = nil
	if n == 0 || err != nil {
		return n, a, b, err
	}
	ev := func(x nestRec) tracer.Event {
		k := r.keys[x.th]
		return tracer.Event{Name: tracer.StrID(x.name), Start: x.s, Dur: x.e - x.s, PID: k[0], TID: k[1]}
	}
	return n, ev(first[0]), ev(first[1]), nil
}
