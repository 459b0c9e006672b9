package attrib

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// StageNone is the stage of GPU work launched outside every annotation range.
const StageNone = "(none)"

// Aggregator accumulates GPU events into per-kernel, per-category, per-stage
// and per-step statistics. Feed it whole traces (AddTrace) or single events
// as a live source produces them (Add / AddEvents); Snapshot returns an
// immutable summary at any time. Not safe for concurrent use.
//
// Cost: classification is cached per name (StrID), per operator/range name
// and per context (CtxID) of each string table the events come with, so the
// per-event work is a few slice lookups and additions (about 280 machine
// instructions per event in BenchmarkAggregate, counted with valgrind).
// Memory: each kernel execution's duration is kept (8 bytes) for exact
// percentiles, and the busy union keeps one 16-byte interval per gap; long
// live sessions bound both with SetPercentileCap and SetBusySeal.
type Aggregator struct {
	rules *Rules
	kind  [16][]uint64 // rule bitset per tracer.Kind
	kind1 [16]uint64   // kind[k][0], for the one-word fast path

	rows   []rowAcc
	rowIdx map[rowKey]int32

	cats     []groupAcc // by category id of rules
	stages   []groupAcc // by stage id
	stageKey []string
	stageIdx map[string]int32

	steps map[int64]*stepAcc
	busy  map[devKey]*devBusy

	bindings []*binding
	cur      *binding
	gen      uint32 // bumped by Reset; invalidates cached pointers

	totals        Totals
	first, last   int64 // GPU span, ns
	anyGPU        bool
	sources       []string
	formats       []string
	devices       []tracer.Device
	rank          int
	dropped       uint64
	warnings      []string
	summaryTraces int
	eventTraces   int
	pctCap        int   // 0: keep every duration
	sealLag       int64 // 0: keep the whole busy union
}

// SetBusySeal lets busy-time bookkeeping forget the shape of the union more
// than lagNs before the newest GPU start (keeping only its length), so a
// long live session's memory stays bounded. A GPU op arriving later than
// that with a start inside the forgotten part is counted only from the
// forgotten part's end; exact for in-order sources. 0 (default) forgets
// nothing, as file reports need.
func (a *Aggregator) SetBusySeal(lagNs int64) {
	if lagNs < 0 {
		lagNs = 0
	}
	a.sealLag = lagNs
	for _, b := range a.busy {
		b.all.lag, b.kern.lag = lagNs, lagNs
	}
}

// SetPercentileCap bounds the durations kept per kernel row to n (0, the
// default, keeps them all, so percentiles are exact). A row past n
// executions moves to a log-linear histogram (about 30 KB, relative error
// < 1/64) and reports PercentilesApprox. Live sessions that run for hours
// should set it (e.g. 1<<16: at most 512 KB per row); file reports keep the
// default.
func (a *Aggregator) SetPercentileCap(n int) {
	if n < 0 {
		n = 0
	}
	a.pctCap = n
}

type rowKey struct {
	kind tracer.Kind
	name string
}

type devKey struct{ src, dev int32 }

type share struct {
	id int32
	ns int64
}

type rowAcc struct {
	name        string
	display     string
	kind        tracer.Kind
	count       int64
	total       int64
	min, max    int64
	durs        []int64
	sorted      int     // durs[:sorted] is sorted
	hist        []int64 // non-nil: durations counted by histBucket instead of kept
	cats        []share
	stages      []share
	ops, ranges []string
	hasCtx      bool
	// Summary-only contributions: no durations behind them.
	sumRows int
	sumP50  int64
}

type groupAcc struct {
	count, total int64
}

type stepAcc struct {
	start, dur     int64
	seen           bool
	kernelNs, gpus int64
}

// devBusy is one device's busy time: the union of all its GPU ops (kernel,
// memcpy, memset) and of its kernels alone.
type devBusy struct{ all, kern busyAcc }

