package session

import (
	"fmt"
	"math"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestLiveRanks: two processes connect with hellos naming ranks 1 and 0
// (connection order is the reverse); each is a source of its own with its
// hello's rank, and rank 1, whose all-reduces are the shorter (it arrives
// last), is the late one. Expected numbers counted by hand (ns).
func TestLiveRanks(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond})
	defer sess.Close()
	steps := [][2]int64{{0, 100}, {100, 100}}
	send := func(pid, rank int64, ks [][3]int64) { sendRank(t, sess, pid, rank, 0, steps, ks) } // GPU kernels
	send(10, 1, [][3]int64{{0, 5, 80}, {1, 80, 90}, {0, 105, 180}, {1, 180, 190}})
	send(20, 0, [][3]int64{{0, 10, 40}, {1, 40, 90}, {0, 110, 130}, {1, 130, 190}})
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipes did not end")
	}
	st := sess.Snapshot()
	r := st.Cumulative.Ranks
	if r == nil || st.Recent.Ranks == nil || len(r.Sources) != 2 || !r.ByRank {
		t.Fatalf("ranks %+v (window %+v)", r, st.Recent.Ranks)
	}
	r0, r1 := r.Sources[0], r.Sources[1]
	if r0.Rank != 0 || r0.Name != "pid 20" || r0.RankFrom != attrib.RankFromTrace || r0.World != 2 || r1.Rank != 1 || r1.Name != "pid 10" {
		t.Errorf("sources %+v %+v", r0, r1)
	}
	// Rank 0 waits 90 in all: collective 1 lasts 50 there, 10 on rank 1
	// (wait 40); collective 2 lasts 60 and 10 (wait 50).
	if r0.CollWaitNs != 90 || r0.LastArrivals != 0 || r1.CollWaitNs != 0 || r1.LastArrivals != 2 || r.Collectives != 2 {
		t.Errorf("waits: rank 0 %d (%d last), rank 1 %d (%d last), %d matched; want 90, 0, 0, 2, 2", r0.CollWaitNs, r0.LastArrivals, r1.CollWaitNs, r1.LastArrivals, r.Collectives)
	}
	if r0.CommNs != 110 || r0.CommExposedNs != 110 || r1.ComputeNs != 75+75 || r0.Steps != 2 || r0.StepMedianNs != 100 {
		t.Errorf("rank 0 %+v\nrank 1 %+v", r0, r1)
	}
	if len(r.Steps) != 2 || r.Steps[0].LateSource != r1.Index || r.Steps[1].WaitNs != 50 {
		t.Errorf("step spreads %+v", r.Steps)
	}
}

// One process: no per-rank numbers.
func TestLiveRanksOneProcess(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "python", PID: 5, Rank: 0, World: 1})
	w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: w.Name("k"), Start: 10, Dur: 5, TID: -1, PID: 5}})
	b.Close()
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipe did not end")
	}
	if r := sess.Snapshot().Cumulative.Ranks; r != nil {
		t.Errorf("one process: ranks %+v", r)
	}
}

// RankSteps counts a step once every rank finished it, as long as its
// slowest rank; processes outside the job (no world) are not ranks.
func TestRankSteps(t *testing.T) {
	st := &livestate.State{
		Children: []livestate.Child{
			{Hello: msg.Hello{PID: 30}}, // the launcher: no rank
			{Hello: msg.Hello{PID: 10, Rank: 1, World: 2}},
			{Hello: msg.Hello{PID: 20, Rank: 0, World: 2}},
		},
		Steps: []livestate.StepTime{
			{Step: 1, PID: 20, StartNs: 0, DurNs: 100}, {Step: 1, PID: 10, StartNs: 5, DurNs: 120},
			{Step: 7, PID: 30, StartNs: 50, DurNs: 1},
			{Step: 2, PID: 20, StartNs: 100, DurNs: 100}, {Step: 2, PID: 10, StartNs: 125, DurNs: 90},
			{Step: 3, PID: 20, StartNs: 200, DurNs: 100},
		},
	}
	got := st.RankSteps()
	want := []livestate.StepTime{{Step: 1, PID: 20, StartNs: 0, DurNs: 120}, {Step: 2, PID: 20, StartNs: 100, DurNs: 100}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("RankSteps %+v, want %+v (step 3: rank 1 not done)", got, want)
	}
	// Only the processes kept: rank 1 alone is not a job.
	if got := st.RankStepsOf(func(pid int32) bool { return pid != 20 }); got != nil {
		t.Errorf("RankStepsOf without rank 0: %+v, want nil", got)
	}
	st.Steps = st.Steps[:1]
	if got := st.RankSteps(); got != nil {
		t.Errorf("one rank reporting: %+v, want nil", got)
	}
}

