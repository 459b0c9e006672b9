package attrib

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/extsort"
	"github.com/rlktop/rlktop/internal/interval"
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
// and per context (CtxID) of each string table the events come with, and
// worked out once per run of events with the same (row, context): the
// per-event work is slice lookups, a few compares and stores, and O(1)
// busy-time bookkeeping for in-order input (about 95 machine instructions
// per event in tracer/wire's BenchmarkAggregateOnly, plus about 25 per
// kept duration at each Snapshot for exact p50/p99; counted with
// valgrind). No map lookups and, with SetPercentileCap and SetBusySeal, no
// allocations per event in steady state.
// Memory: each kernel execution's duration is kept (8 bytes) for exact
// percentiles, and the busy union keeps one 16-byte interval per gap; long
// live sessions bound both with SetPercentileCap and SetBusySeal.
type Aggregator struct {
	rules *Rules
	kind  [16][]uint64 // rule bitset per tracer.Kind
	kind1 [16]uint64   // kind[k][0], for the one-word fast path

	rows   []*rowAcc
	rowIdx map[rowKey]int32
	fams   map[famKey]*[]*rowAcc // the rows of one (kind, name), one per category

	stageKey []string
	stageIdx map[string]int32
	// Launch contexts' names "op › … › range" (launches.go): ctxInfo.launch
	// is 1 + an index in launchNames.
	launchNames  []string
	launchNameID map[string]int32

	steps map[int64]*stepAcc
	// stepList holds every step of steps, ascending by number up to
	// stepsSorted (steps come in order as a rule): a Snapshot lists them
	// without sorting, a live session's tens of thousands included.
	stepList    []*stepAcc
	stepsSorted int
	// With a step cap: the newest stepCap steps are kept (up to twice that
	// between culls); forgotten counts those dropped, all numbered at most
	// stepFloor, and work launched in one of them goes to lost, a step in
	// no list.
	stepCap   int
	forgotten int64
	stepFloor int64
	lost      stepAcc
	busy      map[devKey]*devBusy

	bindings []*binding
	cur      *binding
	gen      uint32 // bumped by Reset; invalidates cached pointers

	sources       []string
	formats       []string
	stepRules     []string
	devices       []tracer.Device
	rank          int
	dropped       uint64
	warnings      []string
	summaryTraces int
	eventTraces   int
	pctCap        int       // 0: keep every duration
	freeDurs      [][]int64 // recycled duration chunks (durChunk values)
	durCap        int       // pctCap, or MaxInt when 0
	durKept       int       // durations the rows' chunks hold room for, all rows (with a cap)
	sealLag       int64     // 0: keep the whole busy union
	deferBusy     bool      // AddEvents leaves busy time to AddBusy
	// SpillDurations: every duration goes to durSpill (row index in
	// spillRows, ns) instead of its row.
	durSpill  *extsort.Sorter[rowDur]
	durRun    int // durSpill's records a run (extsort.New)
	spillRows []*rowAcc
	// Modelled work (work.go): set once a source carries it; then per
	// category and stage id, and the unmodelled time by operator.
	hasWork   bool
	catWork   []Work
	stageWork []Work
	unmod     map[string]*OpTime
}

// rowDur is a spilled duration: its row's index in spillRows, ns.
type rowDur struct {
	row uint32
	d   int64
}

// rowDurCodec orders spilled durations by row, then duration.
var rowDurCodec = extsort.Codec[rowDur]{
	Size: 12,
	Put: func(b []byte, x rowDur) {
		binary.LittleEndian.PutUint32(b, x.row)
		binary.LittleEndian.PutUint64(b[4:], uint64(x.d))
	},
	Get: func(b []byte) rowDur {
		return rowDur{binary.LittleEndian.Uint32(b), int64(binary.LittleEndian.Uint64(b[4:]))}
	},
	Cmp: func(a, b rowDur) int { return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.d, b.d)) },
}

// SpillDurations makes the Aggregator keep the durations of GPU ops added
// from now on (for exact p50 and p99) in an external sort (internal/extsort:
// runRecs in memory, 0 for extsort.DefaultRunRecs = 2^17, the rest in a
// temporary file, 12 bytes each) instead of 8 bytes each in memory; the
// first Snapshot consumes them, so call Snapshot once, after every event
// (file reports: SourceStream). Call it before adding events.
func (a *Aggregator) SpillDurations(runRecs int) {
	a.durRun = runRecs
	a.durSpill = extsort.New(rowDurCodec, runRecs)
}

// spillDur adds duration d of row r to durSpill.
func (a *Aggregator) spillDur(r *rowAcc, d int64) {
	if r.spillID == 0 {
		a.spillRows = append(a.spillRows, r)
		r.spillID = int32(len(a.spillRows))
	}
	r.nSpill++
	if err := a.durSpill.Add(rowDur{uint32(r.spillID - 1), d}); err != nil && r.nSpill == 1 {
		a.warnings = append(a.warnings, "kernel duration percentiles: "+err.Error())
	}
}

// spilledPercentiles sets p50 and p99 of every row with spilled durations
// (nearest rank, as durPercentiles) from durSpill, sorted by row and
// duration.
func (a *Aggregator) spilledPercentiles() {
	if a.durSpill == nil || a.durSpill.Len() == 0 {
		return
	}
	row, i := uint32(1<<32-1), 0
	var k1, k2 int
	var r *rowAcc
	err := a.durSpill.Each(func(x rowDur) bool {
		if x.row != row {
			row, i, r = x.row, 0, a.spillRows[x.row]
			k1, k2 = pctRank(50, r.nSpill), pctRank(99, r.nSpill)
		}
		i++
		if i == k1 {
			r.p50 = x.d
		}
		if i == k2 {
			r.p99 = x.d
		}
		return true
	})
	if err != nil {
		a.warnings = append(a.warnings, "kernel duration percentiles: "+err.Error())
	}
	a.durSpill = extsort.New(rowDurCodec, a.durRun)
}