// busyAcc keeps [start,end) intervals of one device: chunks are sorted,
// disjoint runs of the union (each chunk sorted, chunk i entirely before
// chunk i+1); pending holds intervals not yet merged, coalesced on the fly
// while they arrive in order. In-order input is merged without copying.
type busyAcc struct {
	chunks   [][]ival
	merged   int // intervals in chunks
	pending  []ival
	unsorted bool // pending is not sorted by start
	// Sealing (Aggregator.SetBusySeal): union before sealedEnd is only
	// remembered as its length sealedNs.
	lag       int64
	sealedNs  int64
	sealedEnd int64
	sealed    bool
}

type ival struct{ s, e int64 }

// binding caches classification for one string table / context list.
type binding struct {
	strs  *tracer.Strings
	ctxs  []tracer.Context
	src   int32
	words int
	// Per StrID, per kind slot (kernel, memcpy, memset): row index + 1.
	nameRow [3][]int32
	// Per StrID: name masks [N..., NA...] (2*words each) and a done flag.
	nameMask []uint64
	nameDone []bool
	// Per StrID of an operator / range name: ctxNameBits (2*words each).
	opBits []uint64
	opDone []bool
	// Per CtxID.
	ctx     []ctxInfo
	ctxMask []uint64 // [C..., CA...] (2*words each)
	// busy accumulators by device index (0..maxDevSlots-1), valid while
	// busyGen == a.gen.
	busy    []*devBusy
	busyGen uint32
}

const maxDevSlots = 1024

type ctxInfo struct {
	done    bool
	stage   int32
	step    int64
	stepAcc *stepAcc // cached a.step(step); valid while stepGen == a.gen
	stepGen uint32
}

// NewAggregator returns an empty aggregator classifying with rules (nil:
// DefaultRules).
func NewAggregator(rules *Rules) *Aggregator {
	if rules == nil {
		rules = DefaultRules()
	}
	a := &Aggregator{
		rules:    rules,
		rowIdx:   map[rowKey]int32{},
		cats:     make([]groupAcc, len(rules.cats)),
		stageIdx: map[string]int32{},
		steps:    map[int64]*stepAcc{},
		busy:     map[devKey]*devBusy{},
		rank:     -1,
	}
	for k := range a.kind {
		a.kind[k] = rules.kindMask(tracer.Kind(k))
		a.kind1[k] = a.kind[k][0]
	}
	a.stageID(StageNone)
	return a
}

// New is NewAggregator.
func New(rules *Rules) *Aggregator { return NewAggregator(rules) }

// Rules returns the rules the aggregator classifies with.
func (a *Aggregator) Rules() *Rules { return a.rules }

// SetSource sets the Source and Format a Snapshot reports (live sessions:
// "live: <command>", "rlktop").
func (a *Aggregator) SetSource(source, format string) {
	a.sources = []string{source}
	a.formats = []string{format}
}

// AddTrace aggregates every GPU event (kernel, memcpy, memset) and step of a
// linked trace, with its metadata (path, format, devices, rank, warnings).
// A SummaryOnly trace contributes its Summary rows instead (no busy time,
// stages, steps or p99). Several traces may be added; their devices are kept
// apart for busy time.
func (a *Aggregator) AddTrace(t *tracer.Trace) {
	a.sources = append(a.sources, t.Path)
	if !slices.Contains(a.formats, t.Format) {
		a.formats = append(a.formats, t.Format)
	}
	a.devices = append(a.devices, t.Devices...)
	if a.rank < 0 {
		a.rank = t.Rank
	}
	a.dropped += t.Dropped
	for _, w := range t.Warnings {
		if t.Path != "" && len(a.sources) > 1 {
			w = t.Path + ": " + w
		}
		a.warnings = append(a.warnings, w)
	}
	b := a.newBinding(t.Strings, t.Contexts)
	if t.SummaryOnly {
		a.summaryTraces++
		for i := range t.Summary {
			a.addSummary(&t.Summary[i])
		}
		return
	}
	a.eventTraces++
	a.addEvents(b, t.Events)
}

