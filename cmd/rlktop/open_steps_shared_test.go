package main

import (
	"os"
	"testing"

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
	got := stepSnapshots(tr, attrib.DefaultRules(), maxStepSnapshots)
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
