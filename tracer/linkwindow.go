package tracer

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/rlktop/rlktop/internal/extsort"
)

// CaptureLinker links a trace that arrives as consecutive windows (a
// streamed Kineto file: each torch.profiler window is its CPU events, then
// its launches and GPU ops), one window at a time, with Trace.Link's rule;
// each window gets its own contexts (Contexts; each part of a long window
// too, NewPart), equal in content to the whole trace's. Between windows it
// keeps the processes' step windows (a few per window), the operator
// stacks seen, a handful of numbers, and no operator or range interval or
// context: memory is one window's intervals, launches and contexts, not
// the whole trace's.
//
// The result equals Trace.Link of the whole trace (each GPU op's context
// by content) when the windows do not overlap in time and their
// correlation ids do not reach back; Window and
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
type CaptureLinker struct {
	l       *Linker
	b       linkBatch
	windows int
	prevEnd int64  // latest end of the windows linked so far, ns
	corrTop uint64 // largest correlation id of a launch or unmatched GPU op so far
	launchT uint64 // largest correlation id of a launch so far
	// stepTIDs: per process the step thread its launches were resolved
	// with (checked by Finish).
	stepTIDs map[int32]int32
	inc      incWindow // the window being linked incrementally (Begin)
	spill    SpillSizes
}

// NewCaptureLinker returns a CaptureLinker with no window linked; a long
// window (Begin) keeps its intervals on disk with spill's sizes.
func NewCaptureLinker(spill SpillSizes) *CaptureLinker {
	return &CaptureLinker{l: NewLinker(), prevEnd: math.MinInt64, stepTIDs: map[int32]int32{}, spill: spill}
}

// SetStrings gives the linker the trace's names (Linker.SetStrings), for
// Context.AfterAttention.
func (w *CaptureLinker) SetStrings(s *Strings) { w.l.SetStrings(s) }

// Contexts returns the contexts of the window (or part) being linked,
// indexed by Event.Ctx: each window starts with fresh contexts (Window,
// Begin) and so does each part of a long one (NewPart), so that memory
// holds one window's or part's contexts, not one per operator stack and
// step of the whole trace. An ID means nothing in another window or part.
func (w *CaptureLinker) Contexts() []Context { return w.l.Contexts }

// NewPart starts a new part of the long window being linked (Begin):
// contexts handed out before are forgotten, and Op and Unlaunched answer
// in fresh ones.
func (w *CaptureLinker) NewPart() { w.l.ResetContexts() }

// Windows returns the number of windows linked.
func (w *CaptureLinker) Windows() int { return w.windows }

// SetCalls gives the next Window the operator calls its events index
// (Event.Call; the window's own), so that its GPU ops get theirs (as
// Trace.Link does); nil: none.
func (w *CaptureLinker) SetCalls(calls []OpCall) { w.b.calls = calls }

// Window links evs, the next window's events in file order: it fills
// Event.Ctx of its GPU ops (kernel, memcpy, memset). It returns a non-nil
// error naming the condition when the windows so far might link
// differently from the whole trace at once (see CaptureLinker); evs are
// then linked as far as this window knows.
func (w *CaptureLinker) Window(evs []Event) error {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range evs {
		e := &evs[i]
		lo, hi = min(lo, e.Start), max(hi, e.Start+max(e.Dur, 0))
	}
	w.l.ResetContexts()
	w.b.link(w.l, evs)
	return w.close(lo, hi, len(evs) > 0)
}

// close ends a window whose events span [lo, hi) ns (any: it had events):
// it forgets the window's intervals and checks the conditions of
// CaptureLinker against the earlier windows (w.b holds the window's launch
// and unmatched correlation ids).
func (w *CaptureLinker) close(lo, hi int64, any bool) error {
	var err error
	if w.windows > 0 && any && lo <= w.prevEnd {
		err = fmt.Errorf("window %d starts at %d ns, not after the end of the earlier windows (%d ns)", w.windows, lo, w.prevEnd)
	}
	// This window's intervals end before the next one starts: forget them
	// now, not held while the caller aggregates (steps stay: the step
	// thread is counted over the whole trace).
	w.l.DropIntervals()
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
	if any {
		w.prevEnd = max(w.prevEnd, hi)
	}
	w.windows++
	return err
}