// Add aggregates one event of a live source. strs and ctxs are the source's
// string table and context list (Event.Name and Event.Ctx index them); they
// may grow between calls, but an ID must keep its meaning. Events of other
// kinds than kernel, memcpy, memset and step are ignored.
func (a *Aggregator) Add(e *tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) {
	b := a.bindingFor(strs, ctxs)
	a.addEvent(b, e)
}

// AddEvents is Add for a batch of events sharing strs and ctxs.
func (a *Aggregator) AddEvents(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) {
	b := a.bindingFor(strs, ctxs)
	a.addEvents(b, evs)
}

func (a *Aggregator) addEvents(b *binding, evs []tracer.Event) {
	for i := range evs {
		a.addEvent(b, &evs[i])
	}
}

func (a *Aggregator) bindingFor(strs *tracer.Strings, ctxs []tracer.Context) *binding {
	if a.cur != nil && a.cur.strs == strs {
		a.cur.ctxs = ctxs
		return a.cur
	}
	for _, b := range a.bindings {
		if b.strs == strs {
			b.ctxs = ctxs
			a.cur = b
			return b
		}
	}
	if a.eventTraces == 0 {
		a.eventTraces = 1 // a live source counts as one event trace
	}
	return a.newBinding(strs, ctxs)
}

func (a *Aggregator) newBinding(strs *tracer.Strings, ctxs []tracer.Context) *binding {
	b := &binding{strs: strs, ctxs: ctxs, src: int32(len(a.bindings)), words: a.rules.words}
	a.bindings = append(a.bindings, b)
	a.cur = b
	return b
}

func kindSlot(k tracer.Kind) int {
	switch k {
	case tracer.KindKernel:
		return 0
	case tracer.KindMemcpy:
		return 1
	case tracer.KindMemset:
		return 2
	}
	return -1
}

func (a *Aggregator) addEvent(b *binding, e *tracer.Event) {
	slot := kindSlot(e.Kind)
	if slot < 0 {
		if e.Kind == tracer.KindStep {
			a.addStep(e)
		}
		return
	}
	if int(e.Name) >= len(b.nameRow[slot]) {
		b.growNames(int(e.Name) + 1)
	}
	ri := b.nameRow[slot][e.Name]
	if ri == 0 {
		ri = a.resolveRow(b, slot, e)
	}
	if int(e.Ctx) >= len(b.ctx) || !b.ctx[e.Ctx].done {
		a.resolveCtx(b, e.Ctx)
	}
	cx := &b.ctx[e.Ctx]

	// Category: first rule with K & ((NA & C) | (N & CA)).
	var cat int32
	if w := b.words; w == 1 { // up to 64 rules: one word, no slices
		i, j := int(e.Name)*2, int(e.Ctx)*2
		m := a.kind1[e.Kind&15] & ((b.nameMask[i+1] & b.ctxMask[j]) | (b.nameMask[i] & b.ctxMask[j+1]))
		if m != 0 {
			cat = a.rules.ruleCat[bits.TrailingZeros64(m)]
		} else {
			cat = a.rules.other
		}
	} else {
		km := a.kind[e.Kind&15]
		nm := b.nameMask[int(e.Name)*2*w : int(e.Name+1)*2*w]
		cm := b.ctxMask[int(e.Ctx)*2*w : int(e.Ctx+1)*2*w]
		cat = a.rules.pickMasks(km, nm, cm)
	}

	d := e.Dur
	if d < 0 { // importers reject these; a live source might not
		d = 0
	}
	r := &a.rows[ri-1]
	if r.count == 0 || d < r.min {
		r.min = d
	}
	if d > r.max {
		r.max = d
	}
	r.count++
	r.total += d
	if r.hist != nil {
		r.hist[histBucket(d)]++
	} else {
		r.durs = append(r.durs, d)
		if a.pctCap > 0 && len(r.durs) > a.pctCap {
			r.toHist()
		}
	}
	r.cats = addShare(r.cats, cat, d)
	r.stages = addShare(r.stages, cx.stage, d)
	if !r.hasCtx && e.Ctx != 0 {
		a.fillRowCtx(b, r, e.Ctx)
	}

	g := &a.cats[cat]
	g.count++
	g.total += d
	s := &a.stages[cx.stage]
	s.count++
	s.total += d
	if cx.step >= 0 {
		if cx.stepAcc == nil || cx.stepGen != a.gen {
			cx.stepAcc, cx.stepGen = a.step(cx.step), a.gen
		}
		cx.stepAcc.kernelNs += d
		cx.stepAcc.gpus++
	}

	if slot == 0 {
		a.totals.KernelCount++
		a.totals.KernelTotalNs += d
	} else {
		a.totals.TransferCount++
		a.totals.TransferNs += d
	}
	end := e.Start + d
	if !a.anyGPU {
		a.first, a.last, a.anyGPU = e.Start, end, true
	} else {
		a.first = min(a.first, e.Start)
		a.last = max(a.last, end)
	}
	db := a.busyFor(b, e.Device)
	db.all.add(e.Start, end)
	if slot == 0 {
		db.kern.add(e.Start, end)
	}
}

