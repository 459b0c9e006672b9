package session

import (
	"fmt"
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
	// One process (the usual live run): nothing to rank, and no copy of
	// the window (the copy below cost a third of every session snapshot).
	if !slices.ContainsFunc(buf, func(e tracer.Event) bool { return e.PID != buf[0].PID }) {
		return nil
	}
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
