package attrib

import (
	"cmp"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// DefaultTimelineOps bounds the GPU operations a Timeline keeps when the
// caller passes 0: 1<<17 ops, about 12 MB.
const DefaultTimelineOps = 1 << 17

// Timeline is a bounded, plain picture of GPU work over time for the
// timeline view: GPU operations per device and stream, the CPU ranges
// (stages) and launch calls above them, and the steps. It is built by
// BuildTimeline and never mutated afterwards. All times are ns in the
// source's timebase (live sessions: host CLOCK_REALTIME).
type Timeline struct {
	// StartNs and EndNs span every op, CPU span and step kept.
	StartNs, EndNs int64
	// Lanes are the GPU lanes, by device then stream.
	Lanes []TimelineLane
	// Ops are the GPU operations kept, sorted by start then lane.
	Ops []TimelineOp
	// CPU holds the CPU ranges (KindRange) and launch calls (KindRuntime,
	// KindDriver) that overlap the ops kept, sorted by start.
	CPU []TimelineSpan
	// Steps are the step ranges seen, sorted by start.
	Steps []TimelineStep
	// Dropped counts GPU ops left out because there were more than the
	// bound (the earliest ones are left out).
	Dropped int
	// Sources name the sources (ranks, files) of a timeline merged by
	// MergeTimelines, indexed by TimelineLane.Source, TimelineSpan.Source
	// and TimelineStep.Source; nil for one source.
	Sources []string
	// ShiftNs is, per source of a merged timeline, the ns added to its
	// times to draw it beside the first source (0 when the sources share
	// a clock; see MergeTimelines); nil for one source.
	ShiftNs []int64
}

// TimelineLane is one device stream of one source.
type TimelineLane struct {
	Device, Stream int32
	Source         int32 // index into Timeline.Sources (0 for one source)
}

// TimelineOp is one GPU operation (kernel, memcpy, memset).
type TimelineOp struct {
	Lane    int32 // index into Timeline.Lanes
	Kind    tracer.Kind
	StartNs int64
	DurNs   int64
	Name    string // exactly as in the trace
	Display string // DisplayName(Name)
	// Category is Rules.Classify of the op with its launch context, as the
	// aggregator classifies it.
	Category string
	// Stage is the innermost range open at launch ("" none); Step the step
	// open at launch (-1 none).
	Stage string
	Step  int64
	// Ops and Ranges are the launch context, outermost first.
	Ops, Ranges []string
}

// EndNs returns StartNs+DurNs.
func (o *TimelineOp) EndNs() int64 { return o.StartNs + o.DurNs }

// TimelineSpan is one CPU interval: a range (a stage) or a launch call.
type TimelineSpan struct {
	Kind    tracer.Kind // KindRange, KindRuntime or KindDriver
	StartNs int64
	DurNs   int64
	Name    string
	// Depth is the nesting depth among the ranges of its thread (0
	// outermost); launch calls have depth 0.
	Depth  int
	Source int32 // index into Timeline.Sources (0 for one source)
}

// TimelineStep is one step range.
type TimelineStep struct {
	Step           int64
	StartNs, DurNs int64
	Source         int32 // index into Timeline.Sources (0 for one source)
}

// BuildTimeline builds a Timeline from linked events (as in
// tracer.Trace.Events, or a live session's window): GPU ops (kernels,
// memcpy, memset), CPU ranges and launch calls, and steps; other kinds
// are ignored. strs and ctxs resolve names and launch contexts (Ctx ids);
// rules classify (nil: DefaultRules). At most maxOps GPU ops are kept
// (0: DefaultTimelineOps; the latest-starting are kept, so a live window
// shows its newest work), and CPU spans and steps only where they overlap
// the ops kept. evs is not modified.
func BuildTimeline(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context, rules *Rules, maxOps int) *Timeline {
	if rules == nil {
		rules = DefaultRules()
	}
	if maxOps <= 0 {
		maxOps = DefaultTimelineOps
	}
	tl := &Timeline{}
	var gpu []int
	for i := range evs {
		if k := evs[i].Kind; k == tracer.KindKernel || k == tracer.KindMemcpy || k == tracer.KindMemset {
			gpu = append(gpu, i)
		}
	}
	byStart := func(a, b int) int { return cmp.Compare(evs[a].Start, evs[b].Start) }
	if !slices.IsSortedFunc(gpu, byStart) { // traces and windows are mostly in order already
		slices.SortStableFunc(gpu, byStart)
	}
	if len(gpu) > maxOps {
		tl.Dropped = len(gpu) - maxOps
		gpu = gpu[len(gpu)-maxOps:]
	}
	type ck struct {
		name tracer.StrID
		ctx  tracer.CtxID
		kind tracer.Kind
	}
	type cv struct {
		cat, stage, disp string
		ops, ranges      []string
		step             int64
	}
	cache := map[ck]*cv{}
	lanes := map[TimelineLane]int32{}
	var laneList []TimelineLane
	for _, i := range gpu {
		e := &evs[i]
		l := TimelineLane{Device: e.Device, Stream: e.Stream}
		if _, ok := lanes[l]; !ok {
			lanes[l] = 0
			laneList = append(laneList, l)
		}
	}
	slices.SortFunc(laneList, func(a, b TimelineLane) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Stream, b.Stream))
	})
	for i, l := range laneList {
		lanes[l] = int32(i)
	}
	tl.Lanes = laneList
	tl.Ops = make([]TimelineOp, 0, len(gpu))
	first, last := int64(0), int64(0)
	for j, i := range gpu {
		e := &evs[i]
		k := ck{e.Name, e.Ctx, e.Kind}
		v := cache[k]
		if v == nil {
			v = &cv{step: -1}
			name := strs.Get(e.Name)
			after := false
			if int(e.Ctx) < len(ctxs) && e.Ctx != 0 {
				c := &ctxs[e.Ctx]
				v.step = c.Step
				for _, s := range c.Ops {
					v.ops = append(v.ops, strs.Get(s))
				}
				for _, s := range c.Ranges {
					v.ranges = append(v.ranges, strs.Get(s))
				}
				after = c.AfterAttention
				if n := len(v.ranges); n > 0 {
					v.stage = v.ranges[n-1]
				}
			}
			v.cat = rules.Classify(e.Kind, name, Launch{Ops: v.ops, Ranges: v.ranges, AfterAttention: after})
			v.disp = DisplayName(name)
			cache[k] = v
		}
		tl.Ops = append(tl.Ops, TimelineOp{Lane: lanes[TimelineLane{Device: e.Device, Stream: e.Stream}], Kind: e.Kind,
			StartNs: e.Start, DurNs: e.Dur, Name: strs.Get(e.Name), Display: v.disp, Category: v.cat,
			Stage: v.stage, Step: v.step, Ops: v.ops, Ranges: v.ranges})
		if j == 0 || e.Start < first {
			first = e.Start
		}
		last = max(last, e.End())
	}
	overlaps := func(s, d int64) bool { return len(tl.Ops) > 0 && s+d >= first && s <= last }
	// CPU ranges nest per thread; depth comes from the ranges still open
	// at each start.
	type th struct{ pid, tid int32 }
	var cpu []int
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case tracer.KindRange, tracer.KindRuntime, tracer.KindDriver:
			if overlaps(e.Start, e.Dur) {
				cpu = append(cpu, i)
			}
		case tracer.KindStep:
			if overlaps(e.Start, e.Dur) || len(tl.Ops) == 0 {
				tl.Steps = append(tl.Steps, TimelineStep{Step: e.Value, StartNs: e.Start, DurNs: e.Dur})
			}
		}
	}
	slices.SortStableFunc(cpu, func(a, b int) int {
		return cmp.Or(cmp.Compare(evs[a].Start, evs[b].Start), cmp.Compare(evs[b].Dur, evs[a].Dur))
	})
	open := map[th][]int64{} // end times of the ranges open per thread
	for _, i := range cpu {
		e := &evs[i]
		sp := TimelineSpan{Kind: e.Kind, StartNs: e.Start, DurNs: e.Dur, Name: strs.Get(e.Name)}
		if e.Kind == tracer.KindRange {
			t := th{e.PID, e.TID}
			st := open[t]
			for len(st) > 0 && st[len(st)-1] <= e.Start {
				st = st[:len(st)-1]
			}
			sp.Depth = len(st)
			open[t] = append(st, e.End())
		}
		tl.CPU = append(tl.CPU, sp)
	}
	slices.SortStableFunc(tl.Steps, func(a, b TimelineStep) int { return cmp.Compare(a.StartNs, b.StartNs) })
	tl.StartNs, tl.EndNs = first, last
	for _, s := range tl.Steps {
		if len(tl.Ops) == 0 && tl.StartNs == 0 && tl.EndNs == 0 {
			tl.StartNs, tl.EndNs = s.StartNs, s.StartNs+s.DurNs
		}
		tl.StartNs = min(tl.StartNs, s.StartNs)
		tl.EndNs = max(tl.EndNs, s.StartNs+s.DurNs)
	}
	for _, s := range tl.CPU {
		tl.StartNs = min(tl.StartNs, s.StartNs)
		tl.EndNs = max(tl.EndNs, s.StartNs+s.DurNs)
	}
	return tl
}

