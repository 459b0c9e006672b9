package attrib

import (
	"cmp"
	"encoding/binary"
	"maps"
	"math"
	"slices"

	"github.com/rlktop/rlktop/internal/extsort"
	"github.com/rlktop/rlktop/internal/interval"
	"github.com/rlktop/rlktop/tracer"
)

// SourceStream aggregates traces that arrive window by window
// (tracefile.OpenStream), one source after the other, into the snapshot
// CombineSources gives for the whole traces: the Aggregator's tables, each
// source's Ranks row and step rows, and with several sources their step
// spreads and matched collectives. It keeps no event: per window (or per
// part of a long window, AddPart) it adds the GPU ops to the Aggregator
// (whose busy unions it seals before the window:
// Aggregator.SealBusyBefore) and, at the window's end, the window's
// per-device unions (compute, communication, copies) to the source's
// sums. Each window and part comes with its own contexts
// (tracefile.Capture.Contexts): AddPart adds its open cells at its end and
// forgets them (Aggregator.NewContexts). Memory: the tables, one window's
// GPU op intervals (16 bytes each, kept to its end; a long window's go to
// a temporary file), and per source its steps and (for matching across
// sources) one entry per collective; every kernel duration (for exact
// percentiles) goes to a temporary file past 2^17
// (Aggregator.SpillDurations).
//
// Exact when each source's windows do not overlap in time (each window's
// events start after every earlier window's end, which
// tracer.CaptureLinker checks): interval unions and their overlap then add
// up window by window, and collectives are numbered in start order. The
// traces must have GPU work (tracefile.OpenStream refuses others). Not
// safe for concurrent use: feed the sources in input order.
type SourceStream struct {
	agg     *Aggregator
	rules   *Rules
	runRecs int // tracer.SpillSizes.RunRecs of the long windows' sorts
	done    []*streamSource
	cur     *streamSource
}

// streamSource is one source's running scan (scanSource's numbers).
type streamSource struct {
	scan     sourceScan
	t        *tracer.Trace // EndSource's trace
	stepRows map[int64]*StepRow
	wins     []stepWin // first step event of each number, by start
	nth      map[collKey]int
	isComm   map[tracer.StrID]bool
	strs     *tracer.Strings
	// work: this source carries modelled work (ExpectWork, or a kernel
	// with work), so its steps count their kernels' work and unmodelled
	// time, as SourceSteps does for a trace with operator calls; a source
	// without shapes beside one with them counts none.
	work bool
	busy map[int32]bool // devices that ran a kernel, memcpy or memset

	first, last int64
	// One window's intervals per device, and its collectives (scratch).
	compute, comms, copies map[int32][]interval.Span
	commEvs                []commEv
	// A window that comes in parts (a long one): its GPU op intervals go
	// to an external sort instead (long), for the source's unions and the
	// Aggregator's busy time at its end.
	long *extsort.Sorter[opIval]
}

// opIval is a GPU op's interval in a long window: device, class (opCompute,
// opComm, opCopy), start and end, ns.
type opIval struct {
	dev   int32
	class uint8
	s, e  int64
}

const (
	opCompute = iota
	opComm
	opCopy
)

// opIvalCodec orders a long window's op intervals by device, then start.
var opIvalCodec = extsort.Codec[opIval]{
	Size: 21,
	Put: func(b []byte, x opIval) {
		binary.LittleEndian.PutUint32(b, uint32(x.dev))
		b[4] = x.class
		binary.LittleEndian.PutUint64(b[5:], uint64(x.s))
		binary.LittleEndian.PutUint64(b[13:], uint64(x.e))
	},
	Get: func(b []byte) opIval {
		return opIval{int32(binary.LittleEndian.Uint32(b)), b[4], int64(binary.LittleEndian.Uint64(b[5:])), int64(binary.LittleEndian.Uint64(b[13:]))}
	},
	Cmp: func(a, b opIval) int { return cmp.Or(cmp.Compare(a.dev, b.dev), cmp.Compare(a.s, b.s)) },
}

type stepWin struct{ s, e, n int64 }

// NewSourceStream returns an empty stream classifying with rules (nil:
// DefaultRules) whose external sorts (durations, a long window's op
// intervals) hold spill.RunRecs records a run.
func NewSourceStream(rules *Rules, spill tracer.SpillSizes) *SourceStream {
	a := NewAggregator(rules)
	a.SpillDurations(spill.RunRecs)
	return &SourceStream{agg: a, rules: a.Rules(), runRecs: spill.RunRecs}
}

