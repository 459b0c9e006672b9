package tracefile

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Merge combines traces of one run that a profiler wrote as several files
// into one linked trace — rocprofv3's CSV output above all, where kernels
// (kernel_trace.csv), the HIP calls that launched them (hip_api_trace.csv)
// and the roctx ranges open at launch (marker_api_trace.csv) arrive in
// separate files and only together attribute kernels to stages.
//
// Events, counters and summary rows are concatenated with their names
// re-interned; devices are kept once per ID (the first description wins);
// Dropped is summed; Meta keys of later traces that clash get a "#n"
// suffix (n = the trace's index); Warnings are concatenated. Format is the
// traces' common format, or the distinct formats joined with "+"; Path the
// paths joined with a comma. SummaryOnly holds only when every input is
// summary-only. Correlation ids are kept: they must come from one run.
// The inputs are not modified. Merge of nothing returns an empty trace.
func Merge(ts ...*tracer.Trace) *tracer.Trace {
	var formats, paths []string
	seenFormat := map[string]bool{}
	for _, t := range ts {
		if !seenFormat[t.Format] {
			seenFormat[t.Format] = true
			formats = append(formats, t.Format)
		}
		paths = append(paths, t.Path)
	}
	out := tracer.NewTrace(strings.Join(formats, "+"), strings.Join(paths, ","))
	if len(ts) == 0 {
		return out
	}
	out.SummaryOnly = true
	out.Rank, out.World = ts[0].Rank, ts[0].World
	devs := map[int32]bool{}
	for i, t := range ts {
		ids := make([]tracer.StrID, t.Strings.Len())
		for j := range ids {
			ids[j] = out.Strings.Intern(t.Strings.Get(tracer.StrID(j)))
		}
		for _, e := range t.Events {
			e.Name = ids[e.Name]
			e.Ctx = 0
			out.Events = append(out.Events, e)
		}
		for _, c := range t.Counters {
			c.Name = ids[c.Name]
			out.Counters = append(out.Counters, c)
		}
		for _, d := range t.Devices {
			if !devs[d.ID] {
				devs[d.ID] = true
				out.Devices = append(out.Devices, d)
			}
		}
		for k, v := range t.Meta {
			if old, clash := out.Meta[k]; clash && old != v {
				k = k + "#" + strconv.Itoa(i)
			}
			out.Meta[k] = v
		}
		out.Warnings = append(out.Warnings, t.Warnings...)
		out.Summary = append(out.Summary, t.Summary...)
		out.Dropped += t.Dropped
		out.SummaryOnly = out.SummaryOnly && t.SummaryOnly
	}
	if hasGPUWork(out) {
		// A file of the run without GPU work (marker_api_trace.csv) is no
		// reason to warn when another file of it holds the kernels.
		out.Warnings = slices.DeleteFunc(out.Warnings, func(w string) bool { return strings.Contains(w, noGPUWarn) })
	}
	out.Link()
	return out
}