// SharedClockNs is how close (ns) the first times of two sources must be
// for MergeTimelines to draw them on one clock: 10 minutes. The ranks of
// one job (one host's clock, or hosts kept within milliseconds by NTP)
// start within seconds of each other; files from unrelated runs are hours
// to years apart (a 52-year span is possible), and one clock would
// squeeze each into a sliver of the axis.
const SharedClockNs = int64(10 * 60 * 1e9)

// MergeTimelines draws several sources' timelines (BuildTimeline of each
// rank or file, in source order) as one: every source keeps its own
// lanes (TimelineLane.Source; lanes ordered by source, device, stream),
// CPU spans and steps, named by labels (len(labels) == len(parts)). A
// source whose first time is within SharedClockNs of the first source's
// is drawn on its own clock, so a late rank shows late; one farther away
// is shifted to start with the first source (ShiftNs says by how much).
// nil parts are skipped (their label is kept, with no lanes). One part
// is returned as it is.
func MergeTimelines(parts []*Timeline, labels []string) *Timeline {
	if len(parts) == 1 && parts[0] != nil {
		return parts[0]
	}
	out := &Timeline{Sources: labels, ShiftNs: make([]int64, len(parts))}
	first, started := int64(0), false
	for _, p := range parts {
		if p != nil && !timelineEmpty(p) {
			first = p.StartNs
			break
		}
	}
	for si, p := range parts {
		if p == nil || timelineEmpty(p) {
			continue
		}
		shift := int64(0)
		if d := p.StartNs - first; d > SharedClockNs || d < -SharedClockNs {
			shift = first - p.StartNs
		}
		out.ShiftNs[si] = shift
		base := int32(len(out.Lanes))
		for _, l := range p.Lanes {
			l.Source = int32(si)
			out.Lanes = append(out.Lanes, l)
		}
		for _, o := range p.Ops {
			o.Lane += base
			o.StartNs += shift
			out.Ops = append(out.Ops, o)
		}
		for _, c := range p.CPU {
			c.Source, c.StartNs = int32(si), c.StartNs+shift
			out.CPU = append(out.CPU, c)
		}
		for _, st := range p.Steps {
			st.Source, st.StartNs = int32(si), st.StartNs+shift
			out.Steps = append(out.Steps, st)
		}
		out.Dropped += p.Dropped
		if !started {
			out.StartNs, out.EndNs, started = p.StartNs+shift, p.EndNs+shift, true
		}
		out.StartNs, out.EndNs = min(out.StartNs, p.StartNs+shift), max(out.EndNs, p.EndNs+shift)
	}
	slices.SortStableFunc(out.Ops, func(a, b TimelineOp) int {
		return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.Lane, b.Lane))
	})
	slices.SortStableFunc(out.CPU, func(a, b TimelineSpan) int { return cmp.Compare(a.StartNs, b.StartNs) })
	slices.SortStableFunc(out.Steps, func(a, b TimelineStep) int { return cmp.Compare(a.StartNs, b.StartNs) })
	return out
}

func timelineEmpty(t *Timeline) bool { return len(t.Ops)+len(t.CPU)+len(t.Steps) == 0 }
