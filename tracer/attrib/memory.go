package attrib

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// The memory model: allocations and frees (tracer.MemEvent) paired by
// address, each attributed to what was open at its time by the rule that
// places kernels (tracer.Linker, Resolve at the event's process, thread
// and time: the step window of the process containing it, the operators
// open on its thread, the innermost range on its thread else on the step
// thread), then summed per step and device, per operator and stage, and
// across steps. No I/O; Memory is immutable once built.
//
// Definitions (the independent checks in testdata/memory_ref.py follow
// them, written from this text):
//
//   - Pairing: an allocation (Bytes > 0) is freed by the next free
//     (Bytes < 0) in time order of the same source, process, device and
//     address. A free with no allocation open there was allocated before
//     the trace (FreesUnpaired); a second allocation at an address still
//     open replaces the first, which counts as unpaired (AllocsUnpaired)
//     and is treated as never freed.
//   - Operator: the innermost operator open at the event, skipping the
//     allocator's own operators (MemHelperOps: aten::empty and kin, which
//     allocate for their caller); the innermost one when all are helpers;
//     "" when none is open. Freed by: the same for the free.
//   - Level: the allocator's Total Allocated after each event when the
//     source gives it, else the running sum of Bytes on that device since
//     the trace's first event. Reserved: the Total Reserved after each
//     event (0 when not given).
//   - Step peak (per step and device): the largest level after an event of
//     the device inside the step, or the level the step started with when
//     that is larger (then AtPeak names no operator). AtPeak: the operator
//     and stage of the event that first reached it, and the allocations
//     live just after it, largest first (at most MemLiveShown).
//   - Temporary: an allocation freed inside the step it was allocated in
//     (both events' steps equal and >= 0). Temporaries are grouped by
//     (device, operator, stage, freed by, bytes): count, median lifetime,
//     summed bytes × lifetime.
//   - Held at step end: an allocation of step s not freed by the end of s
//     (freed later, or never). Step HeldBytes: the level after the
//     device's last event before the step ends.
//   - Growth per step: the mean of HeldBytes(s+1) − HeldBytes(s) over the
//     pairs of consecutive steps s, s+1 that both have memory events on the
//     device. Only such pairs: a torch.profiler window's host totals count
//     only the blocks it saw allocated, so a block freed between windows
//     never leaves them, and steps of different windows cannot be
//     compared.

// MemHelperOps are operators that only allocate for the operator that
// calls them; allocations made inside them belong to the caller.
var MemHelperOps = []string{
	"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
	"aten::new_empty_strided", "aten::resize_", "aten::empty.memory_format",
}

// MemLiveShown is how many live allocations AtPeak lists.
const MemLiveShown = 8

// MemAllocsKept bounds Memory.Allocations (the largest are kept).
const MemAllocsKept = 1 << 16

// MemRecord is a memory event with what was open at its time.
type MemRecord struct {
	tracer.MemEvent
	Op    string // see the package rule above; "" none
	Stage string // innermost range; "" none
	// Ops are the operators open at it, outermost first (shared between
	// records of one stack: never modified).
	Ops  []string
	Step int64 // -1: in no step window
	// Source is the index of the input (file or process) it came from.
	Source int
}

// MemStepWindow is one step's time window in a source.
type MemStepWindow struct {
	Source  int
	PID     int32
	Step    int64
	StartNs int64
	EndNs   int64
}

// Memory is the memory model of one or more sources.
type Memory struct {
	Events         int // memory events read
	Allocs         int // allocations (Bytes > 0)
	Frees          int
	FreesUnpaired  int // frees of blocks allocated before the trace
	AllocsUnpaired int // allocations replaced at their address before a free
	// Steps: one row per (source, step, device) with memory events, in
	// source, step, device order.
	Steps []MemStep
	// Devices: per (source, device) totals over the steps.
	Devices []MemDevice
	// Temporaries ranked by Bytes (one allocation's size), then ByteNs,
	// descending.
	Temporaries []MemTemp
	// Operators: one row per (device, operator, stage), by AllocBytes
	// descending.
	Operators []MemOpRow
	// Stages: one row per (device, stage), by AllocBytes descending.
	Stages []MemOpRow
	// Allocations lists single allocations, largest first (at most
	// MemAllocsKept): the drill-down of an operator.
	Allocations []MemAlloc
	// Levels is the level (bytes allocated) after each event, per source
	// and device in time order; past MemLevelsKept points of one device
	// they are thinned to the largest of each run (peaks stay): the
	// Timeline's memory lane.
	Levels []MemLevel
}

