package attrib

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestBuildMemoryHand: a hand-made run, the expected values counted by
// hand from the rules in memory.go's header.
//
//	step 1 [10, 20) ms: alloc A 64 MiB (index) at 11, free A at 11.3
//	  (sum), alloc Z1 1 MiB (zeros) at 12; a free at 13 of a block
//	  allocated before the trace (1 KiB).
//	step 2 [20, 30) ms: alloc B 8 MiB at 21 freed at 35 (after the step),
//	  alloc Z2 1 MiB at 22; no event reaches step 1's end level + B...
//	step 3 [30, 40) ms: only B's free at 35: the peak is carried in.
//
// Levels (Total Allocated not given: running sums from 0): after A 64
// MiB, after free 0, Z1 1 MiB, unpaired free 1 MiB − 1 KiB; B 9 MiB −
// 1 KiB, Z2 10 MiB − 1 KiB; B freed 2 MiB − 1 KiB.
func TestBuildMemoryHand(t *testing.T) {
	const Mi, Ki = 1 << 20, 1 << 10
	ms := int64(1e6)
	rec := func(ts, bytes int64, addr uint64, op string, step int64) MemRecord {
		return MemRecord{MemEvent: tracer.MemEvent{TS: ts, Bytes: bytes, Addr: addr, Allocated: -1, Reserved: -1, PID: 7, Device: 0}, Op: op, Stage: "s", Step: step}
	}
	recs := []MemRecord{
		rec(11*ms, 64*Mi, 1, "aten::index", 1),
		rec(11*ms+ms*3/10, -64*Mi, 1, "aten::sum", 1),
		rec(12*ms, Mi, 2, "aten::zeros", 1),
		rec(13*ms, -Ki, 99, "", 1),
		rec(21*ms, 8*Mi, 3, "aten::mm", 2),
		rec(22*ms, Mi, 4, "aten::zeros", 2),
		rec(35*ms, -8*Mi, 3, "aten::add", 3),
	}
	wins := []MemStepWindow{{PID: 7, Step: 1, StartNs: 10 * ms, EndNs: 20 * ms}, {PID: 7, Step: 2, StartNs: 20 * ms, EndNs: 30 * ms}, {PID: 7, Step: 3, StartNs: 30 * ms, EndNs: 40 * ms}}
	m := BuildMemory(recs, wins)
	if m.Allocs != 4 || m.Frees != 3 || m.FreesUnpaired != 1 || m.AllocsUnpaired != 0 {
		t.Errorf("counts %d allocs %d frees %d unpaired frees %d unpaired allocs", m.Allocs, m.Frees, m.FreesUnpaired, m.AllocsUnpaired)
	}
	want := []struct {
		step       int64
		peak, held int64
		op         string
		temp       int64
	}{
		{1, 64 * Mi, Mi - Ki, "aten::index", 64 * Mi},
		{2, 10*Mi - Ki, 10*Mi - Ki, "aten::zeros", 0},
		{3, 10*Mi - Ki, 2*Mi - Ki, "", 0}, // carried in: no operator
	}
	if len(m.Steps) != len(want) {
		t.Fatalf("steps %+v", m.Steps)
	}
	for i, w := range want {
		s := m.Steps[i]
		if s.Step != w.step || s.PeakAllocatedBytes != w.peak || s.HeldBytes != w.held || s.AtPeak.Op != w.op || s.TempBytes != w.temp {
			t.Errorf("step %d: %+v, want peak %d held %d at %q temp %d", w.step, s, w.peak, w.held, w.op, w.temp)
		}
	}
	if len(m.Temporaries) != 1 || m.Temporaries[0].Bytes != 64*Mi || m.Temporaries[0].FreedBy != "aten::sum" || m.Temporaries[0].LifetimeNs != ms*3/10 {
		t.Errorf("temporaries %+v", m.Temporaries)
	}
	held := map[string]int64{}
	for _, o := range m.Operators {
		held[o.Op] = o.HeldBytes
	}
	// mm's 8 MiB outlives step 2; each zeros MiB is never freed.
	if held["aten::mm"] != 8*Mi || held["aten::zeros"] != 2*Mi || held["aten::index"] != 0 {
		t.Errorf("held %v", held)
	}
	d := m.Devices[0]
	// (2 MiB − 1 KiB − (1 MiB − 1 KiB)) / 2 = 512 KiB a step.
	if d.Steps != 3 || d.GrowthBytesPerStep != 512*Ki || d.RisingSteps != 1 || d.StepPairs != 2 {
		t.Errorf("device %+v", d)
	}
	if live := m.Steps[0].AtPeak.Live; len(live) != 1 || live[0].Bytes != 64*Mi {
		t.Errorf("live at step 1's peak %+v", live)
	}
}

// TestOutputsMemoryCounters: the agent's per-step allocator counters
// become Outputs rows of kind memory, one per track, per step.
func TestOutputsMemoryCounters(t *testing.T) {
	tr := tracer.NewTrace("rlktop", "")
	for s := int64(1); s <= 2; s++ {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindStep, Start: s * 100, Dur: 100, Value: s})
		tr.Counters = append(tr.Counters, tracer.Counter{TS: s*100 + 99, Name: tr.Strings.Intern("memory.gpu0.peak_allocated_bytes"), Value: float64(s << 20)})
	}
	rows := Outputs(tr)
	if len(rows) != 1 || rows[0].Kind != "memory" || rows[0].Name != "gpu0.peak_allocated_bytes" || rows[0].Steps != 2 || rows[0].Max != 2<<20 || rows[0].First != 1<<20 {
		t.Errorf("rows %+v", rows)
	}
}

// TestMemoryGrowthConsecutiveOnly: steps 2, 3 and 12, 13 (two profiled
// windows of two steps): held bytes 1, 1, 5, 5 MiB; the jump between
// windows (a host block freed outside them never leaves the profiler's
// total) is not growth: two pairs, no growth.
func TestMemoryGrowthConsecutiveOnly(t *testing.T) {
	var recs []MemRecord
	var wins []MemStepWindow
	for i, s := range []int64{2, 3, 12, 13} {
		level := int64(1 << 20)
		if i >= 2 {
			level = 5 << 20
		}
		wins = append(wins, MemStepWindow{PID: 1, Step: s, StartNs: s * 100, EndNs: s*100 + 100})
		recs = append(recs, MemRecord{MemEvent: tracer.MemEvent{TS: s*100 + 10, Bytes: 8, Addr: uint64(s), Allocated: level, Device: -1, PID: 1}, Step: s})
	}
	d := BuildMemory(recs, wins).Devices[0]
	if d.StepPairs != 2 || d.GrowthBytesPerStep != 0 || d.RisingSteps != 0 {
		t.Errorf("%+v: want 2 pairs, no growth", d)
	}
}
