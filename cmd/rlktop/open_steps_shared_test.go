package main

import (
	"os"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestStepSnapshotsSharedTrace: HTA's ns-resolution V100 trace (Kineto,
// written by the PyTorch profiler; ../shared/traces/PROVENANCE.md). The
// expected figures come from a python3 stdlib script independent of
// rlktop: each "kernel" event is matched to the cuda_runtime/cuda_driver
// event with its args.correlation, and counted in the ProfilerStep#N
// range of the same pid that contains the launch's ts (the step window is
// the process's: the backward pass launches from autograd's thread —
// matching on the tid as well gives 314 kernels a step, not 870); kernel
// time is the sum of the kernels' dur (µs, rounded to 1 µs). Every one of
// the trace's 4,350 kernels falls in one of the 5 steps.
func TestStepSnapshotsSharedTrace(t *testing.T) {
	const path = "../../../shared/traces/kineto/hta_ns_resolution_v100.json.gz"
	if _, err := os.Stat(path); err != nil {
		t.Skip("shared trace not here:", err)
	}
	tr, err := tracefile.Open(path, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := stepSnapshots([]*tracer.Trace{tr}, attrib.DefaultRules(), maxStepSnapshots)
	want := []struct {
		step, count, totalUs int64
	}{{101, 870, 93697}, {102, 870, 93734}, {103, 870, 93602}, {104, 870, 93705}, {105, 870, 93416}}
	if len(got) != len(want) {
		t.Fatalf("%d step snapshots, want %d", len(got), len(want))
	}
	for i, w := range want {
		s := got[i].Snapshot
		us := (s.Totals.KernelTotalNs + 500) / 1000
		if got[i].Step != w.step || s.Totals.KernelCount != w.count || us < w.totalUs-1 || us > w.totalUs+1 {
			t.Errorf("step %d: %d kernels, %d µs; want step %d, %d kernels, %d µs",
				got[i].Step, s.Totals.KernelCount, us, w.step, w.count, w.totalUs)
		}
	}
}

// TestOpenSeveralSourcesStepsAndTimeline: the same trace opened as two
// sources (two files, no distributedInfo: "f0", "f1"). Each step's
// snapshot holds both sources' step (2 × 870 kernels, the stdlib script's
// count above, in two source rows), and the timeline has every lane of
// the trace once per source, the second on the same clock (identical
// starts), named by source.
func TestOpenSeveralSourcesStepsAndTimeline(t *testing.T) {
	const path = "../../../shared/traces/kineto/hta_ns_resolution_v100.json.gz"
	if _, err := os.Stat(path); err != nil {
		t.Skip("shared trace not here:", err)
	}
	read, errs := tracefile.OpenAll([]string{path, path}, tracefile.Options{})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rules := attrib.DefaultRules()
	runs := tracefile.GroupRuns(read)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	got := stepSnapshots(runs, rules, maxStepSnapshots)
	if len(got) != 5 || got[0].Step != 101 {
		t.Fatalf("%d step snapshots from step %d, want 5 from 101", len(got), got[0].Step)
	}
	if s := got[0].Snapshot; s.Totals.KernelCount != 2*870 || s.Ranks == nil || len(s.Ranks.Sources) != 2 || s.Ranks.Sources[1].KernelCount != 870 {
		t.Errorf("step 101: %d kernels, ranks %+v; want 1740 in two sources of 870", s.Totals.KernelCount, s.Ranks)
	}
	snap := attrib.CombineSources(runs, rules)
	tl := timelineOf(runs, snap, rules)
	one := attrib.BuildTimeline(runs[0].Events, runs[0].Strings, runs[0].Contexts, rules, 0)
	if len(tl.Sources) != 2 || tl.Sources[0] != "f0" || tl.Sources[1] != "f1" || len(tl.Lanes) != 2*len(one.Lanes) {
		t.Fatalf("sources %v, %d lanes; want f0, f1 and %d lanes", tl.Sources, len(tl.Lanes), 2*len(one.Lanes))
	}
	if tl.ShiftNs[1] != 0 || tl.StartNs != one.StartNs {
		t.Errorf("shift %v start %d, want one clock from %d", tl.ShiftNs, tl.StartNs, one.StartNs)
	}
}