// MemLevel is the level of one device at a time.
type MemLevel struct {
	Source int
	Device int32
	TS     int64 // ns
	Bytes  int64
}

// MemLevelsKept bounds Memory.Levels per device.
const MemLevelsKept = 1 << 15

// MemStep is one step on one device.
type MemStep struct {
	Source int
	Step   int64
	Device int32 // -1 host memory
	// PeakAllocatedBytes, PeakReservedBytes: the step's highest level
	// and reserved total (bytes).
	PeakAllocatedBytes int64
	PeakReservedBytes  int64
	PeakNs             int64 // when the peak was reached (the step's start when carried in)
	AtPeak             MemAtPeak
	// HeldBytes is the level at the step's end; ReservedEndBytes the
	// reserved total then.
	HeldBytes        int64
	ReservedEndBytes int64
	AllocBytes       int64 // allocated during the step
	Allocs           int
	TempBytes        int64 // of which freed inside the step
	Temps            int
}

// MemAtPeak is what ran when a step reached its peak.
type MemAtPeak struct {
	Op    string
	Ops   []string // operators open at the peak, outermost first (read only)
	Stage string
	Live  []MemAlloc // largest first
}

// MemDevice sums one device of one source over its steps.
type MemDevice struct {
	Source             int
	Device             int32
	Steps              int
	PeakAllocatedBytes int64 // over all steps
	PeakReservedBytes  int64
	// GrowthBytesPerStep: how much HeldBytes grows a step, the mean over
	// StepPairs, the pairs of consecutive step numbers both with memory
	// events (see the rule); RisingSteps: the pairs whose second step
	// holds more.
	GrowthBytesPerStep float64
	StepPairs          int
	RisingSteps        int
	// FragmentationBytes: the largest reserved minus allocated at a step's
	// end.
	FragmentationBytes int64
}

// MemAlloc is one allocation.
type MemAlloc struct {
	Source  int
	Device  int32
	Op      string
	Ops     []string // the operators open at it, outermost first (shared: read only)
	Stage   string
	Step    int64
	Bytes   int64
	StartNs int64
	// LifetimeNs: free time minus allocation time; -1 not freed in the
	// trace.
	LifetimeNs int64
	FreedBy    string
	FreeStep   int64 // -1 none or not freed
}

// MemTemp is a group of temporaries of one size from one operator.
type MemTemp struct {
	Device  int32
	Op      string
	Ops     []string // the operators open at its first allocation (read only)
	Stage   string
	FreedBy string
	Bytes   int64 // of each
	Count   int
	// LifetimeNs: the median lifetime; ByteNs: bytes × lifetime summed.
	LifetimeNs int64
	ByteNs     float64
	Steps      int // distinct steps it occurred in
}

// MemOpRow is one operator (or stage) on one device.
type MemOpRow struct {
	Device     int32
	Op         string // "" for stage rows, and allocations outside operators
	Stage      string
	AllocBytes int64
	Allocs     int
	TempBytes  int64
	Temps      int
	// HeldBytes: bytes of its allocations still held at the end of the
	// step they were made in, summed over steps.
	HeldBytes int64
	Steps     int // steps it allocated in
}

// MemOp chooses the operator an allocation belongs to from the operators
// open at it (outermost first): the innermost not in MemHelperOps, else
// the innermost; "" when none.
func MemOp(ops []string) string {
	for i := len(ops) - 1; i >= 0; i-- {
		if !slices.Contains(MemHelperOps, ops[i]) {
			return ops[i]
		}
	}
	if len(ops) > 0 {
		return ops[len(ops)-1]
	}
	return ""
}

// memOpIDs is MemOp over interned names.
func memOpIDs(ops []tracer.StrID, strs *tracer.Strings) string {
	for i := len(ops) - 1; i >= 0; i-- {
		if n := strs.Get(ops[i]); !slices.Contains(MemHelperOps, n) {
			return n
		}
	}
	if len(ops) > 0 {
		return strs.Get(ops[len(ops)-1])
	}
	return ""
}

