package tracefile

import (
	"fmt"
	"slices"
	"strings"
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

// Read checks the nesting beside Link (finishLate): its warnings are the
// ones, in the order, that the check in the importer's finish gives
// (ReadKineto, then finish), with warnings before it and after it, and
// with so many before it that the trace's cap of 100 cuts the rest.
func TestNestingLateSameWarnings(t *testing.T) {
	for _, lead := range []int{0, 3, 98, 99, 100, 120} {
		var b strings.Builder
		b.WriteString(`{"traceEvents":[`)
		// lead "E" events with no open "B": one warning each, before the
		// nesting check's.
		for i := range lead {
			fmt.Fprintf(&b, `{"ph":"E","name":"x","pid":1,"tid":1,"ts":%d},`, i)
		}
		b.WriteString(`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":100},` +
			`{"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":50,"dur":100},` +
			`{"ph":"X","cat":"cpu_op","name":"c","pid":1,"tid":1,"ts":200},` + // no dur: warned after the nesting
			`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0,"dur":0,"args":{"correlation":1}}]}`)
		src := b.String()
		got, err := Read(strings.NewReader(src), "t.json", int64(len(src)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadKineto(strings.NewReader(src), "t.json", Options{FileSize: int64(len(src))})
		if err != nil {
			t.Fatal(err)
		}
		finish(want)
		nameWarnings(want, "t.json")
		if !slices.Equal(got.Warnings, want.Warnings) {
			t.Errorf("lead %d: Read warns\n%s\nReadKineto and finish warn\n%s", lead, strings.Join(got.Warnings, "\n"), strings.Join(want.Warnings, "\n"))
		}
		if lead < 90 && !slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.Contains(w, "partly overlaps") }) {
			t.Errorf("lead %d: no nesting warning in\n%s", lead, strings.Join(got.Warnings, "\n"))
		}
	}
}