// DeferBusy(true) makes AddEvents leave GPU ops out of the devices' busy
// time until DeferBusy(false): the caller adds their intervals with
// AddBusy instead, in start order (SourceStream does for a long window,
// whose ops arrive out of time order, after sorting them on disk).
func (a *Aggregator) DeferBusy(on bool) { a.deferBusy = on }

// AddBusy adds the interval [s, e) ns of a GPU op (a kernel when kernel,
// else a memcpy or memset) on device dev to its busy time, for the source
// whose names are strs (its events were added with AddEvents). The
// intervals of a device must come in start order, each starting after
// every earlier interval added for it other than by AddBusy: the union
// before s is then final and kept only as its length, so memory stays
// constant.
func (a *Aggregator) AddBusy(strs *tracer.Strings, dev int32, kernel bool, s, e int64) {
	b := a.cur
	if b == nil || b.strs != strs {
		var ctxs []tracer.Context // contexts are not used here: keep the binding's
		for _, x := range a.bindings {
			if x.strs == strs {
				ctxs = x.ctxs
			}
		}
		b = a.bindingFor(strs, ctxs)
	}
	db := a.busyFor(b, dev)
	if !kernel || db.split {
		a.addBusySplit(db, kernel, s, e)
		db.kern.sealBefore(s)
	} else {
		db.all.add(s, e)
	}
	db.all.sealBefore(s)
}

// SetBusySeal lets busy-time bookkeeping forget the shape of the union more
// than lagNs before the newest GPU start (keeping only its length), and
// the older half of its gaps whatever their age past busyKeptMax per
// device (16 MiB), so a live session's memory stays bounded from its
// start. A GPU op arriving later than that with a start inside the
// forgotten part is counted only from the forgotten part's end; exact for
// in-order sources. 0 (default) forgets nothing, as file reports need.
func (a *Aggregator) SetBusySeal(lagNs int64) {
	if lagNs < 0 {
		lagNs = 0
	}
	a.sealLag = lagNs
	for _, b := range a.busy {
		b.all.lag, b.kern.lag = lagNs, lagNs
	}
}

// SealBusyBefore forgets the shape of every device's busy union before
// ns, keeping only its length (as SetBusySeal does by lag): exact when no
// GPU op added later starts before ns (a streamed trace's next window,
// attrib.SourceStream), else such an op counts only from the forgotten
// part's end.
func (a *Aggregator) SealBusyBefore(ns int64) {
	for _, b := range a.busy {
		b.all.flush()
		b.all.sealBefore(ns)
		if b.split {
			b.kern.flush()
			b.kern.sealBefore(ns)
		}
	}
}

// SetPercentileCap bounds the durations kept per kernel row to n (0, the
// default, keeps them all, so percentiles are exact). A row past n
// executions moves to a log-linear histogram (about 30 KB, relative error
// < 1/64) and reports PercentilesApprox. Live sessions that run for hours
// should set it (e.g. 1<<16: at most 512 KB per row); file reports keep the
// default. All rows together keep at most durBudgetRows×n durations
// (64 MB at 1<<16): past that, a row moves to its histogram when its
// durations next need room.
func (a *Aggregator) SetPercentileCap(n int) {
	if n < 0 {
		n = 0
	}
	a.pctCap = n
	a.durCap = n
	if n == 0 {
		a.durCap = math.MaxInt
	}
}

// durBudgetRows is how many rows' worth of durations (each at the
// percentile cap) all rows keep together: without it, a session's
// cumulative aggregate with 2,000 kernel rows each just under a 1<<16 cap
// would keep 1 GB of durations; with it, 64 MB and the chunks growing.
const durBudgetRows = 128

// rowKey is a row: a GPU op name of one kind in one category. A name whose
// launches fall in several categories (a residual add in the forward pass
// and under ConvolutionBackward0) has one row per category.
type rowKey struct {
	kind tracer.Kind
	name string
	cat  int32
}

type famKey struct {
	kind tracer.Kind
	name string
}

type devKey struct{ src, dev int32 }

type share struct {
	id    int32
	count int64
	ns    int64
}

type rowAcc struct {
	// Per-event fields first, within one 64-byte cache line.
	durs     []int64 // the duration chunk being filled (see full)
	min, max int64   // ns; min is MaxInt64 before the first
	// The open cell: events of this row from one binding with one
	// (name, context) key (pKey = name<<32 | ctx) not yet added to cats,
	// stages and steps (flushCell does that when the key changes and
	// before a Snapshot).
	pKey   uint64
	pCount int64
	pNs    int64
	pBind  *binding
	kind   tracer.Kind
	cat    int32      // category id (Rules.cats)
	fam    *[]*rowAcc // every row of this (kind, name)

	name    string
	nameID  tracer.StrID // KernelRow.NameID
	display string
	// Every duration, ns, in arrival order: the full chunks, then durs
	// (chunks are never copied to grow).
	full        [][]int64
	nFull       int // durations in full
	pctN        int // durations when p50 and p99 were computed
	p50, p99    int64
	hist        []int64 // non-nil: durations counted by histBucket instead of kept
	cats        []share
	stages      []share
	ops, ranges []string
	stageRule   string
	hasCtx      bool
	launch      *launchAcc // by context, stage and step (launches.go)
	// Summary-only contributions: no durations behind them.
	sumRows int
	sumP50  int64
	// SpillDurations: the row's index+1 in spillRows (0: none) and its
	// durations there (p50 and p99 are set from them at Snapshot).
	spillID int32
	nSpill  int
	// pw is the open cell's modelled work, w the row's (work.go).
	pw, w Work
}