// AttributeMemory resolves each of ms (any order) with l, whose operators,
// ranges and steps are already added, and returns the records in time
// order. The Linker's sweeps move forward, so the events are resolved in
// time order.
func AttributeMemory(l *tracer.Linker, strs *tracer.Strings, ms []tracer.MemEvent, source int) []MemRecord {
	out := make([]MemRecord, len(ms))
	for i := range ms {
		out[i] = MemRecord{MemEvent: ms[i], Source: source}
	}
	slices.SortStableFunc(out, func(a, b MemRecord) int { return cmp.Compare(a.TS, b.TS) })
	stacks := map[tracer.CtxID][]string{}
	for i := range out {
		r := &out[i]
		id := l.Resolve(r.PID, r.TID, r.TS)
		c := &l.Contexts[id]
		ops, ok := stacks[id]
		if !ok && len(c.Ops) > 0 {
			ops = make([]string, len(c.Ops))
			for j, o := range c.Ops {
				ops[j] = strs.Get(o)
			}
			stacks[id] = ops
		}
		r.Ops = ops
		r.Op = memOpIDs(c.Ops, strs)
		if len(c.Ranges) > 0 {
			r.Stage = strs.Get(c.Ranges[len(c.Ranges)-1])
		}
		r.Step = c.Step
	}
	return out
}

// TraceMemory returns the records and step windows of t (source index
// source): its operators, ranges and steps go into a fresh Linker. nil
// when t has no memory events.
func TraceMemory(t *tracer.Trace, source int) ([]MemRecord, []MemStepWindow) {
	if len(t.Memory) == 0 {
		return nil, nil
	}
	l := tracer.NewLinker()
	var steps []MemStepWindow
	seen := map[[2]int64]bool{}
	for i := range t.Events {
		e := &t.Events[i]
		l.Add(e)
		if e.Kind == tracer.KindStep {
			k := [2]int64{int64(e.PID), e.Value}
			if !seen[k] {
				seen[k] = true
				steps = append(steps, MemStepWindow{Source: source, PID: e.PID, Step: e.Value, StartNs: e.Start, EndNs: e.End()})
			}
		}
	}
	return AttributeMemory(l, t.Strings, t.Memory, source), steps
}

// MemoryOf builds the model of several traces (each a source, in order);
// nil when none has memory events.
func MemoryOf(traces []*tracer.Trace) *Memory {
	var recs []MemRecord
	var steps []MemStepWindow
	for i, t := range traces {
		r, s := TraceMemory(t, i)
		if recs == nil {
			recs = r // one source: no copy
		} else {
			recs = append(recs, r...)
		}
		steps = append(steps, s...)
	}
	if len(recs) == 0 {
		return nil
	}
	return BuildMemory(recs, steps)
}

type memKey struct {
	src  int
	pid  int32
	dev  int32
	addr uint64
}

type memDevKey struct {
	src int
	pid int32
	dev int32
}

type memStepKey struct {
	src  int
	step int64
	dev  int32
}

// memLive is an open allocation during the sweep.
type memLive struct {
	rec  int // index of its record
	free int // index of its free record; -1 none
}