func (a *Aggregator) busyFor(b *binding, dev int32) *devBusy {
	if b.busyGen != a.gen {
		clear(b.busy)
		b.busyGen = a.gen
	}
	if dev >= 0 && dev < maxDevSlots {
		if int(dev) < len(b.busy) {
			if ba := b.busy[dev]; ba != nil {
				return ba
			}
		} else {
			b.busy = append(b.busy, make([]*devBusy, int(dev)+1-len(b.busy))...)
		}
	}
	dk := devKey{b.src, dev}
	ba := a.busy[dk]
	if ba == nil {
		ba = &devBusy{}
		ba.all.lag, ba.kern.lag = a.sealLag, a.sealLag
		a.busy[dk] = ba
	}
	if dev >= 0 && dev < maxDevSlots {
		b.busy[dev] = ba
	}
	return ba
}

func addShare(s []share, id int32, d int64) []share {
	if n := len(s); n > 0 && s[n-1].id == id {
		s[n-1].ns += d
		return s
	}
	for i := range s {
		if s[i].id == id {
			s[i].ns += d
			return s
		}
	}
	return append(s, share{id, d})
}

func (b *binding) growNames(n int) {
	if l := b.strs.Len(); l > n {
		n = l
	}
	for i := range b.nameRow {
		if len(b.nameRow[i]) < n {
			b.nameRow[i] = append(b.nameRow[i], make([]int32, n-len(b.nameRow[i]))...)
		}
	}
	if len(b.nameDone) < n {
		b.nameMask = append(b.nameMask, make([]uint64, (n-len(b.nameDone))*2*b.words)...)
		b.nameDone = append(b.nameDone, make([]bool, n-len(b.nameDone))...)
	}
}

func (a *Aggregator) resolveRow(b *binding, slot int, e *tracer.Event) int32 {
	name := b.strs.Get(e.Name)
	if !b.nameDone[e.Name] {
		m := a.rules.nameMasks(name)
		copy(b.nameMask[int(e.Name)*2*b.words:], m)
		b.nameDone[e.Name] = true
	}
	key := rowKey{e.Kind, name}
	ri, ok := a.rowIdx[key]
	if !ok {
		a.rows = append(a.rows, rowAcc{name: name, kind: e.Kind})
		ri = int32(len(a.rows))
		a.rowIdx[key] = ri
	}
	b.nameRow[slot][e.Name] = ri
	return ri
}

func (a *Aggregator) resolveCtx(b *binding, id tracer.CtxID) {
	if n := int(id) + 1; len(b.ctx) < n {
		if l := len(b.ctxs); l > n {
			n = l
		}
		b.ctxMask = append(b.ctxMask, make([]uint64, (n-len(b.ctx))*2*b.words)...)
		b.ctx = append(b.ctx, make([]ctxInfo, n-len(b.ctx))...)
	}
	ci := &b.ctx[id]
	ci.done, ci.stage, ci.step = true, 0, -1 // stage 0 is StageNone
	acc := make([]uint64, 2*b.words)
	if int(id) < len(b.ctxs) {
		c := &b.ctxs[id]
		ci.step = c.Step
		for _, s := range c.Ops {
			orInto(acc, a.opNameBits(b, s))
		}
		for _, s := range c.Ranges {
			orInto(acc, a.opNameBits(b, s))
		}
		if n := len(c.Ranges); n > 0 {
			ci.stage = a.stageID(b.strs.Get(c.Ranges[n-1]))
		}
	}
	copy(b.ctxMask[int(id)*2*b.words:], a.rules.ctxCombine(acc))
}