type stepAcc struct {
	n              int64 // the step number
	start, dur     int64
	seen           bool
	kernelNs, gpus int64
	work           Work
}

// devBusy is one device's busy time: the union of all its GPU ops (kernel,
// memcpy, memset) and of its kernels alone. Until the device's first
// memcpy/memset both unions are the same, so only all is kept (split
// false) and kern is cloned from it when they part.
type devBusy struct {
	all, kern busyAcc
	split     bool
}

func (d *devBusy) reset() {
	d.all.reset()
	d.kern.reset()
	d.split = false
}

func (d *devBusy) kernTotal() int64 {
	if !d.split {
		return d.all.total()
	}
	return d.kern.total()
}

// binding caches classification for one string table / context list.
type binding struct {
	strs  *tracer.Strings
	ctxs  []tracer.Context
	src   int32
	words int
	// Per StrID, per kind slot (kernel, memcpy, memset): its row, or nil.
	nameRow [3][]*rowAcc
	// Per StrID: name masks [N..., NA...] (2*words each) and a done flag.
	nameMask []uint64
	nameDone []bool
	// Per StrID of an operator / range name: ctxNameBits (2*words each).
	opBits []uint64
	opDone []bool
	// Per CtxID.
	ctx     []ctxInfo
	ctxMask []uint64 // [C..., CA...] (2*words each)
	// busy accumulators by device index (0..maxDevSlots-1), and the last
	// one used.
	busy     []*devBusy
	lastDev  int32
	lastBusy *devBusy
}

const maxDevSlots = 1024

type ctxInfo struct {
	done    bool
	stage   int32
	launch  int32 // 1 + its name's index in Aggregator.launchNames; 0 not yet named
	step    int64
	stepAcc *stepAcc // cached a.step(step); valid while stepGen == a.gen
	stepGen uint32
	innerOp tracer.StrID // the innermost operator of the context (0: none)
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
		fams:     map[famKey]*[]*rowAcc{},
		stageIdx: map[string]int32{},
		steps:    map[int64]*stepAcc{},
		busy:     map[devKey]*devBusy{},
		rank:     -1,
		durCap:   math.MaxInt,
	}
	for k := range a.kind {
		a.kind[k] = rules.kindMask(tracer.Kind(k))
		a.kind1[k] = a.kind[k][0]
	}
	a.stageID(StageNone)
	return a
}

// Rules returns the rules the aggregator classifies with.
func (a *Aggregator) Rules() *Rules { return a.rules }

// SetSource sets the Source and Format a Snapshot reports (live sessions:
// "live: <command>", "rlktop").
func (a *Aggregator) SetSource(source, format string) {
	a.sources = []string{source}
	a.formats = []string{format}
}

// SetLive sets what a live source says of itself beside its events (for
// AddEvents; AddTrace takes them from the trace): the devices its hellos
// describe (a live aggregate sees only device ids; a CPU-only run is named
// so by them, Snapshot.TimeName) and the events it dropped. Each call
// replaces the previous one's.
func (a *Aggregator) SetLive(devices []tracer.Device, dropped uint64) {
	a.devices = slices.Clone(devices)
	a.dropped = dropped
}

// AddTrace aggregates every GPU event (kernel, memcpy, memset) and step of a
// linked trace, with its metadata (path, format, devices, rank, warnings).
// A SummaryOnly trace contributes its Summary rows instead (no busy time,
// stages, steps or p99). Several traces may be added; their devices are kept
// apart for busy time.
func (a *Aggregator) AddTrace(t *tracer.Trace) {
	a.addTraceMeta(t)
	b := a.newBinding(t.Strings, t.Contexts)
	if t.SummaryOnly {
		a.summaryTraces++
		for i := range t.Summary {
			a.addSummary(&t.Summary[i])
		}
		return
	}
	a.eventTraces++
	if len(t.Calls) > 1 || traceHasWork(t) {
		a.hasWork = true
	}
	a.addEvents(b, t.Events)
}

// addTraceMeta is AddTrace's metadata part: path, format, devices, step
// rule, rank, drops, warnings.
func (a *Aggregator) addTraceMeta(t *tracer.Trace) {
	a.sources = append(a.sources, t.Path)
	if !slices.Contains(a.formats, t.Format) {
		a.formats = append(a.formats, t.Format)
	}
	a.devices = append(a.devices, t.Devices...)
	if t.StepRule != "" && !slices.Contains(a.stepRules, t.StepRule) {
		a.stepRules = append(a.stepRules, t.StepRule)
	}
	if a.rank < 0 {
		a.rank = t.Rank
	}
	a.dropped += t.Dropped
	for _, w := range t.Warnings {
		if t.Path != "" && len(a.sources) > 1 && !strings.Contains(w, t.Path) {
			w = t.Path + ": " + w // importers name their file already
		}
		a.warnings = append(a.warnings, w)
	}
}

// Add aggregates one event of a live source. strs and ctxs are the source's
// string table and context list (Event.Name and Event.Ctx index them); they
// may grow between calls, but an ID must keep its meaning. Events of other
// kinds than kernel, memcpy, memset and step are ignored.
func (a *Aggregator) Add(e *tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) {
	b := a.bindingFor(strs, ctxs)
	a.addEvents(b, []tracer.Event{*e}) // a stack copy: addEvents keeps nothing
}

