// Package session is rlktop's live session: it accepts connections from
// traced processes speaking tracer/wire, decodes their frames, maps each
// sender's string ids into one tracer.Strings, links GPU work to its launch
// context incrementally, aggregates with tracer/attrib (cumulatively and
// over a recent window), collects step times, drop counts and the children's
// hellos, and answers Snapshot at any time with an immutable State. It also
// sends Control frames to the children and tees what it receives to a
// recording.
//
// All methods are safe for concurrent use; the TUI polls Snapshot at about
// 10 Hz.
//
// Typical use (what cmd/rlktop and loop wire up):
//
//	sess := session.New(session.Options{Rules: rules, Source: "live: " + cmd})
//	addr, err := sess.Listen()        // child env: RLKTOP_SOCKET=addr
//	...start the child...
//	st := sess.Snapshot()             // ~10 Hz: st.Cumulative, st.Recent, st.Steps, st.Children
//	sess.Control("attention", "fused") // applied by the child at its next step; ack → st.Marks
//	sess.Record(f)                    // tee to a recording; sess.StopRecording()
//	sess.Meta(runRecord)              // run record into recordings
//	sess.AddCounters(samples)         // rlktop's own telemetry (names via sess.Intern)
//	sess.Close()
//
// Launch linking. Tracers send an interval when it ends, so the ranges
// around a kernel arrive after it. A GPU event is held per launching thread
// (the thread of the Runtime/Driver call with its correlation id, or its
// own TID when it has one) until a step on that thread has ended after its
// launch point; then it is linked exactly as tracer.Trace.Link would link
// it. Threads that send no steps are linked after Options.LinkDelay (2 s),
// and everything pending is linked when its process disconnects. GPU
// records arriving after their step (CUPTI delivers in buffers) are linked
// at once against the ranges kept (the last 30 s of each thread).
package session

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Options configure a Session. The zero value is usable.
type Options struct {
	// Rules classify kernels (nil: attrib.DefaultRules()).
	Rules *attrib.Rules
	// Peak, when set, gives each snapshot that carries modelled work its
	// device limits (Snapshot.Peak, PeakNote), for the roofline.
	Peak func(*attrib.Snapshot)
	// Source is shown as the snapshots' Source ("live: <command>").
	Source string
	// RecentNs is the span of the "current window" aggregate, ns of trace
	// time back from the newest event (default 5 s).
	RecentNs int64
	// RecentMaxEvents bounds the GPU events kept for the window (default
	// 1<<18, about 20 MB); beyond it the oldest leave early. Each Snapshot
	// that rebuilds the window aggregates them afresh.
	RecentMaxEvents int
	// LinkDelay is how long a GPU event may wait for the step that encloses
	// its launch before it is attributed with what is known (default 2 s).
	LinkDelay time.Duration
	// MaxSteps bounds the step times kept for the sparkline (default 4096).
	MaxSteps int
	// StepCap bounds the steps the cumulative snapshot lists, the newest
	// (attrib.Aggregator.SetStepCap; default 1<<14, 27 minutes at 10
	// steps a second; -1 lists all): a snapshot copies each, and a run
	// lasts days.
	StepCap int
	// PercentileCap bounds the durations the cumulative aggregate keeps per
	// kernel for percentiles (attrib.Aggregator.SetPercentileCap; default
	// 1<<16; beyond it percentiles are approximate); -1 keeps all.
	PercentileCap int
	// BusySealNs lets the cumulative busy-time union forget its shape more
	// than this before the newest GPU op (attrib.Aggregator.SetBusySeal;
	// default 60 s, longer than CUPTI's buffer delays); -1 keeps all.
	BusySealNs int64
	// TimelineOps bounds the GPU ops State.Timeline keeps (default 1<<15,
	// the newest kept). It is rebuilt with the window (at most every
	// 200 ms): about 12 ms of CPU for 32,768 ops (attrib
	// BenchmarkBuildTimeline, CPU profile on the 2-core dev box).
	TimelineOps int
	// MaxNamesPerConn bounds the names (string-table entries) one
	// connection may define (default 1<<20, or SetDefaultLimits);
	// MaxNameBytesPerConn their bytes (default 64 MiB). A connection past either is closed with an
	// error saying so (State.Children[i].Err, shown by run and the TUI).
	MaxNamesPerConn     int
	MaxNameBytesPerConn int64
	// MaxConns bounds the connections served at once (default 1024, or
	// SetDefaultLimits); more are closed at once, with one warning.
	MaxConns int
	// Now returns the wall clock (tests); default time.Now.
	Now func() time.Time
}

