package tracer

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/rlktop/rlktop/internal/extsort"
)

// StageRule says which rule gave a GPU op its annotation ranges (and so its
// stage): Context.StageFrom.
type StageRule uint8

// The stage rules, in the order Linker tries them.
const (
	// StageNoRange: no annotation range was open at launch, on the
	// launching thread or on the process's step thread.
	StageNoRange StageRule = iota
	// StageLaunchThread: the ranges open on the launching thread at launch.
	StageLaunchThread
	// StageStepThread: none was open on the launching thread; the ranges
	// are those open at launch on the thread that owns the process's step
	// ranges (autograd launches backward kernels from its own thread while
	// the main thread sits in "## backward ##" / loss.backward).
	StageStepThread
)

var stageRuleNames = [...]string{"no range open", "launching thread", "step thread"}

// String says the rule in words: "launching thread", "step thread", "no
// range open".
func (r StageRule) String() string {
	if int(r) < len(stageRuleNames) {
		return stageRuleNames[r]
	}
	return "unknown"
}

// Linker is rlktop's one linking rule: it resolves the launch point of a GPU
// op (a process, thread and time in ns) to the Context open there. Trace.Link
// runs it over a whole file; the live session (tracer/session) feeds it
// incrementally. The rule (ARCHITECTURE.md, "Units and attribution rules";
// DESIGN.md "Attribution"):
//
//   - Step: the step window (KindStep) of the launching process that
//     contains the launch, whatever thread the window and the launch are on;
//     with nested windows the innermost (latest start). -1 when none.
//   - Ops: the CPU operators (KindCPUOp) open on the launching thread,
//     outermost first.
//   - Ranges (the stage is the last, innermost one): the annotation ranges
//     (KindRange) open on the launching thread; when none is open there,
//     those open at the launch time on the process's step thread (the thread
//     holding most of its steps). Context.StageFrom says which.
//   - AfterAttention: an attention operator (IsAttentionOp; known only
//     once SetStrings gave the names) on the launching thread ended before
//     the launch, and the innermost range around it is open at the launch.
//
// An interval [Start, End) contains t when Start <= t < End, or t == Start
// for a zero-length interval. Contexts are interned: equal contexts share a
// CtxID; Contexts[0] is the empty context. Not safe for concurrent use.
//
// Cost: queries in time order (per thread) are answered by a sweep that
// keeps the open intervals (amortised O(1) per interval and query plus the
// open set's size); a query earlier than the thread's previous one restarts
// the sweep from t minus the longest interval seen.
type Linker struct {
	// Contexts is indexed by CtxID; it only grows (IDs keep their
	// meaning) until ResetContexts.
	Contexts []Context

	// Contexts are interned in two levels: the operator and range stack
	// with its StageFrom (stacks: ops and ranges shared by every context
	// of the stack), then (stack, step): a long window has a few hundred
	// contexts per step, so one costs a Context and a map entry.
	stacks  map[string]int32
	stackV  []stackIDs
	intern  map[ctxKey]CtxID
	keys    []ctxKey // per CtxID: its stack and step (ResetContexts)
	threads map[threadKey]*linkThread
	procs   map[int32]*linkProc

	keyBuf []byte
	ctx    Context

	// strs names the operators, to find the attention operators
	// (SetStrings); attn caches IsAttentionOp per StrID (0 unknown, 1
	// no, 2 yes).
	strs *Strings
	attn []uint8

	// Spill mode (linkspill.go): intervals go to an external sort until
	// the first Resolve seals them into per-thread block files.
	spill      *extsort.Sorter[spillSpan]
	spillBlock int // SpillSizes.Block of spill mode
	spillKeys  []*linkThread
	spool      *extsort.Spool[span]
	spillErr   error

	// lastTh and lastP are the threads and process of the previous
	// Resolve (most come from one or two threads): map lookups skipped.
	lastTh  [2]*linkThread
	lastTK  [2]threadKey
	lastP   *linkProc
	lastPID int32

	// The last answer and what it was computed from.
	cacheOK          bool
	cacheL, cacheS   *linkThread
	cacheLV, cacheSV uint64
	cacheStep        int64
	cacheMark        int
	cacheCtx         CtxID
}

type threadKey struct{ pid, tid int32 }

// span is an operator or range interval: 24 bytes.
type span struct {
	s, e int64
	name StrID
	// tag: spanRange for a range, else an operator and its call (the
	// Event.Call of its KindCPUOp event; 0 none) in the low 31 bits.
	tag uint32
}

// spanRange tags a range's span (an operator's has the bit clear).
const spanRange = 1 << 31

