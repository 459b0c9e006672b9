package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/fileout"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/load"
)

// pySampleOption turns --py-sample-hz into loop.LiveOptions.PySampleHz:
// a rate > 0 as it is, 0 (off) as -1.
func pySampleOption(hz float64) float64 {
	if hz > 0 {
		return hz
	}
	return -1
}

// exportFolded writes the Python samples of paths (of stage, "" every
// stage) as folded stacks to out (whole or not at all).
func exportFolded(cmd *cobra.Command, paths []string, out, stage string) error {
	loaded, err := load.Read(paths, load.Options{Progress: loadProgress(cmd.ErrOrStderr(), paths)})
	if err != nil {
		return fmt.Errorf("%w; nothing was written to %s", err, out)
	}
	sayDamaged(cmd.ErrOrStderr(), loaded.Damaged, exportedKept)
	read := loaded.Traces
	p := attrib.PythonOf(read...)
	if p == nil {
		return fmt.Errorf("export --format folded: %s", report.NoPythonText)
	}
	return fileout.Write(out, func(w io.Writer) error { return report.WriteFolded(w, p, report.Options{Stage: stage}) })
}

// stepPython is the Python profile of step k of every run (its samples
// in step k), for the step snapshots of `open`; nil without samples.
func stepPython(runs []*tracer.Trace, k int64) *attrib.PyProfile {
	var out *attrib.PyProfile
	for _, t := range runs {
		if t.PyStacks == nil {
			continue
		}
		a := attrib.NewPyAggregator()
		for i := range t.PySamples {
			if t.PySamples[i].Step == k {
				a.Add(t.PySamples[i : i+1])
			}
		}
		a.SetPeriod(t.PyPeriodNs, 0)
		out = out.Merge(a.Profile(t.PyStacks, t.Strings))
	}
	return out
}