// Session is a live session. Create with New; feed with Serve, Listen or
// AddConn; read with Snapshot.
//
// Its state, each fact kept once: the names (strs) and the linker's
// contexts they index; the cumulative aggregate (cum); the window's events
// and what was built from them (recent, recent.go); the processes' steps
// (steps, steps.go); the connections (children, conn.go) with their
// hellos, flags and drops; flag marks and refusals; the latest counter
// samples and the agent's outputs; the recording (record.go). Everything
// is guarded by mu but the built part of recent and the cached State,
// which Snapshot builds under snapMu.
type Session struct {
	opts Options

	mu       sync.Mutex
	strs     *tracer.Strings
	link     *linker
	cum      *attrib.Aggregator
	recent   recent
	steps    stepTable
	marks    []livestate.Mark
	refusals []livestate.Refusal
	children []*conn
	// connected counts the children served now; connsFull is set once
	// MaxConns was reached (one warning).
	connected int
	connsFull bool
	events    uint64
	warnings  []string
	seq       uint64
	sent      map[uint64]msg.Control // commands awaiting acks
	rec       *recorder
	meta      []msg.KV
	counters  map[counterKey]tracer.Counter // latest sample per track
	outputs   agentSamples
	version   uint64 // bumped on every change
	// refusedSeen: the --listen refusals the last Snapshot saw.
	refusedSeen uint64
	peakSaid    bool      // the measured peak is in the run record (recordPeak)
	windows     int       // trace files (agent windows) merged
	work        *workHold // kernels of a GPU tracer waiting for their window's work (work.go)
	mem         memState  // allocations and frees (memory.go)
	py          *pyKeep   // Python stack samples (pysamples.go)
	// ctxKept: the linker's contexts left by the last renewContexts
	// (renewals counts them, for tests).
	ctxKept, renewals int

	snapMu   sync.Mutex // Snapshot runs one at a time, mostly outside mu
	cache    *livestate.State
	cacheVer uint64

	servers []*wire.Server
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  bool
}

// New returns a session; it starts a goroutine for delayed linking, stopped
// by Close.
func New(opts Options) *Session {
	if opts.RecentNs <= 0 {
		opts.RecentNs = 5e9
	}
	if opts.RecentMaxEvents <= 0 {
		opts.RecentMaxEvents = 1 << 18
	}
	if opts.LinkDelay <= 0 {
		opts.LinkDelay = 2 * time.Second
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 4096
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PercentileCap == 0 {
		opts.PercentileCap = 1 << 16
	}
	lim := DefaultLimits() // built-in, or SetDefaultLimits (the command-line flags)
	if opts.MaxNamesPerConn <= 0 {
		opts.MaxNamesPerConn = lim.MaxNamesPerConn
	}
	if opts.MaxNameBytesPerConn <= 0 {
		opts.MaxNameBytesPerConn = lim.MaxNameBytesPerConn
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = lim.MaxConns
	}
	if opts.TimelineOps <= 0 {
		opts.TimelineOps = 1 << 15
	}
	if opts.BusySealNs == 0 {
		opts.BusySealNs = 60e9
	}
	if opts.StepCap == 0 {
		opts.StepCap = 1 << 14
	}
	s := &Session{
		opts:  opts,
		strs:  tracer.NewStrings(),
		steps: stepTable{keep: opts.MaxSteps},
		sent:  map[uint64]msg.Control{},
		stop:  make(chan struct{}),
	}
	s.cum = attrib.NewAggregator(opts.Rules)
	s.cum.SetSource(opts.Source, "rlktop")
	// A live session runs for hours: bound the cumulative aggregate's memory.
	s.cum.SetPercentileCap(max(opts.PercentileCap, 0))
	s.cum.SetBusySeal(max(opts.BusySealNs, 0))
	s.cum.SetStepCap(opts.StepCap)
	s.work = newWorkHold()
	s.link = newLinker(s.strs, s.resolved)
	s.wg.Add(1)
	go s.ticker()
	return s
}

func (s *Session) ticker() {
	defer s.wg.Done()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			now := s.opts.Now().UnixNano()
			s.link.tick(now, int64(s.opts.LinkDelay))
			s.expireWork(now)
			s.renewContexts()
			s.mu.Unlock()
		}
	}
}