// Finish checks that each process's step thread over the whole trace is
// the one its windows were linked with; a non-nil error says which
// differs.
func (w *CaptureLinker) Finish() error {
	for pid, old := range w.stepTIDs {
		if tid, ok := w.l.StepThread(pid); ok && tid != old {
			return fmt.Errorf("process %d's step thread is %d over the whole trace, %d when its windows were linked", pid, tid, old)
		}
	}
	return nil
}

// A window too long to hold (a file that is one long torch.profiler
// window) is linked as it is read instead: Begin, then Add for every event
// in file order, Op for every GPU op (kernel, memcpy, memset) whose
// context is wanted, Unlaunched for those still waiting at the window's
// end, then End. Kineto writes a window's CPU events (operators, ranges,
// steps) before its launches and GPU ops, so every launch can be resolved
// when it is read: the linker keeps the window's operator and range
// intervals in a temporary file (Linker.SpillIntervals: sorted on disk,
// read back a block at a time), its steps, and per correlation id of a
// launch call its context as (stack, step), interned again in the part
// its GPU op goes out in (runs past 2^18 ids in another file), not the
// events. The result equals Window's (and so Trace.Link's) when End says
// ok; besides Window's conditions it checks that no operator, range or
// step comes after the window's first launch (its launches were resolved
// without it) and that the temporary files were written and read back.

// incWindow is the state of the window being linked incrementally.
type incWindow struct {
	on       bool
	lo, hi   int64
	launch   launchIDs // correlation id → context (stack and step) of its first launch call
	resolved bool      // a launch was resolved (CPU events now come too late)
	late     *Event    // the first CPU event after that, for End's error
	// As linkBatch's: the smallest and largest launch correlation id (0:
	// none), the largest id of a GPU op left without its launch.
	launchMin, launchMax, unmatched uint64
}

// Begin starts a window linked incrementally (Add, Op, Unlaunched, End).
func (w *CaptureLinker) Begin() {
	w.l.SpillIntervals(w.spill)
	w.l.ResetContexts()
	inc := &w.inc
	inc.launch.reset()
	inc.on, inc.resolved, inc.late = true, false, nil
	inc.lo, inc.hi = math.MaxInt64, math.MinInt64
	inc.launchMin, inc.launchMax, inc.unmatched = 0, 0, 0
}

// Add takes the window's next event in file order (any kind): operators,
// ranges and steps are kept as intervals, and a launch call (runtime or
// driver) is resolved to the context open at its start. Steps must have
// their final kind (tracefile cuts them before adding).
func (w *CaptureLinker) Add(e *Event) {
	inc := &w.inc
	inc.lo, inc.hi = min(inc.lo, e.Start), max(inc.hi, e.Start+max(e.Dur, 0))
	switch {
	case e.Kind == KindCPUOp || e.Kind == KindRange || e.Kind == KindStep:
		if inc.resolved && inc.late == nil {
			c := *e
			inc.late = &c
		}
		w.l.Add(e)
	case e.Kind.IsLaunch() && e.Corr != 0:
		if inc.launchMax == 0 || e.Corr < inc.launchMin {
			inc.launchMin = e.Corr
		}
		inc.launchMax = max(inc.launchMax, e.Corr)
		if _, dup := inc.launch.get(e.Corr); !dup {
			inc.launch.put(e.Corr, w.l.key(w.l.Resolve(e.PID, e.TID, e.Start)))
			inc.resolved = true
		}
	}
}

// Op returns the context of GPU op e (Trace.Link's rule) when it is known
// now: its launch call was added, or it has no correlation id. ok is false
// while a launch with its id may still come; ask Unlaunched at the
// window's end.
func (w *CaptureLinker) Op(e *Event) (ctx CtxID, ok bool) {
	if e.Corr != 0 {
		k, ok := w.inc.launch.get(e.Corr)
		if !ok {
			return 0, false
		}
		return w.l.ctxOf(k), true
	}
	return w.ownCtx(e), true
}

