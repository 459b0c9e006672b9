package tracefile

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// splitFormats are formats whose profiler writes one run as several files
// that only link when read together (rocprofv3: kernel_trace.csv,
// hip_api_trace.csv, marker_api_trace.csv, memory_copy_trace.csv).
var splitFormats = map[string]bool{"rocprofv3-csv": true}

// GroupRuns merges the traces of formats written as several files per run
// (see splitFormats) into one linked trace with Merge, in the position of
// the first of them, and returns the others unchanged. Commands that take
// several files (report, open) call it so that a rocprofv3 run's kernels get
// their stages from its marker file.
//
// It also splits an rlktop recording of several ranked processes (a
// recorded multi-rank run) into one trace per process (SplitProcesses),
// so that its ranks are sources as a live session's are.
func GroupRuns(ts []*tracer.Trace) []*tracer.Trace {
	var out []*tracer.Trace
	for _, t := range groupRuns(ts) {
		out = append(out, SplitProcesses(t)...)
	}
	return out
}

func groupRuns(ts []*tracer.Trace) []*tracer.Trace {
	var split []*tracer.Trace
	first := -1
	for i, t := range ts {
		if splitFormats[t.Format] {
			if first < 0 {
				first = i
			}
			split = append(split, t)
		}
	}
	if len(split) < 2 {
		return ts
	}
	out := make([]*tracer.Trace, 0, len(ts)-len(split)+1)
	for i, t := range ts {
		switch {
		case i == first:
			out = append(out, Merge(split...))
		case splitFormats[t.Format]:
		default:
			out = append(out, t)
		}
	}
	return out
}

// SplitProcesses returns the processes of an rlktop recording of a
// multi-rank run as one trace each, in rank order (sources stay
// apart; before, `report --by rank` of a recorded two-rank run showed one
// source, its step N the two ranks' step N merged, and no straggler). It
// splits when the recording's hellos (Meta "pid"/"rank", "childN.pid"/
// "childN.rank") name two or more processes with distinct ranks and
// every event belongs to one of them; each trace then has that process's
// events in order, its rank, and the recording's strings, contexts,
// devices, world and metadata; the counters, warnings and dropped count
// (not per process in a recording) stay with the first. Otherwise, and
// for every other format, it returns t alone.
func SplitProcesses(t *tracer.Trace) []*tracer.Trace {
	if t.Format != "rlktop" {
		return []*tracer.Trace{t}
	}
	rankOf := map[int32]int{}
	seen := map[int]bool{}
	for k, v := range t.Meta {
		prefix, ok := strings.CutSuffix(k, "rank")
		if !ok || (prefix != "" && !(strings.HasPrefix(prefix, "child") && strings.HasSuffix(prefix, "."))) {
			continue
		}
		pid, err1 := strconv.ParseInt(t.Meta[prefix+"pid"], 10, 32)
		rank, err2 := strconv.Atoi(v)
		if err1 != nil || err2 != nil || rank < 0 || seen[rank] {
			return []*tracer.Trace{t}
		}
		seen[rank] = true
		rankOf[int32(pid)] = rank
	}
	if len(rankOf) < 2 {
		return []*tracer.Trace{t}
	}
	for i := range t.Events {
		if _, ok := rankOf[t.Events[i].PID]; !ok {
			return []*tracer.Trace{t}
		}
	}
	pids := slices.SortedFunc(maps.Keys(rankOf), func(a, b int32) int { return cmp.Compare(rankOf[a], rankOf[b]) })
	out := make([]*tracer.Trace, len(pids))
	index := map[int32]int{}
	for i, pid := range pids {
		nt := *t
		nt.Rank, nt.Events, nt.PySamples = rankOf[pid], nil, nil
		if i > 0 {
			nt.Counters, nt.Warnings, nt.Dropped = nil, nil, 0
		}
		out[i], index[pid] = &nt, i
	}
	for _, e := range t.Events {
		o := out[index[e.PID]]
		o.Events = append(o.Events, e)
	}
	splitPySamples(t, out, index)
	return out
}
