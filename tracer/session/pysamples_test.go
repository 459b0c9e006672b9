package session

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestSessionPySamples: Python samples sent over a connection show in the
// live snapshot's profile (cumulative and window), go into a recording
// that started after the first batch (its stacks defined again with the
// recorder's ids) and read back from it the same: the second batch's 4
// samples of main→env_step→play_move (stage env_step, 2 steps), counted
// by hand.
func TestSessionPySamples(t *testing.T) {
	sess := New(Options{})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "pyagent", PID: 9})
	w.Define(1, "main")
	w.Define(2, "train.py")
	w.Define(3, "play_move")
	w.Define(4, "game.py")
	w.Define(5, "env_step")
	frames := []wire.PyFrameDef{{ID: 1, Frame: tracer.PyFrame{Func: 1, File: 2, FirstLine: 1}}, {ID: 2, Frame: tracer.PyFrame{Func: 3, File: 4, FirstLine: 88, Line: 90}}}
	stacks := []wire.PyStackDef{{ID: 1, Frame: 1}, {ID: 2, Parent: 1, Frame: 2}}
	smp := func(ts int64, step int64) tracer.PySample {
		return tracer.PySample{TS: ts, TID: 9, Stack: 2, Step: step, Stage: 5, StepStage: 5, StepThread: true, WeightNs: 10e6}
	}
	w.PySamples(&wire.PyBatch{PID: 9, PeriodNs: 10e6, Frames: frames, Stacks: stacks, Samples: []tracer.PySample{smp(1e9, 1)}})
	w.Events([]tracer.Event{{Kind: tracer.KindStep, Name: w.Name("step"), Start: 1e9, Dur: 1e8, Value: 1, PID: 9, TID: 9}})
	// Wait for the first batch, then record.
	deadline := time.Now().Add(5 * time.Second)
	for sess.Snapshot().Cumulative.Python == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var rec bytes.Buffer
	if err := sess.Record(&rec); err != nil {
		t.Fatal(err)
	}
	w.PySamples(&wire.PyBatch{PID: 9, PeriodNs: 10e6, Dropped: 2, Samples: []tracer.PySample{smp(11e8, 2), smp(12e8, 2), smp(13e8, 3), smp(14e8, 3)}})
	w.Events([]tracer.Event{{Kind: tracer.KindStep, Name: w.Name("step"), Start: 11e8, Dur: 2e8, Value: 2, PID: 9, TID: 9},
		{Kind: tracer.KindStep, Name: w.Name("step"), Start: 13e8, Dur: 2e8, Value: 3, PID: 9, TID: 9}})
	b.Close()
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipe did not end")
	}
	st := sess.Snapshot()
	p := st.Cumulative.Python
	if p == nil || p.Samples != 5 || p.Steps != 3 || p.Dropped != 2 || st.Recent.Python == nil || st.Recent.Python.Samples != 5 {
		t.Fatalf("live profile %+v, window %+v", p, st.Recent.Python)
	}
	fr := p.Functions("env_step")
	if len(fr) != 2 || fr[0].Function != "play_move" || fr[0].Self != 5 || fr[0].Where() != "game.py:88" || fr[1].Function != "main" || fr[1].Total != 5 {
		t.Fatalf("env_step rows %+v", fr)
	}
	if _, err := sess.StopRecording(); err != nil {
		t.Fatal(err)
	}
	tr, err := tracefile.Read(bytes.NewReader(rec.Bytes()), "rec", 0, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.PySamples) != 4 || tr.PyPeriodNs != 10e6 || tr.PyDropped != 2 {
		t.Fatalf("recording: %d samples, period %d, dropped %d", len(tr.PySamples), tr.PyPeriodNs, tr.PyDropped)
	}
	for _, s := range tr.PySamples {
		var names []string
		tr.PyStacks.Walk(s.Stack, func(f tracer.PyFrame) bool { names = append(names, tr.Strings.Get(f.Func)); return true })
		if strings.Join(names, "<") != "play_move<main" || tr.Strings.Get(s.Stage) != "env_step" || !s.StepThread || s.PID != 9 || s.WeightNs != 10e6 {
			t.Errorf("recorded sample %+v: stack %v stage %q", s, names, tr.Strings.Get(s.Stage))
		}
	}
}
