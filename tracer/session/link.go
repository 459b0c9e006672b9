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

	launches  map[ckey]launch // corr → launch call
	launchFIF []ckey          // insertion order, for bounded eviction
	waiting   map[ckey][]waitGPU
	waitFIF   []ckey

	// retainNs: intervals ending more than this before their process's
	// latest step end are dropped (late GPU records older than that get
	// less context).
	retainNs int64
	maxIvs   int // per thread
	maxCorr  int // launches and waiting entries kept
	// maxPending bounds the GPU events one thread holds; beyond it the
	// older half is linked early (counted in early).
	maxPending int
	early      uint64
	prunes     uint64 // prunes that forgot intervals (tests)
	emit       func(e *tracer.Event)
	lateCount  uint64 // GPU events resolved against pruned history
	evicted    uint64 // waiting GPU events given up on (no launch seen)

	readyT []*thread // threads with ready events
	batch  []pendGPU // scratch: every ready event of a batch, by launch time
}

type tkey struct{ pid, tid int32 }
type ckey struct {
	pid  int32
	corr uint64
}
type launch struct {
	pid, tid int32
	t        int64
}
type waitGPU struct {
	ev      tracer.Event
	arrival int64 // wall ns
}

type pendGPU struct {
	t        int64 // launch point, ns
	arrival  int64 // wall ns when queued
	pid, tid int32 // launching thread
	ev       tracer.Event
}

// thread is a launching thread's queue of GPU events.
type thread struct {
	k         tkey
	pending   []pendGPU // launch point not yet covered by a step
	ready     []pendGPU // covered: resolved at the end of the batch
	minIvsEnd int64     // intervals ending before this were pruned
}

// proc is what the linker knows of a process's steps.
type proc struct {
	stepEnd int64 // latest End of a step
	hasStep bool
	threads []*thread // its launching threads
}

func newLinker(strs *tracer.Strings, emit func(*tracer.Event)) *linker {
	core := tracer.NewLinker()
	core.SetStrings(strs)
	return &linker{
		core:       core,
		contexts:   core.Contexts,
		threads:    map[tkey]*thread{},
		procs:      map[int32]*proc{},
		launches:   map[ckey]launch{},
		waiting:    map[ckey][]waitGPU{},
		retainNs:   30e9,
		maxIvs:     1 << 18,
		maxCorr:    1 << 20,
		maxPending: 1 << 18,
		emit:       emit,
	}
}

func (l *linker) proc(pid int32) *proc {
	p := l.procs[pid]
	if p == nil {
		p = &proc{}
		l.procs[pid] = p
	}
	return p
}

// queue holds p on th: ready when a step of its process already covers its
// launch point, else pending.
func (l *linker) queue(th *thread, p pendGPU) {
	p.pid, p.tid = th.k.pid, th.k.tid
	if pr := l.procs[th.k.pid]; pr != nil && pr.hasStep && p.t < pr.stepEnd {
		l.markReady(th)
		th.ready = append(th.ready, p)
		return
	}
	th.pending = append(th.pending, p)
	if len(th.pending) > l.maxPending {
		// Bound memory: link the older half now with what is known.
		half := len(th.pending) / 2
		l.markReady(th)
		th.ready = append(th.ready, th.pending[:half]...)
		th.pending = append(th.pending[:0], th.pending[half:]...)
		l.early += uint64(half)
	}
}

func (l *linker) markReady(th *thread) {
	if len(th.ready) == 0 {
		l.readyT = append(l.readyT, th)
	}
}

// endBatch resolves every ready event (call after each batch of add), in
// launch-time order over all threads so that the core's sweeps (the
// launching thread's and the step thread's) move forward.
func (l *linker) endBatch() {
	if len(l.readyT) == 0 {
		return
	}
	b := l.batch[:0]
	for _, th := range l.readyT {
		for _, p := range th.ready {
			if p.t < th.minIvsEnd {
				l.lateCount++
			}
		}
		b = append(b, th.ready...)
		th.ready = th.ready[:0]
	}
	l.readyT = l.readyT[:0]
	slices.SortStableFunc(b, func(x, y pendGPU) int { return cmp.Compare(x.t, y.t) })
	for i := range b {
		q := &b[i]
		q.ev.Ctx = l.core.Resolve(q.pid, q.tid, q.t)
		l.contexts = l.core.Contexts
		l.emit(&q.ev)
	}
	clear(b) // drop references held by the events' copies (none, but keep the scratch clean)
	l.batch = b[:0]
}