// AddEvents is Add for a batch of events sharing strs and ctxs.
func (a *Aggregator) AddEvents(evs []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context) {
	b := a.bindingFor(strs, ctxs)
	a.addEvents(b, evs)
}

// addEvents is the per-event path: a row found by a slice index, its
// count/total/min/max and duration updated, the event added to the row's
// open cell (category, stage and step are worked out once per cell, in
// flushCell) and its interval to its device's running busy union.
func (a *Aggregator) addEvents(b *binding, evs []tracer.Event) {
	// Hoisted: the kernel rows by name, and the last device's busy time.
	kern := b.nameRow[0]
	dev, db := b.lastDev, b.lastBusy
	for i := range evs {
		e := &evs[i]
		var r *rowAcc
		if e.Kind == tracer.KindKernel && int(e.Name) < len(kern) {
			r = kern[e.Name]
		}
		if r == nil {
			if kindSlots[e.Kind&15] < 0 { // not a GPU op
				if e.Kind == tracer.KindStep {
					a.addStep(e)
				}
				continue
			}
			r = a.rowFor(b, e)
			kern = b.nameRow[0]
		}
		d := max(e.Dur, 0) // importers reject negative durations; a live source might not
		// The open cell: events of one (name, context) in a row; a new key
		// may belong to another category, so another row of the name.
		if key := uint64(e.Name)<<32 | uint64(e.Ctx); r.pKey == key && r.pBind == b {
			r.pCount++
			r.pNs = addSat(r.pNs, d)
		} else {
			r = a.openCell(b, r, e, key, d)
			kern = b.nameRow[0]
		}
		if e.Value != 0 && e.Kind == tracer.KindKernel {
			r.pw.addPacked(e.Value, d)
			a.hasWork = true
		}
		// Count and total are the cells' sums (rowAcc.sums); min and max
		// are stored only when they change.
		if d < r.min {
			r.min = d
		}
		if d > r.max {
			r.max = d
		}
		if n := len(r.durs); n < cap(r.durs) {
			r.durs = r.durs[:n+1]
			r.durs[n] = d
		} else if a.durSpill != nil {
			a.spillDur(r, d)
		} else {
			a.addDurSlow(r, d)
		}

		if a.deferBusy {
			continue
		}
		s, end := e.Start, addSat(e.Start, d)
		if e.Device != dev || db == nil {
			dev, db = e.Device, a.busyFor(b, e.Device)
			b.lastDev, b.lastBusy = dev, db
		}
		if r.kind != tracer.KindKernel || db.split {
			a.addBusySplit(db, r.kind == tracer.KindKernel, s, end)
			continue
		}
		// db.all.add(s, end), inlined.
		ba := &db.all
		if s >= ba.cur.Start {
			if s <= ba.cur.End {
				if end > ba.cur.End {
					ba.cur.End = end
				}
			} else if ba.tn < len(ba.tail) { // ba.next, inlined
				ba.tail[ba.tn] = ba.cur
				ba.tn++
				ba.cur = interval.Span{Start: s, End: end}
			} else {
				ba.next(s, end)
			}
		} else {
			ba.addLate(s, end)
		}
	}
}

// rowFor returns the row of a GPU op e (kernel, memcpy or memset).
func (a *Aggregator) rowFor(b *binding, e *tracer.Event) *rowAcc {
	slot := kindSlots[e.Kind&15]
	if nr := b.nameRow[slot]; int(e.Name) < len(nr) && nr[e.Name] != nil {
		return nr[e.Name]
	}
	return a.resolveRow(b, int(slot), e)
}

// durChunk is the largest duration chunk (64 KiB); chunks start at 16
// values and double up to it.
const durChunk = 8192

// addDurSlow keeps d when r.durs (the current chunk) is full: it starts a
// new chunk (recycled when full size, never reaching past the percentile
// cap) or, past the cap, moves the row to its histogram.
func (a *Aggregator) addDurSlow(r *rowAcc, d int64) {
	if r.hist != nil {
		r.hist[histBucket(d)]++
		return
	}
	n := r.nFull + len(r.durs)
	if n >= a.durCap || (a.pctCap > 0 && a.durKept >= durBudgetRows*a.pctCap) {
		a.durKept -= n + cap(r.durs) - len(r.durs)
		r.durs = append(r.durs, d)
		r.toHist()
		return
	}
	size := durChunk
	if cap(r.durs) < durChunk/2 && r.nFull < durChunk {
		size = max(2*cap(r.durs), 16)
	}
	size = min(size, a.durCap-n)
	if len(r.durs) > 0 {
		r.full = append(r.full, r.durs)
		r.nFull += len(r.durs)
	}
	a.durKept += size
	var c []int64
	if k := len(a.freeDurs); size == durChunk && k > 0 {
		c, a.freeDurs = a.freeDurs[k-1], a.freeDurs[:k-1]
	} else {
		c = make([]int64, size)
	}
	c[0] = d
	r.durs = c[:1]
}

// addBusySplit adds a GPU op to a device whose kernel-only union differs
// (or is about to differ) from its all-ops union.
func (a *Aggregator) addBusySplit(db *devBusy, kernel bool, s, e int64) {
	if !db.split {
		db.kern = db.all.clone()
		db.split = true
	}
	db.all.add(s, e)
	if kernel {
		db.kern.add(s, e)
	}
}

