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
//	st := sess.Snapshot()             // ~10 Hz: st.Cumulative, st.Window, st.Steps, st.Children
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
	"github.com/rlktop/rlktop/tracer/wire"
)

// Options configure a Session. The zero value is usable.
type Options struct {
	// Rules classify kernels (nil: attrib.DefaultRules()).
	Rules *attrib.Rules
	// Source is shown as the snapshots' Source ("live: <command>").
	Source string
	// WindowNs is the span of the "current window" aggregate, ns of trace
	// time back from the newest event (default 5 s).
	WindowNs int64
	// WindowMaxEvents bounds the GPU events kept for the window (default
	// 1<<18, about 20 MB); beyond it the oldest leave early. Each Snapshot
	// that rebuilds the window aggregates them afresh.
	WindowMaxEvents int
	// LinkDelay is how long a GPU event may wait for the step that encloses
	// its launch before it is attributed with what is known (default 2 s).
	LinkDelay time.Duration
	// MaxSteps bounds the step times kept for the sparkline (default 4096).
	MaxSteps int
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
type Session struct {
	opts Options

	mu     sync.Mutex
	strs   *tracer.Strings
	link   *linker
	cum    *attrib.Aggregator
	win    deque // resolved GPU events and steps, arrival order
	cpuWin deque // CPU ranges and launch calls of the window (timeline)
	newest int64
	steps  []StepTime
	stepN  int64
	// procGPU is each process's GPU work per step (ranks.go addProcGPU),
	// for the cumulative step rows of several ranks; lastKey/lastSums
	// cache the entry of the previous op.
	procGPU  map[stepKey]*stepSums
	lastKey  stepKey
	lastSums *stepSums
	// onePID is the first process that sent a step or GPU op; multiPID
	// is set once another did (only then are per-process rows built).
	onePID   int32
	pidSeen  bool
	multiPID bool
	// runs counts each process's steps since the start (ranks.go).
	runs     map[int32]*procRun
	marks    []Mark
	refusals []Refusal
	children []*conn
	// connected counts the children served now; connsFull is set once
	// MaxConns was reached (one warning).
	connected int
	connsFull bool

	events   uint64
	warnings []string
	seq      uint64
	sent     map[uint64]wire.Control // commands awaiting acks
	rec      *recorder
	meta     []wire.KV
	counters map[counterKey]tracer.Counter // latest sample per track
	// agent holds the Python agent's per-step output samples (metrics,
	// NaN checks, torch.compile frames, input wait: isAgentOutput), the
	// newest maxAgentSamples, for State.Outputs; their names are ids of
	// agentStrs (a handful), so Snapshot summarises them outside mu from
	// a copy of that table and a prefix of agent (elements below len are
	// never written again: trimming makes a new array).
	agent     []tracer.Counter
	agentStrs *tracer.Strings
	py        *pyKeep // Python stack samples (pysamples.go)
	windows   int     // trace files (agent windows) merged
	version   uint64  // bumped on every change
	winVer    uint64  // version the window snapshot was built at
	forceWin  bool    // rebuild the window at the next Snapshot (Reset)

	// Guarded by snapMu (Snapshot runs one at a time, mostly outside mu).
	snapMu   sync.Mutex
	cache    *State
	cacheVer uint64
	winSnap  *attrib.Snapshot
	winAt    time.Time
	winBuf   []tracer.Event
	tlSnap   *attrib.Timeline
	ranks    *attrib.RankSummary // per process, of the window (ranks.go)
	rankPIDs []int32             // the processes of ranks, in its source order

	servers []*wire.Server
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  bool
}

// New returns a session; it starts a goroutine for delayed linking, stopped
// by Close.
func New(opts Options) *Session {
	if opts.WindowNs <= 0 {
		opts.WindowNs = 5e9
	}
	if opts.WindowMaxEvents <= 0 {
		opts.WindowMaxEvents = 1 << 18
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
	s := &Session{
		opts: opts,
		strs: tracer.NewStrings(),
		sent: map[uint64]wire.Control{},
		stop: make(chan struct{}),
	}
	s.cum = attrib.NewAggregator(opts.Rules)
	s.cum.SetSource(opts.Source, "rlktop")
	// A live session runs for hours: bound the cumulative aggregate's memory.
	s.cum.SetPercentileCap(max(opts.PercentileCap, 0))
	s.cum.SetBusySeal(max(opts.BusySealNs, 0))
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
			s.link.tick(s.opts.Now().UnixNano(), int64(s.opts.LinkDelay))
			s.mu.Unlock()
		}
	}
}

