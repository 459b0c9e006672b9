package attrib

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/internal/interval"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
)

// Sources and ranks. Every input file, and every process of a
// live session, is a source with its own clock: nothing here compares a
// time of one source with a time of another, only durations.

// Where SourceRow.Rank came from.
const (
	RankFromTrace = "trace" // Kineto distributedInfo.rank, the wire hello's rank (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID)
	RankFromOrder = "order" // no rank, or two sources claimed the same one: the position in input order
)

// CategoryCollective is the category the rules give communication
// (rules.toml: NCCL/RCCL kernels, gloo and c10d operations).
const CategoryCollective = "collective"

// SourceRow is one source's numbers, each on the source's own clock. All
// times ns.
type SourceRow struct {
	Index    int    // position in input order, from 0
	Rank     int    // distributed rank (RankFrom says where it came from); >= 0
	RankFrom string // RankFromTrace or RankFromOrder
	World    int    // world size the source reported; 0 unknown
	Path     string // file, or "" for a live process
	Name     string // what to call it: the file's base name or the live process's label
	Format   string
	// StartNs, EndNs: first start and last end of its work (GPU ops:
	// kernels, memcpy, memset, as Totals.SpanNs; for a trace without GPU
	// work its CPU operators and communication ranges); SpanNs = EndNs -
	// StartNs.
	StartNs, EndNs, SpanNs int64
	// KernelCount, KernelNs: its kernels (CPU operators by self time for a
	// trace without GPU work: tracer.Trace.CPUOpKernels), summed.
	KernelCount, KernelNs int64
	// BusyNs is the union of its compute, communication, memcpy and
	// memset intervals per device, summed over devices; IdleNs = SpanNs -
	// BusyNs (0 if negative, e.g. two devices busy at once).
	BusyNs, IdleNs int64
	// ComputeNs is the union of its compute intervals (work that is not
	// communication) per device, summed.
	ComputeNs int64
	// CommNs is the union of its communication intervals per device,
	// summed; CommOverlapNs the part of it during compute on the same
	// device, CommExposedNs the rest (CommNs - CommOverlapNs). Communication
	// is: on GPU traces, kernels the rules put in "collective"
	// (nccl/rccl); on traces without GPU work, the annotation ranges the
	// rules put there (gloo:all_reduce, gloo:broadcast on the gloo worker
	// threads), else its collective CPU operators. Compute is every other
	// kernel (GPU traces) or every other CPU operator, whole durations
	// (traces without GPU work; when a trace holds no CPU operator events,
	// as a live session's window, its CPU operator kernels: self times).
	CommNs, CommOverlapNs, CommExposedNs int64
	// Steps counted (tracer.KindStep events by step number, the first of a
	// number kept) and the lower median of their durations.
	Steps        int
	StepMedianNs int64
	// RunNs: a live process's whole run so far, its first step's start to
	// its latest step's end (ns; its Steps and StepMedianNs then count the
	// whole run too, the other figures the session's window); 0 for files.
	RunNs int64
	// Stages: its annotation ranges (stages: record_function,
	// rlktop.stage, NVTX/roctx ranges) other than communication ones, by
	// name: summed wall time (ns; nested ranges of one name count each)
	// and count, largest first. The straggler finding compares them across
	// sources to say what the late rank spends longer in. Not in the JSON
	// report, and empty on report's window-by-window path (whose output
	// has no findings). StageSteps is the number of steps in which one of
	// those ranges starts, for per-step figures (a live process's Steps
	// count its whole run, while its ranges come from the session's
	// window, and in a Python run only from the steps torch.profiler
	// traced).
	Stages     []StageWall
	StageSteps int
	// CollWaitNs is how long this source waited for the last arrival in
	// the collectives matched across all sources (see Ranks): in each, the
	// first (own duration - shortest duration among the sources) ns of it,
	// the union of those intervals over all of them (collectives on
	// several threads overlap; a sum would count a wait twice).
	// LastArrivals counts the matched collectives in which it had the
	// shortest duration (it arrived last; ties go to the lowest rank).
	CollWaitNs   int64
	LastArrivals int
}

