package tracer

import (
	"fmt"
	"math"
)

// WindowLinker links a trace that arrives as consecutive windows (a
// streamed Kineto file: each torch.profiler window is its CPU events, then
// its launches and GPU ops), one window at a time, with Trace.Link's rule
// and the same Contexts numbering a caller can keep (contexts only grow).
// Between windows it keeps the processes' step windows (a few per window),
// a handful of numbers, and no operator or range interval: memory is one
// window's intervals and launches, not the whole trace's.
//
// The result equals Trace.Link of the whole trace when the windows do not
// overlap in time and their correlation ids do not reach back; Window and
// Finish check every condition that equality rests on and say which one
// failed (the caller then links the whole trace instead):
//
//   - every event of a window starts after the latest end (ns) of every
//     earlier window's events, so no earlier operator, range or step can
//     contain a later launch point;
//   - every launch call of a window has a correlation id above those of
//     every earlier launch and unmatched GPU op, so the first call with an
//     id (Link's rule) is in the same window as its GPU ops;
//   - a GPU op left without its launch call in its window has a
//     correlation id above every earlier launch's (else an earlier
//     window's call could be its launch);
//   - each process's step thread (Linker.StepThread: the thread with most
//     steps, counted over the whole trace) is the same at the end as when
//     each window was linked.
//
// Not safe for concurrent use.
type WindowLinker struct {
	l       *Linker
	b       linkBatch
	windows int
	prevEnd int64  // latest end of the windows linked so far, ns
	corrTop uint64 // largest correlation id of a launch or unmatched GPU op so far
	launchT uint64 // largest correlation id of a launch so far
	// stepTIDs: per process the step thread its launches were resolved
	// with (checked by Finish).
	stepTIDs map[int32]int32
}

// NewWindowLinker returns a WindowLinker with no window linked.
func NewWindowLinker() *WindowLinker {
	return &WindowLinker{l: NewLinker(), prevEnd: math.MinInt64, stepTIDs: map[int32]int32{}}
}

// Contexts returns the contexts so far, indexed by Event.Ctx; it only
// grows (an ID keeps its meaning), as Trace.Contexts of the whole trace
// would hold them once Finish has said ok.
func (w *WindowLinker) Contexts() []Context { return w.l.Contexts }

// Windows returns the number of windows linked.
func (w *WindowLinker) Windows() int { return w.windows }

// Window links evs, the next window's events in file order: it fills
// Event.Ctx of its GPU ops (kernel, memcpy, memset). It returns a non-nil
// error naming the condition when the windows so far might link
// differently from the whole trace at once (see WindowLinker); evs are
// then linked as far as this window knows.
func (w *WindowLinker) Window(evs []Event) error {
	var err error
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range evs {
		e := &evs[i]
		lo, hi = min(lo, e.Start), max(hi, e.Start+max(e.Dur, 0))
	}
	if w.windows > 0 && len(evs) > 0 && lo <= w.prevEnd {
		err = fmt.Errorf("window %d starts at %d ns, not after the end of the earlier windows (%d ns)", w.windows, lo, w.prevEnd)
	}
	w.b.link(w.l, evs)
	// This window's intervals end before the next one starts: forget them
	// now, not held while the caller aggregates (steps stay: the step
	// thread is counted over the whole trace).
	for _, th := range w.l.threads {
		th.ivs, th.sortedN, th.maxDur, th.active, th.valid = th.ivs[:0], 0, 0, th.active[:0], false
		if cap(th.ivs) > 1<<16 {
			th.ivs = nil
		}
	}
	w.l.cacheOK = false
	if err == nil && w.b.launchMax != 0 && w.b.launchMin <= w.corrTop {
		err = fmt.Errorf("window %d has a launch with correlation id %d, not above the earlier windows' %d", w.windows, w.b.launchMin, w.corrTop)
	}
	if err == nil && w.b.unmatched != 0 && w.b.unmatched <= w.launchT {
		err = fmt.Errorf("window %d has a GPU op with correlation id %d without its launch, at or below an earlier launch's %d", w.windows, w.b.unmatched, w.launchT)
	}
	w.corrTop = max(w.corrTop, w.b.launchMax, w.b.unmatched)
	w.launchT = max(w.launchT, w.b.launchMax)
	for pid := range w.l.procs {
		if tid, ok := w.l.StepThread(pid); ok {
			if old, seen := w.stepTIDs[pid]; !seen || old == tid {
				w.stepTIDs[pid] = tid
			} else if err == nil {
				err = fmt.Errorf("process %d's step thread changed from %d to %d at window %d", pid, old, tid, w.windows)
			}
		}
	}
	if len(evs) > 0 {
		w.prevEnd = max(w.prevEnd, hi)
	}
	w.windows++
	return err
}

// Finish checks that each process's step thread over the whole trace is
// the one its windows were linked with; a non-nil error says which
// differs.
func (w *WindowLinker) Finish() error {
	for pid, old := range w.stepTIDs {
		if tid, ok := w.l.StepThread(pid); ok && tid != old {
			return fmt.Errorf("process %d's step thread is %d over the whole trace, %d when its windows were linked", pid, tid, old)
		}
	}
	return nil
}