// TestLiveRankSteps: two ranks' steps 1 and 2 stay apart in the step rows
// of the cumulative and the window snapshots (the aggregate keys steps by
// number only: rank 1's step N overwrote rank 0's), each with its own
// start, duration and GPU work, its Source the rank's index in Ranks;
// rows by step, then rank.
// Expected rows counted by hand from the events below (ns).
func TestLiveRankSteps(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond})
	defer sess.Close()
	send := func(pid, rank int64, steps [][2]int64, ks [][2]int64) {
		var gemms [][3]int64 // all gemm_k
		for _, k := range ks {
			gemms = append(gemms, [3]int64{0, k[0], k[1]})
		}
		sendRank(t, sess, pid, rank, -1, steps, gemms)
	}
	// Rank 1 (connects first): steps 1–3 of 100, 100, 50 ns; step 1 one
	// kernel of 75, step 2 two (75 + 10), step 3 none.
	send(10, 1, [][2]int64{{0, 100}, {100, 100}, {200, 50}}, [][2]int64{{5, 80}, {105, 180}, {180, 190}})
	// Rank 0: steps 1–2 of 90 and 110 ns; step 1 one kernel of 30, step 2
	// two (20 + 60).
	send(20, 0, [][2]int64{{0, 90}, {90, 110}}, [][2]int64{{10, 40}, {100, 120}, {130, 190}})
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipes did not end")
	}
	type row struct {
		rank                       int
		step, start, dur, kns, ops int64
	}
	// By step, then rank (rank 1 connected first: it is source 0).
	want := []row{
		{0, 1, 0, 90, 30, 1}, {1, 1, 0, 100, 75, 1},
		{0, 2, 90, 110, 80, 2}, {1, 2, 100, 100, 85, 2},
		{1, 3, 200, 50, 0, 0},
	}
	st := sess.Snapshot()
	for _, snap := range bothSnaps(st) {
		r := snap.s.Ranks
		if r == nil {
			t.Fatalf("%s: no ranks", snap.name)
		}
		var got []row
		for _, x := range snap.s.Steps {
			src := r.Source(x.Source)
			if src == nil {
				t.Fatalf("%s: step %+v: no source %d in Ranks", snap.name, x, x.Source)
			}
			got = append(got, row{src.Rank, x.Step, x.StartNs, x.DurNs, x.KernelNs, x.Count})
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s steps (rank, step, start, dur, gpu ns, ops)\n got %v\nwant %v", snap.name, got, want)
		}
	}
}

