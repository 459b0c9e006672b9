package session

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestLinkerWithoutSteps: a thread that never sends steps gets its kernels
// linked once they waited LinkDelay, against the ranges received by then;
// a GPU event whose launch call never arrives gets context 0 after the
// delay; an event with neither corr nor thread is emitted at once.
func TestLinkerWithoutSteps(t *testing.T) {
	strs := tracer.NewStrings()
	var out []tracer.Event
	l := newLinker(strs, func(e *tracer.Event) { out = append(out, *e) })
	k, r, op := strs.Intern("k"), strs.Intern("outer"), strs.Intern("aten::mm")
	const delay = 1000
	ev := func(kind tracer.Kind, name tracer.StrID, start, dur int64, tid int32) *tracer.Event {
		return &tracer.Event{Kind: kind, Name: name, Start: start, Dur: dur, PID: 1, TID: tid, Device: -1}
	}
	l.add(ev(tracer.KindKernel, k, 50, 10, 3), 0)                                                          // launched at 50 on thread 3
	l.add(ev(tracer.KindCPUOp, op, 40, 20, 3), 0)                                                          // [40,60) contains 50
	l.add(ev(tracer.KindRange, r, 0, 100, 3), 0)                                                           // [0,100) contains 50
	l.add(&tracer.Event{Kind: tracer.KindKernel, Name: k, Corr: 9, TID: -1, PID: 1, Start: 70, Dur: 1}, 0) // waits for corr 9
	l.add(&tracer.Event{Kind: tracer.KindKernel, Name: k, TID: -1, PID: 1, Start: 80, Dur: 2}, 0)          // nothing to wait for
	l.endBatch()
	if len(out) != 1 || out[0].Start != 80 || out[0].Ctx != 0 {
		t.Fatalf("before the delay: %+v", out)
	}
	l.tick(delay-1, delay)
	if len(out) != 1 {
		t.Fatalf("resolved before the delay: %+v", out)
	}
	l.tick(delay, delay)
	if len(out) != 3 {
		t.Fatalf("after the delay: %d events", len(out))
	}
	for _, e := range out[1:] {
		switch e.Start {
		case 50:
			c := l.contexts[e.Ctx]
			if len(c.Ranges) != 1 || c.Ranges[0] != r || len(c.Ops) != 1 || c.Ops[0] != op || c.Step != -1 {
				t.Fatalf("kernel at 50: context %+v", c)
			}
		case 70:
			if e.Ctx != 0 {
				t.Fatalf("unlaunched GPU event got context %d", e.Ctx)
			}
		default:
			t.Fatalf("unexpected %+v", e)
		}
	}
	if l.evicted != 1 {
		t.Fatalf("evicted %d, want 1", l.evicted)
	}
}

// TestLinkerLateGPU: a GPU record arriving after its step (as CUPTI
// buffers deliver them) is linked at once against the kept ranges.
func TestLinkerLateGPU(t *testing.T) {
	strs := tracer.NewStrings()
	var out []tracer.Event
	l := newLinker(strs, func(e *tracer.Event) { out = append(out, *e) })
	k, r, st := strs.Intern("k"), strs.Intern("fwd"), strs.Intern("step")
	l.add(&tracer.Event{Kind: tracer.KindRuntime, Name: strs.Intern("cudaLaunchKernel"), Start: 15, Dur: 2, Corr: 4, PID: 1, TID: 1}, 0)
	l.add(&tracer.Event{Kind: tracer.KindRange, Name: r, Start: 10, Dur: 20, PID: 1, TID: 1}, 0)
	l.add(&tracer.Event{Kind: tracer.KindStep, Name: st, Start: 0, Dur: 100, Value: 7, PID: 1, TID: 1}, 0)
	l.endBatch()
	l.add(&tracer.Event{Kind: tracer.KindKernel, Name: k, Start: 500, Dur: 5, Corr: 4, PID: 1, TID: -1, Device: 0}, 0)
	l.endBatch()
	if len(out) != 1 {
		t.Fatalf("%d events", len(out))
	}
	c := l.contexts[out[0].Ctx]
	if c.Step != 7 || len(c.Ranges) != 1 || c.Ranges[0] != r {
		t.Fatalf("context %+v", c)
	}
}

// TestLinkerPendingBound: a thread without steps holds at most maxPending
// GPU events; the older half is linked early.
func TestLinkerPendingBound(t *testing.T) {
	strs := tracer.NewStrings()
	n := 0
	l := newLinker(strs, func(e *tracer.Event) { n++ })
	l.maxPending = 10
	for i := range 11 {
		l.add(&tracer.Event{Kind: tracer.KindKernel, Start: int64(i), Dur: 1, PID: 1, TID: 1}, 0)
	}
	l.endBatch()
	if n != 5 || len(l.threads[tkey{1, 1}].pending) != 6 || l.early != 5 {
		t.Fatalf("emitted %d, pending %d, early %d", n, len(l.threads[tkey{1, 1}].pending), l.early)
	}
}