// StepSpread is one step number present in every source (several sources
// only): the slowest and fastest source by step duration, and who arrived
// last at its collectives. Sources are SourceRow.Index values.
type StepSpread struct {
	Step                   int64
	SlowSource, FastSource int
	SlowNs, FastNs         int64 // their step durations, ns
	SpreadNs               int64 // SlowNs - FastNs
	// LateSource arrived last at most of this step's matched collectives
	// (ties: the larger lateness in one collective, then the lower index);
	// -1 when the step has none. Collectives counts them. WaitNs is the
	// longest wait of a source in them (CollWaitNs's rule, within the
	// step): how long the others were held up by the last arrival.
	LateSource  int
	Collectives int
	WaitNs      int64
}

// RankSummary holds the sources of a snapshot and, with several, their
// step spreads and collective matching.
type RankSummary struct {
	// Sources in rank order (then input order).
	Sources []SourceRow
	// ByRank is true when every source's rank came from its trace (so a
	// view can say "rank"); false when some are positions in input order
	// (a view says "file").
	ByRank bool
	// Steps in step order: the step numbers every source has.
	Steps []StepSpread
	// Collectives is the number of collectives matched across all
	// sources; CollectivesUnmatched those seen in some sources only.
	Collectives, CollectivesUnmatched int
	// CollectivesUnknown: the sources' collectives could not be matched
	// (MergeSources: JSON reports hold no events), so every source's
	// CollWaitNs and LastArrivals are unknown, not 0; views print "-".
	CollectivesUnknown bool
	// NotOneJob says why the sources cannot be the ranks of one job (""
	// when they may be): their traces name different world sizes, or
	// their work starts more than SharedClockNs apart (files of unrelated
	// runs). Their collectives are then not matched (CollectivesUnknown:
	// no late arrival, no waits), since "who arrived last" across two
	// runs means nothing.
	NotOneJob string
}

// Source returns the row with Index i, or nil.
func (r *RankSummary) Source(i int) *SourceRow {
	if r == nil {
		return nil
	}
	for k := range r.Sources {
		if r.Sources[k].Index == i {
			return &r.Sources[k]
		}
	}
	return nil
}

// Label names source i for people: "rank 3" when ranks came from the
// traces, else "file 2" (its position) — or "?" for an unknown index.
func (r *RankSummary) Label(i int) string {
	s := r.Source(i)
	if s == nil {
		return "?"
	}
	if r.ByRank {
		return fmt.Sprintf("rank %d", s.Rank)
	}
	return fmt.Sprintf("file %d", s.Index)
}

// collKey identifies one collective within a source: its name, the step
// it started in (-1: none) and its position among the collectives of that
// name and step.
type collKey struct {
	name string
	step int64
	nth  int
}

// sourceScan is what Ranks keeps of one trace.
// StageWall is one stage's wall time on one source (SourceRow.Stages).
type StageWall struct {
	Name  string
	Ns    int64 // summed durations of its ranges, ns
	Count int   // ranges
}

type sourceScan struct {
	row   SourceRow
	steps map[int64]int64           // step number → duration
	colls map[collKey]interval.Span // collective → its interval on this source's clock
}

// Ranks works out the per-source numbers of traces (one source each, in
// input order) and, with several, each common step's spread and who
// arrived last at the collectives. Collectives are matched across sources
// by (name, step, n-th of that name in that step on that source): sources
// of one job issue the same collectives in the same order. A matched
// collective's durations differ because each source started it when it
// arrived and all finish together, so the shortest arrived last
// (the same rule as HTA's and the NCCL flight recorder's "late rank").
// Nothing compares times across sources. rules classifies communication
// (nil: DefaultRules).
func Ranks(traces []*tracer.Trace, rules *Rules) *RankSummary {
	if rules == nil {
		rules = DefaultRules()
	}
	scans := make([]*sourceScan, len(traces))
	for i, t := range traces {
		scans[i] = scanSource(t, i, rules)
	}
	return summarize(scans)
}