// resolved receives a batch of linked GPU events from the linker (s.mu
// held); kernels that wait for a window's work (work.go) go on later.
func (s *Session) resolved(evs []tracer.Event) {
	if evs = s.holdKernels(evs); len(evs) > 0 {
		s.deliver(evs)
	}
}

// deliver aggregates linked GPU events (s.mu held).
func (s *Session) deliver(evs []tracer.Event) {
	if len(evs) == 0 {
		return
	}
	s.cum.AddEvents(evs, s.strs, s.link.contexts)
	ctxs := s.link.contexts
	for i := range evs {
		if c := evs[i].Ctx; c != 0 && int(c) < len(ctxs) {
			s.steps.addGPU(&evs[i], ctxs[c].Step)
		}
	}
	s.recent.addGPU(evs, &s.opts)
	s.version++
}

// renewContextsAt is the least number of launch contexts after which a
// session starts its contexts afresh (renewContexts): a context carries
// its step, so a live session interns a few per step, for hours. A heap
// profile of the loop-shape stream at 183,001 contexts had about 180 B
// each across the linker and the aggregator: about 6 MB at this bound.
const renewContextsAt = 1 << 15

// renewContexts starts the linker's contexts afresh once they are many
// (renewContextsAt, and twice those kept at the previous renewal), keeping
// those of the events the session still holds (the window, kernels waiting
// for their work), so that a session's memory does not grow with its
// length. The cumulative aggregate adds its open cells first and forgets
// what it worked out per context (attrib.Aggregator.NewContexts); it keys
// what it keeps by names, stages and steps, not by context. Call between
// batches (s.mu held): a batch's events carry IDs of one generation.
func (s *Session) renewContexts() {
	n := len(s.link.core.Contexts)
	if n < renewContextsAt || n < 2*s.ctxKept {
		return
	}
	s.cum.NewContexts(s.strs)
	remap := s.link.renewContexts()
	fix := func(evs []tracer.Event) {
		for i := range evs {
			evs[i].Ctx = remap(evs[i].Ctx)
		}
	}
	s.recent.gpu.each(fix)
	for _, p := range s.work.procs {
		for i := range p.held {
			p.held[i].ev.Ctx = remap(p.held[i].ev.Ctx)
		}
	}
	s.link.refreshContexts()
	s.ctxKept = len(s.link.contexts)
	s.renewals++
}

// ingest records, links and aggregates a batch whose names are the
// session's and whose times are host ns (s.mu held).
func (s *Session) ingest(c *conn, evs []tracer.Event) {
	now := s.opts.Now().UnixNano()
	if s.rec != nil {
		s.rec.events(evs)
	}
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case tracer.KindStep:
			s.cum.Add(e, s.strs, s.link.contexts)
			s.recent.addGPU(evs[i:i+1], &s.opts)
			s.steps.addStep(e)
		case tracer.KindRange, tracer.KindRuntime, tracer.KindDriver:
			s.recent.addCPU(e, &s.opts)
		}
		s.link.add(e, now)
	}
	s.link.endBatch()
	s.resolveMemory(-1, false) // memory.go
	s.renewContexts()
	c.info.Events += uint64(len(evs))
	s.events += uint64(len(evs))
	s.version++
}

// recordPeak puts a measured peak (a CPU's, measured on this machine)
// into the run record once, so that recordings carry the peak their run
// was read against (attrib.PeakFromMeta); a datasheet peak needs none.
func (s *Session) recordPeak(p *attrib.Peak) {
	if p == nil || !p.Measured {
		return
	}
	s.mu.Lock()
	said := s.peakSaid
	s.peakSaid = true
	s.mu.Unlock()
	if said {
		return
	}
	s.Meta(msg.SortedKVs(p.Meta()))
}

func (s *Session) warn(msg string) {
	if len(s.warnings) < 100 {
		s.warnings = append(s.warnings, msg)
	}
}

func (s *Session) droppedLocked() uint64 {
	var d uint64
	for _, c := range s.children {
		d += c.info.Drops.Events
	}
	return d
}

