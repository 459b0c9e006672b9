package session

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/rlktop/rlktop/internal/interval"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// Live ranks: every process connected to the session
// (each rank of `rlktop run -- torchrun …`, of a launcher that starts
// ranks as children, or of another node over TCP) is a source of its
// own, with the rank and world size its hello carried (tracer/wire
// ProcessHello: RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID), else its
// connection order.

// rankProc is what liveRanks needs of one connection.
type rankProc struct {
	pid         int32
	rank, world int
}

// liveRanks is the per-process attrib.RankSummary of the window's events
// (buf: GPU events and steps, then CPU ranges and launch calls; names in
// strs, contexts in ctxs), the window's step rows of each process apart
// (attrib.SourceSteps, StepRow.Source = the process's index in the
// summary; stepOrder) and the PIDs in that order; all nil when fewer than two
// processes sent events. procs is in connection order; a PID seen in buf
// without a connection (none in practice) comes after them.
func liveRanks(buf []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context, procs []rankProc, rules *attrib.Rules) (*attrib.RankSummary, []attrib.StepRow, []int32) {
	// One process (the usual live run): nothing to rank, and no copy of
	// the window (the copy below cost a third of every session snapshot).
	if len(buf) == 0 || !slices.ContainsFunc(buf, func(e tracer.Event) bool { return e.PID != buf[0].PID }) {
		return nil, nil, nil
	}
	by := map[int32][]tracer.Event{}
	for i := range buf {
		by[buf[i].PID] = append(by[buf[i].PID], buf[i])
	}
	if len(by) < 2 {
		return nil, nil, nil
	}
	var order []rankProc
	for _, p := range procs {
		if _, ok := by[p.pid]; ok && !slices.ContainsFunc(order, func(q rankProc) bool { return q.pid == p.pid }) {
			order = append(order, p)
		}
	}
	var rest []int32
	for pid := range by {
		if !slices.ContainsFunc(order, func(q rankProc) bool { return q.pid == pid }) {
			rest = append(rest, pid)
		}
	}
	slices.Sort(rest)
	for _, pid := range rest {
		order = append(order, rankProc{pid: pid, rank: -1})
	}
	traces := make([]*tracer.Trace, len(order))
	pids := make([]int32, len(order))
	var steps []attrib.StepRow
	for i, p := range order {
		// attrib.Ranks orders what it needs itself (the window holds
		// events in arrival order).
		traces[i] = &tracer.Trace{Format: "live", Strings: strs, Contexts: ctxs, Events: by[p.pid], Rank: p.rank, World: p.world}
		pids[i] = p.pid
		steps = append(steps, attrib.SourceSteps(traces[i], i)...)
	}
	r := attrib.Ranks(traces, rules)
	traced := tracedNs(traces, steps, rules)
	for i := range r.Sources {
		src := &r.Sources[i]
		src.Name = fmt.Sprintf("pid %d", order[src.Index].pid)
		if ns, ok := traced[src.Index]; ok {
			src.SpanNs, src.IdleNs = ns, max(ns-src.BusyNs, 0)
		}
	}
	slices.SortStableFunc(steps, stepOrder(r))
	return r, steps, pids
}

// tracedNs is, per source (index into traces), the traced time of its
// window (ns): the length of the union of its steps that hold operators
// (steps: StepRow.Count > 0) and of its work (kernels, memcpy, memset,
// CPU operators, communication ranges — what attrib.Ranks spans and
// counts busy; the Python agent's operators can end after their step,
// or fall between two steps where its torch.profiler window starts or
// stops). Sources without a step holding operators are absent. liveRanks
// makes it a live source's SpanNs (IdleNs = SpanNs - BusyNs): the Python
// agent traces operators in 2 of every 10 steps (its Kineto windows,
// RLKTOP_KINETO), and the first-to-last-operator span attrib.Ranks gives
// would run across the 8 untraced steps between two windows, where no
// wait in a collective is seen — the straggler share (others' wait over
// their span) fell from 87.6% (the ranks' own trace files) to 17.9% live.
// Over the traced steps it is the data a trace
// file of those steps holds, whose span runs from its first traced
// operator to its last.
func tracedNs(traces []*tracer.Trace, steps []attrib.StepRow, rules *attrib.Rules) map[int]int64 {
	if rules == nil {
		rules = attrib.DefaultRules()
	}
	spans := map[int][]interval.Span{}
	for _, st := range steps {
		if st.Count > 0 {
			spans[st.Source] = append(spans[st.Source], interval.Span{Start: st.StartNs, End: st.StartNs + max(st.DurNs, 0)})
		}
	}
	comm := map[tracer.StrID]bool{}
	out := map[int]int64{}
	for i, t := range traces {
		iv := spans[i]
		if len(iv) == 0 {
			continue
		}
		for k := range t.Events {
			e := &t.Events[k]
			switch e.Kind {
			case tracer.KindKernel, tracer.KindMemcpy, tracer.KindMemset, tracer.KindCPUOp:
			case tracer.KindRange:
				c, ok := comm[e.Name]
				if !ok {
					c = rules.Classify(tracer.KindKernel, t.Strings.Get(e.Name), attrib.Launch{}) == attrib.CategoryCollective
					comm[e.Name] = c
				}
				if !c {
					continue
				}
			default:
				continue
			}
			iv = append(iv, interval.Span{Start: e.Start, End: e.Start + max(e.Dur, 0)})
		}
		out[i] = interval.Len(interval.Union(iv))
	}
	return out
}