func summarize(scans []*sourceScan) *RankSummary {
	out := &RankSummary{ByRank: true}
	seen := map[int]bool{}
	for _, s := range scans {
		if s.row.RankFrom != RankFromTrace || seen[s.row.Rank] {
			out.ByRank = false
		}
		seen[s.row.Rank] = true
	}
	if !out.ByRank {
		for _, s := range scans {
			s.row.Rank, s.row.RankFrom = s.row.Index, RankFromOrder
		}
	}
	if len(scans) > 1 {
		out.NotOneJob = notOneJob(scans)
		if out.NotOneJob == "" {
			matchCollectives(scans, out)
		} else {
			out.CollectivesUnknown = true
		}
		out.Steps = spreads(scans, out.NotOneJob == "")
	}
	for _, s := range scans {
		out.Sources = append(out.Sources, s.row)
	}
	slices.SortStableFunc(out.Sources, func(a, b SourceRow) int { return cmp.Compare(a.Rank, b.Rank) })
	return out
}

// notOneJob is RankSummary.NotOneJob for scans: "" when they may be one
// job's ranks, else why not.
func notOneJob(scans []*sourceScan) string {
	var worlds []int
	var lo, hi int64
	started := false
	for _, s := range scans {
		if w := s.row.World; w > 0 && !slices.Contains(worlds, w) {
			worlds = append(worlds, w)
		}
		if s.row.SpanNs <= 0 && s.row.StartNs == 0 {
			continue // no work: no clock to compare
		}
		if !started {
			lo, hi, started = s.row.StartNs, s.row.StartNs, true
		}
		lo, hi = min(lo, s.row.StartNs), max(hi, s.row.StartNs)
	}
	if len(worlds) > 1 {
		slices.Sort(worlds)
		ws := make([]string, len(worlds))
		for i, w := range worlds {
			ws[i] = fmt.Sprint(w)
		}
		return fmt.Sprintf("not the ranks of one job: their traces name different world sizes (%s)", strings.Join(ws, ", "))
	}
	if started && hi-lo > SharedClockNs {
		apart, ok := units.LongDuration(hi - lo)
		if !ok {
			apart = units.Duration(hi - lo)
		}
		return fmt.Sprintf("not the ranks of one job: their work starts %s apart", apart)
	}
	return ""
}

// matchCollectives fills CollWaitNs and LastArrivals of every source, and
// out.Collectives, from the collectives every source has.
func matchCollectives(scans []*sourceScan, out *RankSummary) {
	all := map[collKey]int{}
	for _, s := range scans {
		for k := range s.colls {
			all[k]++
		}
	}
	waits := make([][]interval.Span, len(scans))
	for _, k := range slices.SortedFunc(maps.Keys(all), cmpCollKey) {
		if all[k] < len(scans) {
			out.CollectivesUnmatched++
			continue
		}
		out.Collectives++
		late := lastArrival(scans, k)
		scans[late].row.LastArrivals++
		waits = addWaits(waits, scans, k, late)
	}
	for i, s := range scans {
		s.row.CollWaitNs = interval.Len(interval.Union(waits[i]))
	}
}

// collDur is the duration of collective k on source s (0 when absent).
func (s *sourceScan) collDur(k collKey) int64 {
	c := s.colls[k]
	return c.End - c.Start
}

// lastArrival is the position in scans of the source with the shortest
// duration of collective k (ties: the lower rank).
func lastArrival(scans []*sourceScan, k collKey) int {
	late := 0
	for i, s := range scans {
		if d, l := s.collDur(k), scans[late].collDur(k); d < l || (d == l && s.row.Rank < scans[late].row.Rank) {
			late = i
		}
	}
	return late
}

// addWaits appends each source's wait in collective k, whose last arrival
// is scans[late]: the first (own duration - the last arrival's duration)
// ns of the collective, on the source's own clock.
func addWaits(waits [][]interval.Span, scans []*sourceScan, k collKey, late int) [][]interval.Span {
	short := scans[late].collDur(k)
	for i, s := range scans {
		if c := s.colls[k]; c.End-c.Start > short {
			waits[i] = append(waits[i], interval.Span{Start: c.Start, End: c.End - short})
		}
	}
	return waits
}