// BuildMemory computes the model from attributed records (any order;
// sorted here by time, stably) and the sources' step windows.
func BuildMemory(recs []MemRecord, windows []MemStepWindow) *Memory {
	byTime := func(a, b MemRecord) int { return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.TS, b.TS)) }
	if !slices.IsSortedFunc(recs, byTime) { // sorted already (files, the session): not copied
		recs = slices.Clone(recs)
		slices.SortStableFunc(recs, byTime)
	}
	m := &Memory{Events: len(recs)}
	// Step ends per (source, pid, step): the latest end of its windows.
	type spKey struct {
		src  int
		pid  int32
		step int64
	}
	win := map[spKey]MemStepWindow{}
	for _, w := range windows {
		k := spKey{w.Source, w.PID, w.Step}
		if o, ok := win[k]; !ok || w.EndNs > o.EndNs {
			win[k] = w
		}
	}

	// Pass 1: pair, levels.
	free := make([]int, len(recs))  // alloc index → free index, -1 none
	freed := make([]int, len(recs)) // free index → alloc index, -1 none
	for i := range free {
		free[i], freed[i] = -1, -1
	}
	level := make([]int64, len(recs))
	open := map[memKey]int{}
	run := map[memDevKey]int64{}
	for i := range recs {
		r := &recs[i]
		dk := memDevKey{r.Source, r.PID, r.Device}
		run[dk] += r.Bytes
		level[i] = r.Allocated
		if r.Allocated < 0 {
			level[i] = run[dk]
		}
		k := memKey{r.Source, r.PID, r.Device, r.Addr}
		switch {
		case r.Bytes > 0:
			m.Allocs++
			if _, ok := open[k]; ok {
				m.AllocsUnpaired++
			}
			open[k] = i
		case r.Bytes < 0:
			m.Frees++
			a, ok := open[k]
			if !ok {
				m.FreesUnpaired++
				continue
			}
			delete(open, k)
			free[a], freed[i] = i, a
		}
	}

	// Per step and device: peaks, held bytes, allocations.
	type stepAcc struct {
		st      MemStep
		peakIdx int
		lastIdx int // last event of the device before the step's end
		pid     int32
	}
	steps := map[memStepKey]*stepAcc{}
	stepOf := func(r *MemRecord) *stepAcc {
		if r.Step < 0 {
			return nil
		}
		k := memStepKey{r.Source, r.Step, r.Device}
		a := steps[k]
		if a == nil {
			a = &stepAcc{st: MemStep{Source: r.Source, Step: r.Step, Device: r.Device, PeakAllocatedBytes: -1, PeakNs: -1}, peakIdx: -1, lastIdx: -1, pid: r.PID}
			if w, ok := win[spKey{r.Source, r.PID, r.Step}]; ok {
				a.st.PeakNs = w.StartNs
			}
			steps[k] = a
		}
		return a
	}
	prevLevel := map[memDevKey]int{} // last event index per device
	carried := map[memStepKey]int64{}
	for i := range recs {
		r := &recs[i]
		dk := memDevKey{r.Source, r.PID, r.Device}
		a := stepOf(r)
		if a != nil {
			k := memStepKey{r.Source, r.Step, r.Device}
			if _, ok := carried[k]; !ok {
				if p, ok := prevLevel[dk]; ok {
					carried[k] = level[p]
				} else {
					carried[k] = -1
				}
			}
			if level[i] > a.st.PeakAllocatedBytes {
				a.st.PeakAllocatedBytes, a.peakIdx, a.st.PeakNs = level[i], i, r.TS
			}
			a.st.PeakReservedBytes = max(a.st.PeakReservedBytes, r.Reserved)
			if r.Bytes > 0 {
				a.st.AllocBytes += r.Bytes
				a.st.Allocs++
				if f := free[i]; f >= 0 && recs[f].Step == r.Step {
					a.st.TempBytes += r.Bytes
					a.st.Temps++
				}
			}
		}
		prevLevel[dk] = i
	}
	// Carried-in levels; held bytes at the end: the device's last event
	// before the step's end.
	lastBefore := func(src int, pid int32, dev int32, end int64) int {
		j, _ := slices.BinarySearchFunc(recs, MemRecord{Source: src, MemEvent: tracer.MemEvent{TS: end}}, func(a, b MemRecord) int {
			return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.TS, b.TS))
		})
		for j--; j >= 0 && recs[j].Source == src; j-- {
			if recs[j].PID == pid && recs[j].Device == dev {
				return j
			}
		}
		return -1
	}
	for k, a := range steps {
		if c := carried[k]; c > a.st.PeakAllocatedBytes {
			a.st.PeakAllocatedBytes, a.peakIdx = c, -1
			if w, ok := win[spKey{k.src, a.pid, k.step}]; ok {
				a.st.PeakNs = w.StartNs
			}
		}
		end := int64(1<<63 - 1)
		if w, ok := win[spKey{k.src, a.pid, k.step}]; ok {
			end = w.EndNs
		}
		if j := lastBefore(k.src, a.pid, k.dev, end); j >= 0 {
			a.lastIdx = j
			a.st.HeldBytes = level[j]
			a.st.ReservedEndBytes = max(recs[j].Reserved, 0)
		}
		a.st.PeakReservedBytes = max(a.st.PeakReservedBytes, 0)
		if a.peakIdx >= 0 {
			a.st.AtPeak.Op, a.st.AtPeak.Ops, a.st.AtPeak.Stage = recs[a.peakIdx].Op, recs[a.peakIdx].Ops, recs[a.peakIdx].Stage
		}
	}

	// Allocations, temporaries, operator and stage rows.
	allocOf := func(i int) MemAlloc {
		r := &recs[i]
		al := MemAlloc{Source: r.Source, Device: r.Device, Op: r.Op, Ops: r.Ops, Stage: r.Stage, Step: r.Step, Bytes: r.Bytes, StartNs: r.TS, LifetimeNs: -1, FreeStep: -1}
		if f := free[i]; f >= 0 {
			al.LifetimeNs = recs[f].TS - r.TS
			al.FreedBy = recs[f].Op
			al.FreeStep = recs[f].Step
		}
		return al
	}
	type tempKey struct {
		dev                int32
		op, stage, freedBy string
		bytes              int64
	}
	type tempAcc struct {
		t     MemTemp
		lives []int64
		steps map[memStepKey]bool
	}
	temps := map[tempKey]*tempAcc{}
	type opKey struct {
		dev       int32
		op, stage string
	}
	ops := map[opKey]*MemOpRow{}
	opSteps := map[opKey]map[memStepKey]bool{}
	stages := map[opKey]*MemOpRow{}
	stageSteps := map[opKey]map[memStepKey]bool{}
	addRow := func(rows map[opKey]*MemOpRow, seen map[opKey]map[memStepKey]bool, k opKey, al *MemAlloc, temp, held bool, src int) {
		row := rows[k]
		if row == nil {
			row = &MemOpRow{Device: k.dev, Op: k.op, Stage: k.stage}
			rows[k] = row
			seen[k] = map[memStepKey]bool{}
		}
		row.AllocBytes += al.Bytes
		row.Allocs++
		if temp {
			row.TempBytes += al.Bytes
			row.Temps++
		}
		if held {
			row.HeldBytes += al.Bytes
		}
		if al.Step >= 0 {
			seen[k][memStepKey{src, al.Step, al.Device}] = true
		}
	}
	for i := range recs {
		r := &recs[i]
		if r.Bytes <= 0 {
			continue
		}
		al := allocOf(i)
		m.Allocations = append(m.Allocations, al)
		temp := al.Step >= 0 && al.FreeStep == al.Step
		held := false
		if al.Step >= 0 && !temp {
			if w, ok := win[spKey{r.Source, r.PID, r.Step}]; ok {
				held = al.LifetimeNs < 0 || r.TS+al.LifetimeNs >= w.EndNs
			} else {
				held = true
			}
		}
		addRow(ops, opSteps, opKey{r.Device, r.Op, r.Stage}, &al, temp, held, r.Source)
		addRow(stages, stageSteps, opKey{r.Device, "", r.Stage}, &al, temp, held, r.Source)
		if temp {
			k := tempKey{r.Device, r.Op, r.Stage, al.FreedBy, r.Bytes}
			t := temps[k]
			if t == nil {
				t = &tempAcc{t: MemTemp{Device: r.Device, Op: r.Op, Ops: r.Ops, Stage: r.Stage, FreedBy: al.FreedBy, Bytes: r.Bytes}, steps: map[memStepKey]bool{}}
				temps[k] = t
			}
			t.t.Count++
			t.lives = append(t.lives, al.LifetimeNs)
			t.t.ByteNs += float64(r.Bytes) * float64(al.LifetimeNs)
			t.steps[memStepKey{r.Source, r.Step, r.Device}] = true
		}
	}

	// Live allocations at each step's peak: one sweep in time order.
	peaks := map[int][]*stepAcc{}
	for _, a := range steps {
		if a.peakIdx >= 0 {
			peaks[a.peakIdx] = append(peaks[a.peakIdx], a)
		}
	}
	if len(peaks) > 0 {
		live := map[memDevKey]map[int]bool{}
		for i := range recs {
			r := &recs[i]
			dk := memDevKey{r.Source, r.PID, r.Device}
			if r.Bytes > 0 {
				if live[dk] == nil {
					live[dk] = map[int]bool{}
				}
				live[dk][i] = true
			}
			if a := freed[i]; a >= 0 {
				delete(live[dk], a)
			}
			for _, a := range peaks[i] {
				idx := make([]int, 0, len(live[dk]))
				for j := range live[dk] {
					idx = append(idx, j)
				}
				slices.SortFunc(idx, func(x, y int) int {
					return cmp.Or(cmp.Compare(recs[y].Bytes, recs[x].Bytes), cmp.Compare(x, y))
				})
				for _, j := range idx[:min(len(idx), MemLiveShown)] {
					a.st.AtPeak.Live = append(a.st.AtPeak.Live, allocOf(j))
				}
			}
		}
	}

	// Output, ordered.
	for _, a := range steps {
		m.Steps = append(m.Steps, a.st)
	}
	slices.SortFunc(m.Steps, func(a, b MemStep) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Step, b.Step), cmp.Compare(a.Device, b.Device))
	})
	devs := map[[2]int]*MemDevice{}
	var devOrder [][2]int
	prev := map[[2]int]MemStep{}
	growth := map[[2]int]int64{}
	for _, s := range m.Steps {
		k := [2]int{s.Source, int(s.Device)}
		d := devs[k]
		if d == nil {
			d = &MemDevice{Source: s.Source, Device: s.Device}
			devs[k] = d
			devOrder = append(devOrder, k)
		} else if p := prev[k]; p.Step+1 == s.Step {
			d.StepPairs++
			growth[k] += s.HeldBytes - p.HeldBytes
			if s.HeldBytes > p.HeldBytes {
				d.RisingSteps++
			}
		}
		prev[k] = s
		d.Steps++
		d.PeakAllocatedBytes = max(d.PeakAllocatedBytes, s.PeakAllocatedBytes)
		d.PeakReservedBytes = max(d.PeakReservedBytes, s.PeakReservedBytes)
		if s.ReservedEndBytes > 0 {
			d.FragmentationBytes = max(d.FragmentationBytes, s.ReservedEndBytes-s.HeldBytes)
		}
	}
	for _, k := range devOrder {
		d := devs[k]
		if d.StepPairs > 0 {
			d.GrowthBytesPerStep = float64(growth[k]) / float64(d.StepPairs)
		}
		m.Devices = append(m.Devices, *d)
	}
	for _, t := range temps {
		slices.Sort(t.lives)
		t.t.LifetimeNs = t.lives[(len(t.lives)-1)/2]
		t.t.Steps = len(t.steps)
		m.Temporaries = append(m.Temporaries, t.t)
	}
	slices.SortFunc(m.Temporaries, func(a, b MemTemp) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.ByteNs, a.ByteNs), cmp.Compare(a.Device, b.Device),
			strings.Compare(a.Op, b.Op), strings.Compare(a.Stage, b.Stage), strings.Compare(a.FreedBy, b.FreedBy))
	})
	rows := func(in map[opKey]*MemOpRow, seen map[opKey]map[memStepKey]bool) []MemOpRow {
		out := make([]MemOpRow, 0, len(in))
		for k, r := range in {
			r.Steps = len(seen[k])
			out = append(out, *r)
		}
		slices.SortFunc(out, func(a, b MemOpRow) int {
			return cmp.Or(cmp.Compare(b.AllocBytes, a.AllocBytes), cmp.Compare(a.Device, b.Device), strings.Compare(a.Op, b.Op), strings.Compare(a.Stage, b.Stage))
		})
		return out
	}
	m.Operators = rows(ops, opSteps)
	m.Stages = rows(stages, stageSteps)
	slices.SortStableFunc(m.Allocations, func(a, b MemAlloc) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.StartNs, b.StartNs))
	})
	if len(m.Allocations) > MemAllocsKept {
		m.Allocations = slices.Clip(m.Allocations[:MemAllocsKept])
	}
	m.Levels = memLevels(recs, level)
	return m
}