// Snapshot returns the session's state. Cheap when nothing changed since
// the previous call. Otherwise it snapshots the cumulative aggregate and
// copies what the rest is made of under the session lock (snapshotLocked),
// then rebuilds the window outside the lock, at most every 200 ms (in
// between, the previous window is returned and the next call rebuilds
// it). Snapshots are serialised.
func (s *Session) Snapshot() *livestate.State {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.mu.Lock()
	var refused uint64
	for _, srv := range s.servers {
		refused += srv.AuthStats().Refused()
	}
	if refused != s.refusedSeen {
		// Counted by the listener, not under mu: a new refusal is news.
		s.refusedSeen = refused
		s.version++
	}
	if s.cache != nil && s.cacheVer == s.version && s.recent.builtVer == s.version {
		s.mu.Unlock()
		return s.cache
	}
	now := s.opts.Now()
	ver := s.version
	st, in := s.snapshotLocked(now)
	s.mu.Unlock()

	st.Outputs = in.outputs.summary(st.Steps)
	if in.memNew {
		m := attrib.BuildMemory(in.memRecs, in.memSteps)
		s.mu.Lock()
		s.mem.model, s.mem.builtAt = m, in.memVer
		s.mu.Unlock()
	}
	if in.rebuild {
		s.build(in.window, st.Dropped, now)
		s.mu.Lock()
		s.recent.builtVer = ver
		s.mu.Unlock()
	}
	w := &s.recent
	st.Recent, st.Timeline = w.snap, w.timeline
	st.Cumulative.Python = in.cumPy
	if st.Recent != nil && st.Recent.Python != in.winPy {
		w := *st.Recent // shared with earlier States
		w.Python = in.winPy
		st.Recent = &w
	}
	if m := s.memModel(); m != nil {
		st.Cumulative.Memory = m
		if st.Recent != nil {
			w := *st.Recent // shared with earlier States
			w.Memory = m
			st.Recent = &w
		}
	}
	// Several processes: each one's numbers over the window, its steps
	// counted over the whole run (wholeRun), and its step rows apart (the
	// aggregate would merge the ranks' step N), numbered as Ranks numbers
	// them.
	st.Cumulative.Ranks = w.ranks
	if in.gpu != nil {
		st.Cumulative.Ranks = wholeRun(w.ranks, w.rankPIDs, in.runs, st.Steps)
		st.Cumulative.Steps = procStepRows(st.Steps, in.gpu, w.rankPIDs, in.window.procs, w.ranks)
	}
	if p := s.opts.Peak; p != nil {
		p(st.Cumulative)
		s.recordPeak(st.Cumulative.Peak)
		if st.Recent != nil && st.Recent.HasWork() {
			w := *st.Recent // shared with earlier States
			p(&w)
			st.Recent = &w
		}
	}
	if len(st.Warnings) > 0 {
		// The session's own warnings (the agent's, its windows' imports,
		// --listen refusals) travel with the snapshots every view and
		// report reads: the TUI's W list, run --headless's report.
		st.Cumulative.Warnings = append(slices.Clip(st.Cumulative.Warnings), st.Warnings...)
		if st.Recent != nil {
			w := *st.Recent
			w.Warnings = append(slices.Clip(w.Warnings), st.Warnings...)
			st.Recent = &w
		}
	}
	s.cache, s.cacheVer = st, ver
	return st
}

// snapInput is what Snapshot reads under the session lock beside the
// State it starts: whether and from what to rebuild the window, the
// agent's outputs, and for several processes their GPU work per step and
// whole runs.
type snapInput struct {
	rebuild bool
	window  windowInput
	outputs agentSamples
	gpu     map[stepKey]stepSums
	runs    map[int32]procRun
	// The memory model's input when it is to be rebuilt (memNew): the
	// records and step windows, and the version they are.
	memRecs  []attrib.MemRecord
	memSteps []attrib.MemStepWindow
	memNew   bool
	memVer   uint64
	// The Python profiles of the whole run and of the window.
	cumPy, winPy *attrib.PyProfile
}