// resolved receives linked GPU events from the linker (s.mu held).
func (s *Session) resolved(e *tracer.Event) {
	s.cum.Add(e, s.strs, s.link.contexts)
	s.addProcGPU(e)
	s.addWindow(e)
	s.version++
}

func (s *Session) addWindow(e *tracer.Event) {
	s.win.push(e)
	if end := e.End(); end > s.newest {
		s.newest = end
	}
	// Drop from the front what left the window.
	for s.win.len() > 0 && (s.win.len() > s.opts.WindowMaxEvents || s.win.front().Start < s.newest-s.opts.WindowNs) {
		s.win.popFront()
	}
}

// addCPUWindow keeps a CPU range or launch call for the timeline, as long
// as GPU events are kept for the window (s.mu held).
func (s *Session) addCPUWindow(e *tracer.Event) {
	s.cpuWin.push(e)
	for s.cpuWin.len() > 0 && (s.cpuWin.len() > s.opts.WindowMaxEvents || s.cpuWin.front().End() < s.newest-s.opts.WindowNs) {
		s.cpuWin.popFront()
	}
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
		if e.Kind == tracer.KindStep {
			s.cum.Add(e, s.strs, s.link.contexts)
			s.addWindow(e)
			s.addStep(e)
		}
		if k := e.Kind; k == tracer.KindRange || k == tracer.KindRuntime || k == tracer.KindDriver {
			s.addCPUWindow(e)
		}
		s.link.add(e, now)
	}
	s.link.endBatch()
	c.info.Events += uint64(len(evs))
	s.events += uint64(len(evs))
	s.version++
}