// opNameBits returns the cached Rules.ctxNameBits of an operator or range
// name.
func (a *Aggregator) opNameBits(b *binding, s tracer.StrID) []uint64 {
	w := 2 * b.words
	if int(s) >= len(b.opDone) {
		n := max(int(s)+1, b.strs.Len())
		b.opBits = append(b.opBits, make([]uint64, (n-len(b.opDone))*w)...)
		b.opDone = append(b.opDone, make([]bool, n-len(b.opDone))...)
	}
	m := b.opBits[int(s)*w : int(s+1)*w]
	if !b.opDone[s] {
		copy(m, a.rules.ctxNameBits(b.strs.Get(s)))
		b.opDone[s] = true
	}
	return m
}

func (a *Aggregator) fillRowCtx(b *binding, r *rowAcc, id tracer.CtxID) {
	if int(id) >= len(b.ctxs) {
		return
	}
	c := &b.ctxs[id]
	for _, s := range c.Ops {
		r.ops = append(r.ops, b.strs.Get(s))
	}
	for _, s := range c.Ranges {
		r.ranges = append(r.ranges, b.strs.Get(s))
	}
	r.hasCtx = true
}

func (a *Aggregator) stageID(name string) int32 {
	if id, ok := a.stageIdx[name]; ok {
		return id
	}
	id := int32(len(a.stageKey))
	a.stageIdx[name] = id
	a.stageKey = append(a.stageKey, name)
	a.stages = append(a.stages, groupAcc{})
	return id
}

func (a *Aggregator) step(n int64) *stepAcc {
	st := a.steps[n]
	if st == nil {
		st = &stepAcc{}
		a.steps[n] = st
	}
	return st
}

func (a *Aggregator) addStep(e *tracer.Event) {
	st := a.step(e.Value)
	if !st.seen {
		st.start, st.dur, st.seen = e.Start, e.Dur, true
	}
}

func (a *Aggregator) addSummary(s *tracer.SummaryRow) {
	slot := kindSlot(s.Kind)
	if slot < 0 {
		return
	}
	cat := a.rules.pickMasks(a.kind[s.Kind], a.rules.nameMasks(s.Name), a.rules.ctxMasks(nil))
	key := rowKey{s.Kind, s.Name}
	ri, ok := a.rowIdx[key]
	if !ok {
		a.rows = append(a.rows, rowAcc{name: s.Name, kind: s.Kind})
		ri = int32(len(a.rows))
		a.rowIdx[key] = ri
	}
	r := &a.rows[ri-1]
	if r.count == 0 || s.MinNs < r.min {
		r.min = s.MinNs
	}
	r.max = max(r.max, s.MaxNs)
	r.count += s.Count
	r.total += s.TotalNs
	r.sumRows++
	r.sumP50 = s.P50Ns
	r.cats = addShare(r.cats, cat, s.TotalNs)
	r.stages = addShare(r.stages, 0, s.TotalNs)
	a.cats[cat].count += s.Count
	a.cats[cat].total += s.TotalNs
	a.stages[0].count += s.Count
	a.stages[0].total += s.TotalNs
	if slot == 0 {
		a.totals.KernelCount += s.Count
		a.totals.KernelTotalNs += s.TotalNs
	} else {
		a.totals.TransferCount += s.Count
		a.totals.TransferNs += s.TotalNs
	}
}

