package tracefile

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// The nesting scan in memory (nestingScan) and over sorted records
// (nestRecs.scan, a long window's) count the same hand-checked partial
// overlaps. Thread 1: outer [0, 100) holds [10, 100) (ends with it: nests)
// and [20, 30); [90, 120) starts inside [10, 100), the innermost open one,
// and ends after it (1); [95, 110) starts inside [90, 120)'s time but
// that one was not kept open, and ends after [10, 100) (2). Thread 2: [0, 50) and [40, 60) (3), a kernel
// [45, 70) and an instant, which are not CPU intervals, and [50, 80),
// which starts where [0, 50) ends (touching: no overlap).
func TestNestingScanHandCount(t *testing.T) {
	ev := func(k tracer.Kind, tid int32, s, e int64) tracer.Event {
		return tracer.Event{Kind: k, PID: 1, TID: tid, Start: s, Dur: e - s}
	}
	evs := []tracer.Event{
		ev(tracer.KindCPUOp, 1, 0, 100),
		ev(tracer.KindCPUOp, 1, 10, 100),
		ev(tracer.KindCPUOp, 1, 20, 30),
		ev(tracer.KindCPUOp, 1, 90, 120),
		ev(tracer.KindCPUOp, 2, 0, 50),
		ev(tracer.KindCPUOp, 2, 40, 60),
		ev(tracer.KindKernel, 2, 45, 70),
		ev(tracer.KindInstant, 2, 55, 55),
		ev(tracer.KindCPUOp, 2, 50, 80),
		ev(tracer.KindCPUOp, 1, 95, 110),
	}
	const want = 3
	n, a, b, at := nestingScan(evs)
	if n != want || a != &evs[1] || b != &evs[3] || at != 3 {
		t.Fatalf("nestingScan: %d partial, first %v in %v (at %d); want %d, [90,120) in [10,100) at 3", n, b, a, at, want)
	}
	var r nestRecs
	for i := range evs {
		r.add(&evs[i])
	}
	n2, a2, b2, err := r.scan()
	if err != nil {
		t.Fatal(err)
	}
	if n2 != want || a2.Start != 10 || a2.End() != 100 || b2.Start != 90 || b2.End() != 120 || b2.TID != 1 {
		t.Fatalf("nestRecs.scan: %d partial, first [%d,%d) in [%d,%d); want %d, [90,120) in [10,100)", n2, b2.Start, b2.End(), a2.Start, a2.End(), want)
	}
	r.reset()
}
