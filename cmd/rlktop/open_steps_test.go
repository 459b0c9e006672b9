package main

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestStepSnapshots: a hand-made trace with steps 0 (0–100 ns) and 1
// (100–200 ns). Kernels: k1 10 ns and k2 20 ns launched in step 0, k1
// 30 ns in step 1, k2 40 ns launched in no step (context step -1) and k3
// 5 ns with no context; step 2 (200–300 ns) holds nothing but its range
// (not traced). By hand: step 0 holds 2 kernels, 30 ns (k1 10, k2 20);
// step 1 one kernel, 30 ns (k1); the other two belong to no step; step 2
// gets no snapshot.
func TestStepSnapshots(t *testing.T) {
	strs := tracer.NewStrings()
	k1, k2, k3, st := strs.Intern("k1"), strs.Intern("k2"), strs.Intern("k3"), strs.Intern("ProfilerStep")
	tr := &tracer.Trace{Strings: strs, Contexts: []tracer.Context{{}, {Step: 0}, {Step: 1}, {Step: -1}}}
	kern := func(name tracer.StrID, start, dur int64, ctx tracer.CtxID) tracer.Event {
		return tracer.Event{Kind: tracer.KindKernel, Name: name, Start: start, Dur: dur, Ctx: ctx, Stream: 7, TID: -1}
	}
	tr.Events = []tracer.Event{
		{Kind: tracer.KindStep, Name: st, Start: 0, Dur: 100, Value: 0, Device: -1},
		{Kind: tracer.KindStep, Name: st, Start: 100, Dur: 100, Value: 1, Device: -1},
		{Kind: tracer.KindStep, Name: st, Start: 200, Dur: 100, Value: 2, Device: -1},
		kern(k1, 10, 10, 1), kern(k2, 30, 20, 1), kern(k1, 110, 30, 2), kern(k2, 150, 40, 3), kern(k3, 195, 5, 0),
	}
	got := stepSnapshots([]*tracer.Trace{tr}, attrib.DefaultRules(), 10)
	if len(got) != 2 || got[0].Step != 0 || got[1].Step != 1 {
		t.Fatalf("steps %+v, want 0 and 1", got)
	}
	want := []struct {
		count, total int64
		kernels      map[string]int64
	}{{2, 30, map[string]int64{"k1": 10, "k2": 20}}, {1, 30, map[string]int64{"k1": 30}}}
	for i, w := range want {
		s := got[i].Snapshot
		if s.Totals.KernelCount != w.count || s.Totals.KernelTotalNs != w.total {
			t.Errorf("step %d: %d kernels, %d ns; want %d, %d", got[i].Step, s.Totals.KernelCount, s.Totals.KernelTotalNs, w.count, w.total)
		}
		rows := map[string]int64{}
		for _, k := range s.Kernels {
			rows[k.Name] += k.TotalNs
		}
		if len(rows) != len(w.kernels) {
			t.Errorf("step %d rows %v, want %v", got[i].Step, rows, w.kernels)
		}
		for n, ns := range w.kernels {
			if rows[n] != ns {
				t.Errorf("step %d %s: %d ns, want %d", got[i].Step, n, rows[n], ns)
			}
		}
		if len(s.Steps) != 1 {
			t.Errorf("step %d: %d step rows, want its own", got[i].Step, len(s.Steps))
		}
	}
	if got := stepSnapshots([]*tracer.Trace{tr}, attrib.DefaultRules(), 1); len(got) != 1 || got[0].Step != 0 {
		t.Errorf("max 1 kept %+v, want step 0 only", got)
	}
	tr.Events = tr.Events[3:4:4]
	tr.Contexts = []tracer.Context{{}, {Step: -1}}
	if got := stepSnapshots([]*tracer.Trace{tr}, attrib.DefaultRules(), 10); len(got) != 0 {
		t.Errorf("a trace with no step gave %d snapshots", len(got))
	}
}

// TestStepSnapshotsMemory: scrubbed to a step, the Memory view has that
// step's memory events. Hand-made: steps 0 (0–100 ns) and 1 (100–200
// ns) on one thread; A (64 B) allocated at 10 and freed at 20, B (32 B)
// allocated at 30 and freed at 150, C (16 B) allocated at 120 and freed
// at 130. By hand: step 0 holds 2 allocations (A, B) and 1 free (A);
// step 1 one allocation (C) and 2 frees (C, and B's, whose allocation
// is in step 0). Two runs of it read together: each figure twice.
func TestStepSnapshotsMemory(t *testing.T) {
	mk := func() *tracer.Trace {
		strs := tracer.NewStrings()
		st := strs.Intern("ProfilerStep")
		tr := &tracer.Trace{Strings: strs, Contexts: []tracer.Context{{}}}
		tr.Events = []tracer.Event{
			{Kind: tracer.KindStep, Name: st, Start: 0, Dur: 100, Value: 0, Device: -1, PID: 1, TID: 1},
			{Kind: tracer.KindStep, Name: st, Start: 100, Dur: 100, Value: 1, Device: -1, PID: 1, TID: 1},
		}
		mem := func(ts, bytes int64, addr uint64) tracer.MemEvent {
			return tracer.MemEvent{TS: ts, Bytes: bytes, Addr: addr, Allocated: -1, Reserved: -1, PID: 1, TID: 1, Device: 0}
		}
		tr.Memory = []tracer.MemEvent{mem(10, 64, 0xa), mem(20, -64, 0xa), mem(30, 32, 0xb), mem(120, 16, 0xc), mem(130, -16, 0xc), mem(150, -32, 0xb)}
		return tr
	}
	want := []struct{ allocs, frees int }{{2, 1}, {1, 2}}
	for runs := 1; runs <= 2; runs++ {
		var trs []*tracer.Trace
		for range runs {
			trs = append(trs, mk())
		}
		got := stepSnapshots(trs, attrib.DefaultRules(), 10)
		if len(got) != 2 {
			t.Fatalf("%d runs: %d step snapshots, want 2", runs, len(got))
		}
		for i, w := range want {
			m := got[i].Snapshot.Memory
			if m == nil {
				t.Fatalf("%d runs, step %d: no memory model", runs, got[i].Step)
			}
			if m.Allocs != runs*w.allocs || m.Frees != runs*w.frees {
				t.Errorf("%d runs, step %d: %d allocations, %d frees; want %d, %d", runs, got[i].Step, m.Allocs, m.Frees, runs*w.allocs, runs*w.frees)
			}
		}
	}
}