func (s *Session) addStep(e *tracer.Event) {
	s.seePID(e.PID)
	s.addRun(e)
	s.stepN++
	s.steps = append(s.steps, StepTime{Step: e.Value, PID: e.PID, StartNs: e.Start, DurNs: e.Dur})
	if len(s.steps) > 2*s.opts.MaxSteps {
		s.steps = append(s.steps[:0], s.steps[len(s.steps)-s.opts.MaxSteps:]...)
		s.pruneProcGPU()
	}
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

// minWindowRebuild is the least time between two rebuilds of the window
// aggregate (it is rebuilt from the kept events, outside the session lock).
const minWindowRebuild = 200 * time.Millisecond

// Snapshot returns the session's state. Cheap when nothing changed since
// the previous call. Otherwise it snapshots the cumulative aggregate (under
// the session lock) and re-aggregates the window from copies outside the
// lock, at most every 200 ms (in between, the previous window is returned
// and the next call rebuilds it). Snapshots are serialised.
func (s *Session) Snapshot() *State {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.mu.Lock()
	if s.cache != nil && s.cacheVer == s.version && s.winVer == s.version {
		s.mu.Unlock()
		return s.cache
	}
	ver := s.version
	st := &State{
		Cumulative: s.cum.Snapshot(),
		WindowNs:   s.opts.WindowNs,
		StepCount:  s.stepN,
		Marks:      slices.Clone(s.marks),
		Refusals:   slices.Clone(s.refusals),
		Dropped:    s.droppedLocked(),
		Events:     s.events,
		Warnings:   slices.Clone(s.warnings),
	}
	st.Cumulative.Dropped = st.Dropped
	now := s.opts.Now()
	// The window is aggregated outside the lock from copies: the events
	// (a bounded number), the string table and the context list (append
	// only; existing entries never change).
	rebuild := s.winSnap == nil || s.forceWin || (s.winVer != ver && now.Sub(s.winAt) >= minWindowRebuild)
	s.forceWin = false
	var strs *tracer.Strings
	var ctxs []tracer.Context
	gpuN := 0
	if rebuild {
		s.winBuf = s.winBuf[:0]
		s.win.each(func(evs []tracer.Event) { s.winBuf = append(s.winBuf, evs...) })
		nGPU := len(s.winBuf)
		s.cpuWin.each(func(evs []tracer.Event) { s.winBuf = append(s.winBuf, evs...) })
		gpuN = nGPU // the aggregate takes the GPU events and steps only
		strs = tracer.NewStrings()
		for id := 1; id < s.strs.Len(); id++ {
			strs.Intern(s.strs.Get(tracer.StrID(id)))
		}
		ctxs = s.link.contexts[:len(s.link.contexts):len(s.link.contexts)]
	}
	n := min(len(s.steps), s.opts.MaxSteps)
	st.Steps = slices.Clone(s.steps[len(s.steps)-n:])
	var procGPU map[stepKey]stepSums
	var runs map[int32]procRun
	multiPID := s.multiPID
	if multiPID {
		procGPU = make(map[stepKey]stepSums, len(s.procGPU))
		for k, v := range s.procGPU {
			procGPU[k] = *v
		}
		runs = make(map[int32]procRun, len(s.runs))
		for pid, r := range s.runs {
			runs[pid] = *r
		}
	}
	st.StepsPerSec = stepsPerSec(st.Steps, s.opts.WindowNs)
	var procs []rankProc
	for _, c := range s.children {
		ci := c.info
		procs = append(procs, rankProc{pid: int32(ci.Hello.PID), rank: int(ci.Hello.Rank), world: int(ci.Hello.World)})
		ci.Flags = slices.Clone(ci.Flags)
		ci.Meta = slices.Clone(ci.Meta)
		if ci.Bye != nil {
			y := *ci.Bye
			ci.Bye = &y
		}
		st.Children = append(st.Children, ci)
	}
	for _, th := range s.link.threads {
		st.Pending += len(th.pending)
	}
	for _, ws := range s.link.waiting {
		st.Pending += len(ws)
	}
	if s.link.lateCount > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d GPU events arrived after the ranges around their launch were forgotten; their stage may be missing", s.link.lateCount))
	}
	for _, c := range s.counters {
		st.Counters = append(st.Counters, CounterValue{Name: s.strs.Get(c.Name), Device: c.Device, TS: c.TS, Value: c.Value})
	}
	slices.SortFunc(st.Counters, func(a, b CounterValue) int {
		if a.Name != b.Name {
			return strings.Compare(a.Name, b.Name)
		}
		return int(a.Device) - int(b.Device)
	})
	// The agent's outputs are summarised after the unlock, from a prefix
	// of the samples and a copy of their (few) names.
	agent := s.agent[:len(s.agent):len(s.agent)]
	var agentStrs *tracer.Strings
	if len(agent) > 0 {
		agentStrs = tracer.NewStrings()
		for id := 1; id < s.agentStrs.Len(); id++ {
			agentStrs.Intern(s.agentStrs.Get(tracer.StrID(id)))
		}
	}
	if s.link.early > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d GPU events were linked before their step ended (too many waiting on one thread); their stage may be missing", s.link.early))
	}
	if s.rec != nil {
		ri := s.rec.info()
		st.Recording = &ri
	}
	cumPy, winPy := s.pyProfiles()
	s.mu.Unlock()
	st.Cumulative.Python = cumPy
	st.Outputs = agentOutputs(agent, agentStrs, st.Steps)

	if rebuild {
		a := attrib.NewAggregator(s.opts.Rules)
		a.SetSource(s.opts.Source, "rlktop")
		a.AddEvents(s.winBuf[:gpuN], strs, ctxs)
		s.winSnap = a.Snapshot()
		s.winSnap.Dropped = st.Dropped
		s.tlSnap = attrib.BuildTimeline(s.winBuf, strs, ctxs, s.opts.Rules, s.opts.TimelineOps)
		var winSteps []attrib.StepRow
		s.ranks, winSteps, s.rankPIDs = liveRanks(s.winBuf, strs, ctxs, procs, s.opts.Rules)
		s.winSnap.Ranks = s.ranks
		if s.ranks != nil {
			s.winSnap.Steps = winSteps // each process's steps apart
		}
		s.winAt = now
		s.mu.Lock()
		s.winVer = ver
		s.mu.Unlock()
	}
	// The snapshots name the devices the children's hellos describe (a
	// live aggregate sees only device ids), so that a CPU-only run says
	// so (Snapshot.TimeName).
	var devs []tracer.Device
	for _, c := range st.Children {
		for _, d := range c.Hello.Devices {
			if !slices.ContainsFunc(devs, func(x tracer.Device) bool { return x.ID == d.ID }) {
				devs = append(devs, d)
			}
		}
	}
	if len(st.Cumulative.Devices) == 0 {
		st.Cumulative.Devices = devs
	}
	st.Window = s.winSnap
	if st.Window != nil && ((len(st.Window.Devices) == 0 && len(devs) > 0) || st.Window.Python != winPy) {
		w := *st.Window
		if len(w.Devices) == 0 {
			w.Devices = devs
		}
		w.Python = winPy
		st.Window = &w
	}
	st.Timeline = s.tlSnap
	// Several processes: each one's numbers over the window; its steps
	// counted over the whole run in the cumulative snapshot (wholeRun).
	st.Cumulative.Ranks = s.ranks
	if multiPID {
		st.Cumulative.Ranks = wholeRun(s.ranks, s.rankPIDs, runs, st.Steps)
	}
	// Several processes: each one's steps apart (the aggregate would
	// merge the ranks' step N), numbered as Ranks numbers them.
	if multiPID {
		st.Cumulative.Steps = procStepRows(st.Steps, procGPU, s.rankPIDs, procs, s.ranks)
	}
	s.cache, s.cacheVer = st, ver
	return st
}

