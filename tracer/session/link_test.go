package session

import (
	"cmp"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestLinkerWithoutSteps: a thread that never sends steps gets its kernels
// linked once they waited LinkDelay, against the ranges received by then;
// a GPU event whose launch call never arrives gets context 0 after the
// delay; an event with neither corr nor thread is emitted at once.
func TestLinkerWithoutSteps(t *testing.T) {
	strs := tracer.NewStrings()
	var out []tracer.Event
	l := newLinker(strs, func(evs []tracer.Event) { out = append(out, evs...) })
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
	l := newLinker(strs, func(evs []tracer.Event) { out = append(out, evs...) })
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
	n := 0
	l := newLinker(nil, func(evs []tracer.Event) { n += len(evs) })
	l.maxPending = 10
	for i := range 11 {
		l.add(&tracer.Event{Kind: tracer.KindKernel, Start: int64(i), Dur: 1, PID: 1, TID: 1}, 0)
	}
	l.endBatch()
	if n != 5 || l.threads[tkey{1, 1}].pending.len() != 6 || l.early != 5 {
		t.Fatalf("emitted %d, pending %d, early %d", n, l.threads[tkey{1, 1}].pending.len(), l.early)
	}
}

// TestLinkerMatchesTraceLink: the live linker and Trace.Link (files,
// compare's recording) give every GPU op the same context: the autograd
// case (a launch on a thread without ranges takes the step thread's),
// a launch outside every step, a kernel on its own thread; intervals sent
// in end order as sources send them, the step last.
func TestLinkerMatchesTraceLink(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	s := tr.Strings.Intern
	cpu := func(k tracer.Kind, name string, start, dur int64, tid int32, corr uint64, val int64) tracer.Event {
		return tracer.Event{Kind: k, Name: s(name), Start: start, Dur: dur, PID: 1, TID: tid, Corr: corr, Value: val, Device: -1}
	}
	gpu := func(corr uint64, tid int32, start int64) tracer.Event {
		return tracer.Event{Kind: tracer.KindKernel, Name: s("k"), Start: start, Dur: 1, PID: 1, TID: tid, Corr: corr}
	}
	tr.Events = []tracer.Event{
		cpu(tracer.KindRuntime, "cudaLaunchKernel", 100, 1, 1, 1, 0),
		gpu(1, -1, 5001),
		cpu(tracer.KindRange, "## forward ##", 0, 400, 1, 0, 0),
		cpu(tracer.KindRuntime, "cudaLaunchKernel", 500, 1, 2, 2, 0),
		cpu(tracer.KindCPUOp, "ConvolutionBackward0", 450, 100, 2, 0, 0),
		gpu(2, -1, 5002),
		cpu(tracer.KindRuntime, "cudaLaunchKernel", 600, 1, 2, 3, 0),
		cpu(tracer.KindRange, "nccl:all_reduce", 590, 20, 2, 0, 0),
		gpu(3, -1, 5003),
		gpu(0, 1, 700), // a built-in-loop style kernel on thread 1 at its own start
		cpu(tracer.KindRange, "## backward ##", 400, 500, 1, 0, 0),
		cpu(tracer.KindStep, "ProfilerStep#5", 0, 1000, 1, 0, 5),
		cpu(tracer.KindRuntime, "cudaLaunchKernel", 1200, 1, 3, 4, 0),
		gpu(4, -1, 5004),
	}
	var out []tracer.Event
	l := newLinker(tr.Strings, func(evs []tracer.Event) { out = append(out, evs...) })
	for i := range tr.Events {
		l.add(&tr.Events[i], 0)
		l.endBatch()
	}
	l.flush(0)
	tr.Link()
	want := map[int64]tracer.Context{}
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind == tracer.KindKernel {
			want[e.Start] = tr.Contexts[e.Ctx]
		}
	}
	if len(out) != len(want) {
		t.Fatalf("live linker emitted %d kernels, want %d", len(out), len(want))
	}
	for _, e := range out {
		if got := l.contexts[e.Ctx]; !reflect.DeepEqual(got, want[e.Start]) {
			t.Errorf("kernel at %d: live %+v, Trace.Link %+v", e.Start, got, want[e.Start])
		}
	}
	// And the live answer is the autograd rule's, not only the same.
	if c := l.contexts[out[1].Ctx]; c.StageFrom != tracer.StageStepThread || c.Step != 5 || len(c.Ranges) != 1 || tr.Strings.Get(c.Ranges[0]) != "## backward ##" {
		t.Errorf("autograd launch: %+v", c)
	}
}

