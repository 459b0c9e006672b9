package session

import (
	"fmt"
	"slices"
	"sort"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/opmodel"
)

// Work of a GPU tracer's kernels from the agent's windows.
//
// A process traced by rlktop's CUPTI or rocprofiler library sends its
// kernels and launch calls on that library's connection, and its operators
// with their shapes only in the Python agent's torch.profiler windows, on
// the agent's connection, after the window's last step. A kernel of the
// tracer's stream of such a process (one whose agent has sent a window
// with shapes: the first window's kernels are not held, none being known
// to come) therefore waits here, after linking and before it is aggregated, until
// the window covering its launch arrives: it then takes the work of the
// innermost modelled operator open at its launch on its launching thread
// (opmodel.Model.Assign over the window's calls, the rule a Kineto file
// gets). A kernel launched before the window arriving is in no window
// (between two windows) and goes on unmodelled; one still waiting after
// workHoldNs (no window came: windows off, or the agent behind) too.
// Both clocks are host CLOCK_REALTIME ns by then: the tracer's stream is
// shifted by its hello's clock offset, the window by its
// baseTimeNanoseconds (importTraceFile).
type workHold struct {
	procs map[int32]*workProc
	// holdNs is the longest a kernel waits for its window (wall ns);
	// maxHeld bounds the kernels one process holds (the oldest go on
	// unmodelled past it).
	holdNs  int64
	maxHeld int
	model   *opmodel.Model
	// Counts (tests, the note): kernels given a window's work, kernels
	// released unmodelled (in no window, or waited too long).
	modelled, unmodelled uint64
}

// workHoldNs: a window of the agent's default schedule (2 steps in 10)
// arrives one export after its last step; 10 s covers steps of a few
// seconds while bounding how late the live view shows a kernel.
const workHoldNs = 10e9

type workProc struct {
	windowed bool // the agent sent a window: hold this process's kernels
	held     []heldKernel
	last     *modelWindow    // the newest window, for kernels arriving after it
	tids     map[int32]int32 // the tracer's thread id → the window's (callAt)
}

type heldKernel struct {
	ev      tracer.Event
	tid     int32
	t       int64 // launch point, host ns
	arrival int64 // wall ns
}

// modelWindow is what a window keeps for its kernels: its modelled calls
// (tracer.OpCall with Parent set by nesting on their thread) and their
// intervals per thread, sorted by start, in host ns.
type modelWindow struct {
	strs     *tracer.Strings
	calls    []tracer.OpCall
	from, to int64 // the window's span (its operators), host ns
	threads  map[int32][]callSpan
	span     []callSpan // per call: its interval
	paid     []bool     // per call: its work went to kernels already
	arrival  int64
}

type callSpan struct {
	start, end int64
	call       tracer.CallID
}

func newWorkHold() *workHold {
	return &workHold{procs: map[int32]*workProc{}, holdNs: workHoldNs, maxHeld: 1 << 18, model: opmodel.Default()}
}

// newModelWindow indexes window tr's modelled operator calls; evs are its
// events shifted to host ns (importTraceFile), Call still tr's.
func newModelWindow(tr *tracer.Trace, evs []tracer.Event, arrival int64) *modelWindow {
	if len(tr.Calls) < 2 {
		return nil
	}
	w := &modelWindow{strs: tr.Strings, calls: slices.Clone(tr.Calls), threads: map[int32][]callSpan{}, arrival: arrival}
	w.paid = make([]bool, len(w.calls))
	w.span = make([]callSpan, len(w.calls))
	first := true
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindCPUOp {
			continue
		}
		if first || e.Start < w.from {
			w.from = e.Start
		}
		if first || e.End() > w.to {
			w.to = e.End()
		}
		first = false
		if e.Call == 0 || int(e.Call) >= len(w.calls) {
			continue
		}
		w.span[e.Call] = callSpan{e.Start, e.End(), e.Call}
		w.threads[e.TID] = append(w.threads[e.TID], w.span[e.Call])
	}
	for tid, sp := range w.threads {
		// Outer before inner at one start: nesting by a stack.
		slices.SortStableFunc(sp, func(a, b callSpan) int {
			if a.start != b.start {
				return compare(a.start, b.start)
			}
			return compare(b.end, a.end)
		})
		var stack []callSpan
		for _, s := range sp {
			for len(stack) > 0 && stack[len(stack)-1].end <= s.start {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				w.calls[s.call].Parent = stack[len(stack)-1].call
			}
			stack = append(stack, s)
		}
		w.threads[tid] = sp
	}
	return w
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// covers reports whether launch point t lies in the window's span.
func (w *modelWindow) covers(t int64) bool { return w != nil && t >= w.from && t < w.to }

