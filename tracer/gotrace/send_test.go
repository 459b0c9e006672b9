package gotrace

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// lockedBuf is a connection that keeps what the sender writes (its
// reads end at once: no controls).
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) Read([]byte) (int, error) { return 0, io.EOF }

// TestSendsThroughSender: a tracer naming with a sender and attached to
// it sends its events from its own ring in the stream's ids — 300 kernels
// and 3 steps through a sender whose own ring holds 16 — each named as
// registered, in order, and the Bye after them.
func TestSendsThroughSender(t *testing.T) {
	conn := &lockedBuf{}
	tr := New(1024)
	s := wire.NewAsyncSender(conn, 16)
	s.Hello(&msg.Hello{Source: "gotrace", PID: 1})
	if err := tr.NameWith(s); err != nil {
		t.Fatal(err)
	}
	s.AttachEvents(tr)
	ks := []NameID{tr.Name("k0"), tr.Name("k1"), tr.Name("k2")}
	for step := range 3 {
		tr.StepBegin(int64(step))
		for i := range 100 {
			tr.Kernel(ks[i%3], tr.Now())
		}
		tr.StepEnd()
		s.Notify()
	}
	// Flush waits for the tracer's events too.
	if err := s.Flush(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	flushed := bytes.Count(conn.b.Bytes(), []byte("k0"))
	n := conn.b.Len()
	conn.mu.Unlock()
	if err := s.Close(msg.Bye{Reason: "exit"}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	data := conn.b.Bytes()
	conn.mu.Unlock()
	if flushed != 1 || len(data)-n > 100 {
		t.Fatalf("after Flush %d of %d bytes were written (the rest: the Bye)", n, len(data))
	}
	names := map[uint32]string{}
	var got []string
	bye := false
	r := wire.NewReader(bytes.NewReader(data))
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if bye {
			t.Fatalf("frame %v after the Bye", f.Type)
		}
		switch f.Type {
		case wire.TypeStrings:
			f.Strings(func(id uint32, s []byte) error { names[id] = string(s); return nil })
		case wire.TypeEvents:
			evs, err := f.Events(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Kind == tracer.KindStep {
					got = append(got, "step:"+names[uint32(e.Name)])
				} else {
					got = append(got, names[uint32(e.Name)])
				}
			}
		case wire.TypeBye:
			bye = true
		}
	}
	var want []string
	for range 3 {
		for i := range 100 {
			want = append(want, []string{"k0", "k1", "k2"}[i%3])
		}
		want = append(want, "step:step")
	}
	if !bye || len(got) != len(want) {
		t.Fatalf("bye %v, %d events, want %d", bye, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d named %q, want %q", i, got[i], want[i])
		}
	}
	if d := s.Dropped(); d.Events != 0 || tr.Dropped() != 0 {
		t.Fatalf("dropped: sender %+v, tracer %d", d, tr.Dropped())
	}
}

// TestNameWithRefusesUsedTracer: a tracer whose names would get other ids
// from the sender is refused.
func TestNameWithRefusesUsedTracer(t *testing.T) {
	tr := New(16)
	s := wire.NewAsyncSender(&lockedBuf{}, 16)
	s.Name("taken") // id 1, which the tracer's "step" has
	if err := tr.NameWith(s); err == nil {
		t.Fatal("NameWith accepted a sender whose ids differ")
	}
}

// discardConn is a connection that drops what is written to it.
type discardConn struct{}

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }
func (discardConn) Read([]byte) (int, error)    { return 0, io.EOF }

// BenchmarkChildSend measures the traced process's whole cost per event
// of the built-in loop's path to the socket (recording, handing over,
// encoding and writing, on both goroutines; a connection that discards):
// attached, the sender's writer drains the tracer's ring (NameWith,
// AttachEvents); relay, each step's batch is drained into a wire.Relay,
// which remaps its names and copies it into the sender's own ring (the
// path before). Per step 500 kernels of 50 names, then the sender woken;
// every 32 steps a Flush, so that the recording waits for the writer and
// nothing is dropped (dropped/event says so).
func BenchmarkChildSend(b *testing.B) {
	for _, mode := range []string{"attached", "relay"} {
		b.Run(mode, func(b *testing.B) {
			tr := New(1 << 16)
			s := wire.NewAsyncSender(discardConn{}, 1<<16)
			s.Hello(&msg.Hello{Source: "gotrace", PID: 1})
			var relay *wire.Relay
			if mode == "attached" {
				if err := tr.NameWith(s); err != nil {
					b.Fatal(err)
				}
				s.AttachEvents(tr)
			} else {
				relay = wire.NewRelay(s, 0)
			}
			var ks []NameID
			for i := range 50 {
				ks = append(ks, tr.Name(fmt.Sprint("kernel_", i)))
			}
			const perStep = 500
			cpu0 := cpuTime()
			for step := 0; b.Loop(); step++ {
				tr.StepBegin(0)
				at := tr.Now()
				for i := range perStep {
					at = tr.Kernel(ks[i%len(ks)], at)
				}
				tr.StepEnd()
				if relay != nil {
					tr.Drain(func(batch []tracer.Event) { relay.Send(tr.Names(relay.Known()), batch) })
				}
				s.Notify()
				if step%32 == 31 { // keep up with the writer: no drops
					s.Flush(10 * time.Second)
				}
			}
			s.Close(msg.Bye{}, 10*time.Second)
			n := float64(b.N) * (perStep + 1)
			b.ReportMetric(n/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
			b.ReportMetric(float64(s.Dropped().Events+tr.Dropped())/n, "dropped/event")
		})
	}
}