// spanOf returns the span of an operator or range event.
func spanOf(e *Event) span {
	sp := span{e.Start, e.Start + max(e.Dur, 0), e.Name, uint32(e.Call) &^ spanRange}
	if e.Kind == KindRange {
		sp.tag = spanRange
	}
	return sp
}

func (s *span) isRange() bool { return s.tag&spanRange != 0 }

// call returns the operator call of an operator's span (0: none or a range).
func (s *span) call() CallID {
	if s.isRange() {
		return 0
	}
	return CallID(s.tag)
}

func (s *span) contains(t int64) bool { return s.s <= t && (t < s.e || (s.s == s.e && t == s.s)) }

type linkThread struct {
	ivs     []span // sorted by start (outermost first on ties) up to sortedN
	sortedN int
	maxDur  int64
	// disk, when set, holds the thread's intervals instead of ivs (a long
	// window's, spilled: linkspill.go).
	disk *spanDisk
	idx  int32 // the thread's index in Linker.spillKeys (spill mode)
	// Sweep state: intervals [0, next) were considered; active holds those
	// open at `at`, outermost first; ver changes when active does.
	next   int
	active []span
	at     int64
	valid  bool
	ver    uint64
	ranges int // open ranges in active

	// marks are the thread's attention operators, sorted by end up to
	// marksN; rngs its ranges, sorted by start up to rngsN (to find the
	// range innermost around a mark). Both are few beside ivs and are kept
	// in memory in spill mode too.
	marks  []span
	marksN int
	rngs   []span
	rngsN  int
	rngUp  []int32
}

type stepWin struct{ s, e, value int64 }

type linkProc struct {
	steps   []stepWin
	sortedN int
	lastAt  int // index in steps of stepAt's previous answer
	maxDur  int64
	perTID  map[int32]int // steps per thread
	stepTID int32
	hasTID  bool
	dirty   bool // perTID changed since stepTID was chosen
}

// NewLinker returns an empty linker with context 0.
func NewLinker() *Linker {
	return &Linker{
		Contexts: []Context{{Step: -1}},
		stacks:   map[string]int32{},
		intern:   map[ctxKey]CtxID{},
		keys:     []ctxKey{{-1, -1}},
		threads:  map[threadKey]*linkThread{},
		procs:    map[int32]*linkProc{},
	}
}

// Add records e when it is an operator (KindCPUOp), annotation range
// (KindRange) or step (KindStep); other kinds are ignored. Events may come
// in any order.
func (l *Linker) Add(e *Event) {
	switch e.Kind {
	case KindCPUOp, KindRange:
		th := l.thread(threadKey{e.PID, e.TID})
		if e.Kind == KindRange {
			th.rngs = append(th.rngs, spanOf(e))
		} else if l.isAttention(e.Name) {
			th.marks = append(th.marks, spanOf(e))
		}
		if l.spill != nil {
			l.spillAdd(th, spanOf(e))
			return
		}
		th.ivs = append(th.ivs, spanOf(e))
		th.maxDur = max(th.maxDur, e.Dur)
	case KindStep:
		p := l.procs[e.PID]
		if p == nil {
			p = &linkProc{perTID: map[int32]int{}}
			l.procs[e.PID] = p
		}
		p.steps = append(p.steps, stepWin{e.Start, e.Start + max(e.Dur, 0), e.Value})
		p.maxDur = max(p.maxDur, e.Dur)
		p.perTID[e.TID]++
		p.dirty = true
	}
}

func (l *Linker) thread(k threadKey) *linkThread {
	th := l.threads[k]
	if th == nil {
		th = &linkThread{}
		l.threads[k] = th
	}
	return th
}

// StepThread returns the thread of pid that owns its step ranges (the one
// holding most steps; the lowest tid on a tie); ok is false when pid has no
// step.
func (l *Linker) StepThread(pid int32) (tid int32, ok bool) {
	p := l.procs[pid]
	if p == nil || len(p.perTID) == 0 {
		return 0, false
	}
	p.chooseTID()
	return p.stepTID, true
}

func (p *linkProc) chooseTID() {
	if !p.dirty {
		return
	}
	best, n := int32(0), -1
	for tid, c := range p.perTID {
		if c > n || (c == n && tid < best) {
			best, n = tid, c
		}
	}
	p.stepTID, p.hasTID, p.dirty = best, n > 0, false
}

// Resolve returns the context of GPU work launched at t ns on thread tid of
// process pid (0 when nothing is open there and no step contains t).
func (l *Linker) Resolve(pid, tid int32, t int64) CtxID {
	id, _ := l.ResolveUntil(pid, tid, t)
	return id
}

