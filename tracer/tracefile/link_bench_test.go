package tracefile

import (
	"testing"
)

// BenchmarkLink measures tracer.Trace.Link alone on the replicated Kineto
// trace of BenchmarkKinetoImport (9 copies of hta_diff_control_a100; 1
// under -short): the one linking rule's cost per import.
//
//	go test ./tracer/tracefile -run XXX -bench 'Link$' -benchtime 5x -cpu 1
func BenchmarkLink(b *testing.B) {
	copies := 9
	if testing.Short() {
		copies = 1
	}
	path, _ := benchKinetoFile(b, copies)
	tr, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := kProcessCPU()
	for b.Loop() {
		tr.Link()
	}
	b.ReportMetric(float64(len(tr.Events)), "events/op")
	// CPU time per Link, which a busy machine distorts less than wall time.
	b.ReportMetric(float64((kProcessCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}
