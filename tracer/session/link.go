package session

import (
	"cmp"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// linker links GPU events to their launch context incrementally, as events
// arrive from live sources, with the one rule of tracer.Linker (the same
// code Trace.Link runs over files and so over a comparison's recording):
// launch point by correlation id, else the op's own thread and start; step
// = the step window of the process containing the launch, on any thread;
// ranges from the launching thread, else from the process's step thread.
//
// Sources send an interval (operator, range, step) when it ends, so the
// ranges around a kernel usually arrive after the kernel. A GPU event is
// therefore held until its launch point t is known to be covered: when a
// step of its process has ended after t (every range nested in that step
// ended before the step, and sources send in end order per thread), or
// after a delay (processes without steps), or when its source disconnects.
// GPU events with a correlation id wait (bounded) for the Runtime/Driver
// call with the same id; either may arrive first.
type linker struct {
	core     *tracer.Linker
	contexts []tracer.Context // core.Contexts, refreshed after each resolve
	threads  map[tkey]*thread
	procs    map[int32]*proc
	// lastT and lastP are the previous event's thread and process: a
	// stream's events come from one or two threads, so most lookups skip
	// the maps.
	lastT *thread
	lastP *proc

	waiting map[ckey][]waitGPU // GPU events whose launch call has not come
	waitFIF []ckey

	// retainNs: intervals ending more than this (and up to a sixteenth
	// more) before their process's latest step end are dropped (late GPU
	// records older than that get less context).
	retainNs int64
	maxIvs   int // per thread
	maxCorr  int // launches kept per process (a span of correlation ids) and waiting entries kept
	// maxPending bounds the GPU events one thread holds; beyond it the
	// older half is linked early (counted in early).
	maxPending int
	early      uint64
	prunes     uint64 // prunes that forgot intervals (tests)
	// emit receives each batch of linked GPU events (Ctx set), in the
	// order resolved; the slice is reused after the call.
	emit      func(evs []tracer.Event)
	lateCount uint64 // GPU events resolved against pruned history
	evicted   uint64 // waiting GPU events given up on (no launch seen)

	// run is the previous resolve's answer and the launch times it holds
	// for, [from, until) on thread th; endBatch forgets it (intervals may
	// have come since).
	run struct {
		th          *thread
		from, until int64
		ctx         tracer.CtxID
	}

	readyT []*thread      // threads with ready events
	out    []tracer.Event // the batch emit gets: events linked without waiting, then the ready ones by launch time
	heads  []int          // scratch: per ready thread, its next event (merge)
}

type tkey struct{ pid, tid int32 }
type ckey struct {
	pid  int32
	corr uint64
}
type waitGPU struct {
	ev      tracer.Event
	arrival int64 // wall ns
}

// pendQ is a queue of GPU events with their launch points and arrival
// times, in parallel slices: its events are linked in place and handed to
// the session as they lie, without a copy.
type pendQ struct {
	ev      []tracer.Event
	t       []int64 // launch point, ns
	arrival []int64 // wall ns when queued
}

func (q *pendQ) len() int { return len(q.ev) }

func (q *pendQ) push(e *tracer.Event, t, arrival int64) {
	q.ev = append(q.ev, *e)
	q.t = append(q.t, t)
	q.arrival = append(q.arrival, arrival)
}

// pushFrom appends src's events i.
func (q *pendQ) pushFrom(src *pendQ, i int) { q.push(&src.ev[i], src.t[i], src.arrival[i]) }

// truncate keeps the first n events.
func (q *pendQ) truncate(n int) { q.ev, q.t, q.arrival = q.ev[:n], q.t[:n], q.arrival[:n] }

// moveFirst moves the first n events to the end of dst.
func (q *pendQ) moveFirst(n int, dst *pendQ) {
	dst.ev = append(dst.ev, q.ev[:n]...)
	dst.t = append(dst.t, q.t[:n]...)
	dst.arrival = append(dst.arrival, q.arrival[:n]...)
	k := copy(q.ev, q.ev[n:])
	copy(q.t, q.t[n:])
	copy(q.arrival, q.arrival[n:])
	q.truncate(k)
}

// sortByLaunch orders the events by launch point, stably (none to do for
// a thread whose events came in order: most do).
func (q *pendQ) sortByLaunch() {
	if slices.IsSorted(q.t) {
		return
	}
	idx := make([]int, len(q.t))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(q.t[a], q.t[b]) })
	var out pendQ
	for _, i := range idx {
		out.pushFrom(q, i)
	}
	copy(q.ev, out.ev)
	copy(q.t, out.t)
	copy(q.arrival, out.arrival)
}