// TestLiveRankStepsKept: with MaxSteps 2, rank 0's five steps and then
// rank 1's, the session keeps the newest two step times (rank 1's steps 4
// and 5): the cumulative rows are those two with rank 1's GPU time, not
// the GPU sums that outlived their step times nor the aggregate's rows
// (steps 1–5, both ranks' time summed).
func TestLiveRankStepsKept(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond, MaxSteps: 2})
	defer sess.Close()
	for _, pid := range []int64{10, 20} {
		a, b := net.Pipe()
		sess.AddConn(a)
		w := wire.NewWriter(b)
		w.Hello(&msg.Hello{Source: "python", PID: pid, Rank: pid/10 - 1, World: 2})
		step, k := w.Name("step"), w.Name("gemm_k")
		var evs []tracer.Event
		for n := int64(1); n <= 5; n++ {
			evs = append(evs,
				tracer.Event{Kind: tracer.KindStep, Name: step, Start: 100 * (n - 1), Dur: 100, Value: n, PID: int32(pid), TID: 1, Device: -1},
				tracer.Event{Kind: tracer.KindKernel, Name: k, Start: 100*(n-1) + 10, Dur: pid, PID: int32(pid), TID: 1, Device: -1})
		}
		if err := w.Events(evs); err != nil {
			t.Fatal(err)
		}
		b.Close()
		// Rank 0's steps all in before rank 1's (connections are read
		// concurrently).
		for end := time.Now().Add(5 * time.Second); sess.Snapshot().StepCount < 5*(pid/10); {
			if time.Now().After(end) {
				t.Fatalf("pid %d: steps not received", pid)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipes did not end")
	}
	st := sess.Snapshot()
	var got []string
	for _, x := range st.Cumulative.Steps {
		got = append(got, fmt.Sprintf("rank %d step %d start %d gpu %d", st.Cumulative.Ranks.Source(x.Source).Rank, x.Step, x.StartNs, x.KernelNs))
	}
	want := []string{"rank 1 step 4 start 300 gpu 20", "rank 1 step 5 start 400 gpu 20"}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n got %q\nwant %q", got, want)
	}
}

// sendRank connects a process with a hello of rank (world 2) and sends
// its steps ({start, dur}, numbered from 1) and kernels ({name index into
// gemm_k, ncclKernel_AllReduce…; start; end}) on device dev (-1: CPU
// operators, as the Python agent's), all on thread 1.
func sendRank(t *testing.T, sess *Session, pid, rank int64, dev int32, steps [][2]int64, ks [][3]int64) {
	t.Helper()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "python", PID: pid, Rank: rank, World: 2})
	step := w.Name("step")
	names := []tracer.StrID{w.Name("gemm_k"), w.Name("ncclKernel_AllReduce_RING_LL_Sum_float")}
	var evs []tracer.Event
	for i, s := range steps {
		evs = append(evs, tracer.Event{Kind: tracer.KindStep, Name: step, Start: s[0], Dur: s[1], Value: int64(i + 1), PID: int32(pid), TID: 1, Device: -1})
	}
	for _, k := range ks {
		evs = append(evs, tracer.Event{Kind: tracer.KindKernel, Name: names[k[0]], Start: k[1], Dur: k[2] - k[1], PID: int32(pid), TID: 1, Device: dev})
	}
	if err := w.Events(evs); err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// TestLiveRanksTracedSteps: the Python agent
// traces operators in 2 of every 10 steps, so a live rank's operators and
// collective waits come from a few steps apart. Two ranks of 10 steps of
// 100 ns; operators in steps 2, 3, 7 and 8 only (two "windows"); in each
// of those, rank 1 computes 75 ns and all-reduces 10 ns (it arrives last),
// rank 0 computes 30 ns and all-reduces 50 ns (40 ns of it waiting).
// By hand: rank 0 waited 4 × 40 = 160 ns over 4 traced steps of 100 ns,
// so its span is 400 ns (the traced steps), not the 680 ns from its first
// operator (110) to its last (790) across the 3 untraced steps between,
// and the straggler share is 160 / 400 = 40% (it was 160 / 680 = 23.5%).
// Steps: 10 per rank, the whole run of 1000 ns.
func TestLiveRanksTracedSteps(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond})
	defer sess.Close()
	var steps [][2]int64
	for k := int64(0); k < 10; k++ {
		steps = append(steps, [2]int64{100 * k, 100})
	}
	var late, early [][3]int64
	for _, n := range []int64{2, 3, 7, 8} {
		b := 100 * (n - 1)
		late = append(late, [3]int64{0, b + 5, b + 80}, [3]int64{1, b + 80, b + 90})
		early = append(early, [3]int64{0, b + 10, b + 40}, [3]int64{1, b + 40, b + 90})
	}
	sendRank(t, sess, 10, 1, -1, steps, late)
	sendRank(t, sess, 20, 0, -1, steps, early)
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipes did not end")
	}
	st := sess.Snapshot()
	for _, snap := range bothSnaps(st) {
		r := snap.s.Ranks
		if r == nil || len(r.Sources) != 2 {
			t.Fatalf("%s: ranks %+v", snap.name, r)
		}
		r0, r1 := r.Sources[0], r.Sources[1]
		if r0.Rank != 0 || r0.SpanNs != 400 || r0.BusyNs != 4*80 || r0.IdleNs != 400-4*80 || r0.CollWaitNs != 160 || r1.SpanNs != 400 || r1.LastArrivals != 4 || r0.Steps != 10 {
			t.Errorf("%s: rank 0 span %d busy %d idle %d waited %d steps %d, rank 1 span %d last %d; want 400 320 80 160 10, 400 4",
				snap.name, r0.SpanNs, r0.BusyNs, r0.IdleNs, r0.CollWaitNs, r0.Steps, r1.SpanNs, r1.LastArrivals)
		}
		var share float64
		for _, f := range attrib.EvaluateFindings(attrib.DefaultFindings(), attrib.FindingInput{Snapshot: snap.s}) {
			if f.ID == "straggler-rank" {
				share = f.Share
			}
		}
		if math.Abs(share-0.40) > 1e-9 {
			t.Errorf("%s: straggler share %.4f, want 160/400 = 0.40", snap.name, share)
		}
	}
	if c := st.Cumulative.Ranks.Sources[0]; c.RunNs != 1000 {
		t.Errorf("cumulative rank 0 run %d ns, want 1000 (steps 1–10)", c.RunNs)
	}
}

