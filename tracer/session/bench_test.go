package session

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
)

// BenchmarkIngest measures the session's work per event after decoding:
// name mapping, clock shift, incremental launch linking (kernels held until
// their step ends, then resolved against the thread's ranges) and
// cumulative aggregation — on a stream shaped like the built-in loop's
// (per step: 5 ranges of 99 kernels each, then the step).
func BenchmarkIngest(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const perRange, ranges = 99, 5
	var batches [][]tracer.Event
	names := make([]tracer.StrID, 60)
	for i := range names {
		names[i] = tracer.StrID(i + 1)
	}
	t := int64(0)
	for step := range 200 {
		var batch []tracer.Event
		st := t
		for r := range ranges {
			rs := t
			for range perRange {
				t += 2000
				batch = append(batch, tracer.Event{Kind: tracer.KindKernel, Name: names[rng.IntN(len(names))], Start: t, Dur: 1500, PID: 1, TID: 1})
			}
			t += 2000
			batch = append(batch, tracer.Event{Kind: tracer.KindRange, Name: names[r], Start: rs, Dur: t - rs, PID: 1, TID: 1, Device: -1})
		}
		t += 1000
		batch = append(batch, tracer.Event{Kind: tracer.KindStep, Name: names[59], Start: st, Dur: t - st, Value: int64(step), PID: 1, TID: 1, Device: -1})
		batches = append(batches, batch)
	}
	events := 0
	for _, bt := range batches {
		events += len(bt)
	}
	buf := make([]tracer.Event, 0, 1024)
	cpu0 := cpuTime()
	for b.Loop() {
		s := New(Options{})
		c := &conn{s: s}
		names := wire.NewNames(s.strs)
		for i := range 60 {
			names.Define(uint32(i+1), fmt.Appendf(nil, "kernel_%02d", i))
		}
		for _, bt := range batches {
			buf = append(buf[:0], bt...)
			// What wire.Decoder does after decoding, then the sink.
			c.Events(buf, names.MapEvents(buf))
		}
		if s.cum.Snapshot().Totals.KernelCount != int64(200*ranges*perRange) {
			b.Fatal("kernels missing")
		}
		s.Close()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}

// BenchmarkSocketEndToEnd sends loop-shaped batches through an AsyncSender
// over a real Unix socket into a Session and waits until all were ingested
// (linked and aggregated). The producer retries a dropped batch after a
// yield, so the figure is the path's sustained throughput (events/s, wall,
// both ends on this machine's cores; events/cpu-s: per CPU-second of the
// whole process, sender, socket and session together).
func BenchmarkSocketEndToEnd(b *testing.B) {
	const steps, perStep = 200, 500
	var batches [][]tracer.Event
	t := int64(0)
	for step := range steps {
		var batch []tracer.Event
		st := t
		for i := range perStep - 2 {
			t += 2000
			batch = append(batch, tracer.Event{Kind: tracer.KindKernel, Name: tracer.StrID(1 + i%50), Start: t, Dur: 1500, PID: 1, TID: 1})
		}
		t += 1000
		batch = append(batch,
			tracer.Event{Kind: tracer.KindRange, Name: 51, Start: st, Dur: t - st, PID: 1, TID: 1, Device: -1},
			tracer.Event{Kind: tracer.KindStep, Name: 52, Start: st, Dur: t - st, Value: int64(step), PID: 1, TID: 1, Device: -1})
		batches = append(batches, batch)
	}
	const total = steps * perStep
	cpu0 := cpuTime()
	for b.Loop() {
		sess := New(Options{})
		addr, err := sess.Listen()
		if err != nil {
			b.Fatal(err)
		}
		conn, err := wire.Dial(addr, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		s := wire.NewAsyncSender(conn, 1<<16)
		s.Hello(&wire.Hello{Source: "bench", PID: 1})
		for i := 1; i <= 52; i++ {
			s.Name(fmt.Sprintf("name_%d", i))
		}
		for _, bt := range batches {
			for !s.Send(bt) {
				runtime.Gosched()
			}
		}
		s.Close(wire.Bye{}, 30*time.Second)
		sess.Wait(30 * time.Second)
		if st := sess.Snapshot(); st.Events != total {
			b.Fatalf("ingested %d of %d", st.Events, total)
		}
		sess.Close()
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(total)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}
