package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// loopStream encodes n events shaped like the built-in loop's stream: one
// thread, ~60 kernel names, monotonic starts a few µs apart, occasional
// ranges and steps, in batches of batch events.
func loopStream(n, batch int) []byte {
	rng := rand.New(rand.NewPCG(11, 12))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Hello(&Hello{Source: "gotrace", PID: 4242})
	var names []tracer.StrID
	for i := range 60 {
		names = append(names, w.Name(fmt.Sprintf("kernel_%02d", i)))
	}
	evs := make([]tracer.Event, 0, batch)
	t := int64(1_000_000)
	for i := 0; i < n; i++ {
		t += 2_000 + rng.Int64N(3_000)
		e := tracer.Event{Start: t, Dur: 500 + rng.Int64N(50_000), Name: names[rng.IntN(len(names))],
			Kind: tracer.KindKernel, PID: 4242, TID: 1, Device: -1}
		switch {
		case i%500 == 499:
			e.Kind, e.Value = tracer.KindStep, int64(i/500)
		case i%50 == 49:
			e.Kind = tracer.KindRange
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
// their names into a receiver string table and aggregating them. The
// aggregation here is a per-name sum of count and duration for kernels (a
// slice indexed by name id), because tracer/attrib had no incremental
// aggregator when this was written; tracer/session benchmarks the full
// path. Reports events/s (goal: ≥ 20 M per core).
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
		var count, total []int64
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
				for len(count) < tab.Len() {
					count, total = append(count, 0), append(total, 0)
				}
			case TypeEvents:
				evs, _ = f.Events(evs[:0])
				names.MapEvents(evs)
				for i := range evs {
					e := &evs[i]
					if e.Kind == tracer.KindKernel {
						count[e.Name]++
						total[e.Name] += e.Dur
					}
				}
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