// thread is a launching thread's queue of GPU events.
type thread struct {
	k         tkey
	p         *proc
	pending   pendQ // launch point not yet covered by a step
	ready     pendQ // covered: resolved at the end of the batch
	minIvsEnd int64 // intervals ending before this were pruned
}

// proc is what the linker knows of a process: its steps, its launching
// threads and its launch calls by correlation id.
type proc struct {
	pid      int32
	stepEnd  int64 // latest End of a step
	prunedAt int64 // stepEnd when its threads' intervals were last pruned
	hasStep  bool
	threads  []*thread // its launching threads
	corr     corrRing
}

func newLinker(strs *tracer.Strings, emit func([]tracer.Event)) *linker {
	core := tracer.NewLinker()
	core.SetStrings(strs)
	return &linker{
		core:       core,
		contexts:   core.Contexts,
		threads:    map[tkey]*thread{},
		procs:      map[int32]*proc{},
		waiting:    map[ckey][]waitGPU{},
		retainNs:   30e9,
		maxIvs:     1 << 18,
		maxCorr:    1 << 20,
		maxPending: 1 << 18,
		emit:       emit,
	}
}

func (l *linker) proc(pid int32) *proc {
	if p := l.lastP; p != nil && p.pid == pid {
		return p
	}
	p := l.procs[pid]
	if p == nil {
		p = &proc{pid: pid}
		l.procs[pid] = p
	}
	l.lastP = p
	return p
}

// queue holds p on th: ready when a step of its process already covers its
// launch point, else pending.
func (l *linker) queue(th *thread, e *tracer.Event, t, arrival int64) {
	if pr := th.p; pr.hasStep && t < pr.stepEnd {
		l.markReady(th)
		th.ready.push(e, t, arrival)
		return
	}
	th.pending.push(e, t, arrival)
	if th.pending.len() > l.maxPending {
		// Bound memory: link the older half now with what is known.
		half := th.pending.len() / 2
		l.markReady(th)
		th.pending.moveFirst(half, &th.ready)
		l.early += uint64(half)
	}
}

func (l *linker) markReady(th *thread) {
	if th.ready.len() == 0 {
		l.readyT = append(l.readyT, th)
	}
}

