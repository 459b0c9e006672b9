package attrib

// MergeSources builds the RankSummary of sources known only by their rows
// and step durations, not by their events: the inputs of `rlktop report
// a.json b.json` (report.MergeDocs), each the JSON report of one source.
// rows[i] is source i's row (Index is set to i here); steps[i] maps its
// step numbers to their durations (ns). Ranks are assigned as Ranks does
// (the trace's ranks when every row's came from its trace and none
// repeats, else the input order) and, with several sources, each common
// step's slowest and fastest source and spread.
//
// Collectives cannot be matched without the events, so CollWaitNs,
// LastArrivals, Collectives and CollectivesUnmatched are 0,
// CollectivesUnknown is set, and every
// StepSpread's LateSource is -1 (report JSON of a single source carries
// none of them either).
func MergeSources(rows []SourceRow, steps []map[int64]int64) *RankSummary {
	scans := make([]*sourceScan, len(rows))
	for i, r := range rows {
		r.Index, r.CollWaitNs, r.LastArrivals = i, 0, 0
		var st map[int64]int64
		if i < len(steps) {
			st = steps[i]
		}
		if st == nil {
			st = map[int64]int64{}
		}
		scans[i] = &sourceScan{row: r, steps: st}
	}
	rs := summarize(scans)
	rs.CollectivesUnknown = true
	return rs
}
