package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Per-source views: --by rank and --by file show
// attrib.Snapshot.Ranks, one row per source; tables and Markdown add the
// per-step spread and who arrived last at the collectives.

// The per-source --by values.
const (
	ByRank = "rank" // one row per source, keyed by its rank
	ByFile = "file" // the same rows keyed by file (inputs without ranks)
)

// multiSource reports whether s holds several sources.
func multiSource(s *attrib.Snapshot) bool {
	return s.Ranks != nil && len(s.Ranks.Sources) > 1
}

// sourceLabel is the short name of source i in step and spread rows: its
// rank when the ranks came from the traces, else its file's position.
func sourceLabel(s *attrib.Snapshot, i int) string {
	if s.Ranks == nil {
		return strconv.Itoa(i)
	}
	if r := s.Ranks.Source(i); r != nil && s.Ranks.ByRank {
		return strconv.Itoa(r.Rank)
	}
	return strconv.Itoa(i)
}

// sourceKind is "rank" or "file": what sourceLabel numbers.
func sourceKind(s *attrib.Snapshot) string {
	if s.Ranks != nil && s.Ranks.ByRank {
		return "rank"
	}
	return "file"
}

// rankGrid is the --by rank / --by file view: one row per source.
func rankGrid(s *attrib.Snapshot, by string, human bool, topN int) grid {
	ns := func(v int64) string {
		if human {
			return Duration(v)
		}
		return strconv.FormatInt(v, 10)
	}
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	count := func(v int64) string { return countCell(v, human) }
	var g grid
	if human {
		g.header = []string{"rank", "file", "kernels", "kernel time", "gpu busy", "idle", "comm", "exposed", "overlapped", "steps", "step p50", "waited", "last"}
	} else {
		g.header = []string{"rank", "file", "path", "kernels", "kernel_ns", "busy_ns", "idle_ns", "span_ns", "comm_ns", "comm_exposed_ns", "comm_overlap_ns", "steps", "step_median_ns", "coll_wait_ns", "last_arrivals"}
	}
	mfu := s.HasWork() && s.HasStepPeak()
	var bySource map[int]attrib.StepWorkSummary
	if mfu { // each source's steps against its own device (Snapshot.StepPeak)
		bySource = s.StepWorkBySource()
		if human {
			g.header = append(g.header, "MFU")
		} else {
			g.header = append(g.header, "mfu")
		}
	}
	if liveSources(s) { // its column shows "pid N", not "file"
		g.header[1] = "process"
	}
	if by == ByFile {
		g.header[0], g.header[1] = g.header[1], "rank"
	}
	if s.Ranks == nil {
		return g
	}
	for _, r := range top(s.Ranks.Sources, topN) {
		rank, file := strconv.Itoa(r.Rank), r.Name
		if !s.Ranks.ByRank {
			rank = "-"
		}
		if by == ByFile {
			rank, file = file, rank
		}
		row := []string{rank, file}
		wait, last := ns(r.CollWaitNs), num(int64(r.LastArrivals))
		if s.Ranks.CollectivesUnknown { // merged JSON reports: no events to match
			wait, last = "", ""
			if human {
				wait, last = "-", "-"
			}
		}
		if !human {
			row = append(row, r.Path, count(r.KernelCount), ns(r.KernelNs), ns(r.BusyNs), ns(r.IdleNs), ns(r.SpanNs),
				ns(r.CommNs), ns(r.CommExposedNs), ns(r.CommOverlapNs), num(int64(r.Steps)), ns(r.StepMedianNs), wait, last)
		} else {
			row = append(row, count(r.KernelCount), ns(r.KernelNs), ns(r.BusyNs), ns(r.IdleNs),
				ns(r.CommNs), ns(r.CommExposedNs), ns(r.CommOverlapNs), num(int64(r.Steps)), ns(r.StepMedianNs), wait, last)
		}
		if mfu {
			cell := ""
			if sw := bySource[r.Index]; sw.NMFU > 0 {
				cell = strconv.FormatFloat(sw.MFUMedian, 'g', -1, 64)
				if human {
					cell = units.Share(sw.MFUMedian)
				}
			} else if human {
				cell = "-"
			}
			row = append(row, cell)
		}
		g.rows = append(g.rows, row)
	}
	g.right = make([]bool, len(g.header))
	for i := 2; i < len(g.header); i++ {
		g.right[i] = true
	}
	if human && by == ByRank {
		g.right[0] = true
	}
	if !human {
		g.right[2] = false
	}
	return g
}