// TestLiveRanksWholeRun: with a window of the last
// 350 ns, the window's Ranks count the steps kept in it, the cumulative
// Ranks each rank's whole run: rank 0's 10 steps of 10, 20, …, 100 ns
// back to back (run 550 ns, lower median 50 ns), rank 1's 8 of 100 ns
// (run 800, median 100). The TUI showed 95 steps per rank and a 4.80 s
// span (the 5 s window) in a 20 s run whose header counted 399 per rank.
// The steps are sent one at a time, alternating ranks, so the window's
// content is known: a python3 simulation of its rule (drop from the front
// what starts before newest end - 350) keeps rank 0's steps 7–10 and rank
// 1's 6–8.
func TestLiveRanksWholeRun(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond, RecentNs: 350})
	defer sess.Close()
	var ws [2]*wire.Writer
	var pipes [2]net.Conn
	var stepName [2]tracer.StrID
	for i, pid := range []int64{20, 10} {
		a, b := net.Pipe()
		sess.AddConn(a)
		ws[i], pipes[i] = wire.NewWriter(b), b
		ws[i].Hello(&msg.Hello{Source: "python", PID: pid, Rank: int64(i), World: 2})
		stepName[i] = ws[i].Name("step")
	}
	sent := int64(0)
	send := func(i int, n, start, dur int64) {
		pid := []int32{20, 10}[i]
		if err := ws[i].Events([]tracer.Event{{Kind: tracer.KindStep, Name: stepName[i], Start: start, Dur: dur, Value: n, PID: pid, TID: 1, Device: -1}}); err != nil {
			t.Fatal(err)
		}
		sent++
		for end := time.Now().Add(5 * time.Second); sess.Snapshot().StepCount < sent; {
			if time.Now().After(end) {
				t.Fatalf("step %d of pid %d not received", n, pid)
			}
			time.Sleep(time.Millisecond)
		}
	}
	start := int64(0)
	for k := int64(1); k <= 10; k++ {
		send(0, k, start, 10*k)
		start += 10 * k
		if k <= 8 {
			send(1, k, 100*(k-1), 100)
		}
	}
	for _, p := range pipes {
		p.Close()
	}
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipes did not end")
	}
	st := sess.Snapshot()
	c, w := st.Cumulative.Ranks, st.Recent.Ranks
	if c == nil || w == nil || len(c.Sources) != 2 || len(w.Sources) != 2 {
		t.Fatalf("ranks: cumulative %+v window %+v", c, w)
	}
	type fig struct {
		steps       int
		median, run int64
	}
	got := []fig{{c.Sources[0].Steps, c.Sources[0].StepMedianNs, c.Sources[0].RunNs}, {c.Sources[1].Steps, c.Sources[1].StepMedianNs, c.Sources[1].RunNs}}
	if want := []fig{{10, 50, 550}, {8, 100, 800}}; !slices.Equal(got, want) {
		t.Errorf("cumulative (steps, median, run) %v, want %v", got, want)
	}
	if w.Sources[0].Steps != 4 || w.Sources[1].Steps != 3 || w.Sources[0].RunNs != 0 {
		t.Errorf("window steps %d, %d (run %d), want 4 and 3 (run 0: a window has no run)", w.Sources[0].Steps, w.Sources[1].Steps, w.Sources[0].RunNs)
	}
}

