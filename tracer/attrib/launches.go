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
// per run of launches with one context). Cost, measured on this 2-core
// shared box (go test ./tracer/attrib -run XXX -bench AggregateKineto
// -benchtime 20x -cpu 1, hta_diff_control_a100): 181 cpu-ns/event with it,
// 201 without (within the noise), +4,489 allocations and +0.6 MB per
// AddTrace+Snapshot; on BenchmarkAggregate's synthetic worst case (a
// random one of 500 contexts for every event, so every event flushes a
// cell) the map lookup makes the aggregation about 4× slower (5.7 →
// 1.2 Mevents/cpu-s).
type launchAcc struct {
	ctxs   map[uint64][2]int64 // binding src<<32 | CtxID → count, ns
	steps  []LaunchStep        // ascending by step, at most MaxLaunchSteps
	older  LaunchGroup
	noStep LaunchGroup
}

func (l *launchAcc) reset() {
	clear(l.ctxs)
	l.steps = l.steps[:0]
	l.older, l.noStep = LaunchGroup{}, LaunchGroup{}
}

// addLaunches adds n launches of d ns in total, of binding b's context
// ctx (resolved as cx), to row r's launch groups.
func (a *Aggregator) addLaunches(r *rowAcc, b *binding, ctx tracer.CtxID, cx *ctxInfo, n, d int64) {
	l := r.launch
	if l == nil {
		l = &launchAcc{ctxs: map[uint64][2]int64{}}
		r.launch = l
	}
	k := uint64(uint32(b.src))<<32 | uint64(ctx)
	c := l.ctxs[k]
	l.ctxs[k] = [2]int64{c[0] + n, addSat(c[1], d)}
	if cx.step < 0 {
		l.noStep.Count += n
		l.noStep.TotalNs = addSat(l.noStep.TotalNs, d)
		return
	}
	i, found := slices.BinarySearchFunc(l.steps, cx.step, func(s LaunchStep, t int64) int { return cmp.Compare(s.Step, t) })
	switch {
	case found:
		l.steps[i].Count += n
		l.steps[i].TotalNs = addSat(l.steps[i].TotalNs, d)
		return
	case i == 0 && len(l.steps) == MaxLaunchSteps:
		l.older.Count += n // older than every step kept
		l.older.TotalNs = addSat(l.older.TotalNs, d)
		return
	}
	l.steps = slices.Insert(l.steps, i, LaunchStep{Step: cx.step, Count: n, TotalNs: d})
	if len(l.steps) > MaxLaunchSteps {
		l.older.Count += l.steps[0].Count
		l.older.TotalNs = addSat(l.older.TotalNs, l.steps[0].TotalNs)
		l.steps = slices.Delete(l.steps, 0, 1)
	}
}

// launchesOf is row r's KernelLaunches (nil when it has none: a
// summary-only row).
func (a *Aggregator) launchesOf(r *rowAcc) *KernelLaunches {
	l := r.launch
	if l == nil || len(l.ctxs) == 0 {
		return nil
	}
	out := &KernelLaunches{OlderSteps: l.older, NoStep: l.noStep}
	byKey := map[string]int{}
	for k, c := range l.ctxs {
		name := a.ctxName(k)
		i, ok := byKey[name]
		if !ok {
			i = len(out.Contexts)
			byKey[name] = i
			out.Contexts = append(out.Contexts, LaunchGroup{Key: name})
		}
		out.Contexts[i].Count += c[0]
		out.Contexts[i].TotalNs = addSat(out.Contexts[i].TotalNs, c[1])
	}
	for _, s := range r.stages {
		out.Stages = append(out.Stages, LaunchGroup{Key: a.stageKey[s.id], Count: s.count, TotalNs: s.ns})
	}
	byTime := func(x, y LaunchGroup) int {
		return cmp.Or(cmp.Compare(y.TotalNs, x.TotalNs), cmp.Compare(x.Key, y.Key))
	}
	slices.SortFunc(out.Contexts, byTime)
	slices.SortFunc(out.Stages, byTime)
	out.Steps = make([]LaunchStep, len(l.steps))
	for i, s := range l.steps {
		out.Steps[len(l.steps)-1-i] = s
	}
	return out
}

// ctxName is "op › … › range" of a (binding src<<32 | CtxID) key, cached.
func (a *Aggregator) ctxName(k uint64) string {
	if s, ok := a.ctxNames[k]; ok {
		return s
	}
	if a.ctxNames == nil {
		a.ctxNames = map[uint64]string{}
	}
	var parts []string
	if src := int(k >> 32); src < len(a.bindings) {
		b := a.bindings[src]
		if id := int(uint32(k)); id != 0 && id < len(b.ctxs) {
			c := &b.ctxs[id]
			for _, s := range c.Ops {
				parts = append(parts, b.strs.Get(s))
			}
			for _, s := range c.Ranges {
				parts = append(parts, b.strs.Get(s))
			}
		}
	}
	s := strings.Join(parts, " › ")
	a.ctxNames[k] = s
	return s
}