// ResolveUntil is Resolve, and the time until which the answer holds:
// work launched on the same thread at any time in [t, until) has the same
// context, as long as no operator, range or step is added or pruned in
// between (math.MaxInt64: no end known). A live session resolves a
// frame's launches of one thread in time order and calls it once per
// change of the open set rather than once per launch.
func (l *Linker) ResolveUntil(pid, tid int32, t int64) (CtxID, int64) {
	if l.spill != nil {
		l.seal()
	}
	step, until := int64(-1), int64(math.MaxInt64)
	var sth *linkThread
	p := l.lastP
	if p == nil || l.lastPID != pid {
		if p = l.procs[pid]; p != nil {
			l.lastP, l.lastPID = p, pid
		}
	}
	if p != nil {
		step, until = p.stepAt(t)
	}
	th := l.lookThread(threadKey{pid, tid})
	if th != nil {
		th.sweep(t)
		until = min(until, th.until(t))
	}
	if th == nil || th.ranges == 0 {
		if p != nil {
			p.chooseTID()
			if p.hasTID && p.stepTID != tid {
				if sth = l.lookThread(threadKey{pid, p.stepTID}); sth != nil {
					sth.sweep(t)
					until = min(until, sth.until(t))
				}
			}
		}
	}
	var lv, sv uint64
	if th != nil {
		lv = th.ver
	}
	if sth != nil {
		sv = sth.ver
	}
	mark := -1
	if th != nil {
		mark = th.lastMark(t)
		// The next attention operator to end starts another run (implied
		// by the open set, which holds it until it ends; said here so
		// that the bound does not rest on that).
		if m := mark + 1; m < len(th.marks) {
			until = min(until, max(th.marks[m].e, t+1))
		}
	}
	if l.cacheOK && l.cacheL == th && l.cacheS == sth && l.cacheLV == lv && l.cacheSV == sv && l.cacheStep == step && l.cacheMark == mark {
		return l.cacheCtx, until
	}
	after := mark >= 0 && th.afterAttention(mark, t)
	id := l.contextOf(th, sth, step, after)
	l.cacheOK, l.cacheL, l.cacheS, l.cacheLV, l.cacheSV, l.cacheStep, l.cacheMark, l.cacheCtx = true, th, sth, lv, sv, step, mark, id
	return id, until
}

// until is the time from which th's open set, swept to t, can differ:
// the first end of an open interval or start of one not yet open (t+1
// for a thread spilled to disk).
func (th *linkThread) until(t int64) int64 {
	if th.disk != nil {
		return t + 1
	}
	u := int64(math.MaxInt64)
	if th.next < len(th.ivs) {
		u = th.ivs[th.next].s
	}
	for i := range th.active {
		sp := &th.active[i]
		if sp.s == sp.e { // holds t == s only
			return t + 1
		}
		u = min(u, sp.e)
	}
	return max(u, t+1)
}

// lookThread is l.threads[k], through a cache of the last two threads
// found.
func (l *Linker) lookThread(k threadKey) *linkThread {
	for i := range l.lastTh {
		if l.lastTh[i] != nil && l.lastTK[i] == k {
			return l.lastTh[i]
		}
	}
	th := l.threads[k]
	if th != nil {
		l.lastTh[1], l.lastTK[1] = l.lastTh[0], l.lastTK[0]
		l.lastTh[0], l.lastTK[0] = th, k
	}
	return th
}

// SetStrings gives the linker the names of the events it is given, so
// that it can tell attention operators (IsAttentionOp) apart for
// Context.AfterAttention; without it AfterAttention is always false.
// Call it before the first Add.
func (l *Linker) SetStrings(s *Strings) { l.strs = s }

// isAttention reports whether the operator named id is an attention
// operator, cached per id.
func (l *Linker) isAttention(id StrID) bool {
	if l.strs == nil {
		return false
	}
	if int(id) >= len(l.attn) {
		l.attn = append(l.attn, make([]uint8, int(id)+1-len(l.attn))...)
	}
	if l.attn[id] == 0 {
		l.attn[id] = 1
		if IsAttentionOp(l.strs.Get(id)) {
			l.attn[id] = 2
		}
	}
	return l.attn[id] == 2
}

// lastMark returns the index in th.marks of the attention operator that
// ended last at or before t, -1 when none did.
func (th *linkThread) lastMark(t int64) int {
	if len(th.marks) == 0 {
		return -1
	}
	th.sortMarks()
	i, _ := slices.BinarySearchFunc(th.marks, t+1, func(s span, t int64) int { return cmp.Compare(s.e, t) })
	return i - 1
}

