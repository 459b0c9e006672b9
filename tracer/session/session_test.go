package session

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// The synthetic loop: nSteps steps, 1 ms apart, each 0.9 ms long, on pid
// 100 / thread 1 (tracer clock ns; the hello's offset moves them to host
// time). Inside step n (s = 1e6 + n·1e6):
//
//	range forward [s, s+400µs):  gemm @ s+10µs 100µs, attn_fused_fwd @ s+150µs 200µs
//	range sample [s+500µs, s+800µs): topp_scan @ s+550µs 50µs;
//	    cudaLaunchKernel @ s+600µs 5µs corr n+1 → gpu_kernel on device 0 @ s+700µs 30µs
//	outside_kernel @ s+850µs 10µs (in the step, in no range)
//
// Like a real tracer, ranges and steps are sent when they end (after their
// kernels). The GPU kernel of even steps is sent one step late; for odd
// steps it is sent before its launch call.
const (
	nSteps    = 20
	pid       = 100
	clockOffs = 1_700_000_000_000_000_000
)

// Hand-computed totals (ns): count nSteps each.
var wantKernels = map[string]int64{
	"gemm":           nSteps * 100_000,
	"attn_fused_fwd": nSteps * 200_000,
	"topp_scan":      nSteps * 50_000,
	"gpu_kernel":     nSteps * 30_000,
	"outside_kernel": nSteps * 10_000,
}
var wantStages = map[string]int64{
	"forward":        nSteps * 300_000,
	"sample":         nSteps * 80_000,
	attrib.StageNone: nSteps * 10_000,
}

// perStepKernelNs: every GPU op launched in a step.
const perStepKernelNs = 100_000 + 200_000 + 50_000 + 30_000 + 10_000

type synth struct {
	s     *wire.AsyncSender
	names map[string]tracer.StrID
}

func (y *synth) id(n string) tracer.StrID {
	if id, ok := y.names[n]; ok {
		return id
	}
	id := y.s.Name(n)
	y.names[n] = id
	return id
}

func (y *synth) ev(kind tracer.Kind, name string, start, dur int64) tracer.Event {
	return tracer.Event{Kind: kind, Name: y.id(name), Start: start, Dur: dur, PID: pid, TID: 1, Device: -1}
}

// sendLoop sends the synthetic stream through s.
func sendLoop(s *wire.AsyncSender) { sendSteps(s, nSteps, nil) }

// sendSteps sends steps [0, steps) of the synthetic loop, or forever when
// steps < 0 (pausing between steps when pause is non-nil).
func sendSteps(s *wire.AsyncSender, steps int64, pause func()) {
	y := &synth{s: s, names: map[string]tracer.StrID{}}
	s.Hello(&msg.Hello{Source: "gotrace", PID: pid, Rank: -1, Host: "test", Device: "cpu", ClockOffsetNs: clockOffs,
		Cmdline: []string{"synthetic"}})
	var lateGPU []tracer.Event
	for n := int64(0); steps < 0 || n < steps; n++ {
		if pause != nil {
			pause()
		}
		st := 1_000_000 + n*1_000_000
		gpu := tracer.Event{Kind: tracer.KindKernel, Name: y.id("gpu_kernel"), Start: st + 700_000, Dur: 30_000,
			PID: pid, TID: -1, Device: 0, Stream: 7, Corr: uint64(n + 1)}
		launch := y.ev(tracer.KindRuntime, "cudaLaunchKernel", st+600_000, 5_000)
		launch.Corr = uint64(n + 1)
		step := y.ev(tracer.KindStep, "step", st, 900_000)
		step.Value = n
		var batch []tracer.Event
		batch = append(batch, lateGPU...)
		lateGPU = nil
		batch = append(batch,
			y.ev(tracer.KindKernel, "gemm", st+10_000, 100_000),
			y.ev(tracer.KindKernel, "attn_fused_fwd", st+150_000, 200_000),
			y.ev(tracer.KindRange, "forward", st, 400_000),
			y.ev(tracer.KindKernel, "topp_scan", st+550_000, 50_000))
		if n%2 == 1 {
			batch = append(batch, gpu, launch)
		} else {
			batch = append(batch, launch)
			lateGPU = append(lateGPU, gpu)
		}
		batch = append(batch,
			y.ev(tracer.KindRange, "sample", st+500_000, 300_000),
			y.ev(tracer.KindKernel, "outside_kernel", st+850_000, 10_000),
			step)
		// Split the step over two frames, as a drain might.
		s.Send(batch[:3])
		s.Send(batch[3:])
	}
	s.Send(lateGPU)
}