// callAt returns the innermost modelled call open at t on the window's
// thread for launching thread tid (0: none). The GPU tracer names a
// thread by CUPTI's id (the low 32 bits of pthread_self), Kineto by the
// OS thread id: when tid is none of the window's threads, the thread is
// the one window thread with a modelled call open at t (with several, the
// one whose call started last: the thread that just entered an operator),
// and the pair is remembered in tids for the process's later kernels.
func (w *modelWindow) callAt(tids map[int32]int32, tid int32, t int64) tracer.CallID {
	if _, ok := w.threads[tid]; ok {
		return w.innermost(tid, t)
	}
	if k, ok := tids[tid]; ok {
		return w.innermost(k, t)
	}
	var best tracer.CallID
	var bestTID int32
	var bestStart int64
	n := 0
	for k := range w.threads {
		if c := w.innermost(k, t); c != 0 {
			st := w.start(k, c)
			if n == 0 || st > bestStart {
				best, bestTID, bestStart = c, k, st
			}
			n++
		}
	}
	if n == 1 {
		tids[tid] = bestTID
	}
	return best
}

// start returns call c's start (host ns).
func (w *modelWindow) start(_ int32, c tracer.CallID) int64 { return w.span[c].start }

// innermost returns the innermost modelled call open at t on thread tid
// (0: none).
func (w *modelWindow) innermost(tid int32, t int64) tracer.CallID {
	sp := w.threads[tid]
	i := sort.Search(len(sp), func(i int) bool { return sp[i].start > t }) - 1
	if i < 0 {
		return 0
	}
	// The latest call started by t, else the calls around it.
	for c := sp[i].call; c != 0; c = w.calls[c].Parent {
		if t < w.end(tid, c) {
			return c
		}
	}
	return 0
}

// end returns call c's end (host ns).
func (w *modelWindow) end(_ int32, c tracer.CallID) int64 { return w.span[c].end }

// assign gives ks the work of their calls in w (opmodel.Model.Assign over
// the window's calls): a call's work split over its kernels of this batch
// by duration. A kernel whose call already gave its work to an earlier
// batch is unmodelled (counted once). It returns Assign's warnings.
// names holds the kernels' names (the session's table; the window's holds
// its calls').
func (h *workHold) assign(p *workProc, w *modelWindow, ks []heldKernel, names *tracer.Strings) []string {
	t := &tracer.Trace{Strings: w.strs, Calls: w.calls}
	t.Events = make([]tracer.Event, len(ks))
	for i := range ks {
		e := ks[i].ev
		e.Call = w.callAt(p.tids, ks[i].tid, ks[i].t)
		if e.Call != 0 && w.paid[e.Call] {
			e.Call = 0
		}
		e.Value = 0
		t.Events[i] = e
	}
	st := h.model.Assign(t)
	opmodel.Retype(t.Events, names)
	for i := range ks {
		e := &t.Events[i]
		if c := e.Call; c != 0 {
			for p := c; p != 0; p = w.calls[p].Parent {
				w.paid[p] = true
			}
		}
		if e.Value == 0 {
			e.Value = tracer.PackWork(tracer.Work{})
		}
		ks[i].ev.Value = e.Value
	}
	h.modelled += uint64(st.Modelled + st.Covered)
	h.unmodelled += uint64(len(ks) - st.Modelled - st.Covered)
	return t.Warnings
}

// holdsLocked reports whether GPU kernels of pid wait for windows: its GPU
// tracer and its agent are connected and the agent has sent a window.
func (s *Session) holdsLocked(pid int32) bool {
	p := s.work.procs[pid]
	if p == nil || !p.windowed {
		return false
	}
	var vendor, agent bool
	for _, c := range s.children {
		if !c.info.Connected || c.pid != pid {
			continue
		}
		switch c.info.Hello.Source {
		case "cupti", "rocprof":
			vendor = true
		case "pyagent":
			agent = true
		}
	}
	return vendor && agent
}

