package tracefile

// The Kineto importer's nesting check (checkNesting, with its merge sort
// kMergeRuns): CPU intervals of one thread that partly overlap are warned
// about, since tracer.Trace.Link assumes they nest.

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
)

// checkNesting warns (once, with a count and the first example) when
// interval events on one CPU thread partly overlap: the trace-event format
// wants them nested, and tracer.Trace.Link assumes it. The events are kept
// as they are.
func (d *kdec) checkNesting() {
	t := d.t
	if n, a, b, _ := nestingScan(t.Events); n > 0 {
		t.Warn(nestingWarning(d.path, n, t.Strings, a, b))
	}
}

// kLate is the end of a whole read's finish that Read runs later
// (finishLate): the nesting check, pending, and the warnings the importer
// would have added after its warning, in order.
type kLate struct {
	pending bool
	path    string
	after   []string
}

// warn adds msg to the trace's warnings, or, while the nesting check is
// pending, to those added after its warning.
func (d *kdec) warn(msg string) {
	if d.late != nil && d.late.pending {
		d.late.after = append(d.late.after, msg)
		return
	}
	d.t.Warn(msg)
}

// nestingWarning is checkNesting's warning: n partly overlapping events,
// the first a (enclosing) and b.
func nestingWarning(path string, n int, strs *tracer.Strings, a, b *tracer.Event) string {
	what := fmt.Sprintf("%d events partly overlap", n)
	if n == 1 {
		what = "1 event partly overlaps" // not "1 events partly overlap"
	}
	return fmt.Sprintf("%s: %s an enclosing event on the same thread instead of nesting (first: %q [%d, %d) ns and %q [%d, %d) ns on pid %d tid %d); kept as they are",
		path, what, strs.Get(a.Name), a.Start, a.End(), strs.Get(b.Name), b.Start, b.End(), a.PID, a.TID)
}

// nestingScan counts the interval events of evs that partly overlap an
// enclosing one on their thread; a and b are the first example (the one
// whose later event has the lowest index, at) when n > 0.
func nestingScan(evs []tracer.Event) (n int, a, b *tracer.Event, at int32) {
	// Count the interval events per thread, then carve one exact array
	// into per-thread slices (no append growth: this runs on every trace).
	nested := func(e *tracer.Event) bool {
		return !e.Kind.IsGPU() && e.Kind != tracer.KindInstant && e.Dur > 0
	}
	type span struct{ off, n int32 }
	threads := map[[2]int32]*span{}
	var lastKey [2]int32
	var last *span
	total := 0
	for i := range evs {
		e := &evs[i]
		if !nested(e) {
			continue
		}
		if k := [2]int32{e.PID, e.TID}; last == nil || k != lastKey {
			lastKey, last = k, threads[k]
			if last == nil {
				last = &span{}
				threads[k] = last
			}
		}
		last.n++
		total++
	}
	all := make([]int32, total)
	off := int32(0)
	for _, sp := range threads {
		sp.off, off = off, off+sp.n
		sp.n = 0
	}
	last = nil
	for i := range evs {
		e := &evs[i]
		if !nested(e) {
			continue
		}
		if k := [2]int32{e.PID, e.TID}; last == nil || k != lastKey {
			lastKey, last = k, threads[k]
		}
		all[last.off+last.n] = int32(i)
		last.n++
	}
	var first [2]int32
	var tmp []int32
	var stack nestStack[int32]
	for _, sp := range threads {
		idx := all[sp.off : sp.off+sp.n : sp.off+sp.n]
		// Kineto writes each thread's events as a few sorted runs (the
		// operators, then the runtime calls): a natural merge sort is
		// linear per run.
		idx, tmp = kMergeRuns(evs, idx, tmp)
		stack.reset()
		for _, i := range idx {
			e := &evs[i]
			if top, partly := stack.add(i, e.Start, e.End()); partly {
				if n == 0 || i < first[1] {
					first = [2]int32{top, i}
				}
				n++
			}
		}
	}
	if n > 0 {
		return n, &evs[first[0]], &evs[first[1]], first[1]
	}
	return 0, nil, nil, 0
}

// nestStack is the nesting scan of one thread, shared by nestingScan (a
// trace in memory) and nestRecs.scan (a long window's records sorted on
// disk): the intervals still open, each with its payload (an event index,
// a record).
type nestStack[T any] struct {
	ends []int64
	vals []T
}

func (st *nestStack[T]) reset() { st.ends, st.vals = st.ends[:0], st.vals[:0] }

// add takes the thread's next interval [s, e) ns, in nesting order
// (earlier start first, then later end), with its payload x. It returns
// the innermost open interval's payload and true when [s, e) starts inside
// it and ends after it (partly overlaps); such an interval is not kept
// open, since nothing after it can nest under it.
func (st *nestStack[T]) add(x T, s, e int64) (T, bool) {
	n := len(st.ends)
	for n > 0 && st.ends[n-1] <= s {
		n--
	}
	st.ends, st.vals = st.ends[:n], st.vals[:n]
	if n > 0 && e > st.ends[n-1] {
		return st.vals[n-1], true
	}
	st.ends, st.vals = append(st.ends, e), append(st.vals, x)
	var none T
	return none, false
}

// kMergeRuns sorts the event indices x, outermost first (earlier Start,
// then longer Dur), with a bottom-up natural merge sort: stable, O(n log r)
// for r ascending runs. Kineto writes each thread's events as a few sorted
// runs (the operators, then the runtime calls), so this is near linear.
// tmp is scratch; the sorted slice and the scratch are returned.
func kMergeRuns(ev []tracer.Event, x, tmp []int32) ([]int32, []int32) {
	n := len(x)
	if n < 2 {
		return x, tmp
	}
	before := func(a, b int32) bool {
		ea, eb := &ev[a], &ev[b]
		return ea.Start < eb.Start || ea.Start == eb.Start && ea.Dur > eb.Dur
	}
	runs := []int{0}
	for i := 1; i < n; i++ {
		if before(x[i], x[i-1]) {
			// A short step back (a few events written late) is fixed by
			// insertion instead of starting a run.
			j := i
			for j > runs[len(runs)-1] && i-j < 8 && before(x[j], x[j-1]) {
				x[j], x[j-1] = x[j-1], x[j]
				j--
			}
			if j > runs[len(runs)-1] && before(x[j], x[j-1]) {
				// Too far back: undo nothing (the prefix stays sorted up
				// to j) and start a new run at i's original place.
				for k := j; k < i; k++ {
					x[k], x[k+1] = x[k+1], x[k]
				}
				runs = append(runs, i)
			}
		}
	}
	runs = append(runs, n)
	if cap(tmp) < n {
		tmp = make([]int32, n)
	}
	tmp = tmp[:n]
	for len(runs) > 2 {
		next := runs[:1]
		for k := 0; k+1 < len(runs); k += 2 {
			lo, mid := runs[k], runs[k+1]
			hi := mid
			if k+2 < len(runs) {
				hi = runs[k+2]
			}
			i, j, o := lo, mid, lo
			for i < mid && j < hi {
				a, b := x[i], x[j]
				ea, eb := &ev[a], &ev[b]
				if eb.Start < ea.Start || eb.Start == ea.Start && eb.Dur > ea.Dur {
					tmp[o] = b
					j++
				} else {
					tmp[o] = a
					i++
				}
				o++
			}
			o += copy(tmp[o:], x[i:mid])
			copy(tmp[o:], x[j:hi])
			next = append(next, hi)
		}
		runs = next
		x, tmp = tmp, x
	}
	return x, tmp
}
