package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// loopStream encodes n events shaped like the built-in loop's stream: one
// thread, kernels on device 0 (as gotrace stamps them) back to back with
// 0.2–3.2 µs gaps, ~60 kernel names, occasional ranges and steps, in
// batches of batch events.
func loopStream(n, batch int) []byte {
	rng := rand.New(rand.NewPCG(11, 12))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Hello(&msg.Hello{Source: "gotrace", PID: 4242})
	var names []tracer.StrID
	for i := range 60 {
		names = append(names, w.Name(fmt.Sprintf("kernel_%02d", i)))
	}
	evs := make([]tracer.Event, 0, batch)
	t := int64(1_000_000)
	for i := 0; i < n; i++ {
		// One thread runs its kernels one after another, as the built-in
		// loop does: no overlap, a small gap.
		e := tracer.Event{Start: t, Dur: 500 + rng.Int64N(50_000), Name: names[rng.IntN(len(names))],
			Kind: tracer.KindKernel, PID: 4242, TID: 1, Device: 0}
		t += e.Dur + 200 + rng.Int64N(3_000)
		switch {
		case i%500 == 499:
			e.Kind, e.Value, e.Device = tracer.KindStep, int64(i/500), -1
		case i%50 == 49:
			e.Kind, e.Device = tracer.KindRange, -1
		}
		evs = append(evs, e)
		if len(evs) == batch {
			w.Events(evs)
			evs = evs[:0]
		}
	}
	w.Events(evs)
	return buf.Bytes()
}

// BenchmarkDecodeAggregate measures reading frames, decoding events, mapping
// their names into a receiver string table and aggregating them with
// tracer/attrib's incremental API (Aggregator.AddEvents: per-kernel,
// category, stage, step and busy-time accumulation), i.e. everything but
// launch linking (tracer/session's BenchmarkIngest adds that). The
// aggregator is configured as a live session configures it (percentile cap
// 1<<16 per kernel, busy-time seal 60 s). Reports
// events/s (wall) and events/cpu-s (goal: ≥ 20 M per core).
func BenchmarkDecodeAggregate(b *testing.B) {
	const n = 1 << 20
	data := loopStream(n, 4096)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var evs []tracer.Event
	cpu0 := cpuTime()
	for b.Loop() {
		tab := tracer.NewStrings()
		names := NewNames(tab)
		agg := attrib.NewAggregator(nil)
		agg.SetPercentileCap(1 << 16) // as tracer/session configures it
		agg.SetBusySeal(60e9)
		ctxs := []tracer.Context{{Step: -1}}
		r := NewReader(bytes.NewReader(data))
		events := 0
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			switch f.Type {
			case TypeStrings:
				f.Strings(func(id uint32, s []byte) error { names.Define(id, s); return nil })
			case TypeEvents:
				evs, _ = f.Events(evs[:0])
				names.MapEvents(evs)
				agg.AddEvents(evs, tab, ctxs)
				events += len(evs)
			}
		}
		if events != n {
			b.Fatalf("%d events", events)
		}
		if s := agg.Snapshot(); s.Totals.KernelCount == 0 {
			b.Fatal("nothing aggregated")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}

// BenchmarkEncode measures the sender side's encoding (AppendEvents).
func BenchmarkEncode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	evs := make([]tracer.Event, 4096)
	t := int64(0)
	for i := range evs {
		t += 3000
		evs[i] = tracer.Event{Start: t, Dur: rng.Int64N(50_000), Name: tracer.StrID(rng.IntN(60)), Kind: tracer.KindKernel, PID: 1, TID: 1, Device: -1}
	}
	var p []byte
	for b.Loop() {
		p = AppendEvents(p[:0], evs)
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecode is BenchmarkDecodeAggregate without the aggregation: the
// wire layer's own share (read, CRC, decode, name mapping).
func BenchmarkDecode(b *testing.B) {
	const n = 1 << 20
	data := loopStream(n, 4096)
	b.SetBytes(int64(len(data)))
	var evs []tracer.Event
	cpu0 := cpuTime()
	for b.Loop() {
		names := NewNames(tracer.NewStrings())
		r := NewReader(bytes.NewReader(data))
		events := 0
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			switch f.Type {
			case TypeStrings:
				f.Strings(func(id uint32, s []byte) error { names.Define(id, s); return nil })
			case TypeEvents:
				evs, _ = f.Events(evs[:0])
				names.MapEvents(evs)
				events += len(evs)
			}
		}
		if events != n {
			b.Fatalf("%d events", events)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}