// snapshotLocked starts the State from the cumulative aggregate and
// copies of the session's plain state, and copies what the rest needs
// (s.mu and s.snapMu held).
func (s *Session) snapshotLocked(now time.Time) (*livestate.State, snapInput) {
	var procs []rankProc
	var devs []tracer.Device // the devices the children's hellos describe
	var children []livestate.Child
	for _, c := range s.children {
		ci := c.info
		procs = append(procs, rankProc{pid: int32(ci.Hello.PID), rank: int(ci.Hello.Rank), world: int(ci.Hello.World)})
		for _, d := range ci.Hello.Devices {
			if !slices.ContainsFunc(devs, func(x tracer.Device) bool { return x.ID == d.ID }) {
				devs = append(devs, d)
			}
		}
		ci.Flags = slices.Clone(ci.Flags)
		ci.Meta = slices.Clone(ci.Meta)
		if ci.Bye != nil {
			y := *ci.Bye
			ci.Bye = &y
		}
		children = append(children, ci)
	}
	dropped := s.droppedLocked()
	s.cum.SetLive(devs, dropped)
	st := &livestate.State{
		Cumulative: s.cum.Snapshot(),
		RecentNs:   s.opts.RecentNs,
		StepCount:  s.steps.count,
		Steps:      s.steps.recent(),
		Marks:      slices.Clone(s.marks),
		Refusals:   slices.Clone(s.refusals),
		Dropped:    dropped,
		Events:     s.events,
		Warnings:   slices.Clone(s.warnings),
		Children:   children,
		Pending:    s.link.pending(),
		Counters:   s.counterValues(),
	}
	st.StepsPerSec = stepsPerSec(st.Steps, s.opts.RecentNs)
	if n := s.link.lateCount; n > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d GPU events arrived after the ranges around their launch were forgotten; their stage may be missing", n))
	}
	if n := s.link.early; n > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d GPU events were linked before their step ended (too many waiting on one thread); their stage may be missing", n))
	}
	for _, srv := range s.servers {
		if a := srv.AuthStats(); a.Refused() > 0 {
			st.Warnings = append(st.Warnings, fmt.Sprintf("--listen %s: %d connections refused (%d with a wrong token or handshake, %d sent no token within %v, %d evicted by newer ones past %d pending, %d from one address); %d authenticated",
				srv.ListenAddr(), a.Refused(), a.BadToken, a.TimedOut, wire.AuthTimeout, a.Evicted, wire.MaxPendingAuth, wire.MaxPendingPerPeer, a.Accepted))
		}
	}
	if s.rec != nil {
		ri := s.rec.info()
		st.Recording = &ri
	}
	in := snapInput{outputs: s.outputs.frozen()}
	in.gpu, in.runs = s.steps.perProcess()
	in.memRecs, in.memSteps, in.memNew = s.memoryInput()
	in.memVer = s.mem.ver
	if w := s.mem.warning(); w != "" {
		st.Warnings = append(st.Warnings, w)
	}
	in.cumPy, in.winPy = s.pyProfiles()
	w := &s.recent
	in.rebuild = w.snap == nil || w.stale || (w.builtVer != s.version && now.Sub(w.at) >= minRecentRebuild)
	w.stale = false
	in.window.procs = procs
	if in.rebuild {
		in.window = s.copyForBuild(procs, devs)
	}
	return st, in
}

// counterValues is the latest sample of each counter track, by name then
// device (s.mu held).
func (s *Session) counterValues() []livestate.CounterValue {
	var out []livestate.CounterValue
	for _, c := range s.counters {
		out = append(out, livestate.CounterValue{Name: s.strs.Get(c.Name), Device: c.Device, TS: c.TS, Value: c.Value})
	}
	slices.SortFunc(out, func(a, b livestate.CounterValue) int {
		if a.Name != b.Name {
			return strings.Compare(a.Name, b.Name)
		}
		return int(a.Device) - int(b.Device)
	})
	return out
}

// stepsPerSec: the steps of the newest step's process that ended within
// windowNs of its end (at least two), over the time from the first of them
// starting to the newest ending. One process only, so that ranks stepping
// together do not add up.
func stepsPerSec(steps []livestate.StepTime, windowNs int64) float64 {
	if len(steps) < 2 {
		return 0
	}
	last := steps[len(steps)-1]
	end := last.StartNs + last.DurNs
	n, first := 0, last.StartNs
	for i := len(steps) - 1; i >= 0; i-- {
		st := steps[i]
		if st.PID != last.PID {
			continue
		}
		if n >= 2 && st.StartNs+st.DurNs < end-windowNs {
			break
		}
		n++
		first = min(first, st.StartNs)
	}
	if n < 2 || end <= first {
		return 0
	}
	return float64(n) / (float64(end-first) / 1e9)
}

// Strings returns the session's string table. The caller must not use it
// concurrently with a running session; for tests and after Close.
func (s *Session) Strings() *tracer.Strings { return s.strs }

// Close stops serving, closes every connection and the servers, stops a
// recording (writing its Bye) and waits for the goroutines.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	servers := s.servers
	var conns []io.Closer
	for _, c := range s.children {
		conns = append(conns, c.rw)
	}
	s.mu.Unlock()
	for _, srv := range servers {
		srv.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	_, err := s.StopRecording()
	if errors.Is(err, ErrNotRecording) {
		err = nil
	}
	return err
}