// memLevels is each device's level series, thinned to MemLevelsKept
// points (the largest of each run of n).
func memLevels(recs []MemRecord, level []int64) []MemLevel {
	per := map[memDevKey][]MemLevel{}
	var order []memDevKey
	for i := range recs {
		r := &recs[i]
		k := memDevKey{r.Source, r.PID, r.Device}
		if per[k] == nil {
			order = append(order, k)
		}
		per[k] = append(per[k], MemLevel{Source: r.Source, Device: r.Device, TS: r.TS, Bytes: level[i]})
	}
	var out []MemLevel
	for _, k := range order {
		ls := per[k]
		if n := (len(ls) + MemLevelsKept - 1) / MemLevelsKept; n > 1 {
			var thin []MemLevel
			for i := 0; i < len(ls); i += n {
				best := ls[i]
				for _, l := range ls[i:min(i+n, len(ls))] {
					if l.Bytes > best.Bytes {
						best = l
					}
				}
				thin = append(thin, best)
			}
			ls = thin
		}
		out = append(out, ls...)
	}
	return out
}

// TemporariesByByteNs returns the temporaries ranked by bytes × lifetime.
func (m *Memory) TemporariesByByteNs() []MemTemp {
	out := slices.Clone(m.Temporaries)
	slices.SortStableFunc(out, func(a, b MemTemp) int { return cmp.Compare(b.ByteNs, a.ByteNs) })
	return out
}

// AllocationsOf returns the allocations of one operator and stage on a
// device (largest first).
func (m *Memory) AllocationsOf(dev int32, op, stage string) []MemAlloc {
	var out []MemAlloc
	for _, a := range m.Allocations {
		if a.Device == dev && a.Op == op && a.Stage == stage {
			out = append(out, a)
		}
	}
	return out
}
