package session

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// BenchmarkIngest measures the session's work per event from the bytes of
// a stream: frame reading and decoding, name mapping and clock shift
// (wire.Decoder, as a connection's serving goroutine runs it), incremental
// launch linking (kernels held until their step ends, then resolved
// against the thread's ranges) and cumulative aggregation, on two stream
// shapes, one frame per step:
//
//   - loop: the built-in loop's (gotrace): per step 5 ranges of 99 kernels
//     each on the launching thread, then the step;
//   - cupti: a CUDA process's (the injection library): per step 5 NVTX
//     ranges of 99 launches each, every launch a runtime call and its
//     kernel joined by correlation id (kernels on no thread), then the step.
//
// Each iteration starts a session (default options) and feeds it 10,000
// steps (5 M events of the loop's shape). events/cpu-s is the steady
// state a long session runs in: the events of the last 1,000 steps per
// CPU-second of the whole process (GC included) while they are ingested,
// after 9,000 steps have filled the window to its bound
// (Options.RecentMaxEvents), the kernels' kept durations to the
// percentile cap (1<<16 a kernel: 60 kernels here) and the busy-time
// union to its bound of kept gaps (busyKeptMax in tracer/attrib: the
// stream packs 500 GPU ops into a millisecond of trace, far inside the
// 60 s seal lag), and grown the tables; cold-events/cpu-s counts every
// step, the session's start included.
func BenchmarkIngest(b *testing.B) {
	for _, shape := range []string{"loop", "cupti"} {
		b.Run(shape, func(b *testing.B) {
			const warm, measured = 9000, 1000
			data, cut, events, kernels := ingestStream(shape, warm, measured)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var steady time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				s := New(Options{})
				c := &conn{s: s}
				d := wire.NewDecoder(bytes.NewReader(data))
				var at time.Duration
				for {
					if at == 0 && d.Offset() >= cut {
						at = cpuTime()
					}
					if err := d.Next(c); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
				steady += cpuTime() - at
				s.mu.Lock()
				s.link.flush(0)
				s.mu.Unlock()
				if n := s.cum.Snapshot().Totals.KernelCount; n != int64(kernels) {
					b.Fatalf("%d of %d kernels", n, kernels)
				}
				s.Close()
			}
			all := events * (warm + measured) / measured
			b.ReportMetric(float64(events)*float64(b.N)/steady.Seconds(), "events/cpu-s")
			b.ReportMetric(float64(all)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "cold-events/cpu-s")
			b.ReportMetric(float64(all)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// ingestStream encodes the stream of BenchmarkIngest's shape (hello,
// names, one Events frame per step) of warm then measured steps and
// returns its bytes, the offset of the first measured step's frame, the
// measured steps' event count and the kernel count of all.
func ingestStream(shape string, warm, measured int) (data []byte, cut int64, events, kernels int) {
	rng := rand.New(rand.NewPCG(1, 2))
	const perRange, ranges = 99, 5
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.Hello(&msg.Hello{Source: "bench", PID: 1, ClockOffsetNs: 1_700_000_000_000_000_000})
	names := make([]tracer.StrID, 60)
	for i := range names {
		names[i] = w.Name(fmt.Sprintf("kernel_%02d", i))
	}
	launch := w.Name("cudaLaunchKernel")
	var batch []tracer.Event
	t, corr := int64(0), uint64(0)
	for step := range warm + measured {
		if step == warm {
			w.Flush()
			cut = int64(buf.Len())
		}
		batch = batch[:0]
		st := t
		for r := range ranges {
			rs := t
			for range perRange {
				t += 2000
				k := tracer.Event{Kind: tracer.KindKernel, Name: names[rng.IntN(len(names))], Start: t, Dur: 1500, PID: 1, TID: 1}
				if shape == "cupti" {
					corr++
					batch = append(batch, tracer.Event{Kind: tracer.KindRuntime, Name: launch, Start: t - 1000, Dur: 800, PID: 1, TID: 1, Device: -1, Corr: corr})
					k.TID, k.Stream, k.Corr = -1, 7, corr
				}
				batch = append(batch, k)
				kernels++
			}
			t += 2000
			batch = append(batch, tracer.Event{Kind: tracer.KindRange, Name: names[r], Start: rs, Dur: t - rs, PID: 1, TID: 1, Device: -1})
		}
		t += 1000
		batch = append(batch, tracer.Event{Kind: tracer.KindStep, Name: names[59], Start: st, Dur: t - st, Value: int64(step), PID: 1, TID: 1, Device: -1})
		w.Events(batch)
		if step >= warm {
			events += len(batch)
		}
	}
	return buf.Bytes(), cut, events, kernels
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
		s.Hello(&msg.Hello{Source: "bench", PID: 1})
		for i := 1; i <= 52; i++ {
			s.Name(fmt.Sprintf("name_%d", i))
		}
		for _, bt := range batches {
			for !s.Send(bt) {
				runtime.Gosched()
			}
		}
		s.Close(msg.Bye{}, 30*time.Second)
		sess.Wait(30 * time.Second)
		if st := sess.Snapshot(); st.Events != total {
			b.Fatalf("ingested %d of %d", st.Events, total)
		}
		sess.Close()
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(total)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}
