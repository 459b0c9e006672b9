package main

import (
	"io"
	"strings"

	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// maxFindingOps bounds the GPU ops the findings' timeline of a file
// holds (the idle finding measures every step whose ops it holds).
const maxFindingOps = 1 << 22

// findingsInputOf is the findings input of files: snap (their combined
// snapshot), the agent outputs, and — when they are one run — its
// timeline (the idle finding), counter tracks (telemetry findings) and,
// for an rlktop recording, the flags in force (its flag.* metadata). tl,
// when non-nil, is the run's timeline already built (open's, bounded to
// what it draws: a second one of up to maxFindingOps ops would cost every
// large open hundreds of MB); nil builds one of up to maxFindingOps.
func findingsInputOf(snap *attrib.Snapshot, traces []*tracer.Trace, rules *attrib.Rules, outputs []attrib.OutputRow, tl *attrib.Timeline) attrib.FindingInput {
	in := attrib.FindingInput{Snapshot: snap, Outputs: outputs}
	if runs := tracefile.GroupRuns(traces); len(runs) == 1 && !runs[0].SummaryOnly {
		t := runs[0]
		in.Timeline = tl
		if tl == nil {
			in.Timeline = attrib.BuildTimeline(t.Events, t.Strings, t.Contexts, rules, min(max(len(t.Events), attrib.DefaultTimelineOps), maxFindingOps))
		}
		in.Counters = attrib.SummarizeCounters(t)
		// A recording holds the flags in force at its start (the
		// children's flag.* metadata): a finding can then name its test.
		for k, v := range t.Meta {
			if name, ok := strings.CutPrefix(k, "flag."); ok && name != "" {
				if in.Flags == nil {
					in.Flags = map[string]string{}
				}
				in.Flags[name] = v
			}
		}
	}
	return in
}

// findingsWriter is `report --by finding`: the ranked findings of the
// files (rules from findingsPath layered on the built-in table) in
// o.Format; all of them unless --top.
func findingsWriter(traces []*tracer.Trace, rules *attrib.Rules, findingsPath string) func(io.Writer, *attrib.Snapshot, report.Options) error {
	return func(w io.Writer, s *attrib.Snapshot, o report.Options) error {
		fr, err := loadFindingRules(findingsPath)
		if err != nil {
			return err
		}
		fs := attrib.EvaluateFindings(fr, findingsInputOf(s, traces, rules, o.Outputs, nil))
		return report.WriteFindings(w, s, fs, o)
	}
}