// sortMarks sorts th.marks by end (those appended since the last call
// merged in).
func (th *linkThread) sortMarks() {
	if th.marksN != len(th.marks) {
		sortAppended(th.marks, th.marksN, func(a, b span) int { return cmp.Compare(a.e, b.e) })
		th.marksN = len(th.marks)
	}
}

// afterAttention reports whether the range innermost around attention
// operator th.marks[m] (which ended at or before t) is open at t: the
// latest-starting range that contains the operator, of those that started
// before it.
func (th *linkThread) afterAttention(m int, t int64) bool {
	a := th.marks[m]
	if th.rngsN != len(th.rngs) {
		th.sortRanges()
	}
	i, _ := slices.BinarySearchFunc(th.rngs, a.s+1, func(s span, t int64) int { return cmp.Compare(s.s, t) })
	// The ranges containing the operator's start are the last range that
	// started before it and its enclosing ranges (rngUp), innermost first.
	for j := int32(i - 1); j >= 0; j = th.rngUp[j] {
		if r := &th.rngs[j]; r.e >= a.e {
			return r.contains(t)
		}
	}
	return false
}

// sortRanges sorts th.rngs by start (those appended since the last call
// merged in) and fills th.rngUp: for each range, the index of the
// innermost earlier range open at its start (-1: none).
func (th *linkThread) sortRanges() {
	sortAppended(th.rngs, th.rngsN, cmpSpan)
	th.rngsN = len(th.rngs)
	th.rngUp = slices.Grow(th.rngUp[:0], len(th.rngs))[:len(th.rngs)]
	var open []int32
	for i := range th.rngs {
		r := &th.rngs[i]
		for len(open) > 0 && th.rngs[open[len(open)-1]].e <= r.s {
			open = open[:len(open)-1]
		}
		th.rngUp[i] = -1
		if len(open) > 0 {
			th.rngUp[i] = open[len(open)-1]
		}
		open = append(open, int32(i))
	}
}

// contextOf interns the context made of th's open operators and ranges
// (sth's ranges when th has none), step and AfterAttention.
func (l *Linker) contextOf(th, sth *linkThread, step int64, after bool) CtxID {
	c := &l.ctx
	c.Ops, c.Ranges, c.Step, c.StageFrom, c.AfterAttention = c.Ops[:0], c.Ranges[:0], step, StageNoRange, after
	if th != nil {
		for i := range th.active {
			sp := &th.active[i]
			if !sp.isRange() {
				c.Ops = append(c.Ops, sp.name)
			} else {
				c.Ranges = append(c.Ranges, sp.name)
			}
		}
		if len(c.Ranges) > 0 {
			c.StageFrom = StageLaunchThread
		}
	}
	if len(c.Ranges) == 0 && sth != nil {
		for i := range sth.active {
			if sp := &sth.active[i]; sp.isRange() {
				c.Ranges = append(c.Ranges, sp.name)
			}
		}
		if len(c.Ranges) > 0 {
			c.StageFrom = StageStepThread
		}
	}
	if len(c.Ops) == 0 && len(c.Ranges) == 0 && step < 0 && !after {
		return 0
	}
	kb := appendStackKey(l.keyBuf[:0], c)
	l.keyBuf = kb
	st, ok := l.stacks[string(kb)]
	if !ok {
		st = int32(len(l.stackV))
		l.stackV = append(l.stackV, stackIDs{cloneIDs(c.Ops), cloneIDs(c.Ranges), c.StageFrom, c.AfterAttention})
		l.stacks[string(kb)] = st
	}
	return l.internKey(ctxKey{st, step})
}

