package tracefile

import "github.com/rlktop/rlktop/tracer"

// splitFormats are formats whose profiler writes one run as several files
// that only link when read together (rocprofv3: kernel_trace.csv,
// hip_api_trace.csv, marker_api_trace.csv, memory_copy_trace.csv).
var splitFormats = map[string]bool{"rocprofv3-csv": true}

// GroupRuns merges the traces of formats written as several files per run
// (see splitFormats) into one linked trace with Merge, in the position of
// the first of them, and returns the others unchanged. Commands that take
// several files (report, open) call it so that a rocprofv3 run's kernels get
// their stages from its marker file.
func GroupRuns(ts []*tracer.Trace) []*tracer.Trace {
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