// TestTracedNs: a live source's traced time is the union of its steps
// holding operators and of its work, so that busy never exceeds it (the
// DDP run showed rank 0 busy 928 ms over 920 ms of traced steps, idle 0:
// operators end after their step, or fall in the gap where the agent
// starts or stops its torch.profiler window). By hand: steps [0,100) and
// [200,300) hold operators, [100,200) none; a kernel [90,130) and a gloo
// all-reduce range [250,310) stick out, a "forward" range [100,200) is a
// stage, not work: [0,130) + [200,310) = 240 ns. A source with no step
// holding operators has none.
func TestTracedNs(t *testing.T) {
	strs := tracer.NewStrings()
	k, ar, fw := strs.Intern("gemm_k"), strs.Intern("gloo:all_reduce"), strs.Intern("forward")
	tr := &tracer.Trace{Strings: strs, Events: []tracer.Event{
		{Kind: tracer.KindKernel, Name: k, Start: 90, Dur: 40},
		{Kind: tracer.KindRange, Name: ar, Start: 250, Dur: 60},
		{Kind: tracer.KindRange, Name: fw, Start: 100, Dur: 100},
	}}
	other := &tracer.Trace{Strings: strs, Events: []tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: 0, Dur: 10}}}
	steps := []attrib.StepRow{
		{Step: 1, StartNs: 0, DurNs: 100, Count: 1}, {Step: 2, StartNs: 100, DurNs: 100}, {Step: 3, StartNs: 200, DurNs: 100, Count: 2},
		{Step: 1, StartNs: 0, DurNs: 100, Source: 1},
	}
	got := tracedNs([]*tracer.Trace{tr, other}, steps, nil)
	if len(got) != 1 || got[0] != 240 {
		t.Errorf("traced %v, want map[0:240]", got)
	}
}

// TestStepsPerRank: the run's step count per rank,
// not the step events of all ranks summed: from the cumulative Ranks
// (whole runs of 399 and 398 steps: 399, where StepCount is 797); without
// them, StepCount over the children naming a world of 2 (40 / 2; the
// launcher has none); one process: StepCount.
func TestStepsPerRank(t *testing.T) {
	st := &livestate.State{StepCount: 797, Cumulative: &attrib.Snapshot{Ranks: &attrib.RankSummary{Sources: []attrib.SourceRow{{Steps: 399}, {Steps: 398}}}}}
	if got := st.StepsPerRank(); got != 399 {
		t.Errorf("with Ranks: %d, want 399", got)
	}
	st = &livestate.State{StepCount: 40, Children: []livestate.Child{{Hello: msg.Hello{PID: 6}}, {Hello: msg.Hello{PID: 7, World: 2}}, {Hello: msg.Hello{PID: 8, Rank: 1, World: 2}}}}
	if got := st.StepsPerRank(); got != 20 {
		t.Errorf("children of world 2: %d, want 20", got)
	}
	st = &livestate.State{StepCount: 40, Children: []livestate.Child{{Hello: msg.Hello{PID: 6}}}}
	if got := st.StepsPerRank(); got != 40 {
		t.Errorf("one process: %d, want 40", got)
	}
}

// namedSnap is one of a State's snapshots and its name.
type namedSnap struct {
	name string
	s    *attrib.Snapshot
}

// bothSnaps is st's cumulative and window snapshots.
func bothSnaps(st *livestate.State) []namedSnap {
	return []namedSnap{{"cumulative", st.Cumulative}, {"window", st.Recent}}
}