// spreadGrid is the per-step spread of several sources (human units):
// who was last to the step's collectives and how long the others waited
// first (the straggler), then the longest and shortest step. In
// synchronous training the ranks wait for each other inside collectives,
// so their step times even out and the longest step is often a waiting
// rank's: a column headed "slowest rank" reads as naming the rank
// that waited, not the late one.
func spreadGrid(s *attrib.Snapshot, topN int) grid {
	k := sourceKind(s)
	g := grid{header: []string{"step", "last to collectives", "waited", "longest step", k, "shortest step", k, "spread"}}
	for _, sp := range top(s.Ranks.Steps, topN) {
		late, wait := "-", "-"
		if sp.LateSource >= 0 {
			late = fmt.Sprintf("%s %s (%d)", k, sourceLabel(s, sp.LateSource), sp.Collectives)
			wait = Duration(sp.WaitNs)
		}
		g.rows = append(g.rows, []string{strconv.FormatInt(sp.Step, 10), late, wait, Duration(sp.SlowNs), sourceLabel(s, sp.SlowSource),
			Duration(sp.FastNs), sourceLabel(s, sp.FastSource), Duration(sp.SpreadNs)})
	}
	g.right = []bool{true, false, true, true, true, true, true, true}
	return g
}

// spreadNote is the line under the per-step table: what its columns can
// and cannot say ("" when nothing needs saying).
func spreadNote(s *attrib.Snapshot) string {
	k := sourceKind(s)
	switch {
	case s.Ranks.CollectivesUnknown && s.Ranks.NotOneJob != "":
		return "last to collectives, waited: not matched, the " + k + "s are not one job (the line below says why)"
	case s.Ranks.CollectivesUnknown:
		return "last to collectives, waited: not known for merged JSON reports (they carry no events\nto match collectives by); report the trace files together for them"
	case s.Ranks.Collectives > 0:
		return fmt.Sprintf("%ss wait for each other in collectives, so their step times even out:\nthe %s last to the collectives holds the others up, not the one with the longest step", k, k)
	}
	return ""
}

// RankVerdict is one line naming the source that arrived last at most
// matched collectives and how long the others waited for it in all, or
// why the sources' collectives were not matched (attrib.RankSummary.
// NotOneJob); "" when there are no matched collectives.
func RankVerdict(s *attrib.Snapshot) string {
	if multiSource(s) && s.Ranks.NotOneJob != "" {
		return "collectives not matched: the sources are " + s.Ranks.NotOneJob
	}
	if !multiSource(s) || s.Ranks.Collectives == 0 {
		return ""
	}
	late := s.Ranks.Source(s.Ranks.LateSource())
	if late == nil {
		return ""
	}
	var waited int64
	for i := range s.Ranks.Sources {
		waited += s.Ranks.Sources[i].CollWaitNs
	}
	return fmt.Sprintf("%s %s arrived last at %d of %d collectives matched across %d sources; the others waited %s for it in all",
		sourceKind(s), sourceLabel(s, late.Index), late.LastArrivals, s.Ranks.Collectives, len(s.Ranks.Sources), Duration(waited-late.CollWaitNs))
}