// Unlaunched returns the context of GPU op e whose launch call never came
// in the window (the window's end): its own start on its thread when that
// is known (TID >= 0), else 0.
func (w *CaptureLinker) Unlaunched(e *Event) CtxID {
	if ctx, ok := w.Op(e); ok {
		return ctx
	}
	w.inc.unmatched = max(w.inc.unmatched, e.Corr)
	return w.ownCtx(e)
}

func (w *CaptureLinker) ownCtx(e *Event) CtxID {
	if e.TID >= 0 {
		w.inc.resolved = true
		return w.l.Resolve(e.PID, e.TID, e.Start)
	}
	return 0
}

// End closes the incrementally linked window with Window's checks, and
// the check that no operator, range or step came after its first
// resolved launch.
func (w *CaptureLinker) End() error {
	inc := &w.inc
	inc.on = false
	w.b.launchMin, w.b.launchMax, w.b.unmatched = inc.launchMin, inc.launchMax, inc.unmatched
	spillErr := cmp.Or(w.l.SpillErr(), inc.launch.err)
	inc.launch.reset() // a long window's ids are not kept
	err := w.close(inc.lo, inc.hi, inc.lo <= inc.hi)
	if err == nil && spillErr != nil {
		err = fmt.Errorf("window %d: %v", w.windows-1, spillErr)
	}
	if err == nil && inc.late != nil {
		e := inc.late
		err = fmt.Errorf("window %d has a %s at %d ns (pid %d tid %d) after launches that were linked without it", w.windows-1, e.Kind, e.Start, e.PID, e.TID)
	}
	return err
}

// launchIDs maps the correlation ids of a window's launch calls to their
// contexts in about 12 bytes an id: the newest ids in a map of up to
// launchRecent, the others in sorted runs (ids []uint64, contexts
// []CtxID) merged as they grow; a run of diskMin ids or more goes
// to a temporary file (diskRun), so a long window's ids are not held.
// Lookups look in the map, then binary-search each run (a few), reading
// one block of a disk run whose id range holds the id. Any order of ids
// works (one thread's ids increase, but threads interleave and one early
// large id would spoil a single sorted array). A GPU op is read soon after
// its launch, so its id is nearly always in the map.
type launchIDs struct {
	recent map[uint64]ctxKey
	runs   []idRun // sorted, larger first
	disk   []*diskRun
	err    error // writing or reading a disk run
	// diskMin: a run of this many ids or more goes to disk (0:
	// launchDiskMin; tests set fewer to take few ids there).
	diskMin int
}

type idRun struct {
	ids  []uint64
	ctxs []ctxKey
}

const launchRecent = 1 << 14

// launchDiskMin: a run of this many ids or more goes to disk
// (launchIDs.diskMin).
const launchDiskMin = 1 << 18

func (m *launchIDs) reset() {
	for _, d := range m.disk {
		d.sp.Close()
	}
	m.recent, m.runs, m.disk, m.err = nil, nil, nil, nil
}

// get returns the context of id; ok is false when it was not put.
func (m *launchIDs) get(id uint64) (ctx ctxKey, ok bool) {
	if ctx, ok = m.recent[id]; ok {
		return ctx, ok
	}
	for i := range m.runs {
		r := &m.runs[i]
		if j, found := slices.BinarySearch(r.ids, id); found {
			return r.ctxs[j], true
		}
	}
	for _, d := range m.disk {
		if id < d.lo || id > d.hi {
			continue
		}
		ctx, ok, err := d.get(id)
		if err != nil && m.err == nil {
			m.err = err
		}
		if ok {
			return ctx, true
		}
	}
	return ctxKey{}, false
}

