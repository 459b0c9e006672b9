package session

import (
	"encoding/binary"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// linker links GPU events to their launch context incrementally, as events
// arrive from live sources.
//
// Sources send an interval (operator, range, step) when it ends, so the
// ranges around a kernel usually arrive after the kernel. A GPU event is
// therefore held per launching thread until its launch point t is known to
// be covered: when a step on that thread has ended after t (every range
// nested in that step ended before the step, and sources send in end order
// per thread), or after a delay (threads without steps), or when its source
// disconnects. GPU events with a correlation id wait (bounded) for the
// Runtime/Driver call with the same id; either may arrive first.
//
// The rules for the launch point and containment are tracer.Trace.Link's.
type linker struct {
	strs     *tracer.Strings
	contexts []tracer.Context
	intern   map[string]tracer.CtxID
	threads  map[tkey]*thread

	launches  map[ckey]launch // corr → launch call
	launchFIF []ckey          // insertion order, for bounded eviction
	waiting   map[ckey][]waitGPU
	waitFIF   []ckey

	// retainNs: intervals ending more than this before a thread's latest
	// step end are dropped (late GPU records older than that get less
	// context).
	retainNs int64
	maxIvs   int // per thread
	maxCorr  int // launches and waiting entries kept
	// maxPending bounds the GPU events one thread holds; beyond it the
	// older half is linked early (counted in early).
	maxPending int
	early      uint64
	emit       func(e *tracer.Event)
	lateCount  uint64 // GPU events resolved against pruned history
	evicted    uint64 // waiting GPU events given up on (no launch seen)

	keyBuf []byte
	active []int32
	ctx    tracer.Context
	readyT []*thread // threads with ready events
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
	t       int64 // launch point, ns
	arrival int64 // wall ns when queued
	ev      tracer.Event
}

type thread struct {
	ivs       []tracer.Event // operators, ranges, steps; unsorted tail after sortedN
	sortedN   int
	pending   []pendGPU // launch point not yet covered by a step
	ready     []pendGPU // covered: resolved at the end of the batch
	maxDur    int64     // longest interval kept, for the sweep's start
	stepEnd   int64     // latest End of a step on this thread
	hasStep   bool
	minIvsEnd int64 // intervals ending before this were pruned
}

func newLinker(strs *tracer.Strings, emit func(*tracer.Event)) *linker {
	return &linker{
		strs:       strs,
		contexts:   []tracer.Context{{Step: -1}},
		intern:     map[string]tracer.CtxID{},
		threads:    map[tkey]*thread{},
		launches:   map[ckey]launch{},
		waiting:    map[ckey][]waitGPU{},
		retainNs:   30e9,
		maxIvs:     1 << 18,
		maxCorr:    1 << 20,
		maxPending: 1 << 18,
		emit:       emit,
	}
}

// queue holds p on th: ready when a step on th already covers its launch
// point, else pending.
func (l *linker) queue(th *thread, p pendGPU) {
	if th.hasStep && p.t < th.stepEnd {
		if len(th.ready) == 0 {
			l.readyT = append(l.readyT, th)
		}
		th.ready = append(th.ready, p)
		return
	}
	th.pending = append(th.pending, p)
	if len(th.pending) > l.maxPending {
		// Bound memory: link the older half now with what is known.
		half := len(th.pending) / 2
		if len(th.ready) == 0 {
			l.readyT = append(l.readyT, th)
		}
		th.ready = append(th.ready, th.pending[:half]...)
		th.pending = append(th.pending[:0], th.pending[half:]...)
		l.early += uint64(half)
	}
}

// endBatch resolves every ready event (call after each batch of add).
func (l *linker) endBatch() {
	for _, th := range l.readyT {
		r := th.ready
		th.ready = th.ready[:0]
		l.resolve(th, r)
	}
	l.readyT = l.readyT[:0]
}

func (l *linker) thread(k tkey) *thread {
	th := l.threads[k]
	if th == nil {
		th = &thread{}
		l.threads[k] = th
	}
	return th
}

// add takes one event (names already in l.strs, times in host ns). now is
// the wall clock in ns, for delays. GPU events come out through emit with
// Ctx set, possibly later; other events are not emitted.
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
	case e.Kind == tracer.KindCPUOp || e.Kind == tracer.KindRange || e.Kind == tracer.KindStep:
		th := l.thread(tkey{e.PID, e.TID})
		th.ivs = append(th.ivs, *e)
		th.maxDur = max(th.maxDur, e.Dur)
		if e.Kind == tracer.KindStep {
			if !th.hasStep || e.End() > th.stepEnd {
				th.stepEnd = e.End()
			}
			th.hasStep = true
			l.resolveReady(th, false, now)
			l.prune(th)
		} else if len(th.ivs) > l.maxIvs {
			l.prune(th)
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
			l.evictWaiting(now, false)
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
			l.resolveReady(th, true, 0)
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

func (l *linker) evictWaiting(now int64, _ bool) {
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

// resolveReady resolves th's pending GPU events whose launch point lies
// before the thread's latest step end (all when force).
func (l *linker) resolveReady(th *thread, force bool, now int64) {
	if len(th.pending) == 0 {
		return
	}
	if !force && !th.hasStep {
		return
	}
	keep := th.pending[:0]
	for _, p := range th.pending {
		if force || p.t < th.stepEnd {
			if len(th.ready) == 0 {
				l.readyT = append(l.readyT, th)
			}
			th.ready = append(th.ready, p)
		} else {
			keep = append(keep, p)
		}
	}
	th.pending = keep
}

// resolveOld resolves pending events that arrived before cutoff (wall ns).
func (l *linker) resolveOld(th *thread, cutoff int64) {
	keep := th.pending[:0]
	for _, p := range th.pending {
		if p.arrival <= cutoff {
			if len(th.ready) == 0 {
				l.readyT = append(l.readyT, th)
			}
			th.ready = append(th.ready, p)
		} else {
			keep = append(keep, p)
		}
	}
	th.pending = keep
}

// resolve computes the context of each query with one sweep over the
// thread's intervals sorted by start (outermost first), as Trace.Link does.
func (l *linker) resolve(th *thread, qs []pendGPU) {
	if len(qs) == 0 {
		return
	}
	slices.SortFunc(qs, func(a, b pendGPU) int { return cmp64(a.t, b.t) })
	l.sortIvs(th)
	ivs := th.ivs
	active := l.active[:0]
	// Intervals starting before the earliest query minus the longest
	// duration cannot contain any query.
	lo := qs[0].t - th.maxDur
	next, _ := slices.BinarySearchFunc(ivs, lo, func(e tracer.Event, t int64) int { return cmp64(e.Start, t) })
	var last tracer.CtxID
	changed := true
	for i := range qs {
		q := &qs[i]
		if q.t < th.minIvsEnd {
			l.lateCount++
		}
		for next < len(ivs) && ivs[next].Start <= q.t {
			active = append(active, int32(next))
			next++
			changed = true
		}
		w := 0
		for _, a := range active {
			ea := &ivs[a]
			if q.t < ea.End() || (ea.Dur == 0 && q.t == ea.Start) {
				active[w] = a
				w++
			}
		}
		if w != len(active) {
			changed = true
		}
		active = active[:w]
		if changed {
			last = l.contextOf(ivs, active)
			changed = false
		}
		q.ev.Ctx = last
		l.emit(&q.ev)
	}
	l.active = active
}

func (l *linker) sortIvs(th *thread) {
	if th.sortedN == len(th.ivs) {
		return
	}
	slices.SortStableFunc(th.ivs, func(a, b tracer.Event) int {
		if a.Start != b.Start {
			return cmp64(a.Start, b.Start)
		}
		return cmp64(b.Dur, a.Dur)
	})
	th.sortedN = len(th.ivs)
}

// contextOf interns the context made of the active intervals (outermost
// first).
func (l *linker) contextOf(ivs []tracer.Event, active []int32) tracer.CtxID {
	if len(active) == 0 {
		return 0
	}
	c := &l.ctx
	c.Ops, c.Ranges, c.Step = c.Ops[:0], c.Ranges[:0], -1
	kb := l.keyBuf[:0]
	for _, a := range active {
		ea := &ivs[a]
		switch ea.Kind {
		case tracer.KindCPUOp:
			c.Ops = append(c.Ops, ea.Name)
		case tracer.KindRange:
			c.Ranges = append(c.Ranges, ea.Name)
		case tracer.KindStep:
			c.Step = ea.Value
		}
		kb = append(kb, byte(ea.Kind))
		kb = binary.LittleEndian.AppendUint32(kb, uint32(ea.Name))
	}
	kb = binary.LittleEndian.AppendUint64(kb, uint64(c.Step))
	l.keyBuf = kb
	if id, ok := l.intern[string(kb)]; ok {
		return id
	}
	id := tracer.CtxID(len(l.contexts))
	l.contexts = append(l.contexts, tracer.Context{Ops: slices.Clone(c.Ops), Ranges: slices.Clone(c.Ranges), Step: c.Step})
	l.intern[string(kb)] = id
	return id
}

// prune drops intervals that ended long before the thread's latest step,
// and the oldest ones beyond maxIvs.
func (l *linker) prune(th *thread) {
	cut := th.stepEnd - l.retainNs
	n := 0
	for i := range th.ivs {
		if th.ivs[i].End() >= cut || !th.hasStep {
			n++
		}
	}
	if n == len(th.ivs) && n <= l.maxIvs {
		return
	}
	l.sortIvs(th)
	keep := th.ivs[:0]
	for _, e := range th.ivs {
		if e.End() >= cut || !th.hasStep {
			keep = append(keep, e)
		} else if e.End() > th.minIvsEnd {
			th.minIvsEnd = e.End()
		}
	}
	if over := len(keep) - l.maxIvs; over > 0 {
		for _, e := range keep[:over] {
			th.minIvsEnd = max(th.minIvsEnd, e.End())
		}
		keep = keep[over:]
	}
	th.ivs = slices.Clip(keep)
	if cap(th.ivs) > 2*len(th.ivs)+1024 {
		th.ivs = slices.Clone(th.ivs)
	}
	th.sortedN = len(th.ivs)
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
