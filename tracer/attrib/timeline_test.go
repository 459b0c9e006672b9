package attrib

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestBuildTimeline builds a timeline from a hand-made linked trace: two
// streams on one device and one on another, a GEMM launched under an
// attention operator (attention by context, rules.toml), nested CPU
// ranges, a launch call and two steps. Every expected value is counted by
// hand from the events below.
func TestBuildTimeline(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	s := tr.Strings
	attnOp, fwd, outer := s.Intern("aten::scaled_dot_product_attention"), s.Intern("forward"), s.Intern("step")
	tr.Contexts = append(tr.Contexts,
		tracer.Context{Ops: []tracer.StrID{attnOp}, Ranges: []tracer.StrID{outer, fwd}, Step: 7}, // ctx 1
		tracer.Context{Ranges: []tracer.StrID{outer}, Step: 7},                                   // ctx 2
	)
	k := func(name string, dev, stream int32, start, dur int64, ctx tracer.CtxID) tracer.Event {
		return tracer.Event{Kind: tracer.KindKernel, Name: s.Intern(name), Device: dev, Stream: stream, Start: start, Dur: dur, Ctx: ctx, TID: -1}
	}
	tr.Events = []tracer.Event{
		k("volta_sgemm_64x64_nt", 0, 7, 1000, 400, 1), // attention by context
		k("volta_sgemm_64x64_nt", 0, 7, 1600, 100, 2), // gemm
		k("volta_sgemm_64x64_nt", 1, 3, 500, 200, 0),  // gemm, no context
		k("flash_fwd_kernel", 0, 13, 1500, 300, 2),    // attention by name
		{Kind: tracer.KindMemcpy, Name: s.Intern("Memcpy HtoD"), Device: 0, Stream: 7, Start: 100, Dur: 50},
		{Kind: tracer.KindRange, Name: outer, PID: 1, TID: 1, Device: -1, Start: 90, Dur: 2000},
		{Kind: tracer.KindRange, Name: fwd, PID: 1, TID: 1, Device: -1, Start: 95, Dur: 900},
		{Kind: tracer.KindRuntime, Name: s.Intern("cudaLaunchKernel"), PID: 1, TID: 1, Device: -1, Start: 980, Dur: 10},
		{Kind: tracer.KindRange, Name: fwd, PID: 1, TID: 1, Device: -1, Start: 99999, Dur: 10}, // after every op: left out
		{Kind: tracer.KindStep, Value: 7, Start: 90, Dur: 2000},
		{Kind: tracer.KindStep, Value: 8, Start: 2090, Dur: 100},
		{Kind: tracer.KindCPUOp, Name: attnOp, Start: 96, Dur: 5}, // ignored kind
	}
	tl := BuildTimeline(tr.Events, tr.Strings, tr.Contexts, nil, 0)
	wantLanes := []TimelineLane{{Device: 0, Stream: 7}, {Device: 0, Stream: 13}, {Device: 1, Stream: 3}}
	if len(tl.Lanes) != len(wantLanes) {
		t.Fatalf("lanes %v, want %v", tl.Lanes, wantLanes)
	}
	for i := range wantLanes {
		if tl.Lanes[i] != wantLanes[i] {
			t.Fatalf("lanes %v, want %v", tl.Lanes, wantLanes)
		}
	}
	// Ops by start: memcpy 100, sgemm 500 (dev1), sgemm 1000, flash 1500, sgemm 1600.
	type want struct {
		lane  int32
		start int64
		cat   string
		stage string
		step  int64
	}
	ws := []want{{0, 100, "memcpy", "", -1}, {2, 500, "gemm", "", -1}, {0, 1000, "attention", "forward", 7},
		{1, 1500, "attention", "step", 7}, {0, 1600, "gemm", "step", 7}}
	if len(tl.Ops) != len(ws) {
		t.Fatalf("%d ops, want %d", len(tl.Ops), len(ws))
	}
	for i, w := range ws {
		o := tl.Ops[i]
		if o.Lane != w.lane || o.StartNs != w.start || o.Category != w.cat || o.Stage != w.stage || o.Step != w.step {
			t.Errorf("op %d = lane %d start %d %s/%s step %d, want %+v", i, o.Lane, o.StartNs, o.Category, o.Stage, o.Step, w)
		}
	}
	// CPU: step range (depth 0), forward (depth 1), the launch call; the
	// range at 99999 ends after the last op (1700) and is left out.
	if len(tl.CPU) != 3 || tl.CPU[0].Depth != 0 || tl.CPU[1].Name != "forward" || tl.CPU[1].Depth != 1 || tl.CPU[2].Kind != tracer.KindRuntime {
		t.Errorf("CPU spans %+v", tl.CPU)
	}
	// Steps 7 (90–2090) overlaps the ops (100–1700); step 8 (2090–2190) does not.
	if len(tl.Steps) != 1 || tl.Steps[0].Step != 7 {
		t.Errorf("steps %+v, want step 7 only", tl.Steps)
	}
	if tl.StartNs != 90 || tl.EndNs != 2090 {
		t.Errorf("span %d–%d, want 90–2090", tl.StartNs, tl.EndNs)
	}
	// Bounded: keep the 2 latest-starting ops.
	tl = BuildTimeline(tr.Events, tr.Strings, tr.Contexts, nil, 2)
	if len(tl.Ops) != 2 || tl.Dropped != 3 || tl.Ops[0].StartNs != 1500 || tl.Ops[1].StartNs != 1600 {
		t.Errorf("bounded: %d ops (dropped %d) from %d, want 2 (3) from 1500", len(tl.Ops), tl.Dropped, tl.Ops[0].StartNs)
	}
}

