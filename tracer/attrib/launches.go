package attrib

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// MaxLaunchSteps is how many of a kernel row's newest steps
// KernelLaunches.Steps lists; launches in older steps are summed in
// OlderSteps.
const MaxLaunchSteps = 64

// KernelLaunches is where one kernel row's launches came from, over every
// launch the aggregator saw (not a bounded timeline): by launch context,
// by stage and by step. Counts are launches, times ns; each list's counts
// add up to the row's Count (Steps with OlderSteps and NoStep).
type KernelLaunches struct {
	// Contexts by launch context "op › op › range › range" (operators
	// outermost first, then ranges; "" none recorded), most time first.
	Contexts []LaunchGroup
	// Stages by stage (StageNone for launches outside every stage), most
	// time first.
	Stages []LaunchGroup
	// Steps: the newest MaxLaunchSteps steps the row was launched in,
	// newest first; OlderSteps sums the launches in older ones, NoStep
	// those outside every step.
	Steps      []LaunchStep
	OlderSteps LaunchGroup
	NoStep     LaunchGroup
}

// LaunchGroup is a count of launches and their GPU time, ns.
type LaunchGroup struct {
	Key     string
	Count   int64
	TotalNs int64
}

// LaunchStep is a count of launches in one step and their GPU time, ns.
type LaunchStep struct {
	Step    int64
	Count   int64
	TotalNs int64
}

// launchAcc accumulates a row's KernelLaunches (flushCell feeds it once
// per run of launches with one context). Its contexts are keyed by their
// name (ctxInfo.launch), not by context id: a context id also carries the
// step, so keying by it grew every row by one entry per step and range
// (the live session's ingest ran 1.5× slower, BenchmarkIngest 26 → 41
// ms/op on a quiet machine). A row has few names as a rule: a slice
// searched from the last one hit, indexed by a map once it holds more
// than launchIndexAt. Cost against the aggregator without launches
// (06c03fa), quiet machine, -benchtime 10x/5x, medians: BenchmarkIngest
// (session) 30.3 → 33.1 ms/op; AggregateKineto within noise; the
// synthetic BenchmarkAggregate, where every event flushes a cell of one of
// 500 contexts, 7.4 → 3.4 Mevents/cpu-s.
type launchAcc struct {
	ctxs   []launchCtx
	index  map[int32]int // name → index in ctxs, once len(ctxs) > launchIndexAt
	last   int           // index of the context hit last
	steps  []LaunchStep  // ascending by step; all but the newest MaxLaunchSteps belong in older (folded lazily)
	older  LaunchGroup
	noStep LaunchGroup
}

// launchCtx is one launch context name's (ctxInfo.launch) count and ns.
type launchCtx struct {
	name  int32
	n, ns int64
}

// launchIndexAt is how many context names a row holds before a map
// indexes them (a linear search over up to 8 beats a map lookup).
const launchIndexAt = 8

func (l *launchAcc) reset() {
	l.ctxs, l.index, l.last = l.ctxs[:0], nil, 0
	l.steps = l.steps[:0]
	l.older, l.noStep = LaunchGroup{}, LaunchGroup{}
}

// ctx is the entry of name id, added when new.
func (l *launchAcc) ctx(id int32) *launchCtx {
	if l.last < len(l.ctxs) && l.ctxs[l.last].name == id {
		return &l.ctxs[l.last]
	}
	if l.index != nil {
		if i, ok := l.index[id]; ok {
			l.last = i
			return &l.ctxs[i]
		}
	} else {
		for i := range l.ctxs {
			if l.ctxs[i].name == id {
				l.last = i
				return &l.ctxs[i]
			}
		}
	}
	l.ctxs = append(l.ctxs, launchCtx{name: id})
	l.last = len(l.ctxs) - 1
	switch {
	case l.index != nil:
		l.index[id] = l.last
	case len(l.ctxs) > launchIndexAt:
		l.index = make(map[int32]int, 2*len(l.ctxs))
		for i, c := range l.ctxs {
			l.index[c.name] = i
		}
	}
	return &l.ctxs[l.last]
}