// appendStackKey appends the key of c's stack (its Ops, Ranges,
// StageFrom and AfterAttention; not its step) to b.
func appendStackKey(b []byte, c *Context) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Ops)))
	for _, x := range c.Ops {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	for _, x := range c.Ranges {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	after := byte(0)
	if c.AfterAttention {
		after = 1
	}
	return append(b, byte(c.StageFrom), after)
}

// ctxKey is a context by its stack (an index into Linker.stackV; -1 for
// context 0) and step.
type ctxKey struct {
	stack int32
	step  int64
}

// internKey returns the CtxID of k (not context 0's key), adding it.
func (l *Linker) internKey(k ctxKey) CtxID {
	if id, ok := l.intern[k]; ok {
		return id
	}
	sv := &l.stackV[k.stack]
	id := CtxID(len(l.Contexts))
	l.Contexts = append(l.Contexts, Context{Ops: sv.ops, Ranges: sv.ranges, Step: k.step, StageFrom: sv.from, AfterAttention: sv.after})
	l.keys = append(l.keys, k)
	l.intern[k] = id
	return id
}

// key returns what context id is made of, to intern it again after
// ResetContexts.
func (l *Linker) key(id CtxID) ctxKey { return l.keys[id] }

// ctxOf returns the CtxID of k in the current contexts, adding it.
func (l *Linker) ctxOf(k ctxKey) CtxID {
	if k.stack < 0 {
		return 0
	}
	return l.internKey(k)
}

// ResetContexts forgets every context but context 0: IDs handed out
// before mean nothing after it (CaptureLinker starts each window, and each
// part of a long one, with fresh contexts, so that their number stays one
// window's). The operator stacks are kept.
func (l *Linker) ResetContexts() {
	if len(l.Contexts) == 1 {
		return
	}
	// New arrays: a caller may still read the old contexts (an aggregator
	// adds its open cells when the next part comes).
	l.Contexts = append(make([]Context, 0, len(l.Contexts)), l.Contexts[0])
	l.keys = append(make([]ctxKey, 0, len(l.keys)), l.keys[0])
	clear(l.intern)
	l.cacheOK = false
}

// RenewContexts is ResetContexts for a caller that still holds IDs
// handed out before it (a live session's window of linked events):
// remap(id) returns the ID, among the new contexts, of the context id was
// before the reset, interning it again on first use (0 stays 0; an ID
// never handed out maps to 0). The callers' IDs are remapped once each, so
// that only the contexts still held come back. remap is valid until the
// next ResetContexts or RenewContexts.
func (l *Linker) RenewContexts() (remap func(CtxID) CtxID) {
	old := l.keys
	l.ResetContexts()
	to := make([]CtxID, len(old)) // 0: not yet interned again
	return func(id CtxID) CtxID {
		if id == 0 || int(id) >= len(old) {
			return 0
		}
		if to[id] == 0 {
			to[id] = l.internKey(old[id])
		}
		return to[id]
	}
}

// stackIDs is an interned operator and range stack (Context.Ops, Ranges).
type stackIDs struct {
	ops, ranges []StrID
	from        StageRule
	after       bool
}

// cloneIDs copies s; nil when empty, so equal contexts compare equal.
func cloneIDs(s []StrID) []StrID {
	if len(s) == 0 {
		return nil
	}
	return slices.Clip(slices.Clone(s)) // shared by contexts: no room to append into
}

func cmpSpan(a, b span) int {
	if a.s != b.s {
		return cmp.Compare(a.s, b.s)
	}
	return cmp.Compare(b.e, a.e) // longer (outer) first
}

// sweep moves th's open set to time t.
func (th *linkThread) sweep(t int64) {
	if th.disk == nil && th.sortedN != len(th.ivs) {
		sortAppended(th.ivs, th.sortedN, cmpSpan)
		th.sortedN = len(th.ivs)
		th.valid = false
	}
	changed := false
	if !th.valid || t < th.at {
		th.active = th.active[:0]
		if th.disk != nil {
			th.next = th.disk.restart(t, &th.active)
		} else {
			lo := t - th.maxDur
			if lo > t { // overflow
				lo = -1 << 63
			}
			th.next, _ = slices.BinarySearchFunc(th.ivs, lo, func(s span, t int64) int { return cmp.Compare(s.s, t) })
		}
		th.valid = true
		changed = true
	}
	th.at = t
	if th.disk != nil {
		for th.next < th.disk.n {
			sp := th.disk.at(th.next)
			if sp.s > t {
				break
			}
			th.active = append(th.active, sp)
			th.next++
			changed = true
		}
	} else {
		for th.next < len(th.ivs) && th.ivs[th.next].s <= t {
			th.active = append(th.active, th.ivs[th.next])
			th.next++
			changed = true
		}
	}
	w, ranges := 0, 0
	for _, sp := range th.active {
		if sp.contains(t) {
			th.active[w] = sp
			w++
			if sp.isRange() {
				ranges++
			}
		}
	}
	if w != len(th.active) {
		changed = true
	}
	th.active = th.active[:w]
	th.ranges = ranges
	if changed {
		th.ver++
	}
}

// stepAt returns the value of the innermost step window containing t, or
// -1, and the time until which that answer holds (the step's end, or the
// next step's start).
func (p *linkProc) stepAt(t int64) (value, until int64) {
	if p.sortedN != len(p.steps) {
		sortAppended(p.steps, p.sortedN, cmpStep)
		p.sortedN = len(p.steps)
	}
	// The previous answer's step, when t lies in it before the next
	// step's start: the search below would find it first.
	if j := p.lastAt; j < len(p.steps) {
		if s := &p.steps[j]; s.s <= t && t < s.e && (j+1 == len(p.steps) || t < p.steps[j+1].s) {
			return s.value, p.stepUntil(j, j+1)
		}
	}
	i, _ := slices.BinarySearchFunc(p.steps, t+1, func(s stepWin, t int64) int { return cmp.Compare(s.s, t) })
	for j := i - 1; j >= 0 && p.steps[j].s >= t-p.maxDur; j-- {
		s := &p.steps[j]
		if s.s <= t && (t < s.e || (s.s == s.e && t == s.s)) {
			p.lastAt = j
			if s.s == s.e {
				return s.value, t + 1
			}
			return s.value, p.stepUntil(j, i)
		}
	}
	if i < len(p.steps) {
		return -1, p.steps[i].s
	}
	return -1, math.MaxInt64
}

// stepUntil is the end of step j, or the start of step i (the first to
// start after the time step j was found for) when earlier.
func (p *linkProc) stepUntil(j, i int) int64 {
	u := p.steps[j].e
	if i < len(p.steps) {
		u = min(u, p.steps[i].s)
	}
	return u
}

func cmpStep(a, b stepWin) int {
	if a.s != b.s {
		return cmp.Compare(a.s, b.s)
	}
	return cmp.Compare(b.e, a.e)
}

// sortAppended stably sorts s, whose first n elements are sorted (by
// cmp), as slices.SortStableFunc would: the appended rest is sorted and
// merged in, moving only the elements of the prefix after the first
// appended one's place — live sources send intervals as they end, so
// that is the few enclosing ranges that ended last, not every interval
// kept.
func sortAppended[T any](s []T, n int, cmp func(a, b T) int) {
	if n >= len(s) {
		return
	}
	tail := s[n:]
	slices.SortStableFunc(tail, cmp)
	if n == 0 || cmp(s[n-1], tail[0]) <= 0 {
		return
	}
	// The prefix from the first element after tail[0] (ties stay first).
	lo, hi := 0, n-1 // s[n-1] is after tail[0]
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); cmp(s[m], tail[0]) > 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo
	left := slices.Clone(s[i:n])
	w, a, b := i, 0, n
	for a < len(left) && b < len(s) {
		if cmp(s[b], left[a]) < 0 {
			s[w] = s[b]
			b++
		} else {
			s[w] = left[a]
			a++
		}
		w++
	}
	copy(s[w:], left[a:])
}