// sums returns r's execution count and summed duration (ns): its
// category shares plus its open cell.
func (r *rowAcc) sums() (count, total int64) {
	for _, x := range r.cats {
		count += x.count
		total = addSat(total, x.ns)
	}
	return count + r.pCount, addSat(total, r.pNs)
}

// durChunks returns r's duration chunks (a new outer slice).
func (r *rowAcc) durChunks() [][]int64 {
	return append(r.full[:len(r.full):len(r.full)], r.durs)
}

// recycleDurs empties r's durations, keeping full-size chunks for reuse.
func (a *Aggregator) recycleDurs(r *rowAcc) {
	for _, c := range r.full {
		if cap(c) == durChunk {
			a.freeDurs = append(a.freeDurs, c[:cap(c)])
		}
	}
	clear(r.full)
	r.full, r.nFull = r.full[:0], 0
	r.durs = r.durs[:0]
}

// flushCell adds r's open cell to its category, stage and step shares.
func (a *Aggregator) flushCell(r *rowAcc) {
	if r.pCount == 0 {
		return
	}
	b := r.pBind
	ctx := tracer.CtxID(uint32(r.pKey))
	n, d := r.pCount, r.pNs
	r.pCount, r.pNs = 0, 0
	if int(ctx) >= len(b.ctx) || !b.ctx[ctx].done {
		a.resolveCtx(b, ctx)
	}
	cx := &b.ctx[ctx]
	r.cats = addShare(r.cats, r.cat, n, d)
	r.stages = addShare(r.stages, cx.stage, n, d)
	a.addLaunches(r, b, ctx, cx, n, d)
	if !r.hasCtx && ctx != 0 {
		a.fillRowCtx(b, r, ctx)
	}
	if cx.step >= 0 {
		if cx.stepAcc == nil || cx.stepGen != a.gen {
			cx.stepAcc, cx.stepGen = a.step(cx.step), a.gen
		}
		cx.stepAcc.kernelNs = addSat(cx.stepAcc.kernelNs, d)
		cx.stepAcc.gpus += n
	}
	if a.hasWork && r.kind == tracer.KindKernel {
		a.flushWork(r, b, cx, n, d)
	}
}

// flushCells flushes every row's open cell.
func (a *Aggregator) flushCells() {
	for _, r := range a.rows {
		a.flushCell(r)
	}
}