// wholeRun is the cumulative snapshot's Ranks: win (the window's summary,
// liveRanks; pids its processes in source order) with each process's
// Steps, StepMedianNs and RunNs over its whole run — steps received since
// the session began, the lower median of its kept step times (steps, up
// to Options.MaxSteps of all processes), first step start to latest step
// end — so that a rank's step count is the one the Steps view and the
// header give, not the steps in the last RecentNs. Every other figure
// (operators, busy, communication, waits) stays the window's. nil when
// win is nil.
func wholeRun(win *attrib.RankSummary, pids []int32, runs map[int32]procRun, steps []livestate.StepTime) *attrib.RankSummary {
	if win == nil {
		return nil
	}
	out := *win
	out.Sources = slices.Clone(win.Sources)
	durs := map[int32][]int64{}
	seen := map[stepKey]bool{}
	for _, st := range steps {
		if k := (stepKey{st.PID, st.Step}); !seen[k] {
			seen[k] = true
			durs[st.PID] = append(durs[st.PID], st.DurNs)
		}
	}
	for i := range out.Sources {
		src := &out.Sources[i]
		if src.Index >= len(pids) {
			continue
		}
		pid := pids[src.Index]
		r, ok := runs[pid]
		if !ok {
			continue
		}
		src.Steps, src.RunNs = int(r.steps), max(r.last-r.first, 0)
		if d := durs[pid]; len(d) > 0 {
			src.StepMedianNs = attrib.MedianNs(d)
		}
	}
	return &out
}

// procStepRows is the cumulative snapshot's step rows once several
// processes sent steps or GPU work (stepTable.multi; one process keeps
// the aggregate's rows): one row per (process, step) from the kept step
// times (steps, the first of each) and gpu (less a process's steps
// older than its oldest in steps, or of a process with none: their times
// are gone), Source = the process's index in
// pids (the live Ranks summary's order), then in procs' connection order,
// then by PID; rows by step, then source (stepOrder of ranks: the live
// Ranks summary).
func procStepRows(steps []livestate.StepTime, gpu map[stepKey]stepSums, pids []int32, procs []rankProc, ranks *attrib.RankSummary) []attrib.StepRow {
	by := map[stepKey]*attrib.StepRow{}
	seen := map[int32]bool{}
	oldest := map[int32]int64{}
	for _, st := range steps {
		k := stepKey{st.PID, st.Step}
		if o, ok := oldest[st.PID]; !ok || st.Step < o {
			oldest[st.PID] = st.Step
		}
		seen[st.PID] = true
		if by[k] == nil {
			by[k] = &attrib.StepRow{Step: st.Step, StartNs: st.StartNs, DurNs: st.DurNs}
		}
	}
	for k, g := range gpu {
		if o, ok := oldest[k.pid]; !ok || k.step < o {
			continue // its step times are no longer among steps
		}
		r := by[k]
		if r == nil { // launched in a step whose step time was not kept (or not yet come)
			r = &attrib.StepRow{Step: k.step}
			by[k] = r
		}
		r.KernelNs, r.Count = g.ns, g.n
	}
	index := map[int32]int{}
	for i, pid := range pids { // Ranks' indices, whether or not pid has rows
		index[pid] = i
	}
	next := len(pids)
	add := func(pid int32) {
		if _, ok := index[pid]; !ok && seen[pid] {
			index[pid] = next
			next++
		}
	}
	for _, p := range procs {
		add(p.pid)
	}
	for _, pid := range slices.Sorted(maps.Keys(seen)) {
		add(pid)
	}
	rows := make([]attrib.StepRow, 0, len(by))
	for k, r := range by {
		r.Source = index[k.pid]
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, stepOrder(ranks))
	return rows
}

// stepOrder orders live step rows by step, then source in r's order (by
// rank; sources not in r after them, by index): the ranks' step N side by
// side and the newest steps last, where the Steps view follows them
// (CombineSources lists files' steps source by source instead).
func stepOrder(r *attrib.RankSummary) func(x, y attrib.StepRow) int {
	pos := func(src int) int {
		if r != nil {
			for i := range r.Sources {
				if r.Sources[i].Index == src {
					return i
				}
			}
		}
		return 1<<30 + src
	}
	return func(x, y attrib.StepRow) int {
		return cmp.Or(cmp.Compare(x.Step, y.Step), cmp.Compare(pos(x.Source), pos(y.Source)))
	}
}