func (s *SourceStream) source() *streamSource {
	if s.cur == nil {
		s.cur = &streamSource{
			scan:     sourceScan{steps: map[int64]int64{}, colls: map[collKey]interval.Span{}},
			stepRows: map[int64]*StepRow{}, nth: map[collKey]int{}, isComm: map[tracer.StrID]bool{}, busy: map[int32]bool{},
			first: math.MaxInt64, last: math.MinInt64,
			compute: map[int32][]interval.Span{}, comms: map[int32][]interval.Span{}, copies: map[int32][]interval.Span{},
		}
	}
	return s.cur
}

// AddWindow adds one window of the current source (linked: Event.Ctx
// indexes ctxs; strs is the source's one string table, the same for
// every window of it).
func (s *SourceStream) AddWindow(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) {
	lo := int64(math.MaxInt64)
	for i := range evs {
		lo = min(lo, evs[i].Start)
	}
	s.AddPart(evs, strs, ctxs, true, true, lo)
}

// AddPart adds one part of a window of the current source
// (tracefile.Capture: a long window comes in parts, its steps in the first,
// then its GPU ops in file order): first opens the window, whose events
// all start at or after from ns, and last closes it. AddWindow is AddPart
// of a whole window.
func (s *SourceStream) AddPart(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context, first, last bool, from int64) {
	src := s.source()
	index := len(s.done)
	if first {
		// Earlier windows end before this one starts: their busy
		// intervals are only lengths from now on.
		s.agg.SealBusyBefore(from)
		for _, m := range []map[int32][]interval.Span{src.compute, src.comms, src.copies} {
			for k := range m {
				m[k] = m[k][:0]
			}
		}
		src.commEvs = src.commEvs[:0]
		if !last {
			// A long window: its ops come out of time order (CUPTI
			// buffers); their intervals are sorted on disk.
			src.long = extsort.New(opIvalCodec, s.runRecs)
		}
	}
	s.agg.DeferBusy(src.long != nil)
	s.agg.AddEvents(evs, strs, ctxs)
	s.agg.DeferBusy(false)
	// Each window's and part's contexts are its own (IDs restart): add
	// the open cells now, while ctxs is valid, and forget them.
	s.agg.NewContexts(strs)
	src.strs = strs
	r := &src.scan.row
	// Steps first (scanSource and SourceSteps read them before the ops):
	// the first event of each number.
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindStep {
			continue
		}
		if _, dup := src.scan.steps[e.Value]; !dup {
			src.scan.steps[e.Value] = max(e.Dur, 0)
			w := stepWin{e.Start, e.End(), e.Value}
			j, _ := slices.BinarySearchFunc(src.wins, w.s, func(x stepWin, t int64) int { return cmp.Compare(x.s, t) })
			for j < len(src.wins) && src.wins[j].s == w.s {
				j++ // after equal starts: a stable sort's order
			}
			src.wins = slices.Insert(src.wins, j, w)
		}
		if src.stepRows[e.Value] == nil {
			src.stepRows[e.Value] = &StepRow{Step: e.Value, StartNs: e.Start, DurNs: e.Dur, Source: index}
		}
	}
	// scanSource's rules for a trace with GPU work; SourceSteps' per step
	// GPU time.
	for i := range evs {
		e := &evs[i]
		d := max(e.Dur, 0)
		if k := e.Kind; k == tracer.KindKernel || k == tracer.KindMemcpy || k == tracer.KindMemset {
			src.busy[e.Device] = true // sourceDevices' rule
		}
		if kindSlots[e.Kind&15] >= 0 && e.Ctx != 0 && int(e.Ctx) < len(ctxs) {
			if n := ctxs[e.Ctx].Step; n >= 0 {
				st := src.stepRows[n]
				if st == nil { // launched in a step window without a step event
					st = &StepRow{Step: n, Source: index}
					src.stepRows[n] = st
				}
				st.KernelNs = addSat(st.KernelNs, d)
				st.Count++
				if e.Kind == tracer.KindKernel && e.Value != 0 {
					src.work = true
				}
				if src.work {
					st.addWork(e)
				}
			}
		}
		switch e.Kind {
		case tracer.KindKernel:
			r.KernelCount++
			r.KernelNs = addSat(r.KernelNs, d)
			if e.Device < 0 {
				if src.long != nil { // busy time only
					src.long.Add(opIval{e.Device, opCompute, e.Start, addSat(e.Start, d)})
				}
				continue
			}
			if src.comm(e.Name, s.rules) {
				src.commEvs = append(src.commEvs, commEv{e.Name, e.Start, d})
				if src.long != nil {
					src.long.Add(opIval{e.Device, opComm, e.Start, addSat(e.Start, d)})
				} else {
					src.comms[e.Device] = append(src.comms[e.Device], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
				}
			} else if src.long != nil {
				src.long.Add(opIval{e.Device, opCompute, e.Start, addSat(e.Start, d)})
			} else {
				src.compute[e.Device] = append(src.compute[e.Device], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
			}
		case tracer.KindMemcpy, tracer.KindMemset:
			if e.Device < 0 {
				if src.long != nil { // busy time only
					src.long.Add(opIval{e.Device, opCopy, e.Start, addSat(e.Start, d)})
				}
				continue
			}
			if src.long != nil {
				src.long.Add(opIval{e.Device, opCopy, e.Start, addSat(e.Start, d)})
			} else {
				src.copies[e.Device] = append(src.copies[e.Device], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
			}
		default:
			continue
		}
		src.first, src.last = min(src.first, e.Start), max(src.last, addSat(e.Start, d))
	}
	if last {
		s.endWindow(src, strs)
	}
}

// endWindow adds the window's unions (per device) and collectives to the
// source's sums.
func (s *SourceStream) endWindow(src *streamSource, strs *tracer.Strings) {
	r := &src.scan.row
	if src.long != nil {
		s.endLongWindow(src, strs)
	}
	devs := map[int32]bool{}
	for _, m := range []map[int32][]interval.Span{src.compute, src.comms, src.copies} {
		for dev, v := range m {
			if len(v) > 0 {
				devs[dev] = true
			}
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(devs)) {
		cu := interval.Union(src.compute[dev])
		co := interval.Union(src.comms[dev])
		r.ComputeNs = addSat(r.ComputeNs, interval.Len(cu))
		r.CommNs = addSat(r.CommNs, interval.Len(co))
		r.CommOverlapNs = addSat(r.CommOverlapNs, interval.Overlap(co, cu))
		all := append(append(cu, co...), src.copies[dev]...)
		r.BusyNs = addSat(r.BusyNs, interval.Len(interval.Union(all)))
		src.compute[dev] = all[:0] // unionOf's result reused as scratch
	}
	// Collectives in start order, numbered within (name, step) across
	// windows (windows are in start order).
	slices.SortStableFunc(src.commEvs, func(a, b commEv) int { return cmp.Compare(a.start, b.start) })
	for _, e := range src.commEvs {
		k := collKey{name: strs.Get(e.name), step: src.stepAt(e.start)}
		n := src.nth[k]
		src.nth[k] = n + 1
		k.nth = n
		src.scan.colls[k] = interval.Span{Start: e.start, End: addSat(e.start, e.dur)}
	}
	src.commEvs = src.commEvs[:0]
}

// endLongWindow adds a long window's op intervals, sorted on disk by
// device and start, to the Aggregator's busy time (AddBusy) and the
// source's unions, with endWindow's numbers: per device the lengths of
// the compute union, the communication union, their overlap (|compute| +
// |comm| - |compute ∪ comm|) and the union of all. Memory is constant.
func (s *SourceStream) endLongWindow(src *streamSource, strs *tracer.Strings) {
	r := &src.scan.row
	var cu, co, cc, all interval.Running
	dev, any := int32(0), false
	end := func() {
		if !any || dev < 0 {
			return
		}
		c, m := cu.Len(), co.Len()
		r.ComputeNs = addSat(r.ComputeNs, c)
		r.CommNs = addSat(r.CommNs, m)
		r.CommOverlapNs = addSat(r.CommOverlapNs, c+m-cc.Len())
		r.BusyNs = addSat(r.BusyNs, all.Len())
	}
	err := src.long.Each(func(x opIval) bool {
		if !any || x.dev != dev {
			end()
			dev, any = x.dev, true
			cu, co, cc, all = interval.Running{}, interval.Running{}, interval.Running{}, interval.Running{}
		}
		s.agg.AddBusy(strs, x.dev, x.class != opCopy, x.s, x.e)
		switch x.class {
		case opCompute:
			cu.Add(x.s, x.e)
			cc.Add(x.s, x.e)
		case opComm:
			co.Add(x.s, x.e)
			cc.Add(x.s, x.e)
		}
		all.Add(x.s, x.e)
		return true
	})
	end()
	if err != nil {
		s.agg.warnings = append(s.agg.warnings, "busy time of a long window: "+err.Error())
	}
	src.long = nil
}

// commEv is a collective kernel of the window: name, start and duration
// (ns, not negative).
type commEv struct {
	name       tracer.StrID
	start, dur int64
}

// stepAt is scanSource's rule over the windows seen so far (stepAtIn).
func (src *streamSource) stepAt(ts int64) int64 { return stepAtIn(src.wins, ts) }

// stepAtIn is the step (first event of its number) whose window holds ts,
// by the latest start at or before ts, in wins sorted by start; -1 none.
// A tie finds the first equal start, the window itself.
func stepAtIn(wins []stepWin, ts int64) int64 {
	i, _ := slices.BinarySearchFunc(wins, ts, func(w stepWin, ts int64) int { return cmp.Compare(w.s, ts) })
	if i < len(wins) && wins[i].s == ts {
		return wins[i].n
	}
	if i > 0 && ts < wins[i-1].e {
		return wins[i-1].n
	}
	return -1
}

func (src *streamSource) comm(id tracer.StrID, rules *Rules) bool {
	c, ok := src.isComm[id]
	if !ok {
		c = rules.Classify(tracer.KindKernel, src.strs.Get(id), Launch{}) == CategoryCollective
		src.isComm[id] = c
	}
	return c
}

// EndSource closes the current source: t is the trace
// tracefile.OpenStream returned for it (its metadata, warnings and steps;
// no other event). The next AddWindow starts the next source.
func (s *SourceStream) EndSource(t *tracer.Trace) {
	src := s.source()
	s.agg.addTraceMeta(t)
	src.t = t
	r := &src.scan.row
	sc := scanSource(&tracer.Trace{Path: t.Path, Format: t.Format, Rank: t.Rank, World: t.World, Strings: t.Strings}, len(s.done), s.rules)
	r.Index, r.Path, r.Format, r.World = len(s.done), t.Path, t.Format, t.World
	r.Name, r.Rank, r.RankFrom = sc.row.Name, sc.row.Rank, sc.row.RankFrom
	durs := slices.Collect(maps.Values(src.scan.steps))
	r.Steps = len(durs)
	r.StepMedianNs = MedianNs(durs)
	if src.last >= src.first {
		r.StartNs, r.EndNs, r.SpanNs = src.first, src.last, subSat(src.last, src.first)
	}
	r.CommExposedNs = r.CommNs - r.CommOverlapNs
	r.IdleNs = max(r.SpanNs-r.BusyNs, 0)
	src.compute, src.comms, src.copies, src.commEvs, src.isComm, src.nth = nil, nil, nil, nil, nil, nil
	s.done = append(s.done, src)
	s.cur = nil
}

// Snapshot returns what CombineSources of the whole traces gives, once
// every source was ended (EndSource). Call it once.
func (s *SourceStream) Snapshot() *Snapshot {
	snap := s.agg.Snapshot()
	scans := make([]*sourceScan, len(s.done))
	for i, src := range s.done {
		scans[i] = &src.scan
	}
	snap.Ranks = summarize(scans)
	if len(s.done) < 2 {
		return snap
	}
	snap.Rank = -1
	var steps []StepRow
	var span int64
	for i, src := range s.done {
		for _, n := range slices.Sorted(maps.Keys(src.stepRows)) {
			steps = append(steps, *src.stepRows[n])
		}
		if r := snap.Ranks.Source(i); r != nil {
			span = max(span, r.SpanNs)
		}
	}
	snap.Steps = steps
	if !snap.SummaryOnly {
		snap.Totals.SpanNs = span
	}
	// Each source's devices apart, as CombineSources lists them.
	snap.Devices, snap.DeviceWork, snap.DeviceSource = nil, nil, nil
	for i, src := range s.done {
		snap.addSourceDevices(i, src.t.Devices, src.busy)
	}
	return snap
}