func checkSnapshot(t *testing.T, what string, snap *attrib.Snapshot) {
	t.Helper()
	got := map[string]int64{}
	for _, k := range snap.Kernels {
		got[k.Name] = k.TotalNs
		if k.Count != nSteps {
			t.Errorf("%s: %s count %d, want %d", what, k.Name, k.Count, nSteps)
		}
	}
	for k, v := range wantKernels {
		if got[k] != v {
			t.Errorf("%s: kernel %s total %d, want %d", what, k, got[k], v)
		}
	}
	if len(got) != len(wantKernels) {
		t.Errorf("%s: kernels %v", what, got)
	}
	stages := map[string]int64{}
	for _, g := range snap.Stages {
		stages[g.Key] = g.TotalNs
	}
	for k, v := range wantStages {
		if stages[k] != v {
			t.Errorf("%s: stage %s total %d, want %d (all %v)", what, k, stages[k], v, stages)
		}
	}
	if len(snap.Steps) != nSteps {
		t.Fatalf("%s: %d steps, want %d", what, len(snap.Steps), nSteps)
	}
	for i, st := range snap.Steps {
		if st.Step != int64(i) || st.KernelNs != perStepKernelNs || st.Count != 5 || st.DurNs != 900_000 ||
			st.StartNs != clockOffs+1_000_000+int64(i)*1_000_000 {
			t.Errorf("%s: step row %+v, want step %d kernel %d ns in 5 ops", what, st, i, perStepKernelNs)
		}
	}
}