// stepsPerSec: the steps of the newest step's process that ended within
// windowNs of its end (at least two), over the time from the first of them
// starting to the newest ending. One process only, so that ranks stepping
// together do not add up.
func stepsPerSec(steps []StepTime, windowNs int64) float64 {
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
			if len(s.agent) >= maxAgentSamples {
				s.agent = slices.Clone(s.agent[len(s.agent)-maxAgentSamples/2:])
			}
			if s.agentStrs == nil {
				s.agentStrs = tracer.NewStrings()
			}
			c.Name = s.agentStrs.Intern(name)
			s.agent = append(s.agent, c)
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
	s.win = deque{}
	s.cpuWin = deque{}
	s.newest = 0
	s.steps, s.stepN, s.marks = nil, 0, nil
	s.procGPU, s.lastSums = nil, nil
	s.onePID, s.pidSeen, s.multiPID = 0, false, false
	s.runs = nil
	s.agent, s.agentStrs = nil, nil
	s.resetPy()
	s.forceWin = true
	s.version++
}

// maxAgentSamples bounds the agent output samples a session keeps (about
// 24 B each; a few per step: 64 Ki samples cover thousands of steps).
const maxAgentSamples = 1 << 16

// isAgentOutput reports whether a counter track is one of the Python
// agent's per-step outputs that attrib.Outputs summarises ("metric.NAME",
// "check.NAME.rows", attrib.CompileFramesCounter, attrib.InputWaitCounter).
func isAgentOutput(name string) bool {
	return strings.HasPrefix(name, "metric.") || (strings.HasPrefix(name, "check.") && strings.HasSuffix(name, ".rows")) ||
		name == attrib.CompileFramesCounter || name == attrib.InputWaitCounter
}

// agentOutputs summarises agent output samples (names in strs) over
// steps (attrib.Outputs of the steps as step events and the samples); nil
// without either. It reads only its arguments: Snapshot calls it outside
// mu.
func agentOutputs(agent []tracer.Counter, strs *tracer.Strings, steps []StepTime) []attrib.OutputRow {
	if len(agent) == 0 || len(steps) == 0 {
		return nil
	}
	t := &tracer.Trace{Strings: strs, Counters: agent, Events: make([]tracer.Event, 0, len(steps))}
	for _, st := range steps {
		t.Events = append(t.Events, tracer.Event{Kind: tracer.KindStep, Value: st.Step, PID: st.PID, Start: st.StartNs, Dur: st.DurNs})
	}
	return attrib.Outputs(t)
}