// holdKernels takes from evs (linked GPU events) the kernels that wait
// for a window, or takes the newest window's work at once when it covers
// their launch, and returns the events that go on now (s.mu held).
func (s *Session) holdKernels(evs []tracer.Event) []tracer.Event {
	h := s.work
	if len(h.procs) == 0 {
		return evs
	}
	now := s.opts.Now().UnixNano()
	var out []tracer.Event
	var at []heldKernel // kernels a window already here covers
	lastPID, hold := int32(-1), false
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindKernel || e.Value != 0 {
			out = append(out, *e)
			continue
		}
		if e.PID != lastPID {
			lastPID, hold = e.PID, s.holdsLocked(e.PID)
		}
		if !hold {
			out = append(out, *e)
			continue
		}
		tid, t, ok := s.link.launchOf(e)
		if !ok {
			out = append(out, *e) // no launch point: in no window
			continue
		}
		p := h.procs[e.PID]
		k := heldKernel{ev: *e, tid: tid, t: t, arrival: now}
		if p.last.covers(t) {
			at = append(at, k)
			continue
		}
		p.held = append(p.held, k)
		if len(p.held) > h.maxHeld {
			n := len(p.held) - h.maxHeld/2
			out = append(out, s.releaseUnmodelled(p.held[:n])...)
			p.held = slices.Delete(p.held, 0, n)
		}
	}
	if len(at) > 0 {
		// One batch per process: the kernels of a batch come from one
		// tracer's stream, mostly of one process.
		for len(at) > 0 {
			pid := at[0].ev.PID
			n := 0
			for n < len(at) && at[n].ev.PID == pid {
				n++
			}
			s.assignWarn(pid, h.procs[pid].last, at[:n])
			for _, k := range at[:n] {
				out = append(out, k.ev)
			}
			at = at[n:]
		}
	}
	return out
}

func (s *Session) assignWarn(pid int32, w *modelWindow, ks []heldKernel) {
	for _, msg := range s.work.assign(s.work.procs[pid], w, ks, s.strs) {
		s.warnOnce(fmt.Sprintf("child pid %d: torch.profiler window: %s", pid, msg))
	}
}

// releaseUnmodelled marks ks unmodelled (launched in no window that came)
// and returns their events.
func (s *Session) releaseUnmodelled(ks []heldKernel) []tracer.Event {
	out := make([]tracer.Event, len(ks))
	for i := range ks {
		out[i] = ks[i].ev
		out[i].Value = tracer.PackWork(tracer.Work{})
	}
	s.work.unmodelled += uint64(len(ks))
	return out
}

// windowArrived gives process pid's waiting kernels launched inside window
// w its work, lets those launched before it go on unmodelled and keeps
// those launched after it waiting (s.mu held).
func (s *Session) windowArrived(pid int32, w *modelWindow) {
	h := s.work
	p := h.procs[pid]
	if p == nil {
		p = &workProc{tids: map[int32]int32{}}
		h.procs[pid] = p
	}
	// A window without shapes (RLKTOP_KINETO_SHAPES=0) has nothing to
	// model against: kernels stop waiting for windows until one has.
	p.windowed = w != nil
	if w == nil {
		s.deliver(s.releaseUnmodelled(p.held))
		p.held = p.held[:0]
		p.last = nil
		return
	}
	p.last = w
	var in, before []heldKernel
	keep := p.held[:0]
	for _, k := range p.held {
		switch {
		case k.t < w.from:
			before = append(before, k)
		case k.t < w.to:
			in = append(in, k)
		default:
			keep = append(keep, k)
		}
	}
	p.held = keep
	out := s.releaseUnmodelled(before)
	if len(in) > 0 {
		s.assignWarn(pid, w, in)
		for _, k := range in {
			out = append(out, k.ev)
		}
	}
	s.deliver(out)
}

// expireWork lets kernels that waited longer than holdNs go on
// unmodelled, and forgets windows older than that (s.mu held).
func (s *Session) expireWork(now int64) {
	for _, p := range s.work.procs {
		if p.last != nil && now-p.last.arrival >= s.work.holdNs {
			p.last = nil
		}
		n := 0
		for n < len(p.held) && now-p.held[n].arrival >= s.work.holdNs {
			n++
		}
		if n > 0 {
			s.deliver(s.releaseUnmodelled(p.held[:n]))
			p.held = slices.Delete(p.held, 0, n)
		}
	}
}

// releaseWork lets every kernel of pid (0: all) go on unmodelled: its
// agent or tracer is gone, no window will come (s.mu held).
func (s *Session) releaseWork(pid int32) {
	for k, p := range s.work.procs {
		if pid != 0 && k != pid {
			continue
		}
		if len(p.held) > 0 {
			s.deliver(s.releaseUnmodelled(p.held))
		}
		p.held, p.last = nil, nil
	}
}