// LatestStepEnd returns the latest end (ns) of a step of pid; ok is false
// when pid has none. A live source sends a step when it ends, after every
// range nested in it, so a launch before this time has its context known.
func (l *Linker) LatestStepEnd(pid int32) (end int64, ok bool) {
	p := l.procs[pid]
	if p == nil || len(p.steps) == 0 {
		return 0, false
	}
	end = p.steps[0].e
	for i := range p.steps {
		end = max(end, p.steps[i].e)
	}
	return end, true
}

// Prune forgets the operators and ranges of thread (pid, tid) that ended
// before cut ns, then the oldest beyond maxKeep (0: no bound); it returns
// the latest end (ns) and the number of intervals forgotten. Steps are
// kept whole (a few per second). Used by live sessions to bound memory.
func (l *Linker) Prune(pid, tid int32, cut int64, maxKeep int) (forgotEnd int64, n int) {
	th := l.threads[threadKey{pid, tid}]
	if th == nil || th.disk != nil {
		return 0, 0
	}
	keep := 0
	for i := range th.ivs {
		if th.ivs[i].e >= cut {
			keep++
		}
	}
	if keep == len(th.ivs) && (maxKeep <= 0 || keep <= maxKeep) {
		return 0, 0
	}
	if th.sortedN != len(th.ivs) {
		sortAppended(th.ivs, th.sortedN, cmpSpan)
		th.sortedN = len(th.ivs)
	}
	out := th.ivs[:0]
	for _, s := range th.ivs {
		if s.e >= cut {
			out = append(out, s)
		} else {
			forgotEnd = max(forgotEnd, s.e)
			n++
		}
	}
	if over := len(out) - maxKeep; maxKeep > 0 && over > 0 {
		for _, s := range out[:over] {
			forgotEnd = max(forgotEnd, s.e)
		}
		n += over
		out = out[over:]
	}
	th.ivs = out // not clipped: the next append reuses the array rather than copying every kept interval
	if cap(th.ivs) > 2*len(th.ivs)+1024 {
		th.ivs = slices.Clone(th.ivs)
	}
	// Ranges and attention operators are pruned by the same cut, so
	// that a launch after it sees the same AfterAttention.
	th.sortMarks()
	th.sortRanges()
	th.rngs = slices.DeleteFunc(th.rngs, func(s span) bool { return s.e < cut })
	th.marks = slices.DeleteFunc(th.marks, func(s span) bool { return s.e < cut })
	th.marksN = len(th.marks)
	th.rngsN = 0 // sorted still, but rngUp's indices moved: refilled
	th.sortedN = len(th.ivs)
	th.valid = false
	l.cacheOK = false
	return forgotEnd, n
}

