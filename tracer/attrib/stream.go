package attrib

import (
	"maps"
	"math"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// SourceStream aggregates one trace that arrives window by window
// (tracefile.OpenStream) into the snapshot CombineSources gives for the
// whole trace: the Aggregator's tables and the source's Ranks row. It keeps
// no event: per window it adds the GPU ops to the Aggregator and the
// window's per-device unions (compute, communication, copies) to the
// source's sums, and seals the Aggregator's busy unions before the window
// (Aggregator.SealBusyBefore), so its memory is 8 bytes per kernel
// execution (exact percentiles), the tables, and one window's intervals.
//
// Exact when the windows do not overlap in time (each window's events
// start after every earlier window's end, which tracer.WindowLinker
// checks): interval unions and their overlap then add up window by window.
// The trace must have GPU work (tracefile.OpenStream refuses others); with
// one source there are no collectives to match. Not safe for concurrent
// use.
type SourceStream struct {
	agg   *Aggregator
	rules *Rules
	row   SourceRow
	steps map[int64]int64 // step number → duration (first kept)

	isComm      map[tracer.StrID]bool
	strs        *tracer.Strings
	first, last int64
	// One window's intervals per device (scratch).
	compute, comms, copies map[int32][]ival
}

// NewSourceStream returns an empty stream classifying with rules (nil:
// DefaultRules).
func NewSourceStream(rules *Rules) *SourceStream {
	a := NewAggregator(rules)
	return &SourceStream{
		agg: a, rules: a.Rules(), steps: map[int64]int64{}, isComm: map[tracer.StrID]bool{},
		first: math.MaxInt64, last: math.MinInt64,
		compute: map[int32][]ival{}, comms: map[int32][]ival{}, copies: map[int32][]ival{},
	}
}

// AddWindow adds one window's events (linked: Event.Ctx indexes ctxs; strs
// is the trace's one string table, the same for every window).
func (s *SourceStream) AddWindow(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) {
	// Earlier windows end before this one starts: their busy intervals
	// are only lengths from now on.
	lo := int64(math.MaxInt64)
	for i := range evs {
		lo = min(lo, evs[i].Start)
	}
	s.agg.SealBusyBefore(lo)
	s.agg.AddEvents(evs, strs, ctxs)
	if s.strs != strs {
		s.strs = strs
		clear(s.isComm)
	}
	r := &s.row
	for k := range s.compute {
		s.compute[k] = s.compute[k][:0]
	}
	for k := range s.comms {
		s.comms[k] = s.comms[k][:0]
	}
	for k := range s.copies {
		s.copies[k] = s.copies[k][:0]
	}
	// scanSource's rules for a trace with GPU work.
	for i := range evs {
		e := &evs[i]
		d := max(e.Dur, 0)
		switch e.Kind {
		case tracer.KindStep:
			if _, dup := s.steps[e.Value]; !dup {
				s.steps[e.Value] = d
			}
			continue
		case tracer.KindKernel:
			r.KernelCount++
			r.KernelNs = addSat(r.KernelNs, d)
			if e.Device < 0 {
				continue
			}
			if s.comm(e.Name) {
				s.comms[e.Device] = append(s.comms[e.Device], ival{e.Start, addSat(e.Start, d)})
			} else {
				s.compute[e.Device] = append(s.compute[e.Device], ival{e.Start, addSat(e.Start, d)})
			}
		case tracer.KindMemcpy, tracer.KindMemset:
			if e.Device < 0 {
				continue
			}
			s.copies[e.Device] = append(s.copies[e.Device], ival{e.Start, addSat(e.Start, d)})
		default:
			continue
		}
		s.first, s.last = min(s.first, e.Start), max(s.last, addSat(e.Start, d))
	}
	devs := map[int32]bool{}
	for _, m := range []map[int32][]ival{s.compute, s.comms, s.copies} {
		for dev, v := range m {
			if len(v) > 0 {
				devs[dev] = true
			}
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(devs)) {
		cu := unionOf(s.compute[dev])
		co := unionOf(s.comms[dev])
		r.ComputeNs = addSat(r.ComputeNs, lenOf(cu))
		r.CommNs = addSat(r.CommNs, lenOf(co))
		r.CommOverlapNs = addSat(r.CommOverlapNs, overlapOf(co, cu))
		all := append(append(cu, co...), s.copies[dev]...)
		r.BusyNs = addSat(r.BusyNs, lenOf(unionOf(all)))
		s.compute[dev] = all[:0] // unionOf's result reused as scratch
	}
}

func (s *SourceStream) comm(id tracer.StrID) bool {
	c, ok := s.isComm[id]
	if !ok {
		c = s.rules.Classify(tracer.KindKernel, s.strs.Get(id), nil) == CategoryCollective
		s.isComm[id] = c
	}
	return c
}

// Snapshot returns what CombineSources([]*tracer.Trace{whole}, rules)
// gives, where t is the trace tracefile.OpenStream returned (its metadata,
// warnings and steps; no other event) and the windows were added with
// AddWindow. Call it once, after the last window.
func (s *SourceStream) Snapshot(t *tracer.Trace) *Snapshot {
	s.agg.addTraceMeta(t)
	snap := s.agg.Snapshot()
	r := &s.row
	r.Index, r.Path, r.Format, r.World = 0, t.Path, t.Format, t.World
	r.Name = "" // scanSource's naming
	sc := scanSource(&tracer.Trace{Path: t.Path, Format: t.Format, Rank: t.Rank, World: t.World, Strings: t.Strings}, 0, s.rules)
	r.Name, r.Rank, r.RankFrom = sc.row.Name, sc.row.Rank, sc.row.RankFrom
	durs := slices.Collect(maps.Values(s.steps))
	slices.Sort(durs)
	r.Steps = len(durs)
	if len(durs) > 0 {
		r.StepMedianNs = durs[(len(durs)-1)/2]
	}
	if s.last >= s.first {
		r.StartNs, r.EndNs, r.SpanNs = s.first, s.last, subSat(s.last, s.first)
	}
	r.CommExposedNs = r.CommNs - r.CommOverlapNs
	r.IdleNs = max(r.SpanNs-r.BusyNs, 0)
	snap.Ranks = summarize([]*sourceScan{{row: *r}})
	return snap
}