func dialSender(t *testing.T, addr string) *wire.AsyncSender {
	t.Helper()
	c, err := wire.Dial(addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return wire.NewAsyncSender(c, 1<<14)
}

func TestSessionEndToEnd(t *testing.T) {
	sess := New(Options{Source: "live: synthetic"})
	defer sess.Close()
	addr, err := sess.Listen()
	if err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(t.TempDir(), "run.rlk")
	f, err := os.Create(recPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Record(f); err != nil {
		t.Fatal(err)
	}

	s := dialSender(t, addr)
	sendLoop(s)
	if err := s.Close(msg.Bye{Reason: "exit", ExitCode: 0}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Wait covers the connections accepted so far; the accept runs on the
	// server's goroutine and may come after a fast sender has finished.
	for deadline := time.Now().Add(5 * time.Second); len(sess.Snapshot().Children) == 0 && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
	if !sess.Wait(5 * time.Second) {
		t.Fatal("connection did not end")
	}
	st := sess.Snapshot()
	checkSnapshot(t, "cumulative", st.Cumulative)
	checkSnapshot(t, "window", st.Recent)
	if st.StepCount != nSteps || len(st.Steps) != nSteps {
		t.Fatalf("steps %d %d", st.StepCount, len(st.Steps))
	}
	// 20 steps from the first start to the last end: 19 ms + 0.9 ms.
	if want := 20 / 0.0199; st.StepsPerSec < want*0.999999 || st.StepsPerSec > want*1.000001 {
		t.Fatalf("steps/s %v, want %v", st.StepsPerSec, want)
	}
	if len(st.Children) != 1 || st.Children[0].Hello.PID != pid || st.Children[0].Connected ||
		st.Children[0].Bye == nil || st.Children[0].Events != nSteps*9 {
		t.Fatalf("children %+v", st.Children)
	}
	if st.Dropped != 0 || st.Pending != 0 {
		t.Fatalf("dropped %d pending %d", st.Dropped, st.Pending)
	}
	if st.Recording == nil || st.Recording.Events != nSteps*9 {
		t.Fatalf("recording %+v", st.Recording)
	}
	sess.AddCounters([]tracer.Counter{{TS: clockOffs + 5, Name: sess.Intern("cpu_pct"), Device: -1, Value: 12.5}})
	if _, err := sess.StopRecording(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The recording, read by the importer (which links with
	// tracer.Trace.Link, not the session's linker), gives the same totals.
	tr, err := tracefile.Open(recPath, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != "rlktop" || tr.Meta["source"] != "gotrace" || len(tr.Events) != nSteps*9 ||
		tr.Meta["recording.source"] != "live: synthetic" || tr.Meta["recording.start_ns"] == "" {
		t.Fatalf("recording: format %q meta %v, %d events", tr.Format, tr.Meta, len(tr.Events))
	}
	if len(tr.Counters) != 1 || tr.Strings.Get(tr.Counters[0].Name) != "cpu_pct" || tr.Counters[0].Value != 12.5 || tr.Counters[0].TS != clockOffs+5 {
		t.Fatalf("recorded counters %+v", tr.Counters)
	}
	a := attrib.NewAggregator(nil)
	a.AddTrace(tr)
	checkSnapshot(t, "recording", a.Snapshot())
}

// TestSessionControl: a Control reaches the child; its ack updates the
// child's flags and adds a mark.
func TestSessionControl(t *testing.T) {
	sess := New(Options{})
	defer sess.Close()
	addr, err := sess.Listen()
	if err != nil {
		t.Fatal(err)
	}
	s := dialSender(t, addr)
	s.Hello(&msg.Hello{Source: "gotrace", PID: 7})
	deadline := time.Now().Add(5 * time.Second)
	for len(sess.Snapshot().Children) == 0 || sess.Snapshot().Children[0].Hello.PID != 7 {
		if time.Now().After(deadline) {
			t.Fatal("child never connected")
		}
		time.Sleep(5 * time.Millisecond)
	}
	seq, err := sess.Control("attention", "fused")
	if err != nil {
		t.Fatal(err)
	}
	var c msg.Control
	select {
	case c = <-s.Controls():
	case <-time.After(5 * time.Second):
		t.Fatal("control never arrived")
	}
	if c.Op != msg.ControlSet || c.Key != "attention" || c.Value != "fused" || c.Seq != seq {
		t.Fatalf("control %+v", c)
	}
	s.Ack(&msg.Control{Op: msg.ControlAck, Seq: c.Seq, Flags: []msg.KV{{Key: "attention", Value: "fused"}}, Tracing: true, Step: 12})
	for {
		st := sess.Snapshot()
		if len(st.Marks) == 1 {
			m := st.Marks[0]
			if m.Step != 12 || m.Key != "attention" || m.Value != "fused" || m.PID != 7 || m.Seq != seq {
				t.Fatalf("mark %+v (seq %d)", m, seq)
			}
			if fl := st.Children[0].Flags; len(fl) != 1 || fl[0].Value != "fused" {
				t.Fatalf("flags %+v", fl)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ack never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A refused command is a typed Refusal (and the same words as a
	// warning), not a mark.
	seq2, err := sess.Control("qkv", "bogus")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c = <-s.Controls():
	case <-time.After(5 * time.Second):
		t.Fatal("second control never arrived")
	}
	s.Ack(&msg.Control{Op: msg.ControlAck, Seq: c.Seq, Err: "unknown value", Step: -1})
	for {
		st := sess.Snapshot()
		if len(st.Refusals) == 1 {
			want := livestate.Refusal{Seq: seq2, PID: 7, Op: msg.ControlSet, Key: "qkv", Value: "bogus", Err: "unknown value", AtNs: st.Refusals[0].AtNs}
			if st.Refusals[0] != want || seq2 == seq || st.Refusals[0].AtNs == 0 {
				t.Errorf("refusal %+v, want %+v", st.Refusals[0], want)
			}
			if len(st.Marks) != 1 {
				t.Errorf("%d marks after a refusal, want 1", len(st.Marks))
			}
			const text = "child pid 7 refused set qkv=bogus: unknown value"
			if st.Refusals[0].String() != text || len(st.Warnings) != 1 || st.Warnings[0] != text {
				t.Errorf("refusal says %q, warnings %q; want %q", st.Refusals[0].String(), st.Warnings, text)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("refusal never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Close(msg.Bye{}, time.Second)
}

// TestSessionPipe drives a session over an in-memory pipe with a plain
// Writer and a Drops frame.
func TestSessionPipe(t *testing.T) {
	sess := New(Options{})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "cupti", PID: 5})
	k := w.Name("k")
	w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: 10, Dur: 5, TID: -1, PID: 5}})
	w.Drops(msg.Drops{Events: 42, Batches: 1})
	b.Close()
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipe did not end")
	}
	st := sess.Snapshot()
	if st.Dropped != 42 || st.Cumulative.Dropped != 42 || len(st.Cumulative.Kernels) != 1 || st.Cumulative.Kernels[0].TotalNs != 5 {
		t.Fatalf("state %+v", st)
	}
	util := sess.Intern("gpu_util_pct")
	sess.AddCounters([]tracer.Counter{{TS: 5, Name: util, Device: 0, Value: 40}, {TS: 9, Name: util, Device: 0, Value: 75}, {TS: 7, Name: util, Device: 0, Value: 1}})
	if cv := sess.Snapshot().Counters; len(cv) != 1 || cv[0].Value != 75 || cv[0].Name != "gpu_util_pct" {
		t.Fatalf("counters %+v", cv)
	}
	sess.Reset()
	st = sess.Snapshot()
	if len(st.Cumulative.Kernels) != 0 || len(st.Recent.Kernels) != 0 || st.Dropped != 42 || len(st.Children) != 1 {
		t.Fatalf("after Reset: %+v", st)
	}
}

// TestRecordingTruncated cuts a recording at many offsets: the importer
// never fails once a whole frame is present, and keeps a prefix of the
// events.
func TestRecordingTruncated(t *testing.T) {
	sess := New(Options{})
	var buf bytes.Buffer
	if err := sess.Record(&buf); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	sess.AddConn(a)
	s := wire.NewAsyncSender(b, 1<<14)
	sendLoop(s)
	s.Close(msg.Bye{}, 5*time.Second)
	sess.Wait(5 * time.Second)
	sess.Close()
	full := buf.Bytes()
	ref, err := tracefile.Read(bytes.NewReader(full), "full", 0, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Events) != nSteps*9 || len(ref.Warnings) != 0 {
		t.Fatalf("full recording: %d events, warnings %v", len(ref.Events), ref.Warnings)
	}
	step := max(1, len(full)/300)
	lastN := 0
	for cut := 40; cut < len(full); cut += step {
		tr, err := tracefile.Read(bytes.NewReader(full[:cut]), "cut", 0, tracefile.Options{})
		if err != nil {
			// Only a cut before the first whole frame may fail.
			if cut > len(full)/2 {
				t.Logf("cut %d: %v", cut, err)
			}
			if lastN > 0 {
				t.Fatalf("cut %d/%d: %v", cut, len(full), err)
			}
			continue
		}
		if len(tr.Events) < lastN {
			t.Fatalf("cut %d: %d events, fewer than %d at a shorter cut", cut, len(tr.Events), lastN)
		}
		for i := range tr.Events { // a prefix of the full event list
			e, r := tr.Events[i], ref.Events[i]
			e.Ctx, r.Ctx = 0, 0
			if e != r {
				t.Fatalf("cut %d: event %d differs", cut, i)
			}
		}
		lastN = len(tr.Events)
	}
	if lastN == 0 {
		t.Fatal("no cut kept any events")
	}
}

func TestStepsPerSec(t *testing.T) {
	// Two ranks stepping every 100 ms, 0.1 s window: the newest step's
	// rank only — steps ending in [end-0.1 s, end] are the last two
	// (ends 0.45 and 0.55 s; starts 0.40 and 0.50) → 2 / 0.15 s.
	var steps []livestate.StepTime
	for i := range int64(6) {
		for pid := int32(1); pid <= 2; pid++ {
			steps = append(steps, livestate.StepTime{Step: i, PID: pid, StartNs: i * 100e6, DurNs: 50e6})
		}
	}
	if got, want := stepsPerSec(steps, 100e6), 2/0.15; got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("steps/s %v, want %v", got, want)
	}
	// A wide window: all 6 steps of pid 2, from 0 to 0.55 s.
	if got, want := stepsPerSec(steps, 10e9), 6/0.55; got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("steps/s %v, want %v", got, want)
	}
	if stepsPerSec(steps[:1], 10e9) != 0 {
		t.Fatal("one step gives a rate")
	}
}

// TestReplay: a recording replayed into a fresh session gives the same
// totals and steps as the live session that recorded it.
func TestReplay(t *testing.T) {
	live := New(Options{})
	path := filepath.Join(t.TempDir(), "r.rlk")
	if err := live.RecordFile(path); err != nil {
		t.Fatal(err)
	}
	if st := live.Snapshot(); st.Recording == nil || st.Recording.Path != path {
		t.Fatalf("recording %+v", st.Recording)
	}
	a, b := net.Pipe()
	live.AddConn(a)
	s := wire.NewAsyncSender(b, 1<<14)
	sendLoop(s)
	s.Close(msg.Bye{}, 5*time.Second)
	live.Wait(5 * time.Second)
	live.Close() // stops the recording and closes the file

	re := New(Options{})
	defer re.Close()
	if err := re.Replay(path); err != nil {
		t.Fatal(err)
	}
	if !re.Wait(5 * time.Second) {
		t.Fatal("replay did not end")
	}
	st := re.Snapshot()
	checkSnapshot(t, "replay", st.Cumulative)
	if st.StepCount != nSteps || len(st.Children) != 1 || st.Children[0].Hello.PID != pid {
		t.Fatalf("replay state: %d steps, children %+v", st.StepCount, st.Children)
	}
}

// stuckWriter blocks every Write until release is closed.
type stuckWriter struct{ release chan struct{} }

func (w stuckWriter) Write(p []byte) (int, error) { <-w.release; return len(p), nil }

// TestRecordingSlowDisk: a recording whose writer blocks never blocks the
// session; once the backlog is full the recording stops with an error.
func TestRecordingSlowDisk(t *testing.T) {
	sess := New(Options{})
	w := stuckWriter{make(chan struct{})}
	if err := sess.Record(w); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i := range 5000 {
		sess.Meta([]msg.KV{{Key: "k", Value: fmt.Sprint(i)}})
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("5000 frames took %v with the disk stuck", d)
	}
	st := sess.Snapshot()
	if st.Recording == nil || !strings.Contains(st.Recording.Err, "does not keep up") {
		t.Fatalf("recording %+v", st.Recording)
	}
	close(w.release)
	if _, err := sess.StopRecording(); err == nil || !strings.Contains(err.Error(), "does not keep up") {
		t.Fatalf("StopRecording: %v", err)
	}
	sess.Close()
}

// TestRecordingCountsItsSteps: a recording started after the first steps
// (as attach starts one) counts the step events it wrote, not the
// session's: 3 steps before Record, 5 after.
func TestRecordingCountsItsSteps(t *testing.T) {
	data, cut, _, _ := ingestStream("loop", 3, 5)
	s := New(Options{})
	defer s.Close()
	c := &conn{s: s}
	d := wire.NewDecoder(bytes.NewReader(data))
	recording := false
	for {
		if !recording && d.Offset() >= cut {
			if err := s.Record(io.Discard); err != nil {
				t.Fatal(err)
			}
			recording = true
		}
		if err := d.Next(c); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	st := s.Snapshot()
	if st.StepCount != 8 || st.Recording == nil || st.Recording.Steps != 5 {
		t.Fatalf("session %d steps, recording %+v: want 8 and 5", st.StepCount, st.Recording)
	}
}

// TestSnapshotNameIDs: a live session's kernel rows carry their name's id
// in the session's table, the same in the cumulative snapshot and in the
// window, which is aggregated afresh at each rebuild (the views follow
// rows across snapshots by it: views.kernelNames). 40 steps of the loop's
// shape, then 40 more.
func TestSnapshotNameIDs(t *testing.T) {
	data, cut, _, _ := ingestStream("loop", 40, 40)
	now := time.Unix(0, 0)
	s := New(Options{Now: func() time.Time { return now }})
	defer s.Close()
	c := &conn{s: s}
	d := wire.NewDecoder(bytes.NewReader(data))
	ids := map[string]tracer.StrID{}
	check := func(what string, snap *attrib.Snapshot) {
		t.Helper()
		if snap == nil || len(snap.Kernels) == 0 {
			t.Fatalf("%s: no kernel rows", what)
		}
		for _, k := range snap.Kernels {
			if want := s.Intern(k.Name); k.NameID != want {
				t.Errorf("%s: %s has NameID %d, the session's table %d", what, k.Name, k.NameID, want)
			}
			if id, ok := ids[k.Name]; ok && id != k.NameID {
				t.Errorf("%s: %s has NameID %d, %d before", what, k.Name, k.NameID, id)
			}
			ids[k.Name] = k.NameID
		}
	}
	snapped := false
	for {
		if !snapped && d.Offset() >= cut {
			st := s.Snapshot()
			check("cumulative", st.Cumulative)
			check("window", st.Recent)
			snapped = true
			now = now.Add(time.Second) // past the window's least rebuild interval
		}
		if err := d.Next(c); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.link.flush(0)
	s.mu.Unlock()
	st := s.Snapshot()
	check("cumulative after", st.Cumulative)
	check("window after", st.Recent)
}
