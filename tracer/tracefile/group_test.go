package tracefile

import (
	"path/filepath"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

func TestGroupRunsMergesRocprofCSV(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "rocprof")
	var ts []*tracer.Trace
	for _, f := range []string{"kernel_trace_2024.csv", "MI200_timestamps_rocprofv1style.csv", "memory_copy_trace_2024.csv"} {
		tr, err := Open(filepath.Join(dir, f), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	got := GroupRuns(ts)
	if len(got) != 2 {
		t.Fatalf("GroupRuns gave %d traces, want 2 (the two rocprofv3 files merged, the rocprof v1 one apart)", len(got))
	}
	if got[0].Format != "rocprofv3-csv" || got[1].Format != "rocprof-csv" {
		t.Fatalf("formats %q %q", got[0].Format, got[1].Format)
	}
	// Hand count (PROVENANCE files): 7 kernels in kernel_trace_2024.csv, 2 copies in memory_copy_trace_2024.csv.
	var kernels, copies int
	for _, e := range got[0].Events {
		switch e.Kind {
		case tracer.KindKernel:
			kernels++
		case tracer.KindMemcpy:
			copies++
		}
	}
	if kernels != 7 || copies != 2 {
		t.Fatalf("merged: %d kernels, %d copies; want 7 and 2", kernels, copies)
	}
	if one := GroupRuns(ts[:1]); len(one) != 1 || one[0] != ts[0] {
		t.Fatal("a single trace must come back unchanged")
	}
}
