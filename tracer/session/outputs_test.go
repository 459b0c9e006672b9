package session

import (
	"math"
	"net"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestLiveAgentOutputs: the Python agent's per-step outputs reach a live
// session as counter samples (py/rlktop: metric.NAME, check.NAME.rows,
// compile.frames, input.wait_ns); State.Outputs summarises them over the
// steps, as report does for a file, so live findings see NaN checks,
// recompiles and input wait. Three steps of 100 ns; values by hand: loss
// 1.5, 1.2, 0.9 (first 1.5, last 0.9, mean 1.2); NaN rows in step 3 only;
// compile frames 3, 0, 1 (max 3); a GPU-utilisation sample is not an
// output; a sample after the last step belongs to none.
func TestLiveAgentOutputs(t *testing.T) {
	sess := New(Options{LinkDelay: time.Millisecond})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "python", PID: 7})
	step := w.Name("step")
	var evs []tracer.Event
	for i := int64(0); i < 3; i++ {
		evs = append(evs, tracer.Event{Kind: tracer.KindStep, Name: step, Start: 100 * i, Dur: 100, Value: i + 1, PID: 7, Device: -1})
	}
	if err := w.Events(evs); err != nil {
		t.Fatal(err)
	}
	loss, nan, frames, util := w.Name("metric.loss"), w.Name("check.loss.rows"), w.Name(attrib.CompileFramesCounter), w.Name("gpu.util")
	cs := []tracer.Counter{
		{TS: 50, Name: loss, Value: 1.5}, {TS: 150, Name: loss, Value: 1.2}, {TS: 250, Name: loss, Value: 0.9}, {TS: 350, Name: loss, Value: 7},
		{TS: 50, Name: nan, Value: 0}, {TS: 150, Name: nan, Value: 0}, {TS: 250, Name: nan, Value: 2},
		{TS: 50, Name: frames, Value: 3}, {TS: 150, Name: frames, Value: 0}, {TS: 250, Name: frames, Value: 1},
		{TS: 60, Name: util, Value: 99},
	}
	if err := w.Counters(cs); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipe did not end")
	}
	out := sess.Snapshot().Outputs
	by := map[string]attrib.OutputRow{}
	for _, r := range out {
		by[r.Kind+" "+r.Name] = r
	}
	if len(out) != 3 {
		t.Fatalf("%d output rows, want 3 (loss, compile, check): %+v", len(out), out)
	}
	if r := by["metric loss"]; r.Steps != 3 || r.First != 1.5 || r.Last != 0.9 || math.Abs(r.Mean-1.2) > 1e-12 {
		t.Errorf("loss %+v, want 3 steps, 1.5 → 0.9, mean 1.2", r)
	}
	if r := by["check loss"]; r.Steps != 3 || len(r.NaNSteps) != 1 || r.NaNSteps[0] != 3 {
		t.Errorf("check %+v, want NaN rows in step 3 only", r)
	}
	if r := by["compile torch.compile frames"]; r.Steps != 3 || r.Max != 3 || r.Last != 1 {
		t.Errorf("compile %+v, want 3 steps, max 3, last 1", r)
	}
	sess.Reset()
	if out := sess.Snapshot().Outputs; out != nil {
		t.Errorf("after Reset: %+v, want none", out)
	}
}
