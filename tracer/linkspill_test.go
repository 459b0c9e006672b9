package tracer

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSpilledWindowLinksAsLink: a long window linked with its intervals
// spilled (external sort runs of 50, blocks of 7) gives every GPU op the
// context Trace.Link gives it with every interval in memory. The window:
// two threads of random nested operators (with zero-length ones and one
// range spanning most of a thread, so checkpoints hold open intervals
// across many blocks), a step thread, and launches read in shuffled
// time-ordered runs (as CUPTI buffers come), each followed by its kernel.
func TestSpilledWindowLinksAsLink(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tr := NewTrace("test", "")
	s := tr.Strings.Intern
	var cpu, launches []Event
	add := func(k Kind, name string, start, dur int64, tid int32) {
		cpu = append(cpu, Event{Kind: k, Name: s(name), Start: start, Dur: dur, PID: 1, TID: tid, Device: -1})
	}
	for step := range 5 {
		add(KindStep, "ProfilerStep#", int64(step)*10_000, 10_000, 1)
		cpu[len(cpu)-1].Value = int64(step)
	}
	add(KindRange, "whole", 100, 45_000, 1)
	corr := uint64(0)
	for _, tid := range []int32{1, 2} {
		// Nested operators: a random walk over depth.
		var gen func(lo, hi int64, depth int)
		gen = func(lo, hi int64, depth int) {
			for t := lo; t < hi; {
				d := min(r.Int64N(400), hi-t)
				if r.IntN(10) == 0 {
					d = 0
				}
				kind := KindCPUOp
				if r.IntN(5) == 0 {
					kind = KindRange
				}
				add(kind, []string{"a", "b", "c", "d"}[r.IntN(4)], t, d, tid)
				if depth < 4 && d > 20 {
					gen(t+1, t+d-1, depth+1)
				}
				for q := 0; q < 2 && d > 0; q++ {
					corr++
					launches = append(launches, Event{Kind: KindRuntime, Name: s("cudaLaunchKernel"), Start: t + r.Int64N(d), Dur: 1, PID: 1, TID: tid, Corr: corr, Device: -1})
				}
				t += d + r.Int64N(30)
			}
		}
		gen(0, 50_000, 0)
	}
	// Launches in time order, cut into runs read in shuffled order.
	slices.SortFunc(launches, func(a, b Event) int { return int(a.Start - b.Start) })
	var runs [][]Event
	for len(launches) > 0 {
		n := min(len(launches), 1+r.IntN(200))
		runs = append(runs, launches[:n])
		launches = launches[n:]
	}
	r.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	evs := slices.Clone(cpu)
	for _, run := range runs {
		for _, la := range run {
			evs = append(evs, la, Event{Kind: KindKernel, Name: s("k"), Start: 60_000 + int64(la.Corr), Dur: 1, PID: 0, TID: -1, Corr: la.Corr, Device: 0})
		}
	}
	tr.Events = slices.Clone(evs)
	tr.Link()

	w := NewCaptureLinker(SpillSizes{RunRecs: 50, Block: 7})
	w.Begin()
	got := map[uint64]CtxID{}
	for i := range evs {
		e := &evs[i]
		w.Add(e)
		if e.Kind == KindKernel {
			ctx, ok := w.Op(e)
			if !ok {
				t.Fatalf("kernel %d: its launch was added but it has no context", e.Corr)
			}
			got[e.Corr] = ctx
		}
	}
	spilled, oneBlock := 0, 0
	for _, th := range w.l.threads {
		if th.disk != nil {
			spilled++
			if len(th.disk.blocks) < 2 {
				oneBlock++
			}
		}
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	if spilled != 2 || oneBlock > 0 {
		t.Fatalf("%d threads spilled (%d in one block), want 2 in blocks of 7", spilled, oneBlock)
	}
	n := 0
	for _, e := range tr.Events {
		if e.Kind != KindKernel {
			continue
		}
		a, b := tr.Contexts[e.Ctx], w.Contexts()[got[e.Corr]]
		if a.Step != b.Step || a.StageFrom != b.StageFrom || !slices.Equal(a.Ops, b.Ops) || !slices.Equal(a.Ranges, b.Ranges) {
			t.Fatalf("kernel %d: spilled %+v, Link %+v", e.Corr, b, a)
		}
		if len(a.Ops) > 1 {
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d kernels launched under two or more operators: the trace is too flat to test", n)
	}
}