func cmpCollKey(a, b collKey) int {
	return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.name, b.name), cmp.Compare(a.nth, b.nth))
}

// spreads builds the StepSpread of every step number all sources have.
func spreads(scans []*sourceScan, matchColls bool) []StepSpread {
	var out []StepSpread
	for _, n := range slices.Sorted(maps.Keys(scans[0].steps)) {
		sp := StepSpread{Step: n, SlowSource: -1, FastSource: -1, LateSource: -1}
		ok := true
		for _, s := range scans {
			d, has := s.steps[n]
			if !has {
				ok = false
				break
			}
			if sp.SlowSource < 0 || d > sp.SlowNs {
				sp.SlowSource, sp.SlowNs = s.row.Index, d
			}
			if sp.FastSource < 0 || d < sp.FastNs {
				sp.FastSource, sp.FastNs = s.row.Index, d
			}
		}
		if !ok {
			continue
		}
		sp.SpreadNs = sp.SlowNs - sp.FastNs
		// Who arrived last at this step's collectives, and the longest
		// wait of a source in them (the union of its waits: collectives
		// on several threads overlap).
		lasts := make([]int, len(scans))
		lateNs := make([]int64, len(scans))
		waits := make([][]interval.Span, len(scans))
		for _, k := range slices.SortedFunc(maps.Keys(scans[0].colls), cmpCollKey) {
			if k.step != n || !matchColls {
				continue
			}
			matched := true
			for _, s := range scans {
				if _, has := s.colls[k]; !has {
					matched = false
					break
				}
			}
			if !matched {
				continue
			}
			sp.Collectives++
			late := lastArrival(scans, k)
			lasts[late]++
			for _, s := range scans {
				lateNs[late] = max(lateNs[late], s.collDur(k)-scans[late].collDur(k))
			}
			waits = addWaits(waits, scans, k, late)
		}
		if sp.Collectives > 0 {
			best := 0
			for i := range scans {
				if lasts[i] > lasts[best] || (lasts[i] == lasts[best] && lateNs[i] > lateNs[best]) {
					best = i
				}
				sp.WaitNs = max(sp.WaitNs, interval.Len(interval.Union(waits[i])))
			}
			sp.LateSource = scans[best].row.Index
		}
		out = append(out, sp)
	}
	return out
}