type counterKey struct {
	name tracer.StrID
	dev  int32
}

// Intern returns the session's id for name, for counters passed to
// AddCounters.
func (s *Session) Intern(name string) tracer.StrID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.strs.Intern(name)
}

// AddCounters adds samples taken by rlktop itself (GPU telemetry, the
// child's CPU and RSS): TS in host CLOCK_REALTIME ns, Name from Intern.
// They show in State.Counters (latest per track) and go into the
// recording as Counters frames.
func (s *Session) AddCounters(cs []tracer.Counter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addCounters(cs)
	s.version++
}

func (s *Session) addCounters(cs []tracer.Counter) {
	if s.counters == nil {
		s.counters = map[counterKey]tracer.Counter{}
	}
	for _, c := range cs {
		k := counterKey{c.Name, c.Device}
		if old, ok := s.counters[k]; !ok || c.TS >= old.TS {
			s.counters[k] = c
		}
		if name := s.strs.Get(c.Name); isAgentOutput(name) {
			s.outputs.add(c, name)
		}
	}
	if s.rec != nil {
		s.rec.counters(cs)
	}
}

// Reset forgets the aggregates, the window, the step times and the marks
// (for example when a restarted child numbers its steps from 0 again).
// Children, drop counts, the string table and pending links are kept.
func (s *Session) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cum.Reset()
	s.cum.SetSource(s.opts.Source, "rlktop")
	s.recent.forget()
	s.steps.reset()
	s.marks = nil
	s.outputs = agentSamples{}
	s.mem = memState{}
	s.resetPy()
	s.version++
}

// agentSamples are the Python agent's per-step output samples (metrics,
// NaN checks, torch.compile frames, input wait: isAgentOutput), the newest
// maxAgentSamples, for State.Outputs. Their names are ids of their own
// table (a handful), so that Snapshot summarises them outside s.mu from a
// frozen copy: a prefix of the samples (elements below len are never
// written again: trimming makes a new array) and of the names.
type agentSamples struct {
	samples []tracer.Counter
	strs    *tracer.Strings
}

// add keeps sample c of track name (s.mu held).
func (a *agentSamples) add(c tracer.Counter, name string) {
	if len(a.samples) >= maxAgentSamples {
		a.samples = slices.Clone(a.samples[len(a.samples)-maxAgentSamples/2:])
	}
	if a.strs == nil {
		a.strs = tracer.NewStrings()
	}
	c.Name = a.strs.Intern(name)
	a.samples = append(a.samples, c)
}

// frozen is a copy of a that a's later adds leave unchanged (s.mu held).
func (a *agentSamples) frozen() agentSamples {
	if len(a.samples) == 0 {
		return agentSamples{}
	}
	return agentSamples{samples: a.samples[:len(a.samples):len(a.samples)], strs: a.strs.Frozen()}
}

// summary is the samples summarised over steps (attrib.Outputs of the
// steps as step events and the samples); nil without either.
func (a agentSamples) summary(steps []livestate.StepTime) []attrib.OutputRow {
	if len(a.samples) == 0 || len(steps) == 0 {
		return nil
	}
	t := &tracer.Trace{Strings: a.strs, Counters: a.samples, Events: make([]tracer.Event, 0, len(steps))}
	for _, st := range steps {
		t.Events = append(t.Events, tracer.Event{Kind: tracer.KindStep, Value: st.Step, PID: st.PID, Start: st.StartNs, Dur: st.DurNs})
	}
	return attrib.Outputs(t)
}

// maxAgentSamples bounds the agent output samples a session keeps (about
// 24 B each; a few per step: 64 Ki samples cover thousands of steps).
const maxAgentSamples = 1 << 16

// isAgentOutput reports whether a counter track is one of the Python
// agent's per-step outputs that attrib.Outputs summarises ("metric.NAME",
// "check.NAME.rows", attrib.CompileFramesCounter, attrib.InputWaitCounter).
func isAgentOutput(name string) bool {
	return strings.HasPrefix(name, "metric.") || (strings.HasPrefix(name, "check.") && strings.HasSuffix(name, ".rows")) ||
		name == attrib.CompileFramesCounter || name == attrib.InputWaitCounter || strings.HasPrefix(name, attrib.MemoryCounterPrefix)
}
