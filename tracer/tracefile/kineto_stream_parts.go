package tracefile

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// A Kineto window read in parts (kstream past partWindow events): linked
// while it is read, handed out as its steps and then its GPU ops, never
// held whole. See Window and the comment at the top of kineto_stream.go.

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
	in := &ks.inc
	in.on, in.switched, in.index, in.part = true, false, ks.link.Windows(), 0
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
	w := &Window{Index: in.index, Part: in.part, Last: last, After: ks.after, Rank: ks.t.Rank, Events: in.out, Strings: ks.strs, Contexts: ks.link.Contexts()}
	if err := ks.fn(w); err != nil {
		ks.fail(err)
	}
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
	if n, a, b := in.nest.scan(); n > 0 {
		ks.nested(n, a, b)
	}
	ks.handOut(true)
	in.queue, in.qh, in.rs = in.queue[:0], 0, in.rs[:0]
	in.nest.reset()
}

// nestRecs keeps, for nestingScan's check of a window read in parts, one
// 16-byte record per interval event of a CPU thread (what nestingScan
// looks at), in file order, in chunks that are never copied: its start,
// its duration (when it fits in 32 bits; else its end is in long), and its
// name and thread packed in 32 bits (when the name's id is below 2^24 and
// the thread is one of the window's first 255; else both are in wide).
type nestRecs struct {
	chunks  [][]nestRec
	n       int
	threads map[[2]int32]uint32
	keys    [][2]int32 // by thread index
	lastKey [2]int32
	lastTh  uint32
	hasLast bool
	long    map[uint32]int64     // record index → end, ns
	wide    map[uint32][2]uint32 // record index → name, thread
}

type nestRec struct {
	s  int64
	d  uint32 // duration, ns, or nestLong
	nt uint32 // name<<8 | thread, or nestWide
}

const (
	nestChunk = 1 << 16
	nestLong  = math.MaxUint32
	nestWide  = math.MaxUint32
)

func (r *nestRecs) reset() {
	clear(r.chunks)
	r.chunks, r.n, r.hasLast = r.chunks[:0], 0, false
	clear(r.threads)
	r.keys = r.keys[:0]
	r.long, r.wide = nil, nil
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
	if r.n%nestChunk == 0 {
		r.chunks = append(r.chunks, make([]nestRec, 0, nestChunk))
	}
	i := uint32(r.n)
	x := nestRec{s: e.Start, d: nestLong, nt: nestWide}
	if e.Dur < nestLong {
		x.d = uint32(e.Dur)
	} else {
		if r.long == nil {
			r.long = map[uint32]int64{}
		}
		r.long[i] = e.End()
	}
	if r.lastTh < 255 && e.Name < 1<<24 {
		x.nt = uint32(e.Name)<<8 | r.lastTh
	} else {
		if r.wide == nil {
			r.wide = map[uint32][2]uint32{}
		}
		r.wide[i] = [2]uint32{uint32(e.Name), r.lastTh}
	}
	c := &r.chunks[len(r.chunks)-1]
	*c = append(*c, x)
	r.n++
}

func (r *nestRecs) at(i uint32) *nestRec { return &r.chunks[i/nestChunk][i%nestChunk] }

// end, name and thread of record i.
func (r *nestRecs) end(i uint32) int64 {
	if x := r.at(i); x.d != nestLong {
		return x.s + int64(x.d)
	}
	return r.long[i]
}

func (r *nestRecs) nameTh(i uint32) (tracer.StrID, uint32) {
	if x := r.at(i); x.nt != nestWide {
		return tracer.StrID(x.nt >> 8), x.nt & 0xff
	}
	w := r.wide[i]
	return tracer.StrID(w[0]), w[1]
}

// scan is nestingScan over the records: the number of intervals that
// partly overlap an enclosing one on their thread, and the first example
// (the one whose later event comes first in the file).
func (r *nestRecs) scan() (n int, a, b tracer.Event) {
	if r.n == 0 {
		return 0, a, b
	}
	// Per thread, the record indices in file order, carved from one array.
	off := make([]uint32, len(r.keys)+1)
	for i := 0; i < r.n; i++ {
		_, th := r.nameTh(uint32(i))
		off[th+1]++
	}
	for i := 1; i < len(off); i++ {
		off[i] += off[i-1]
	}
	all := make([]uint32, r.n)
	fill := slices.Clone(off[:len(r.keys)])
	for i := 0; i < r.n; i++ {
		_, th := r.nameTh(uint32(i))
		all[fill[th]] = uint32(i)
		fill[th]++
	}
	var first [2]uint32
	var stack []uint32
	for th := range r.keys {
		idx := all[off[th]:off[th+1]]
		// kMergeRuns' order: earlier start, then longer (later end), then
		// file order.
		slices.SortFunc(idx, func(x, y uint32) int {
			a, b := r.at(x), r.at(y)
			if a.s != b.s {
				return cmp.Compare(a.s, b.s)
			}
			if ea, eb := r.end(x), r.end(y); ea != eb {
				return cmp.Compare(eb, ea)
			}
			return cmp.Compare(x, y)
		})
		stack = stack[:0]
		for _, i := range idx {
			s, e := r.at(i).s, r.end(i)
			for len(stack) > 0 && r.end(stack[len(stack)-1]) <= s {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 && e > r.end(stack[len(stack)-1]) {
				if n == 0 || i < first[1] {
					first = [2]uint32{stack[len(stack)-1], i}
				}
				n++
				continue
			}
			stack = append(stack, i)
		}
	}
	if n == 0 {
		return 0, a, b
	}
	ev := func(i uint32) tracer.Event {
		name, th := r.nameTh(i)
		k := r.keys[th]
		s := r.at(i).s
		return tracer.Event{Name: name, Start: s, Dur: r.end(i) - s, PID: k[0], TID: k[1]}
	}
	return n, ev(first[0]), ev(first[1])
}

// SetPartWindow sets the number of events past which OpenStream reads a
// window in parts instead of holding it (default 262,144; 0 reads every
// window in parts) and returns the old value. For tests and measurements;
// not safe while a stream is read.
func SetPartWindow(events int) (old int) {
	old, partWindow = partWindow, max(events, 0)
	return old
}