// TestLinkerMatchesTraceLinkOnKineto: the events of a real training trace
// (hta_ns_resolution_v100: autograd thread, ProfilerStep#N, user ranges),
// fed to the live linker in end-time order as live sources send them, get
// the same context (by value) for every GPU op as Trace.Link gives the file
// — so the live TUI, `compare` (which reads its recording back) and
// `report` agree for the same events.
func TestLinkerMatchesTraceLinkOnKineto(t *testing.T) {
	tr, err := tracefile.Open(filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz"), tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		start int64
		corr  uint64
	}
	want := map[key]tracer.Context{}
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind.IsGPU() && e.Kind != tracer.KindGPURange {
			want[key{e.Start, e.Corr}] = tr.Contexts[e.Ctx]
		}
	}
	// A live source is one process: its GPU records carry its pid (the
	// Kineto file puts them on a device pid), and correlation ids are per
	// process.
	pidOf := map[uint64]int32{}
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind.IsLaunch() && e.Corr != 0 {
			if _, dup := pidOf[e.Corr]; !dup {
				pidOf[e.Corr] = e.PID
			}
		}
	}
	evs := slices.Clone(tr.Events)
	for i := range evs {
		if p, ok := pidOf[evs[i].Corr]; ok && evs[i].Kind.IsGPU() {
			evs[i].PID = p
		}
	}
	slices.SortStableFunc(evs, func(a, b tracer.Event) int { return cmp.Compare(a.End(), b.End()) })
	var out []tracer.Event
	l := newLinker(tr.Strings, func(evs []tracer.Event) { out = append(out, evs...) })
	for i := range evs {
		evs[i].Ctx = 0
		l.add(&evs[i], 0)
		if i%1000 == 999 {
			l.endBatch()
		}
	}
	l.endBatch()
	l.flush(0)
	if len(out) != len(want) {
		t.Fatalf("live linker emitted %d GPU ops, the file has %d", len(out), len(want))
	}
	bad := 0
	for _, e := range out {
		if got, w := l.contexts[e.Ctx], want[key{e.Start, e.Corr}]; !reflect.DeepEqual(got, w) {
			if bad++; bad <= 3 {
				t.Errorf("GPU op at %d (corr %d): live %+v, file %+v", e.Start, e.Corr, got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d GPU ops differ", bad, len(out))
	}
}

// TestCorrRing: the launches kept by correlation id are the newest span
// of maxCorr ids, whatever order they come in: ids a little before the
// first one are kept, an id far past the span forgets every older one,
// and a repeated id keeps its first launch.
func TestCorrRing(t *testing.T) {
	var r corrRing
	const limit = 8
	put := func(id uint64) { r.put(id, int32(id%7), int64(id)*10, limit) }
	has := func(id uint64) bool {
		tid, ts, ok := r.get(id)
		if ok && (tid != int32(id%7) || ts != int64(id)*10) {
			t.Fatalf("id %d: tid %d t %d", id, tid, ts)
		}
		return ok
	}
	for _, id := range []uint64{100, 102, 99, 101, 97} {
		put(id)
	}
	for id := uint64(95); id <= 104; id++ {
		if want := id == 97 || (id >= 99 && id <= 102); has(id) != want {
			t.Fatalf("after 97..102: id %d kept %v", id, !want)
		}
	}
	put(106) // the span 97..106 is 10 ids: 97 and 98 leave
	if has(97) || !has(99) || !has(106) || has(105) {
		t.Fatalf("after 106: 97 %v 99 %v 106 %v 105 %v", has(97), has(99), has(106), has(105))
	}
	put(90) // older than the span allows: forgotten
	if has(90) {
		t.Fatal("id 90 kept past the span's bound")
	}
	r.put(106, 1, 1, limit) // a repeat keeps the first launch
	if !has(106) {
		t.Fatal("repeat replaced the first launch")
	}
	put(1000) // far past: only it is kept
	for id := uint64(99); id <= 106; id++ {
		if has(id) {
			t.Fatalf("id %d kept after a jump to 1000", id)
		}
	}
	if !has(1000) {
		t.Fatal("1000 not kept")
	}
	for id := uint64(1001); id < 1100; id++ {
		put(id)
	}
	n := 0
	for id := uint64(990); id < 1110; id++ {
		if has(id) {
			n++
		}
	}
	if n != limit || !has(1099) || has(1091) {
		t.Fatalf("after 1000..1099: %d kept, want the newest %d", n, limit)
	}
}