// scanSource reads one trace's numbers (see SourceRow).
func scanSource(t *tracer.Trace, index int, rules *Rules) *sourceScan {
	s := &sourceScan{steps: map[int64]int64{}, colls: map[collKey]interval.Span{}}
	r := &s.row
	r.Index, r.Path, r.Format, r.World = index, t.Path, t.Format, t.World
	r.Name = filepath.Base(t.Path)
	if t.Path == "" {
		r.Name = t.Format
	}
	r.Rank, r.RankFrom = index, RankFromOrder
	if t.Rank >= 0 {
		r.Rank, r.RankFrom = t.Rank, RankFromTrace
	}
	// gpu: the trace has GPU work; cpuOps: it has CPU operators (else, as
	// in a live session fed torch.profiler windows, the CPU operator
	// kernels on device -1 stand for them).
	gpu, cpuOps := false, false
	for i := range t.Events {
		e := &t.Events[i]
		gpu = gpu || (e.Kind.IsGPU() && e.Kind != tracer.KindGPURange && e.Device >= 0)
		cpuOps = cpuOps || e.Kind == tracer.KindCPUOp
	}
	cpuKind := tracer.KindCPUOp
	if !cpuOps {
		cpuKind = tracer.KindKernel
	}
	// Collective or not, per name (the rules' slow path, once a name).
	isComm := map[tracer.StrID]bool{}
	comm := func(id tracer.StrID) bool {
		c, ok := isComm[id]
		if !ok {
			c = rules.Classify(tracer.KindKernel, t.Strings.Get(id), Launch{}) == CategoryCollective
			isComm[id] = c
		}
		return c
	}
	// Steps first: collectives are keyed by the step they start in.
	var wins []stepWin
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind != tracer.KindStep {
			continue
		}
		if _, dup := s.steps[e.Value]; !dup {
			s.steps[e.Value] = max(e.Dur, 0)
			wins = append(wins, stepWin{e.Start, e.End(), e.Value})
		}
	}
	slices.SortFunc(wins, func(a, b stepWin) int { return cmp.Compare(a.s, b.s) })
	durs := slices.Collect(maps.Values(s.steps))
	r.Steps = len(durs)
	r.StepMedianNs = MedianNs(durs)

	stages := map[tracer.StrID]*StageWall{}
	stageSteps := map[int64]bool{} // steps in which a stage range starts
	compute := map[int32][]interval.Span{}
	comms := map[int32][]interval.Span{}
	copies := map[int32][]interval.Span{} // memcpy, memset: busy, not compute
	var commEvs []*tracer.Event
	var commOps []*tracer.Event // collective CPU operators (no-GPU traces)
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range t.Events {
		e := &t.Events[i]
		d := max(e.Dur, 0)
		if e.Kind == tracer.KindKernel {
			r.KernelCount++
			r.KernelNs = addSat(r.KernelNs, d)
		}
		if e.Kind == tracer.KindRange && !comm(e.Name) {
			if n := stepAtIn(wins, e.Start); n != -1 && !stageSteps[n] {
				stageSteps[n] = true
				r.StageSteps++
			}
			st := stages[e.Name]
			if st == nil {
				st = &StageWall{Name: t.Strings.Get(e.Name)}
				stages[e.Name] = st
			}
			st.Ns, st.Count = addSat(st.Ns, d), st.Count+1
		}
		switch {
		case gpu && (e.Kind == tracer.KindMemcpy || e.Kind == tracer.KindMemset) && e.Device >= 0:
			copies[e.Device] = append(copies[e.Device], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
		case gpu && (e.Kind == tracer.KindKernel) && e.Device >= 0:
			if comm(e.Name) {
				comms[e.Device] = append(comms[e.Device], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
				commEvs = append(commEvs, e)
			} else {
				compute[e.Device] = append(compute[e.Device], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
			}
		case !gpu && e.Kind == cpuKind:
			if comm(e.Name) {
				commOps = append(commOps, e)
			} else {
				compute[-1] = append(compute[-1], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
			}
		case !gpu && e.Kind == tracer.KindRange && comm(e.Name):
			comms[-1] = append(comms[-1], interval.Span{Start: e.Start, End: addSat(e.Start, d)})
			commEvs = append(commEvs, e)
		default:
			continue
		}
		first, last = min(first, e.Start), max(last, addSat(e.Start, d))
	}
	if !gpu && len(commEvs) == 0 {
		for _, e := range commOps {
			comms[-1] = append(comms[-1], interval.Span{Start: e.Start, End: addSat(e.Start, max(e.Dur, 0))})
			commEvs = append(commEvs, e)
			first, last = min(first, e.Start), max(last, addSat(e.Start, max(e.Dur, 0)))
		}
	}
	if last >= first {
		r.StartNs, r.EndNs, r.SpanNs = first, last, subSat(last, first)
	}
	for _, dev := range slices.Sorted(maps.Keys(compute)) {
		compute[dev] = interval.Union(compute[dev])
	}
	for _, dev := range slices.Sorted(maps.Keys(comms)) {
		c := interval.Union(comms[dev])
		comms[dev] = c
		r.CommNs = addSat(r.CommNs, interval.Len(c))
		r.CommOverlapNs = addSat(r.CommOverlapNs, interval.Overlap(c, compute[dev]))
	}
	r.CommExposedNs = r.CommNs - r.CommOverlapNs
	devs := map[int32]bool{}
	for dev, c := range compute {
		r.ComputeNs = addSat(r.ComputeNs, interval.Len(c))
		devs[dev] = true
	}
	for dev := range comms {
		devs[dev] = true
	}
	for dev := range copies {
		devs[dev] = true
	}
	for dev := range devs {
		all := append(append(slices.Clone(compute[dev]), comms[dev]...), copies[dev]...)
		r.BusyNs = addSat(r.BusyNs, interval.Len(interval.Union(all)))
	}
	r.IdleNs = max(r.SpanNs-r.BusyNs, 0)
	for _, st := range stages {
		r.Stages = append(r.Stages, *st)
	}
	slices.SortFunc(r.Stages, func(a, b StageWall) int {
		return cmp.Or(cmp.Compare(b.Ns, a.Ns), cmp.Compare(a.Name, b.Name))
	})

	// Collectives in start order, numbered within (name, step).
	slices.SortStableFunc(commEvs, func(a, b *tracer.Event) int { return cmp.Compare(a.Start, b.Start) })
	nth := map[collKey]int{}
	for _, e := range commEvs {
		k := collKey{name: t.Strings.Get(e.Name), step: stepAtIn(wins, e.Start)}
		n := nth[k]
		nth[k] = n + 1
		k.nth = n
		s.colls[k] = interval.Span{Start: e.Start, End: addSat(e.Start, max(e.Dur, 0))}
	}
	return s
}

// CombineSources aggregates traces (one source each, in input order;
// tracefile.GroupRuns has already merged the files of one rocprofv3 run)
// into one snapshot whose kernel, category and stage tables sum all
// sources, while nothing crosses sources: busy time is per source and
// device (as Aggregator keeps it), Totals.SpanNs is the longest source's
// own span, not a span across unrelated clocks, steps are one row per
// (source, step) (StepRow.Source), and Ranks holds each source's numbers.
// With one trace it is Aggregator.AddTrace + Snapshot plus Ranks. rules
// nil: DefaultRules.
func CombineSources(traces []*tracer.Trace, rules *Rules) *Snapshot {
	agg := NewAggregator(rules)
	for _, t := range traces {
		agg.AddTrace(t)
	}
	s := agg.Snapshot()
	s.Ranks = Ranks(traces, agg.Rules())
	s.Memory = MemoryOf(traces)
	s.Python = PythonOf(traces...)
	if len(traces) < 2 {
		return s
	}
	s.Rank = -1
	var steps []StepRow
	var span int64
	for i, t := range traces {
		steps = append(steps, SourceSteps(t, i)...)
		if r := s.Ranks.Source(i); r != nil {
			span = max(span, r.SpanNs)
		}
	}
	s.Steps = steps
	if !s.SummaryOnly {
		s.Totals.SpanNs = span
	}
	s.Devices, s.DeviceWork, s.DeviceSource = sourceDevices(traces)
	return s
}

// sourceDevices lists the devices of several sources apart: each
// source's devices in its own order, whether each ran GPU work (a
// kernel, memcpy or memset on that device id in that source) — the same
// id in two files is two devices — and its source's index.
func sourceDevices(traces []*tracer.Trace) ([]tracer.Device, []bool, []int) {
	var s Snapshot
	for i, t := range traces {
		busy := map[int32]bool{}
		for j := range t.Events {
			if k := t.Events[j].Kind; k == tracer.KindKernel || k == tracer.KindMemcpy || k == tracer.KindMemset {
				busy[t.Events[j].Device] = true
			}
		}
		s.addSourceDevices(i, t.Devices, busy)
	}
	return s.Devices, s.DeviceWork, s.DeviceSource
}

// addSourceDevices appends source i's devices to s.Devices, with
// whether each ran work (deviceWork over busy, the ids its GPU ops ran
// on) and its source index.
func (s *Snapshot) addSourceDevices(i int, devs []tracer.Device, busy map[int32]bool) {
	s.Devices = append(s.Devices, devs...)
	s.DeviceWork = append(s.DeviceWork, deviceWork(devs, busy)...)
	for range devs {
		s.DeviceSource = append(s.DeviceSource, i)
	}
}

// deviceWork says which of one source's devices ran work (busy: the
// device ids its GPU ops ran on). When its ops ran on ids none of its
// devices has, every listed device counts, as WorkingDevices does for
// one source: ROCm traces list their GPU as id 0 in deviceProperties
// and put its kernels on device 2 (TraceLens's MI300 sample).
func deviceWork(devs []tracer.Device, busy map[int32]bool) []bool {
	out := make([]bool, len(devs))
	any := false
	for i, d := range devs {
		out[i] = busy[d.ID]
		any = any || out[i]
	}
	if !any && len(busy) > 0 {
		for i := range out {
			out[i] = true
		}
	}
	return out
}

// SourceSteps is one trace's step rows (the Aggregator's rule: a step's
// start and duration from its first KindStep event, its GPU ops — kernel,
// memcpy, memset; ns summed — those whose launch context is in it),
// Source = index, in step order. CombineSources and the live session's
// window (one trace per process) use it so that sources' steps never merge.
func SourceSteps(t *tracer.Trace, index int) []StepRow {
	by := map[int64]*StepRow{}
	work := len(t.Calls) > 1 || traceHasWork(t)
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind == tracer.KindStep {
			if by[e.Value] == nil {
				by[e.Value] = &StepRow{Step: e.Value, StartNs: e.Start, DurNs: e.Dur, Source: index}
			}
		}
	}
	for i := range t.Events {
		e := &t.Events[i]
		if kindSlots[e.Kind&15] < 0 || e.Ctx == 0 || int(e.Ctx) >= len(t.Contexts) {
			continue
		}
		n := t.Contexts[e.Ctx].Step
		if n < 0 {
			continue
		}
		st := by[n]
		if st == nil { // launched in a step window without a step event
			st = &StepRow{Step: n, Source: index}
			by[n] = st
		}
		st.KernelNs = addSat(st.KernelNs, max(e.Dur, 0))
		st.Count++
		if work {
			st.addWork(e)
		}
	}
	out := make([]StepRow, 0, len(by))
	for _, n := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[n])
	}
	return out
}

