package session

import (
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// recent is the session's window: the events of the last Options.RecentNs
// (at most RecentMaxEvents of each kind, the oldest leaving first) and
// what was last built from them — State.Recent, State.Timeline and the
// ranks of several processes. The events change under Session.mu; the
// built part is rebuilt outside it, under Session.snapMu, from a copy.
type recent struct {
	// Under Session.mu.
	gpu    deque // linked GPU events and steps, arrival order
	cpu    deque // CPU ranges and launch calls (the timeline)
	newest int64 // latest end of a GPU event or step, ns
	// builtVer is the session version the built part is of; stale forces
	// a rebuild at the next Snapshot (Reset, a connection ended, a hello).
	builtVer uint64
	stale    bool

	// Under Session.snapMu.
	at       time.Time // when the built part was built
	buf      []tracer.Event
	snap     *attrib.Snapshot
	timeline *attrib.Timeline
	ranks    *attrib.RankSummary // per process (ranks.go); nil for one
	rankPIDs []int32             // the processes of ranks, in its source order
}

// minRecentRebuild is the least time between two rebuilds of the window
// (it is aggregated afresh from the kept events, outside the session
// lock).
const minRecentRebuild = 200 * time.Millisecond

// addGPU keeps linked GPU events and steps, dropping from the front what
// left the window (s.mu held).
func (w *recent) addGPU(evs []tracer.Event, o *Options) {
	for i := range evs {
		if end := evs[i].End(); end > w.newest {
			w.newest = end
		}
	}
	w.gpu.pushAll(evs)
	// Dropped a chunk at a time: this runs for every linked GPU event.
	cut := w.newest - o.RecentNs
	for {
		c := w.gpu.firstChunk()
		over := w.gpu.len() - o.RecentMaxEvents
		k := 0
		for k < len(c) && (k < over || c[k].Start < cut) {
			k++
		}
		if k == 0 {
			return
		}
		w.gpu.dropFront(k)
		if k < len(c) {
			return
		}
	}
}

// addCPU keeps a CPU range or launch call for the timeline, as long as GPU
// events are kept (s.mu held).
func (w *recent) addCPU(e *tracer.Event, o *Options) {
	w.cpu.push(e)
	for w.cpu.len() > 0 && (w.cpu.len() > o.RecentMaxEvents || w.cpu.front().End() < w.newest-o.RecentNs) {
		w.cpu.popFront()
	}
}

// forget drops the events kept (Session.Reset; s.mu held).
func (w *recent) forget() {
	w.gpu, w.cpu, w.newest, w.stale = deque{}, deque{}, 0, true
}

// windowInput is what a rebuild reads, copied under s.mu: the events into
// buf (GPU events and steps, then CPU ranges and launch calls), a view of
// the names and contexts (both append-only: existing entries never
// change), the processes and the devices their hellos describe.
type windowInput struct {
	gpuN  int
	strs  *tracer.Strings
	ctxs  []tracer.Context
	procs []rankProc
	devs  []tracer.Device
}

// copyForBuild fills w.buf and returns the rest of a rebuild's input
// (s.mu and s.snapMu held).
func (s *Session) copyForBuild(procs []rankProc, devs []tracer.Device) windowInput {
	w := &s.recent
	w.buf = w.buf[:0]
	w.gpu.each(func(evs []tracer.Event) { w.buf = append(w.buf, evs...) })
	in := windowInput{gpuN: len(w.buf), strs: s.strs.Frozen(), procs: procs, devs: devs}
	w.cpu.each(func(evs []tracer.Event) { w.buf = append(w.buf, evs...) })
	in.ctxs = s.link.contexts[:len(s.link.contexts):len(s.link.contexts)]
	return in
}

// build aggregates the window from w.buf (s.snapMu held, s.mu not): its
// snapshot (each process's steps apart when several sent events), its
// timeline and the ranks of several processes.
func (s *Session) build(in windowInput, dropped uint64, now time.Time) {
	w := &s.recent
	a := attrib.NewAggregator(s.opts.Rules)
	a.SetSource(s.opts.Source, "rlktop")
	a.SetLive(in.devs, dropped)
	a.AddEvents(w.buf[:in.gpuN], in.strs, in.ctxs)
	snap := a.Snapshot()
	var steps []attrib.StepRow
	w.ranks, steps, w.rankPIDs = liveRanks(w.buf, in.strs, in.ctxs, in.procs, s.opts.Rules)
	snap.Ranks = w.ranks
	if w.ranks != nil {
		snap.Steps = steps // each process's steps apart
	}
	w.snap = snap
	w.timeline = attrib.BuildTimeline(w.buf, in.strs, in.ctxs, s.opts.Rules, s.opts.TimelineOps)
	w.at = now
}