// rankWhy is the line under the verdict saying why the source that
// arrived last at most matched collectives is late: the stage it spends
// longer in per step than the others (attrib.RankSummary.LateStage), as
// the straggler finding says; "" when none stands out.
func rankWhy(s *attrib.Snapshot) string {
	if !multiSource(s) || s.Ranks.Collectives == 0 || s.Ranks.NotOneJob != "" {
		return ""
	}
	late := s.Ranks.LateSource()
	ls, ok := s.Ranks.LateStage(late)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s %s spends %s per step in stage %q, the others %s (median): that is where it falls behind",
		sourceKind(s), sourceLabel(s, late), Duration(ls.LateNs), ls.Name, Duration(ls.OthersNs))
}

// writeRankSections adds, after the --by rank / file table, the step
// spreads and the verdict (table and md formats).
func writeRankSections(b *strings.Builder, s *attrib.Snapshot, o Options, md bool) {
	if !multiSource(s) {
		return
	}
	if len(s.Ranks.Steps) > 0 {
		b.WriteString("\n")
		g := spreadGrid(s, o.Top)
		if md {
			writeMDGrid(b, g)
		} else {
			writeTextGrid(b, g)
		}
		if n := spreadNote(s); n != "" {
			if md {
				n = "_" + escape.Markdown(strings.ReplaceAll(n, "\n", " ")) + "_"
			}
			fmt.Fprintf(b, "\n%s\n", n)
		}
	}
	if v := RankVerdict(s); v != "" {
		if why := rankWhy(s); why != "" {
			v += "\n" + why
		}
		if md {
			v = "_" + escape.Markdown(strings.ReplaceAll(v, "\n", " ")) + "_"
		}
		fmt.Fprintf(b, "\n%s\n", v)
	}
}

// sourcesHeader is the header's lines for several sources: each with its
// rank, file, own span and steps (no span crosses sources: each has its
// own clock). At most 16 sources are listed.
func sourcesHeader(b *strings.Builder, s *attrib.Snapshot, prefix string) {
	if !multiSource(s) {
		return
	}
	rs := s.Ranks.Sources
	var ranks []string
	for _, r := range rs {
		ranks = append(ranks, strconv.Itoa(r.Rank))
	}
	if s.Ranks.ByRank {
		fmt.Fprintf(b, "%ssources: %d, ranks %s (each on its own clock; steps and spans are per rank)\n", prefix, len(rs), strings.Join(ranks, ", "))
	} else {
		fmt.Fprintf(b, "%ssources: %d files without distinct ranks, numbered in the order given (each on its own clock; steps and spans are per file)\n", prefix, len(rs))
	}
	live := liveSources(s)
	if live {
		fmt.Fprintf(b, "%s  (live: steps, step median and run are each process's whole run; traced is the time of its steps that hold\n"+
			"%s  operators in the session's last window, which the other figures cover: the Python agent traces 2 of every 10)\n", prefix, prefix)
	}
	for i, r := range rs {
		if i == 16 {
			fmt.Fprintf(b, "%s  … %d more (--by %s lists all)\n", prefix, len(rs)-16, sourceKind(s))
			break
		}
		if live {
			fmt.Fprintf(b, "%s  %s %s: %s, %s, run %s, traced %s\n", prefix, sourceKind(s), sourceLabel(s, r.Index), escape.Control(r.Name), units.Plural(int64(r.Steps), "step"), Duration(r.RunNs), Duration(r.SpanNs))
			continue
		}
		fmt.Fprintf(b, "%s  %s %s: %s, span %s, %s\n", prefix, sourceKind(s), sourceLabel(s, r.Index), escape.Control(r.Name), Duration(r.SpanNs), units.Plural(int64(r.Steps), "step"))
	}
}

// liveSources reports whether s's sources are the processes of a live
// session (tracer/session: Format "live", named "pid N", RunNs their
// whole run) rather than files.
func liveSources(s *attrib.Snapshot) bool {
	if s.Ranks == nil || len(s.Ranks.Sources) == 0 {
		return false
	}
	for _, r := range s.Ranks.Sources {
		if r.Format != "live" || r.Path != "" {
			return false
		}
	}
	return true
}