// addLaunches adds n launches of d ns in total, of binding b's context
// ctx (resolved as cx), to row r's launch groups.
func (a *Aggregator) addLaunches(r *rowAcc, b *binding, ctx tracer.CtxID, cx *ctxInfo, n, d int64) {
	l := r.launch
	if l == nil {
		l = &launchAcc{}
		r.launch = l
	}
	if cx.launch == 0 {
		cx.launch = a.launchName(b, ctx)
	}
	c := l.ctx(cx.launch)
	c.n += n
	c.ns = addSat(c.ns, d)
	if cx.step < 0 {
		l.noStep.Count += n
		l.noStep.TotalNs = addSat(l.noStep.TotalNs, d)
		return
	}
	k := len(l.steps)
	if k > 0 && l.steps[k-1].Step == cx.step { // the newest step, as a rule
		l.steps[k-1].Count += n
		l.steps[k-1].TotalNs = addSat(l.steps[k-1].TotalNs, d)
		return
	}
	i, found := k, false // a step newer than every kept one: the next, as a rule
	if k > 0 && cx.step < l.steps[k-1].Step {
		i, found = slices.BinarySearchFunc(l.steps, cx.step, func(s LaunchStep, t int64) int { return cmp.Compare(s.Step, t) })
	}
	switch {
	case found:
		l.steps[i].Count += n
		l.steps[i].TotalNs = addSat(l.steps[i].TotalNs, d)
		return
	case i <= len(l.steps)-MaxLaunchSteps:
		l.older.Count += n // older than the newest MaxLaunchSteps steps
		l.older.TotalNs = addSat(l.older.TotalNs, d)
		return
	}
	l.steps = slices.Insert(l.steps, i, LaunchStep{Step: cx.step, Count: n, TotalNs: d})
	// Steps past the newest MaxLaunchSteps are folded into older once
	// they are as many again, not one by one: a shift of the list per
	// new step and row was a tenth of a live session's ingest.
	if len(l.steps) >= 2*MaxLaunchSteps {
		l.older = l.foldOlder()
		l.steps = slices.Delete(l.steps, 0, len(l.steps)-MaxLaunchSteps)
	}
}

// foldOlder is older with the steps before the newest MaxLaunchSteps
// added.
func (l *launchAcc) foldOlder() LaunchGroup {
	o := l.older
	for _, s := range l.steps[:max(len(l.steps)-MaxLaunchSteps, 0)] {
		o.Count += s.Count
		o.TotalNs = addSat(o.TotalNs, s.TotalNs)
	}
	return o
}

// launchesOf is row r's KernelLaunches (nil when it has none: a
// summary-only row).
func (a *Aggregator) launchesOf(r *rowAcc) *KernelLaunches {
	l := r.launch
	if l == nil || len(l.ctxs) == 0 {
		return nil
	}
	out := &KernelLaunches{OlderSteps: l.foldOlder(), NoStep: l.noStep}
	out.Contexts = make([]LaunchGroup, len(l.ctxs))
	for i, c := range l.ctxs {
		out.Contexts[i] = LaunchGroup{Key: a.launchNames[c.name-1], Count: c.n, TotalNs: c.ns}
	}
	for _, s := range r.stages {
		out.Stages = append(out.Stages, LaunchGroup{Key: a.stageKey[s.id], Count: s.count, TotalNs: s.ns})
	}
	byTime := func(x, y LaunchGroup) int {
		return cmp.Or(cmp.Compare(y.TotalNs, x.TotalNs), cmp.Compare(x.Key, y.Key))
	}
	slices.SortFunc(out.Contexts, byTime)
	slices.SortFunc(out.Stages, byTime)
	steps := l.steps[max(len(l.steps)-MaxLaunchSteps, 0):]
	out.Steps = make([]LaunchStep, len(steps))
	for i, s := range steps {
		out.Steps[len(steps)-1-i] = s
	}
	return out
}

// launchName is 1 + the index in a.launchNames of binding b's context
// ctx's name "op › … › range" (operators outermost first, then ranges;
// "" none recorded), adding the name when new.
func (a *Aggregator) launchName(b *binding, ctx tracer.CtxID) int32 {
	var parts []string
	if id := int(ctx); id != 0 && id < len(b.ctxs) {
		c := &b.ctxs[id]
		for _, s := range c.Ops {
			parts = append(parts, b.strs.Get(s))
		}
		for _, s := range c.Ranges {
			parts = append(parts, b.strs.Get(s))
		}
	}
	name := strings.Join(parts, " › ")
	if i, ok := a.launchNameID[name]; ok {
		return i + 1
	}
	if a.launchNameID == nil {
		a.launchNameID = map[string]int32{}
	}
	a.launchNames = append(a.launchNames, name)
	i := int32(len(a.launchNames) - 1)
	a.launchNameID[name] = i
	return i + 1
}
