package session

import (
	"fmt"
	"maps"
	"slices"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Live ranks (issue 12 item 3): every process connected to the session
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
// strs, contexts in ctxs), or nil when fewer than two processes sent
// events. procs is in connection order; a PID seen in buf without a
// connection (none in practice) comes after them.
func liveRanks(buf []tracer.Event, strs *tracer.Strings, ctxs []tracer.Context, procs []rankProc, rules *attrib.Rules) *attrib.RankSummary {
	by := map[int32][]tracer.Event{}
	for i := range buf {
		by[buf[i].PID] = append(by[buf[i].PID], buf[i])
	}
	if len(by) < 2 {
		return nil
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
	for i, p := range order {
		// attrib.Ranks orders what it needs itself (the window holds
		// events in arrival order).
		traces[i] = &tracer.Trace{Format: "live", Strings: strs, Contexts: ctxs, Events: by[p.pid], Rank: p.rank, World: p.world}
	}
	r := attrib.Ranks(traces, rules)
	for i := range r.Sources {
		r.Sources[i].Name = fmt.Sprintf("pid %d", order[r.Sources[i].Index].pid)
	}
	return r
}

// RankSteps is a distributed job's steps as compare counts them: when two
// or more processes whose hello names a world of more than one (ranks)
// have reported steps, one StepTime per step number that every one of
// those ranks has finished (among st.Steps, the most recent), in step
// order, with the start of the lowest rank's step and the duration of the
// slowest rank's (a synchronous step is as long as its slowest rank); PID
// is the lowest rank's. nil otherwise (one process, or no ranks), so
// callers keep counting one process's steps.
func (st *State) RankSteps() []StepTime { return st.RankStepsOf(nil) }

// RankStepsOf is RankSteps over the processes keep accepts (nil: all), e.g.
// the ranks a restarted command started, not those of the run before.
func (st *State) RankStepsOf(keep func(pid int32) bool) []StepTime {
	rank := map[int32]int64{}
	for _, c := range st.Children {
		if c.Hello.World > 1 && (keep == nil || keep(int32(c.Hello.PID))) {
			rank[int32(c.Hello.PID)] = c.Hello.Rank
		}
	}
	by := map[int32]map[int64]StepTime{}
	for _, s := range st.Steps {
		if _, ok := rank[s.PID]; !ok {
			continue
		}
		if by[s.PID] == nil {
			by[s.PID] = map[int64]StepTime{}
		}
		if _, dup := by[s.PID][s.Step]; !dup {
			by[s.PID][s.Step] = s
		}
	}
	if len(by) < 2 {
		return nil
	}
	var low int32
	first := true
	for pid := range by {
		if first || rank[pid] < rank[low] || (rank[pid] == rank[low] && pid < low) {
			low, first = pid, false
		}
	}
	var out []StepTime
	for _, n := range slices.Sorted(maps.Keys(by[low])) {
		s := by[low][n]
		all := true
		for _, steps := range by {
			o, ok := steps[n]
			if !ok {
				all = false
				break
			}
			s.DurNs = max(s.DurNs, o.DurNs)
		}
		if all {
			out = append(out, s)
		}
	}
	return out
}
