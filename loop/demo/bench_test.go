package demo

import (
	"testing"
)

// BenchmarkLoopStep runs collection steps (with an update every
// UpdateEvery) at DefaultConfig and reports steps/s and each stage's share
// of the step time (stage_<name>_%; "update" amortised over all steps).
func BenchmarkLoopStep(b *testing.B) {
	l, err := New(DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 4; i++ { // warm up: one full update cycle
		if _, err := l.Step(); err != nil {
			b.Fatal(err)
		}
	}
	tot := map[string]int64{}
	var all int64
	defer cpuTimer(b)()
	for b.Loop() {
		st, err := l.Step()
		if err != nil {
			b.Fatal(err)
		}
		for k, v := range st.StageNs {
			tot[k] += v
		}
		all += st.Dur
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	for _, k := range StageNames {
		b.ReportMetric(100*float64(tot[k])/float64(all), "stage_"+k+"_%")
	}
}
