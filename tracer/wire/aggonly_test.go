package wire

import (
	"bytes"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// BenchmarkAggregateOnly is the aggregation share of BenchmarkDecodeAggregate:
// attrib.Aggregator.AddEvents (and one Snapshot) over pre-decoded events.
func BenchmarkAggregateOnly(b *testing.B) {
	const n = 1 << 20
	data := loopStream(n, 4096)
	tab := tracer.NewStrings()
	names := NewNames(tab)
	var all []tracer.Event
	r := NewReader(bytes.NewReader(data))
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		switch f.Type {
		case TypeStrings:
			f.Strings(func(id uint32, s []byte) error { names.Define(id, s); return nil })
		case TypeEvents:
			m := len(all)
			all, _ = f.Events(all)
			names.MapEvents(all[m:])
		}
	}
	ctxs := []tracer.Context{{Step: -1}}
	cpu0 := cpuTime()
	for b.Loop() {
		agg := attrib.NewAggregator(nil)
		for i := 0; i < len(all); i += 4096 {
			agg.AddEvents(all[i:min(i+4096, len(all))], tab, ctxs)
		}
		agg.Snapshot()
	}
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}