// NewContexts tells the Aggregator that the events of the source named by
// strs come with new contexts from now on: context IDs restart and mean
// something else (each window and part of a streamed trace has its own,
// tracefile.Capture.Contexts). Open cells are added and what was worked out
// per context ID is forgotten.
func (a *Aggregator) NewContexts(strs *tracer.Strings) {
	for _, b := range a.bindings {
		if b.strs != strs {
			continue
		}
		for _, r := range a.rows {
			a.flushCell(r)
			if r.pBind == b {
				r.pBind = nil // a cell key of the old contexts
			}
		}
		b.ctx, b.ctxMask = b.ctx[:0], b.ctxMask[:0]
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

// kindSlots maps a Kind to its nameRow slot (kernel 0, memcpy 1, memset 2)
// or -1 for kinds that are not GPU ops.
var kindSlots = func() (t [16]int8) {
	for k := range t {
		t[k] = -1
	}
	t[tracer.KindKernel], t[tracer.KindMemcpy], t[tracer.KindMemset] = 0, 1, 2
	return t
}()

func kindSlot(k tracer.Kind) int { return int(kindSlots[k&15]) }

func (a *Aggregator) busyFor(b *binding, dev int32) *devBusy {
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
		ba.reset()
		ba.all.lag, ba.kern.lag = a.sealLag, a.sealLag
		a.busy[dk] = ba
	}
	if dev >= 0 && dev < maxDevSlots {
		b.busy[dev] = ba
	}
	return ba
}

func addShare(s []share, id int32, count, d int64) []share {
	if n := len(s); n > 0 && s[n-1].id == id {
		s[n-1].count += count
		s[n-1].ns = addSat(s[n-1].ns, d)
		return s
	}
	for i := range s {
		if s[i].id == id {
			s[i].count += count
			s[i].ns = addSat(s[i].ns, d)
			return s
		}
	}
	return append(s, share{id, count, d})
}

func (b *binding) growNames(n int) {
	if l := b.strs.Len(); l > n {
		n = l
	}
	for i := range b.nameRow {
		if len(b.nameRow[i]) < n {
			b.nameRow[i] = append(b.nameRow[i], make([]*rowAcc, n-len(b.nameRow[i]))...)
		}
	}
	if len(b.nameDone) < n {
		b.nameMask = append(b.nameMask, make([]uint64, (n-len(b.nameDone))*2*b.words)...)
		b.nameDone = append(b.nameDone, make([]bool, n-len(b.nameDone))...)
	}
}

func (a *Aggregator) resolveRow(b *binding, slot int, e *tracer.Event) *rowAcc {
	if int(e.Name) >= len(b.nameRow[slot]) {
		b.growNames(int(e.Name) + 1)
	}
	name := b.strs.Get(e.Name)
	r := a.row(e.Kind, name, a.category(b, e.Kind, e.Name, e.Ctx), e.Name)
	b.nameRow[slot][e.Name] = r
	return r
}

// row returns the row of (kind, name, cat), made on first use with id,
// the name's id in its source's table (KernelRow.NameID; 0: none).
func (a *Aggregator) row(kind tracer.Kind, name string, cat int32, id tracer.StrID) *rowAcc {
	key := rowKey{kind, name, cat}
	if ri, ok := a.rowIdx[key]; ok {
		return a.rows[ri-1]
	}
	fk := famKey{kind, name}
	fam := a.fams[fk]
	if fam == nil {
		fam = new([]*rowAcc)
		a.fams[fk] = fam
	}
	r := &rowAcc{name: name, nameID: id, kind: kind, cat: cat, fam: fam, min: math.MaxInt64, pKey: math.MaxUint64}
	*fam = append(*fam, r)
	a.rows = append(a.rows, r)
	a.rowIdx[key] = int32(len(a.rows))
	return r
}

// openCell starts a cell of key (name<<32 | ctx) holding e (duration d):
// in r when (name, ctx) is r's category, else in the name's row of that
// category (found among r's family, a slice of one to a few rows); the
// row's previous cell is flushed first. It returns the row, now cached as
// the name's row of b.
func (a *Aggregator) openCell(b *binding, r *rowAcc, e *tracer.Event, key uint64, d int64) *rowAcc {
	cat := a.category(b, r.kind, e.Name, e.Ctx)
	if r.cat != cat {
		var to *rowAcc
		for _, x := range *r.fam {
			if x.cat == cat {
				to = x
				break
			}
		}
		if to == nil {
			to = a.row(r.kind, r.name, cat, r.nameID)
		}
		r = to
		b.nameRow[kindSlots[r.kind&15]][e.Name] = r
	}
	a.flushCell(r)
	if r.pBind != b { // a pointer store costs a write barrier while the GC runs
		r.pBind = b
	}
	r.pKey, r.pCount, r.pNs = key, 1, d
	return r
}

// category returns the category id of a GPU op of kind k named name (an
// ID of b) launched in context ctx: the first rule with
// K & ((NA & C) | (N & CA)).
func (a *Aggregator) category(b *binding, k tracer.Kind, name tracer.StrID, ctx tracer.CtxID) int32 {
	if int(name) >= len(b.nameDone) {
		b.growNames(int(name) + 1)
	}
	if !b.nameDone[name] {
		copy(b.nameMask[int(name)*2*b.words:], a.rules.nameMasks(b.strs.Get(name)))
		b.nameDone[name] = true
	}
	if int(ctx) >= len(b.ctx) || !b.ctx[ctx].done {
		a.resolveCtx(b, ctx)
	}
	if w := b.words; w == 1 { // up to 64 rules: one word, no slices
		i, j := int(name)*2, int(ctx)*2
		m := a.kind1[k&15] & ((b.nameMask[i+1] & b.ctxMask[j]) | (b.nameMask[i] & b.ctxMask[j+1]))
		if m != 0 {
			return a.rules.ruleCat[bits.TrailingZeros64(m)]
		}
		return a.rules.other
	}
	w := b.words
	km := a.kind[k&15]
	nm := b.nameMask[int(name)*2*w : int(name+1)*2*w]
	cm := b.ctxMask[int(ctx)*2*w : int(ctx+1)*2*w]
	return a.rules.pickMasks(km, nm, cm)
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
	ci.done, ci.stage, ci.step, ci.launch, ci.innerOp = true, 0, -1, 0, 0 // stage 0 is StageNone; the launch name is looked up again
	acc := make([]uint64, 4*b.words)
	after := false
	if int(id) < len(b.ctxs) {
		c := &b.ctxs[id]
		ci.step = c.Step
		after = c.AfterAttention
		for _, s := range c.Ops {
			a.rules.orCtxName(acc, a.opNameBits(b, s), false)
		}
		for _, s := range c.Ranges {
			a.rules.orCtxName(acc, a.opNameBits(b, s), true)
		}
		if n := len(c.Ranges); n > 0 {
			ci.stage = a.stageID(b.strs.Get(c.Ranges[n-1]))
		}
		if n := len(c.Ops); n > 0 {
			ci.innerOp = c.Ops[n-1]
		}
	}
	copy(b.ctxMask[int(id)*2*b.words:], a.rules.ctxCombine(acc, after))
}

// opNameBits returns the cached Rules.ctxNameBits of an operator or range
// name.
func (a *Aggregator) opNameBits(b *binding, s tracer.StrID) []uint64 {
	w := 4 * b.words
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
	r.stageRule = c.StageFrom.String()
	r.hasCtx = true
}

func (a *Aggregator) stageID(name string) int32 {
	if id, ok := a.stageIdx[name]; ok {
		return id
	}
	id := int32(len(a.stageKey))
	a.stageIdx[name] = id
	a.stageKey = append(a.stageKey, name)
	return id
}

func (a *Aggregator) step(n int64) *stepAcc {
	st := a.steps[n]
	if st == nil {
		if a.forgotten > 0 && n <= a.stepFloor {
			return &a.lost
		}
		if a.stepCap > 0 && len(a.stepList) >= 2*a.stepCap {
			a.forgetSteps()
			if n <= a.stepFloor {
				return &a.lost
			}
		}
		st = &stepAcc{n: n}
		a.steps[n] = st
		a.stepList = append(a.stepList, st)
	}
	return st
}

// SetStepCap keeps the newest n steps (by number; 0, the default, keeps
// every step): a live session runs for days, and a snapshot copies every
// step it lists. Older steps are forgotten in batches, counted in
// Snapshot.StepsForgotten; work launched in a forgotten step, or in a
// step numbered at or below the newest forgotten one, counts in every
// total and in no step until a Reset (which a session does when a
// restarted process numbers its steps afresh).
func (a *Aggregator) SetStepCap(n int) { a.stepCap = max(n, 0) }

// forgetSteps drops all but the newest stepCap steps.
func (a *Aggregator) forgetSteps() {
	a.sortSteps()
	k := len(a.stepList) - a.stepCap
	for _, st := range a.stepList[:k] {
		delete(a.steps, st.n)
	}
	a.stepFloor = max(a.stepFloor, a.stepList[k-1].n)
	a.forgotten += int64(k)
	n := copy(a.stepList, a.stepList[k:])
	clear(a.stepList[n:])
	a.stepList, a.stepsSorted = a.stepList[:n], n
	a.gen++ // contexts cache their step's accumulator
}

// sortSteps orders stepList by step number: nothing to do when the steps
// added since the last call come after the sorted ones, in order.
func (a *Aggregator) sortSteps() {
	l := a.stepList
	i := a.stepsSorted
	for i < len(l) && (i == 0 || l[i-1].n < l[i].n) {
		i++
	}
	if i < len(l) {
		slices.SortFunc(l, func(x, y *stepAcc) int { return cmp.Compare(x.n, y.n) })
	}
	a.stepsSorted = len(l)
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
	cat := a.rules.pickMasks(a.kind[s.Kind], a.rules.nameMasks(s.Name), a.rules.ctxMasks(Launch{}))
	r := a.row(s.Kind, s.Name, cat, 0)
	r.min = min(r.min, s.MinNs)
	r.max = max(r.max, s.MaxNs)
	r.sumRows++
	r.sumP50 = s.P50Ns
	r.cats = addShare(r.cats, cat, s.Count, s.TotalNs)
	r.stages = addShare(r.stages, 0, s.Count, s.TotalNs)
}

// Reset clears every accumulated number (rows, categories, stages, steps,
// busy time, totals) but keeps the classification caches and the source
// metadata: a live session's "current window" aggregator calls it at each
// window start.
func (a *Aggregator) Reset() {
	a.durKept = 0
	for _, r := range a.rows {
		r.min, r.max = math.MaxInt64, 0
		a.recycleDurs(r)
		a.durKept += cap(r.durs)
		r.pctN, r.hist = 0, nil
		r.cats, r.stages = r.cats[:0], r.stages[:0]
		if r.launch != nil {
			r.launch.reset()
		}
		r.sumRows, r.sumP50 = 0, 0
		r.pCount, r.pNs = 0, 0
		r.pw, r.w = Work{}, Work{}
	}
	clear(a.catWork)
	clear(a.stageWork)
	clear(a.unmod)
	clear(a.steps)
	clear(a.stepList)
	a.stepList, a.stepsSorted = a.stepList[:0], 0
	a.forgotten, a.stepFloor = 0, 0
	for _, db := range a.busy {
		db.reset() // in place: bindings cache these pointers
	}
	a.gen++
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
	s.StepRule = strings.Join(a.stepRules, "; ")
	s.SummaryOnly = a.summaryTraces > 0 && a.eventTraces == 0
	if a.summaryTraces > 0 && a.eventTraces > 0 {
		s.Warnings = append(s.Warnings, "some inputs hold only per-kernel sums: percentiles, busy time, stages and steps cover only the inputs with events")
	}
	a.flushCells()
	a.spilledPercentiles()
	t := a.totals()
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, b := range a.busy {
		t.GPUBusyNs = addSat(t.GPUBusyNs, b.all.total())
		t.KernelBusyNs = addSat(t.KernelBusyNs, b.kernTotal())
		if b.all.started {
			first, last = min(first, b.all.lo), max(last, b.all.cur.End)
		}
	}
	if last >= first {
		t.SpanNs = subSat(last, first)
	}
	s.Totals = t
	for k, b := range a.busy {
		if b.all.started && !slices.Contains(s.WorkDevices, k.dev) {
			s.WorkDevices = append(s.WorkDevices, k.dev)
		}
	}
	slices.Sort(s.WorkDevices)
	cats := make([]share, len(a.rules.cats))
	stages := make([]share, len(a.stageKey))
	for _, r := range a.rows {
		for _, x := range r.cats {
			cats[x.id].count += x.count
			cats[x.id].ns = addSat(cats[x.id].ns, x.ns)
		}
		for _, x := range r.stages {
			stages[x.id].count += x.count
			stages[x.id].ns = addSat(stages[x.id].ns, x.ns)
		}
	}

	for _, r := range a.rows {
		count, total := r.sums()
		if count == 0 {
			continue
		}
		if r.display == "" {
			if r.kind == tracer.KindKernel {
				r.display = DisplayName(r.name)
			} else {
				r.display = Ellipsize(r.name, MaxDisplayName)
			}
		}
		kr := KernelRow{
			Name:        r.name,
			NameID:      r.nameID,
			DisplayName: r.display,
			Kind:        r.kind,
			Count:       count,
			TotalNs:     total,
			MeanNs:      total / count,
			MinNs:       r.min,
			MaxNs:       r.max,
			Ops:         slices.Clone(r.ops),
			Ranges:      slices.Clone(r.ranges),
			StageRule:   r.stageRule,
			Launches:    a.launchesOf(r),
			Work:        r.w,
		}
		if r.hist != nil {
			kr.P50Ns = min(max(histPercentile(r.hist, 50), r.min), r.max)
			kr.P99Ns = min(max(histPercentile(r.hist, 99), r.min), r.max)
			kr.PercentilesApprox = true
		} else if r.sumRows == 0 && r.nSpill > 0 {
			kr.P50Ns, kr.P99Ns = r.p50, r.p99 // spilledPercentiles
		} else if r.sumRows == 0 {
			r.durPercentiles()
			kr.P50Ns, kr.P99Ns = r.p50, r.p99
		} else if r.sumRows == 1 && r.nFull+len(r.durs) == 0 {
			kr.P50Ns = r.sumP50
		}
		kr.Category = a.rules.cats[r.cat]
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
	byTotal := func(x, y KernelRow) int { return largestFirst(x.TotalNs, y.TotalNs, x.Name, y.Name) }
	slices.SortFunc(s.Kernels, byTotal)
	slices.SortFunc(s.Transfers, byTotal)

	for id, g := range cats {
		if g.count > 0 || g.ns > 0 {
			s.Categories = append(s.Categories, GroupRow{Key: a.rules.cats[id], Count: g.count, TotalNs: g.ns, Share: ratio(g.ns, t.GPUTotalNs), Work: workAt(a.catWork, id)})
		}
	}
	if !s.SummaryOnly {
		for id, g := range stages {
			if g.count > 0 || g.ns > 0 {
				s.Stages = append(s.Stages, GroupRow{Key: a.stageKey[id], Count: g.count, TotalNs: g.ns, Share: ratio(g.ns, t.GPUTotalNs), Work: workAt(a.stageWork, id)})
			}
		}
	}
	byGroup := func(x, y GroupRow) int { return largestFirst(x.TotalNs, y.TotalNs, x.Key, y.Key) }
	slices.SortFunc(s.Categories, byGroup)
	slices.SortFunc(s.Stages, byGroup)

	if len(a.stepList) > 0 {
		a.sortSteps()
		s.StepsForgotten = a.forgotten
		s.Steps = make([]StepRow, len(a.stepList))
		for i, st := range a.stepList {
			s.Steps[i] = StepRow{Step: st.n, StartNs: st.start, DurNs: st.dur, KernelNs: st.kernelNs, Count: st.gpus, Work: st.work}
		}
	}
	a.snapshotWork(s)
	if w := s.overflowed(); len(w) > 0 {
		s.Warnings = append(s.Warnings, overflowWarning(w))
	}
	return s
}

// largestFirst orders a snapshot's rows: the larger total (ns) first, ties
// by name (byte order), so that equal inputs always print in one order.
// It is a comparison function for slices.SortFunc.
func largestFirst(xTotal, yTotal int64, xName, yName string) int {
	if c := cmp.Compare(yTotal, xTotal); c != 0 {
		return c
	}
	return strings.Compare(xName, yName) // only on a tie: names can be long
}

// overflowed names the sums of s that saturated at math.MaxInt64 (addSat):
// totals, busy, span, then at most three rows of each kind.
func (s *Snapshot) overflowed() []string {
	const sat = math.MaxInt64
	var w []string
	t := &s.Totals
	for _, x := range []struct {
		v    int64
		name string
	}{
		{t.KernelTotalNs, "the kernel total"}, {t.TransferNs, "the transfer total"},
		{t.GPUTotalNs, "the GPU total"}, {t.GPUBusyNs, "the busy time"},
		{t.KernelBusyNs, "the kernel busy time"}, {t.SpanNs, "the span"},
	} {
		if x.v == sat {
			w = append(w, x.name)
		}
	}
	rows := func(kind, kinds string, n int, name func(i int) string, v func(i int) int64) {
		var names []string
		count := 0
		for i := range n {
			if v(i) == sat {
				if count++; count <= 3 {
					names = append(names, fmt.Sprintf("%q", name(i)))
				}
			}
		}
		switch {
		case count == 1:
			w = append(w, fmt.Sprintf("%s %s's total", kind, names[0]))
		case count > 3:
			w = append(w, fmt.Sprintf("%d %s' totals (%s, …)", count, kinds, strings.Join(names, ", ")))
		case count > 1:
			w = append(w, fmt.Sprintf("%d %s' totals (%s)", count, kinds, strings.Join(names, ", ")))
		}
	}
	rows("kernel", "kernels", len(s.Kernels), func(i int) string { return s.Kernels[i].Name }, func(i int) int64 { return s.Kernels[i].TotalNs })
	rows("transfer", "transfers", len(s.Transfers), func(i int) string { return s.Transfers[i].Name }, func(i int) int64 { return s.Transfers[i].TotalNs })
	rows("category", "categories", len(s.Categories), func(i int) string { return s.Categories[i].Key }, func(i int) int64 { return s.Categories[i].TotalNs })
	rows("stage", "stages", len(s.Stages), func(i int) string { return s.Stages[i].Key }, func(i int) int64 { return s.Stages[i].TotalNs })
	rows("step", "steps", len(s.Steps), func(i int) string { return strconv.FormatInt(s.Steps[i].Step, 10) }, func(i int) int64 { return s.Steps[i].KernelNs })
	return w
}

// totals sums the rows' counts and durations (busy and span excluded).
func (a *Aggregator) totals() Totals {
	var t Totals
	for _, r := range a.rows {
		count, total := r.sums()
		if r.kind == tracer.KindKernel {
			t.KernelCount += count
			t.KernelTotalNs = addSat(t.KernelTotalNs, total)
		} else {
			t.TransferCount += count
			t.TransferNs = addSat(t.TransferNs, total)
		}
	}
	t.GPUTotalNs = addSat(t.KernelTotalNs, t.TransferNs)
	return t
}

func ratio(x, y int64) float64 {
	if y == 0 {
		return 0
	}
	return float64(x) / float64(y)
}

// String summarises the aggregator's totals (for debugging).
func (a *Aggregator) String() string {
	t := a.totals()
	return fmt.Sprintf("attrib.Aggregator{rows: %d, kernels: %d, kernel_ns: %d}", len(a.rows), t.KernelCount, t.KernelTotalNs)
}