func (l *linker) thread(k tkey) *thread {
	th := l.threads[k]
	if th == nil {
		th = &thread{k: k}
		l.threads[k] = th
		p := l.proc(k.pid)
		p.threads = append(p.threads, th)
	}
	return th
}

// add takes one event (names already in the session's table, times in
// host ns). now is the wall clock in ns, for delays. GPU events come out
// through emit with Ctx set, possibly later; other events are not emitted.
func (l *linker) add(e *tracer.Event, now int64) {
	switch {
	case e.Kind.IsLaunch():
		if e.Corr == 0 {
			return
		}
		k := ckey{e.PID, e.Corr}
		if _, dup := l.launches[k]; !dup {
			l.launches[k] = launch{e.PID, e.TID, e.Start}
			l.launchFIF = append(l.launchFIF, k)
			l.evictLaunches()
		}
		if ws, ok := l.waiting[k]; ok {
			delete(l.waiting, k)
			th := l.thread(tkey{e.PID, e.TID})
			for _, w := range ws {
				l.queue(th, pendGPU{t: e.Start, arrival: w.arrival, ev: w.ev})
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
			l.prune(th.k.pid, th.k.tid)
		}
		if tid, ok := l.core.StepThread(e.PID); ok {
			l.prune(e.PID, tid)
		}
	case e.Kind.IsGPU() && e.Kind != tracer.KindGPURange:
		if e.Corr != 0 {
			k := ckey{e.PID, e.Corr}
			if la, ok := l.launches[k]; ok {
				l.queue(l.thread(tkey{la.pid, la.tid}), pendGPU{t: la.t, arrival: now, ev: *e})
				return
			}
			l.waiting[k] = append(l.waiting[k], waitGPU{*e, now})
			l.waitFIF = append(l.waitFIF, k)
			l.evictWaiting(now)
			return
		}
		if e.TID >= 0 {
			l.queue(l.thread(tkey{e.PID, e.TID}), pendGPU{t: e.Start, arrival: now, ev: *e})
			return
		}
		ev := *e
		ev.Ctx = 0
		l.emit(&ev)
	}
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
		if len(th.pending) > 0 && now-th.pending[0].arrival >= delayNs {
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
		l.queue(l.thread(tkey{e.PID, e.TID}), pendGPU{t: e.Start, arrival: now, ev: e})
		return
	}
	e.Ctx = 0
	l.emit(&e)
}

func (l *linker) evictLaunches() {
	for len(l.launches) > l.maxCorr && len(l.launchFIF) > 0 {
		delete(l.launches, l.launchFIF[0])
		l.launchFIF = l.launchFIF[1:]
	}
	if cap(l.launchFIF) > 4*l.maxCorr && len(l.launchFIF) < l.maxCorr {
		l.launchFIF = slices.Clone(l.launchFIF)
	}
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
	if len(th.pending) == 0 {
		return
	}
	p := l.procs[th.k.pid]
	if !force && (p == nil || !p.hasStep) {
		return
	}
	keep := th.pending[:0]
	for _, q := range th.pending {
		if force || q.t < p.stepEnd {
			l.markReady(th)
			th.ready = append(th.ready, q)
		} else {
			keep = append(keep, q)
		}
	}
	th.pending = keep
}

// resolveOld moves pending events that arrived before cutoff (wall ns) to
// ready.
func (l *linker) resolveOld(th *thread, cutoff int64) {
	keep := th.pending[:0]
	for _, p := range th.pending {
		if p.arrival <= cutoff {
			l.markReady(th)
			th.ready = append(th.ready, p)
		} else {
			keep = append(keep, p)
		}
	}
	th.pending = keep
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