// LateSource returns the index (SourceRow.Index) of the source that
// arrived last at the most matched collectives (the first in Sources
// order on a tie), or -1 when none arrived last at any: the straggler
// that the verdict, the Ranks view and the straggler finding name.
func (rs *RankSummary) LateSource() int {
	late, most := -1, 0
	for i := range rs.Sources {
		if s := &rs.Sources[i]; s.LastArrivals > most {
			late, most = s.Index, s.LastArrivals
		}
	}
	return late
}

// StageExcess is a stage a source spends longer in than the others
// (RankSummary.LateStage): its name and the per-step wall time (ns) of
// the source and the others' median.
type StageExcess struct {
	Name             string
	LateNs, OthersNs int64
}

// LateStage returns the stage (SourceRow.Stages) in which source late
// spends the most more wall time per step (over its StageSteps) than the
// other sources (their median; a source without the stage counts 0), when
// that excess reaches 5% of late's step median: what a late rank does
// while the others wait (the straggler was named, not its
// 40 ms "straggle" range per step). ok is false when there is no such
// stage, or no other source.
func (rs *RankSummary) LateStage(late int) (StageExcess, bool) {
	l := rs.Source(late)
	if l == nil || len(l.Stages) == 0 {
		return StageExcess{}, false
	}
	perStep := func(s *SourceRow, ns int64) int64 { return ns / int64(max(s.StageSteps, 1)) }
	var best StageExcess
	found := false
	for _, st := range l.Stages {
		var others []int64
		for i := range rs.Sources {
			o := &rs.Sources[i]
			if o.Index == late {
				continue
			}
			var ns int64
			for _, ost := range o.Stages {
				if ost.Name == st.Name {
					ns = ost.Ns
					break
				}
			}
			others = append(others, perStep(o, ns))
		}
		if len(others) == 0 {
			return StageExcess{}, false
		}
		slices.Sort(others)
		med := others[(len(others)-1)/2]
		if mine := perStep(l, st.Ns); !found || mine-med > best.LateNs-best.OthersNs {
			best, found = StageExcess{Name: st.Name, LateNs: mine, OthersNs: med}, true
		}
	}
	if ex := best.LateNs - best.OthersNs; ex <= 0 || ex < l.StepMedianNs/20 {
		return StageExcess{}, false
	}
	return best, true
}
