package demo

import (
	"sort"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
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

// BenchmarkTracerOverhead alternates traced and untraced steps at
// DefaultConfig (tracer enabled for 4 steps, disabled for 4, …; the
// ring drained after each step as the wire client would) and reports the
// median step of each and the overhead in percent, on wall time and on
// process CPU time (the shared machine's load inflates wall time).
func BenchmarkTracerOverhead(b *testing.B) {
	tr := gotrace.New(1 << 16)
	l, err := New(DefaultConfig(), tr)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := l.Step(); err != nil {
			b.Fatal(err)
		}
	}
	tr.Drain(func([]tracer.Event) {})
	var wall, cpu [2][]float64
	var events int
	i := 0
	for b.Loop() {
		// Blocks of UpdateEvery (4) steps alternate traced / untraced, so
		// each arm gets the same share of update steps.
		on := (i/4)%2 == 0
		tr.Enable(on)
		c0 := processCPU()
		st, err := l.Step()
		if err != nil {
			b.Fatal(err)
		}
		c1 := processCPU()
		n := tr.Drain(func([]tracer.Event) {})
		k := 1
		if on {
			k = 0
			events += n
		}
		wall[k] = append(wall[k], float64(st.Dur))
		cpu[k] = append(cpu[k], float64(c1-c0))
		i++
	}
	if len(wall[1]) == 0 {
		return
	}
	med := func(x []float64) float64 { sort.Float64s(x); return x[len(x)/2] }
	wt, wu := med(wall[0]), med(wall[1])
	ct, cu := med(cpu[0]), med(cpu[1])
	b.ReportMetric(wt, "traced_median_ns")
	b.ReportMetric(wu, "untraced_median_ns")
	b.ReportMetric(100*(wt-wu)/wu, "overhead_wall_%")
	b.ReportMetric(100*(ct-cu)/cu, "overhead_cpu_%")
	mean := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	b.ReportMetric(100*(mean(cpu[0])-mean(cpu[1]))/mean(cpu[1]), "overhead_cpu_mean_%")
	b.ReportMetric(float64(events)/float64(len(wall[0])), "events/step")
}