// Intervals returns how many operators and ranges thread (pid, tid) holds.
func (l *Linker) Intervals(pid, tid int32) int {
	if th := l.threads[threadKey{pid, tid}]; th != nil {
		if th.disk != nil {
			return th.disk.n
		}
		return len(th.ivs)
	}
	return 0
}

// Link fills Event.Ctx for every GPU op (kernel, memcpy, memset) and
// Trace.Contexts with Linker's rule.
//
// The launch point of a GPU op is the start of the Runtime/Driver call with
// the same correlation id (the first such call in the trace); a GPU op with
// no such call but a known launching thread (TID >= 0; the built-in loop's
// CPU "kernels") is launched at its own start on that thread. Others get
// context 0. Link may be called again after more events were appended; it
// recomputes every context.
func (t *Trace) Link() {
	l := NewLinker()
	l.SetStrings(t.Strings)
	var b linkBatch
	b.calls = t.Calls
	b.link(l, t.Events)
	t.Contexts = l.Contexts
}

// callAt returns the innermost operator call open on thread (pid, tid) at
// the time of the last Resolve there (0: none), and sets the Parent of
// each call of that open stack to the call enclosing it. calls is
// Trace.Calls.
func (l *Linker) callAt(pid, tid int32, calls []OpCall) CallID {
	th := l.threads[threadKey{pid, tid}]
	if th == nil {
		return 0
	}
	var prev CallID
	for i := range th.active {
		c := th.active[i].call()
		if c == 0 || int(c) >= len(calls) {
			continue
		}
		if calls[c].Parent == 0 && prev != c {
			calls[c].Parent = prev
		}
		prev = c
	}
	return prev
}

// linkBatch is Link's work on one array of events with a given Linker
// (Trace.Link: the whole trace; CaptureLinker: one window), with scratch
// kept between calls.
type linkBatch struct {
	// calls, when not nil, is Trace.Calls: each GPU op gets the innermost
	// call open at its launch (Event.Call), unless it has no correlation
	// id and a call already (CPUOpKernels' operators by self time: their
	// own call, which an operator starting at the same time would hide).
	calls  []OpCall
	launch map[uint64]int32
	qs     []linkQuery
	per    map[threadKey]int
	// unmatched: the largest correlation id of a GPU op of the last batch
	// that had no launch call in it (0: none).
	unmatched uint64
	// launchMin, launchMax: the smallest and largest correlation id of a
	// launch call of the last batch (launchMax 0: none).
	launchMin, launchMax uint64
}

type linkQuery struct {
	t        int64
	pid, tid int32
	gpu      int32
}

// linkParEvents is the number of events from which link makes the
// launches' map on a goroutine of its own: below it (a live window, a
// small trace) a goroutine's start costs more than it saves.
const linkParEvents = 1 << 18