// Reset clears every accumulated number (rows, categories, stages, steps,
// busy time, totals) but keeps the classification caches and the source
// metadata: a live session's "current window" aggregator calls it at each
// window start.
func (a *Aggregator) Reset() {
	for i := range a.rows {
		r := &a.rows[i]
		r.count, r.total, r.min, r.max = 0, 0, 0, 0
		r.durs, r.sorted, r.hist = r.durs[:0], 0, nil
		r.cats, r.stages = r.cats[:0], r.stages[:0]
		r.sumRows, r.sumP50 = 0, 0
	}
	clear(a.cats)
	clear(a.stages)
	clear(a.steps)
	clear(a.busy)
	a.gen++
	a.totals = Totals{}
	a.anyGPU, a.first, a.last = false, 0, 0
}

// add appends [s,e), coalescing with the previous interval when they touch.
func (b *busyAcc) add(s, e int64) {
	if b.sealed && s < b.sealedEnd {
		s = b.sealedEnd
		if e <= s {
			return
		}
	}
	if n := len(b.pending); n > 0 {
		p := &b.pending[n-1]
		if s >= p.s && s <= p.e {
			if e > p.e {
				p.e = e
			}
			return
		}
		if s < p.s {
			b.unsorted = true
		}
	}
	b.pending = append(b.pending, ival{s, e})
	if len(b.pending) >= 1<<16 && len(b.pending) > b.merged/4 {
		b.flush()
	}
}

// coalesce sorts v if needed and merges overlapping or touching intervals
// in place.
func coalesce(v []ival, unsorted bool) []ival {
	if unsorted {
		slices.SortFunc(v, func(x, y ival) int { return cmpInt64(x.s, y.s) })
	}
	w := 0
	for _, x := range v {
		if w > 0 && x.s <= v[w-1].e {
			v[w-1].e = max(v[w-1].e, x.e)
			continue
		}
		v[w] = x
		w++
	}
	return v[:w]
}

// flush merges pending into the union.
func (b *busyAcc) flush() {
	if len(b.pending) == 0 {
		return
	}
	p := coalesce(b.pending, b.unsorted)
	b.unsorted = false
	b.pending = nil
	nc := len(b.chunks)
	if nc == 0 {
		b.chunks, b.merged = append(b.chunks, p), len(p)
		return
	}
	lastChunk := b.chunks[nc-1]
	last := &lastChunk[len(lastChunk)-1]
	if p[0].s >= last.s {
		// In order: only the boundary can overlap.
		i := 0
		for i < len(p) && p[i].s <= last.e {
			last.e = max(last.e, p[i].e)
			i++
		}
		if i < len(p) {
			b.chunks = append(b.chunks, p[i:])
			b.merged += len(p) - i
		}
		b.seal()
		return
	}
	// Out of order: rebuild one chunk from everything.
	all := make([]ival, 0, b.merged+len(p))
	for _, c := range b.chunks {
		all = append(all, c...)
	}
	all = coalesce(append(all, p...), true)
	b.chunks, b.merged = [][]ival{all}, len(all)
	b.seal()
}

// seal folds whole chunks that end more than lag before the newest start
// into sealedNs (never the last chunk).
func (b *busyAcc) seal() {
	if b.lag <= 0 || len(b.chunks) < 2 {
		return
	}
	last := b.chunks[len(b.chunks)-1]
	horizon := last[len(last)-1].s - b.lag
	for len(b.chunks) > 1 {
		c := b.chunks[0]
		if c[len(c)-1].e >= horizon {
			break
		}
		for _, v := range c {
			b.sealedNs += v.e - v.s
		}
		b.sealedEnd, b.sealed = c[len(c)-1].e, true
		b.merged -= len(c)
		b.chunks = b.chunks[1:]
	}
}