// endBatch resolves every ready event (call after each batch of add), in
// launch-time order over all threads so that the core's sweeps (the
// launching thread's and the step thread's) move forward, and emits them
// after the events linked at once (no thread to wait on) since the
// previous endBatch.
func (l *linker) endBatch() {
	out := l.out
	l.run.th = nil
	for _, th := range l.readyT {
		for _, t := range th.ready.t {
			if t < th.minIvsEnd {
				l.lateCount++
			}
		}
		th.ready.sortByLaunch()
	}
	var inPlace *thread // the one ready thread, linked in its queue
	if len(l.readyT) == 1 {
		inPlace = l.readyT[0]
		for i := range inPlace.ready.ev {
			l.resolve(inPlace, &inPlace.ready.ev[i], inPlace.ready.t[i])
		}
	} else if len(l.readyT) > 1 {
		// Merge the threads' sorted events; ties in thread order, so the
		// order is a stable sort of their concatenation.
		heads := l.heads[:0]
		for range l.readyT {
			heads = append(heads, 0)
		}
		for {
			best := -1
			for i, th := range l.readyT {
				if h := heads[i]; h < th.ready.len() && (best < 0 || th.ready.t[h] < l.readyT[best].ready.t[heads[best]]) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			th, h := l.readyT[best], heads[best]
			l.resolve(th, &th.ready.ev[h], th.ready.t[h])
			out = append(out, th.ready.ev[h])
			heads[best]++
		}
		l.heads = heads
	}
	l.refreshContexts()
	if len(out) > 0 {
		l.emit(out)
	}
	if inPlace != nil && inPlace.ready.len() > 0 {
		l.emit(inPlace.ready.ev)
	}
	for _, th := range l.readyT {
		th.ready.truncate(0)
	}
	l.readyT = l.readyT[:0]
	l.out = out[:0]
}

// resolve links e, launched on th at t. Launches of one thread come in
// time order within a batch, and the context of the previous one holds
// until its run's end (Linker.ResolveUntil).
func (l *linker) resolve(th *thread, e *tracer.Event, t int64) {
	if r := &l.run; r.th != th || t < r.from || t >= r.until {
		r.ctx, r.until = l.core.ResolveUntil(th.k.pid, th.k.tid, t)
		r.th, r.from = th, t
	}
	e.Ctx = l.run.ctx
}

// renewContexts starts the core's contexts afresh (tracer.Linker.RenewContexts)
// and returns the remap of IDs handed out before; call between batches,
// and refreshContexts once the IDs held are remapped (remap interns).
func (l *linker) renewContexts() func(tracer.CtxID) tracer.CtxID {
	l.run.th = nil // its answer is an ID of the old contexts
	return l.core.RenewContexts()
}

// refreshContexts takes the core's contexts as they are now.
func (l *linker) refreshContexts() { l.contexts = l.core.Contexts }

// launchOf returns the launch point of linked GPU event e: its launch
// call's thread and start by correlation id while the process's ring holds
// it, else e's own thread and start; ok is false when neither is known.
func (l *linker) launchOf(e *tracer.Event) (tid int32, t int64, ok bool) {
	if e.Corr != 0 {
		if p := l.procs[e.PID]; p != nil {
			if tid, t, ok := p.corr.get(e.Corr); ok {
				return tid, t, true
			}
		}
	}
	if e.TID >= 0 {
		return e.TID, e.Start, true
	}
	return 0, 0, false
}

func (l *linker) thread(k tkey) *thread {
	if th := l.lastT; th != nil && th.k == k {
		return th
	}
	th := l.threads[k]
	if th == nil {
		p := l.proc(k.pid)
		th = &thread{k: k, p: p}
		l.threads[k] = th
		p.threads = append(p.threads, th)
	}
	l.lastT = th
	return th
}

// add takes one event (names already in the session's table, times in
// host ns). now is the wall clock in ns, for delays. GPU events come out
// through emit with Ctx set at the next endBatch (possibly a later one);
// other events are not emitted.
func (l *linker) add(e *tracer.Event, now int64) {
	switch {
	case e.Kind.IsLaunch():
		if e.Corr == 0 {
			return
		}
		l.proc(e.PID).corr.put(e.Corr, e.TID, e.Start, l.maxCorr)
		if len(l.waiting) == 0 {
			return
		}
		k := ckey{e.PID, e.Corr}
		if ws, ok := l.waiting[k]; ok {
			delete(l.waiting, k)
			th := l.thread(tkey{e.PID, e.TID})
			for _, w := range ws {
				l.queue(th, &w.ev, e.Start, w.arrival)
			}
		}
	case e.Kind == tracer.KindCPUOp || e.Kind == tracer.KindRange:
		l.core.Add(e)
		if l.core.Intervals(e.PID, e.TID) > l.maxIvs {
			l.prune(e.PID, e.TID)
		}
	case e.Kind == tracer.KindStep:
		l.core.Add(e)
		p := l.proc(e.PID)
		if !p.hasStep || e.End() > p.stepEnd {
			p.stepEnd = e.End()
		}
		p.hasStep = true
		for _, th := range p.threads {
			l.resolveReady(th, false)
		}
		// Forgetting old intervals scans all a thread keeps: once the
		// cut moved by a sixteenth of the retention, not at every step.
		if p.stepEnd-p.prunedAt >= l.retainNs/16 {
			p.prunedAt = p.stepEnd
			for _, th := range p.threads {
				l.prune(th.k.pid, th.k.tid)
			}
			if tid, ok := l.core.StepThread(e.PID); ok {
				l.prune(e.PID, tid)
			}
		}
	case e.Kind.IsGPU() && e.Kind != tracer.KindGPURange:
		if e.Corr != 0 {
			if tid, t, ok := l.proc(e.PID).corr.get(e.Corr); ok {
				l.queue(l.thread(tkey{e.PID, tid}), e, t, now)
				return
			}
			k := ckey{e.PID, e.Corr}
			l.waiting[k] = append(l.waiting[k], waitGPU{*e, now})
			l.waitFIF = append(l.waitFIF, k)
			l.evictWaiting(now)
			return
		}
		if e.TID >= 0 {
			l.queue(l.thread(tkey{e.PID, e.TID}), e, e.Start, now)
			return
		}
		l.out = append(l.out, *e)
		l.out[len(l.out)-1].Ctx = 0
	}
}

// pending is how many GPU events wait for a step or a launch call.
func (l *linker) pending() int {
	n := 0
	for _, th := range l.threads {
		n += th.pending.len()
	}
	for _, ws := range l.waiting {
		n += len(ws)
	}
	return n
}

// tick resolves GPU events that waited longer than delayNs (wall), and
// gives up on correlation waits older than that (falling back to the
// event's own thread when TID >= 0, else context 0).
func (l *linker) tick(now, delayNs int64) {
	for k, ws := range l.waiting {
		keep := ws[:0]
		for _, w := range ws {
			if now-w.arrival >= delayNs {
				l.giveUp(w.ev, now)
			} else {
				keep = append(keep, w)
			}
		}
		if len(keep) == 0 {
			delete(l.waiting, k)
		} else {
			l.waiting[k] = keep
		}
	}
	l.compactWaitFIF()
	for _, th := range l.threads {
		if th.pending.len() > 0 && now-th.pending.arrival[0] >= delayNs {
			l.resolveOld(th, now-delayNs)
		}
	}
	l.endBatch()
}

// flush resolves everything pending for process pid (0: all) with what is
// known (the source ended).
func (l *linker) flush(pid int32) {
	for k, ws := range l.waiting {
		if pid != 0 && k.pid != pid {
			continue
		}
		for _, w := range ws {
			l.giveUp(w.ev, 0)
		}
		delete(l.waiting, k)
	}
	l.compactWaitFIF()
	for k, th := range l.threads {
		if pid == 0 || k.pid == pid {
			l.resolveReady(th, true)
		}
	}
	l.endBatch()
}

func (l *linker) giveUp(e tracer.Event, now int64) {
	l.evicted++
	if e.TID >= 0 {
		l.queue(l.thread(tkey{e.PID, e.TID}), &e, e.Start, now)
		return
	}
	e.Ctx = 0
	l.out = append(l.out, e)
}

func (l *linker) evictWaiting(now int64) {
	for len(l.waitFIF) > l.maxCorr {
		k := l.waitFIF[0]
		l.waitFIF = l.waitFIF[1:]
		if ws, ok := l.waiting[k]; ok {
			delete(l.waiting, k)
			for _, w := range ws {
				l.giveUp(w.ev, now)
			}
		}
	}
}

func (l *linker) compactWaitFIF() {
	keep := l.waitFIF[:0]
	for _, k := range l.waitFIF {
		if _, ok := l.waiting[k]; ok {
			keep = append(keep, k)
		}
	}
	l.waitFIF = keep
}

// resolveReady moves th's pending GPU events whose launch point lies before
// its process's latest step end (all when force) to ready.
func (l *linker) resolveReady(th *thread, force bool) {
	if th.pending.len() == 0 {
		return
	}
	p := l.procs[th.k.pid]
	if !force && (p == nil || !p.hasStep) {
		return
	}
	if th.ready.len() == 0 && (force || allBefore(th.pending.t, p.stepEnd)) {
		// Every event is covered (the rule: a step ends after what was
		// launched in it): hand the queue over without copying.
		l.markReady(th)
		th.ready, th.pending = th.pending, th.ready
		return
	}
	l.moveWhere(th, func(i int) bool { return force || th.pending.t[i] < p.stepEnd })
}

// moveWhere moves th's pending events i for which ready(i) to its ready
// queue, keeping the others in order.
func (l *linker) moveWhere(th *thread, ready func(i int) bool) {
	q := &th.pending
	w := 0
	for i := range q.ev {
		if ready(i) {
			l.markReady(th)
			th.ready.pushFrom(q, i)
			continue
		}
		q.ev[w], q.t[w], q.arrival[w] = q.ev[i], q.t[i], q.arrival[i]
		w++
	}
	q.truncate(w)
}

// allBefore reports whether every launch point ts is before t.
func allBefore(ts []int64, t int64) bool {
	for _, x := range ts {
		if x >= t {
			return false
		}
	}
	return true
}

// resolveOld moves pending events that arrived before cutoff (wall ns) to
// ready.
func (l *linker) resolveOld(th *thread, cutoff int64) {
	l.moveWhere(th, func(i int) bool { return th.pending.arrival[i] <= cutoff })
}

// prune drops the intervals of (pid, tid) that ended long before the
// process's latest step, and, once a thread holds more than maxIvs, the
// oldest down to 3/4 of maxIvs: pruning sorts and scans the thread's
// intervals, so dropping one per added operator froze a live session fed
// torch.profiler windows (8,000 operators a step; > 262,144 kept).
func (l *linker) prune(pid, tid int32) {
	cut := int64(-1 << 63)
	if p := l.procs[pid]; p != nil && p.hasStep {
		cut = p.stepEnd - l.retainNs
	}
	keep := l.maxIvs
	if l.core.Intervals(pid, tid) > l.maxIvs {
		keep = l.maxIvs - l.maxIvs/4
	}
	end, n := l.core.Prune(pid, tid, cut, keep)
	if n > 0 {
		l.prunes++
		th := l.thread(tkey{pid, tid})
		th.minIvsEnd = max(th.minIvsEnd, end)
	}
}

// corrRing is a process's launch calls by correlation id: CUPTI and
// rocprofiler number a process's API calls upwards, so the launches kept
// are a span of ids, held in a ring indexed by id (no hashing). The span
// holds at most Options-bound ids (linker.maxCorr) (the newest); a launch older than the span is
// forgotten, as is every kept one when an id jumps past the span.
type corrRing struct {
	slots []corrSlot // len a power of two
	base  uint64     // id of slots[head]
	head  int
	n     int // ids [base, base+n) are in the span
}

type corrSlot struct {
	t   int64 // launch point, ns
	tid int32
	ok  bool
}

func (r *corrRing) mask() int { return len(r.slots) - 1 }

func (r *corrRing) slot(id uint64) *corrSlot {
	return &r.slots[(r.head+int(id-r.base))&r.mask()]
}

// get returns the launch with correlation id id.
func (r *corrRing) get(id uint64) (tid int32, t int64, ok bool) {
	if id < r.base || id-r.base >= uint64(r.n) {
		return 0, 0, false
	}
	s := r.slot(id)
	return s.tid, s.t, s.ok
}

// put keeps the launch with id (the first one when an id repeats); the
// span grows to hold it, up to limit ids.
func (r *corrRing) put(id uint64, tid int32, t int64, limit int) {
	switch {
	case r.n == 0:
		r.grow(1)
		r.base, r.head, r.n = id, 0, 1
	case id >= r.base && id-r.base < uint64(r.n):
	case id >= r.base: // past the span: extend it, dropping the oldest
		want := id - r.base + 1
		if want > uint64(limit) {
			drop := want - uint64(limit)
			if drop >= uint64(r.n) {
				clear(r.slots)
				r.base, r.head, r.n = id, 0, 1
				break
			}
			r.dropFront(int(drop))
			want = uint64(limit)
		}
		r.grow(int(want))
		r.n = int(want)
	default: // before the span (launches delivered slightly out of order)
		want := uint64(r.n) + (r.base - id)
		if want > uint64(limit) {
			return // older than every kept launch: forgotten
		}
		r.grow(int(want))
		back := int(r.base - id)
		r.head = (r.head - back) & r.mask()
		r.base, r.n = id, int(want)
	}
	if s := r.slot(id); !s.ok {
		*s = corrSlot{t: t, tid: tid, ok: true}
	}
}

// grow makes room for n ids in the ring.
func (r *corrRing) grow(n int) {
	if n <= len(r.slots) {
		return
	}
	size := max(len(r.slots), 64)
	for size < n {
		size *= 2
	}
	slots := make([]corrSlot, size)
	for i := range r.n {
		slots[i] = r.slots[(r.head+i)&r.mask()]
	}
	r.slots, r.head = slots, 0
}

// dropFront forgets the oldest k ids of the span (k < n).
func (r *corrRing) dropFront(k int) {
	for i := range k {
		r.slots[(r.head+i)&r.mask()] = corrSlot{}
	}
	r.head = (r.head + k) & r.mask()
	r.base += uint64(k)
	r.n -= k
}