// BenchmarkBuildTimeline: 32,768 kernels (the live bound) over 40 names,
// 8 contexts and 2 streams, with 4,096 CPU ranges.
func BenchmarkBuildTimeline(b *testing.B) {
	tr := tracer.NewTrace("bench", "")
	s := tr.Strings
	for i := 0; i < 8; i++ {
		tr.Contexts = append(tr.Contexts, tracer.Context{Ranges: []tracer.StrID{s.Intern("forward"), s.Intern("stage" + string(rune('a'+i)))}, Step: int64(i)})
	}
	for i := 0; i < 1<<15; i++ {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindKernel, Name: s.Intern("kernel_" + string(rune('a'+i%40))),
			Start: int64(i) * 1000, Dur: 800, Device: 0, Stream: int32(i % 2), Ctx: tracer.CtxID(1 + i%8)})
	}
	for i := 0; i < 4096; i++ {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindRange, Name: s.Intern("forward"), Start: int64(i) * 8000, Dur: 7000, PID: 1, TID: 1})
	}
	b.ResetTimer()
	for b.Loop() {
		BuildTimeline(tr.Events, tr.Strings, tr.Contexts, nil, 1<<15)
	}
}

// TestMergeTimelines: two ranks on one clock keep their times (rank 1's
// kernel starts 300 ns later and stays so); a third file 2 hours away is
// shifted to start with the first. Values by hand.
func TestMergeTimelines(t *testing.T) {
	op := func(lane int32, start, dur int64) TimelineOp {
		return TimelineOp{Lane: lane, StartNs: start, DurNs: dur, Name: "k", Step: 3}
	}
	r0 := &Timeline{StartNs: 1000, EndNs: 2000, Lanes: []TimelineLane{{Device: 0, Stream: 7}},
		Ops: []TimelineOp{op(0, 1000, 1000)}, Steps: []TimelineStep{{Step: 3, StartNs: 1000, DurNs: 1000}}}
	r1 := &Timeline{StartNs: 1300, EndNs: 2500, Lanes: []TimelineLane{{Device: 0, Stream: 7}, {Device: 0, Stream: 9}},
		Ops: []TimelineOp{op(1, 1300, 200), op(0, 1400, 1100)}, Steps: []TimelineStep{{Step: 3, StartNs: 1300, DurNs: 1200}},
		CPU: []TimelineSpan{{Kind: tracer.KindRange, StartNs: 1250, DurNs: 10, Name: "fwd"}}}
	far := int64(2 * 3600 * 1e9)
	f2 := &Timeline{StartNs: far, EndNs: far + 50, Lanes: []TimelineLane{{Device: 1, Stream: 0}}, Ops: []TimelineOp{op(0, far, 50)}}
	m := MergeTimelines([]*Timeline{r0, r1, nil, f2}, []string{"r0", "r1", "r2", "f3"})
	wantLanes := []TimelineLane{{0, 7, 0}, {0, 7, 1}, {0, 9, 1}, {1, 0, 3}}
	if len(m.Lanes) != len(wantLanes) {
		t.Fatalf("lanes %+v, want %+v", m.Lanes, wantLanes)
	}
	for i := range wantLanes {
		if m.Lanes[i] != wantLanes[i] {
			t.Errorf("lane %d = %+v, want %+v", i, m.Lanes[i], wantLanes[i])
		}
	}
	// Ops by start: r0 1000 (lane 0), f3 shifted to 1000 (lane 3), r1 1300 (lane 2), r1 1400 (lane 1).
	want := []struct {
		lane  int32
		start int64
	}{{0, 1000}, {3, 1000}, {2, 1300}, {1, 1400}}
	for i, w := range want {
		if i >= len(m.Ops) || m.Ops[i].Lane != w.lane || m.Ops[i].StartNs != w.start {
			t.Fatalf("ops %+v, want lanes/starts %+v", m.Ops, want)
		}
	}
	if m.ShiftNs[0] != 0 || m.ShiftNs[1] != 0 || m.ShiftNs[3] != 1000-far {
		t.Errorf("shifts %v, want 0, 0, _, %d", m.ShiftNs, 1000-far)
	}
	if m.StartNs != 1000 || m.EndNs != 2500 {
		t.Errorf("span %d–%d, want 1000–2500", m.StartNs, m.EndNs)
	}
	if len(m.Steps) != 2 || m.Steps[1].Source != 1 || m.Steps[1].StartNs != 1300 || len(m.CPU) != 1 || m.CPU[0].Source != 1 {
		t.Errorf("steps %+v, CPU %+v", m.Steps, m.CPU)
	}
	if len(r1.Ops) != 2 || r1.Ops[0].Lane != 1 || r1.Ops[0].StartNs != 1300 {
		t.Errorf("a part was modified: %+v", r1.Ops)
	}
	if one := MergeTimelines([]*Timeline{r0}, []string{"r0"}); one != r0 {
		t.Errorf("one part: want it as it is")
	}
}
