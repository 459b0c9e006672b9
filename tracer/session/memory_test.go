package session

import (
	"net"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestSessionMemoryWaitsForStep: a tracer's Memory frame arrives before
// the range around it and the step (sources send intervals when they
// end); the session holds it until the step has ended, so the
// allocation gets its stage "forward" and step 1, as a kernel launched
// there would; the free after the step waits until the process goes.
func TestSessionMemoryWaitsForStep(t *testing.T) {
	sess := New(Options{})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	w.Hello(&msg.Hello{Source: "gotrace", PID: 5})
	w.Memory([]tracer.MemEvent{
		{TS: 150, Bytes: 4096, Addr: 1, Allocated: -1, Reserved: -1, PID: 5, TID: 9, Device: 0},
		{TS: 250, Bytes: -4096, Addr: 1, Allocated: -1, Reserved: -1, PID: 5, TID: 9, Device: 0},
		{TS: 400, Bytes: 8, Addr: 2, Allocated: -1, Reserved: -1, PID: 5, TID: 9, Device: 0},
	})
	fwd, step := w.Name("forward"), w.Name("step")
	w.Events([]tracer.Event{
		{Kind: tracer.KindRange, Name: fwd, Start: 100, Dur: 100, PID: 5, TID: 9, Device: -1},
		{Kind: tracer.KindStep, Name: step, Start: 0, Dur: 300, Value: 1, PID: 5, TID: 9, Device: -1},
	})
	w.Flush()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := sess.Snapshot().Cumulative.Memory
		if m != nil && len(m.Temporaries) == 1 {
			tp := m.Temporaries[0]
			if tp.Stage != "forward" || tp.Bytes != 4096 || tp.Count != 1 || m.Events != 2 {
				t.Fatalf("temporaries %+v, %d events: want 4096 bytes in stage forward, the late event still waiting", m.Temporaries, m.Events)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no memory model: %+v", m)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Close()
	if !sess.Wait(5 * time.Second) {
		t.Fatal("pipe did not end")
	}
	if m := sess.Snapshot().Cumulative.Memory; m == nil || m.Events != 3 {
		t.Fatalf("after the process went: %+v, want all 3 events", m)
	}
}