func (b *linkBatch) link(l *Linker, evs []Event) {
	nLaunch := 0
	// Size every thread's intervals up front: growing them by appends
	// allocated about twice their final size.
	if b.per == nil {
		b.per = map[threadKey]int{}
	}
	per := b.per
	clear(per)
	b.launchMin, b.launchMax, b.unmatched = 0, 0, 0
	nCorr := 0
	for i := range evs {
		e := &evs[i]
		if e.Kind.IsLaunch() {
			nLaunch++
			if e.Corr != 0 {
				nCorr++
				if b.launchMax == 0 || e.Corr < b.launchMin {
					b.launchMin = e.Corr
				}
				b.launchMax = max(b.launchMax, e.Corr)
			}
		} else if e.Kind == KindCPUOp || e.Kind == KindRange {
			per[threadKey{e.PID, e.TID}]++
		}
	}
	// Correlation ids count up from one launch to the next (CUPTI's,
	// Kineto's): when they span little more than their number, the
	// launch of an id is found in an array (index id - launchMin, launch
	// index + 1; 0: none) instead of a map, which hashed every launch and
	// every GPU op.
	lo := b.launchMin
	var dense []int32
	if b.launchMax != 0 && b.launchMax-lo < uint64(4*nCorr)+4096 {
		dense = make([]int32, b.launchMax-lo+1)
	}
	for k, n := range per {
		th := l.thread(k)
		th.ivs = slices.Grow(th.ivs, n)
	}
	addAll := func() {
		for i := range evs {
			if e := &evs[i]; !e.Kind.IsLaunch() {
				l.Add(e)
			}
		}
	}
	// Else correlation id → launch event index, sized up front: growing a
	// map of a few hundred thousand launches was most of Link's time.
	var launch map[uint64]int32
	if dense == nil {
		if b.launch == nil || nLaunch > 1<<16 {
			b.launch = make(map[uint64]int32, nLaunch)
		} else {
			clear(b.launch)
		}
		launch = b.launch
	}
	launches := func() {
		for i := range evs {
			e := &evs[i]
			if !e.Kind.IsLaunch() || e.Corr == 0 {
				continue
			}
			if dense != nil {
				if d := &dense[e.Corr-lo]; *d == 0 {
					*d = int32(i) + 1
				}
			} else if _, dup := launch[e.Corr]; !dup {
				launch[e.Corr] = int32(i)
			}
		}
	}
	if len(evs) >= linkParEvents {
		// The launches' lookup and the threads' intervals share nothing
		// (the map or array; the Linker): on a large trace they are
		// made on two cores (as a map, the lookup was a third of
		// Link's time; as an array, less).
		done := make(chan struct{})
		go func() {
			defer close(done)
			launches()
		}()
		addAll()
		<-done
	} else {
		addAll()
		launches()
	}
	qs := b.qs[:0]
	if cap(qs) < nLaunch {
		qs = make([]linkQuery, 0, nLaunch)
	}
	for i := range evs {
		e := &evs[i]
		if !e.Kind.IsGPU() || e.Kind == KindGPURange {
			continue
		}
		e.Ctx = 0
		if e.Corr != 0 {
			e.Call = 0
			li, ok := int32(0), false
			if dense != nil {
				if c := e.Corr - lo; e.Corr >= lo && c < uint64(len(dense)) && dense[c] != 0 {
					li, ok = dense[c]-1, true
				}
			} else {
				li, ok = launch[e.Corr]
			}
			if ok {
				la := &evs[li]
				qs = append(qs, linkQuery{la.Start, la.PID, la.TID, int32(i)})
				continue
			}
			b.unmatched = max(b.unmatched, e.Corr)
		}
		if e.TID >= 0 {
			qs = append(qs, linkQuery{e.Start, e.PID, e.TID, int32(i)})
		}
	}
	// Time order, so every thread's sweep (the launching thread's and the
	// step thread's) moves forward only.
	slices.SortFunc(qs, func(a, b linkQuery) int {
		if a.t != b.t {
			return cmp.Compare(a.t, b.t)
		}
		return int(a.gpu - b.gpu)
	})
	for _, q := range qs {
		e := &evs[q.gpu]
		e.Ctx = l.Resolve(q.pid, q.tid, q.t)
		if b.calls != nil && (e.Call == 0 || e.Corr != 0) {
			e.Call = l.callAt(q.pid, q.tid, b.calls)
		}
	}
	if cap(qs) > 1<<16 {
		// A large window's scratch is not kept for the next (nor held
		// while the caller aggregates it).
		qs, b.launch = nil, nil
	}
	b.qs = qs[:0]
}

// Stacks numbers the operator and range stacks of a trace's contexts: Of
// gives contexts with equal Ops, Ranges and StageFrom (whatever their
// Step) the same small index, so that what depends only on the stack (a
// GPU op's category, its stage) is cached per stack, not per context: a
// long capture has a few hundred stacks but a few hundred contexts per
// step. Memory: 4 bytes per context seen, plus each stack's key. Contexts
// must only grow (an ID keeps its meaning) until Forget. Not safe for
// concurrent use.
type Stacks struct {
	byKey map[string]int32
	of    []int32 // per CtxID: stack index + 1; 0 not seen
	key   []byte
	n     int32
}

// Forget drops what Of learnt per context ID (the stack indices stay):
// call it when context IDs restart (tracefile.Capture.Contexts).
func (s *Stacks) Forget() { s.of = s.of[:0] }

// Of returns the stack index (0, 1, …) of context id of ctxs; context 0
// and ids out of range share the empty stack's.
func (s *Stacks) Of(ctxs []Context, id CtxID) int32 {
	if int(id) >= len(ctxs) {
		id = 0
	}
	if int(id) < len(s.of) && s.of[id] != 0 {
		return s.of[id] - 1
	}
	if int(id) >= len(s.of) {
		s.of = append(s.of, make([]int32, max(int(id)+1, len(ctxs))-len(s.of))...)
	}
	kb := appendStackKey(s.key[:0], &ctxs[id])
	s.key = kb
	if s.byKey == nil {
		s.byKey = map[string]int32{}
	}
	st, ok := s.byKey[string(kb)]
	if !ok {
		st = s.n
		s.n++
		s.byKey[string(kb)] = st
	}
	s.of[id] = st + 1
	return st
}