func (b *busyAcc) total() int64 {
	b.flush()
	t := b.sealedNs
	for _, c := range b.chunks {
		for _, v := range c {
			t += v.e - v.s
		}
	}
	return t
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted values: the value at rank ceil(p/100 * n).
func percentile(sorted []int64, p int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// sortDurs sorts r.durs, reusing the sorted prefix from earlier snapshots.
func (r *rowAcc) sortDurs() {
	if r.sorted == len(r.durs) {
		return
	}
	tail := r.durs[r.sorted:]
	sortInt64s(tail)
	if r.sorted > 0 && tail[0] < r.durs[r.sorted-1] {
		merged := make([]int64, 0, len(r.durs))
		x, y := r.durs[:r.sorted], tail
		for len(x) > 0 && len(y) > 0 {
			if x[0] <= y[0] {
				merged = append(merged, x[0])
				x = x[1:]
			} else {
				merged = append(merged, y[0])
				y = y[1:]
			}
		}
		merged = append(merged, x...)
		merged = append(merged, y...)
		r.durs = merged
	}
	r.sorted = len(r.durs)
}

func topShare(s []share) int32 {
	best := int32(-1)
	var bestNs int64 = -1
	for _, x := range s {
		if x.ns > bestNs || (x.ns == bestNs && x.id < best) {
			best, bestNs = x.id, x.ns
		}
	}
	return best
}

// Snapshot returns everything aggregated so far. The result shares nothing
// mutable with the aggregator.
func (a *Aggregator) Snapshot() *Snapshot {
	s := &Snapshot{
		Rank:     a.rank,
		Dropped:  a.dropped,
		Devices:  slices.Clone(a.devices),
		Warnings: slices.Clone(a.warnings),
	}
	s.Source = strings.Join(a.sources, ", ")
	s.Format = strings.Join(a.formats, "+")
	s.SummaryOnly = a.summaryTraces > 0 && a.eventTraces == 0
	if a.summaryTraces > 0 && a.eventTraces > 0 {
		s.Warnings = append(s.Warnings, "some inputs hold only per-kernel sums: percentiles, busy time, stages and steps cover only the inputs with events")
	}
	t := a.totals
	t.GPUTotalNs = t.KernelTotalNs + t.TransferNs
	for _, b := range a.busy {
		t.BusyNs += b.all.total()
		t.KernelBusyNs += b.kern.total()
	}
	if a.anyGPU {
		t.SpanNs = a.last - a.first
	}
	s.Totals = t

	for i := range a.rows {
		r := &a.rows[i]
		if r.count == 0 {
			continue
		}
		if r.display == "" {
			if r.kind == tracer.KindKernel {
				r.display = DisplayName(r.name)
			} else {
				r.display = Ellipsize(r.name, MaxDisplayName)
			}
		}
		r.sortDurs()
		kr := KernelRow{
			Name:        r.name,
			DisplayName: r.display,
			Kind:        r.kind,
			Count:       r.count,
			TotalNs:     r.total,
			MeanNs:      r.total / r.count,
			MinNs:       r.min,
			MaxNs:       r.max,
			Ops:         slices.Clone(r.ops),
			Ranges:      slices.Clone(r.ranges),
		}
		if r.hist != nil {
			kr.P50Ns = min(max(histPercentile(r.hist, 50), r.min), r.max)
			kr.P99Ns = min(max(histPercentile(r.hist, 99), r.min), r.max)
			kr.PercentilesApprox = true
		} else if r.sumRows == 0 {
			kr.P50Ns = percentile(r.durs, 50)
			kr.P99Ns = percentile(r.durs, 99)
		} else if r.sumRows == 1 && len(r.durs) == 0 {
			kr.P50Ns = r.sumP50
		}
		if c := topShare(r.cats); c >= 0 {
			kr.Category = a.rules.cats[c]
		}
		if st := topShare(r.stages); st > 0 {
			kr.Stage = a.stageKey[st]
		}
		if r.kind == tracer.KindKernel {
			kr.Share = ratio(kr.TotalNs, t.KernelTotalNs)
			s.Kernels = append(s.Kernels, kr)
		} else {
			kr.Share = ratio(kr.TotalNs, t.TransferNs)
			s.Transfers = append(s.Transfers, kr)
		}
	}
	byTotal := func(x, y KernelRow) int {
		if x.TotalNs != y.TotalNs {
			if x.TotalNs > y.TotalNs {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Name, y.Name)
	}
	slices.SortFunc(s.Kernels, byTotal)
	slices.SortFunc(s.Transfers, byTotal)

	for id, g := range a.cats {
		if g.count > 0 || g.total > 0 {
			s.Categories = append(s.Categories, GroupRow{Key: a.rules.cats[id], Count: g.count, TotalNs: g.total, Share: ratio(g.total, t.GPUTotalNs)})
		}
	}
	if !s.SummaryOnly {
		for id, g := range a.stages {
			if g.count > 0 || g.total > 0 {
				s.Stages = append(s.Stages, GroupRow{Key: a.stageKey[id], Count: g.count, TotalNs: g.total, Share: ratio(g.total, t.GPUTotalNs)})
			}
		}
	}
	byGroup := func(x, y GroupRow) int {
		if x.TotalNs != y.TotalNs {
			if x.TotalNs > y.TotalNs {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Key, y.Key)
	}
	slices.SortFunc(s.Categories, byGroup)
	slices.SortFunc(s.Stages, byGroup)

	for n, st := range a.steps {
		s.Steps = append(s.Steps, StepRow{Step: n, StartNs: st.start, DurNs: st.dur, KernelNs: st.kernelNs, Count: st.gpus})
	}
	slices.SortFunc(s.Steps, func(x, y StepRow) int { return cmpInt64(x.Step, y.Step) })
	return s
}

func ratio(x, y int64) float64 {
	if y == 0 {
		return 0
	}
	return float64(x) / float64(y)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// String summarises the aggregator's totals (for debugging).
func (a *Aggregator) String() string {
	return fmt.Sprintf("attrib.Aggregator{rows: %d, kernels: %d, kernel_ns: %d}", len(a.rows), a.totals.KernelCount, a.totals.KernelTotalNs)
}

// sortInt64s sorts non-negative durations: an LSD radix sort on 11-bit
// digits (as many passes as the largest value needs) for long slices,
// slices.Sort otherwise or when a value is negative.
func sortInt64s(v []int64) {
	if len(v) < 512 {
		slices.Sort(v)
		return
	}
	var mx int64
	for _, x := range v {
		if x < 0 {
			slices.Sort(v)
			return
		}
		mx = max(mx, x)
	}
	const bits = 11
	const buckets = 1 << bits
	tmp := make([]int64, len(v))
	src, dst := v, tmp
	var count [buckets]int
	for shift := uint(0); shift < 64 && mx>>shift != 0; shift += bits {
		clear(count[:])
		for _, x := range src {
			count[(x>>shift)&(buckets-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range src {
			k := (x >> shift) & (buckets - 1)
			dst[count[k]] = x
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
}

// Log-linear histogram of durations: values below 128 ns exactly, larger
// ones by their top 7 bits (64 buckets per power of two), so a bucket's
// middle is within 1/64 of any value in it.
const histBuckets = 128 + 57*64

func histBucket(d int64) int {
	if d < 128 {
		if d < 0 {
			return 0
		}
		return int(d)
	}
	e := bits.Len64(uint64(d)) - 7 // >= 1
	m := int(d >> e)               // 64..127
	return 128 + (e-1)*64 + (m - 64)
}

// histValue is the middle of bucket i, ns.
func histValue(i int) int64 {
	if i < 128 {
		return int64(i)
	}
	e := (i-128)/64 + 1
	m := int64((i-128)%64 + 64)
	return m<<e + (int64(1)<<e)/2
}

func (r *rowAcc) toHist() {
	r.hist = make([]int64, histBuckets)
	for _, d := range r.durs {
		r.hist[histBucket(d)]++
	}
	r.durs, r.sorted = nil, 0
}

// histPercentile is the nearest-rank p-th percentile of a histogram.
func histPercentile(h []int64, p int) int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := (int64(p)*n + 99) / 100
	var seen int64
	for i, c := range h {
		seen += c
		if seen >= rank {
			return histValue(i)
		}
	}
	return histValue(len(h) - 1)
}