// put adds id (not yet put) with its context.
func (m *launchIDs) put(id uint64, ctx ctxKey) {
	if m.recent == nil {
		m.recent = make(map[uint64]ctxKey, launchRecent)
	}
	m.recent[id] = ctx
	if len(m.recent) < launchRecent {
		return
	}
	ids := slices.Sorted(maps.Keys(m.recent))
	r := idRun{ids: ids, ctxs: make([]ctxKey, len(ids))}
	for i, id := range ids {
		r.ctxs[i] = m.recent[id]
	}
	clear(m.recent)
	m.runs = append(m.runs, r)
	// Merge the two newest runs while the newer is at least half the
	// older (a few runs of geometric sizes); a run grown to diskMin goes
	// to disk.
	for n := len(m.runs); n >= 2; n = len(m.runs) {
		a, b := &m.runs[n-2], &m.runs[n-1]
		if 2*len(b.ids) < len(a.ids) {
			break
		}
		m.runs[n-2] = mergeRuns(a, b)
		m.runs = m.runs[:n-1]
	}
	diskMin := m.diskMin
	if diskMin <= 0 {
		diskMin = launchDiskMin
	}
	if n := len(m.runs); len(m.runs[n-1].ids) >= diskMin {
		d, err := newDiskRun(&m.runs[n-1])
		if err != nil {
			if m.err == nil {
				m.err = err
			}
			return // kept in memory
		}
		m.disk = append(m.disk, d)
		m.runs = m.runs[:n-1]
	}
}

// diskRun is a run of launch ids in a temporary file: records of id and
// context sorted by id, every diskRunBlock-th id in memory, one block
// cached.
type diskRun struct {
	sp     *extsort.Spool[idCtx]
	lo, hi uint64   // smallest and largest id
	index  []uint64 // ids at 0, diskRunBlock, 2*diskRunBlock, …
	cur    int      // cached block, -1 none
	buf    []idCtx
}

type idCtx struct {
	id  uint64
	ctx ctxKey
}

const diskRunBlock = 512

var idCtxCodec = extsort.Codec[idCtx]{
	Size: 20,
	Put: func(b []byte, x idCtx) {
		binary.LittleEndian.PutUint64(b, x.id)
		binary.LittleEndian.PutUint32(b[8:], uint32(x.ctx.stack))
		binary.LittleEndian.PutUint64(b[12:], uint64(x.ctx.step))
	},
	Get: func(b []byte) idCtx {
		return idCtx{binary.LittleEndian.Uint64(b), ctxKey{int32(binary.LittleEndian.Uint32(b[8:])), int64(binary.LittleEndian.Uint64(b[12:]))}}
	},
}

func newDiskRun(r *idRun) (*diskRun, error) {
	sp, err := extsort.NewSpool(idCtxCodec)
	if err != nil {
		return nil, err
	}
	d := &diskRun{sp: sp, lo: r.ids[0], hi: r.ids[len(r.ids)-1], cur: -1}
	for i, id := range r.ids {
		if i%diskRunBlock == 0 {
			d.index = append(d.index, id)
		}
		if err := sp.Append(idCtx{id, r.ctxs[i]}); err != nil {
			sp.Close()
			return nil, err
		}
	}
	return d, nil
}

func (d *diskRun) get(id uint64) (ctxKey, bool, error) {
	b, found := slices.BinarySearch(d.index, id)
	if !found {
		b--
	}
	if b < 0 {
		return ctxKey{}, false, nil
	}
	if b != d.cur {
		var err error
		if d.buf, err = d.sp.Read(int64(b*diskRunBlock), diskRunBlock, d.buf); err != nil {
			d.cur = -1
			return ctxKey{}, false, err
		}
		d.cur = b
	}
	j, ok := slices.BinarySearchFunc(d.buf, id, func(x idCtx, id uint64) int { return cmp.Compare(x.id, id) })
	if !ok {
		return ctxKey{}, false, nil
	}
	return d.buf[j].ctx, true, nil
}

// mergeRuns merges two sorted runs with no id in common.
func mergeRuns(a, b *idRun) idRun {
	n := len(a.ids) + len(b.ids)
	r := idRun{ids: make([]uint64, 0, n), ctxs: make([]ctxKey, 0, n)}
	i, j := 0, 0
	for i < len(a.ids) && j < len(b.ids) {
		if a.ids[i] < b.ids[j] {
			r.ids, r.ctxs = append(r.ids, a.ids[i]), append(r.ctxs, a.ctxs[i])
			i++
		} else {
			r.ids, r.ctxs = append(r.ids, b.ids[j]), append(r.ctxs, b.ctxs[j])
			j++
		}
	}
	r.ids, r.ctxs = append(r.ids, a.ids[i:]...), append(r.ctxs, a.ctxs[i:]...)
	r.ids, r.ctxs = append(r.ids, b.ids[j:]...), append(r.ctxs, b.ctxs[j:]...)
	return r
}
