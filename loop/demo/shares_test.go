package demo

import (
	"os"
	"sort"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
)

// TestKernelShares (RLK_SHARES=1 to run) steps the default loop 16 times
// and logs each kernel's share of the traced kernel time and each stage's
// share of step time, from the gotrace events.
func TestKernelShares(t *testing.T) {
	if os.Getenv("RLK_SHARES") == "" {
		t.Skip("set RLK_SHARES=1 to measure kernel shares at the default size")
	}
	tr := gotrace.New(1 << 16)
	l, err := New(DefaultConfig(), tr)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		l.Step()
	}
	tr.Drain(func([]tracer.Event) {})
	kern, rng := map[string]int64{}, map[string]int64{}
	var steps, stepNs int64
	var all []float64
	for i := 0; i < 16; i++ {
		if _, err := l.Step(); err != nil {
			t.Fatal(err)
		}
		tr.Drain(func(b []tracer.Event) {
			for _, e := range b {
				n := tr.NameOf(gotrace.NameID(e.Name))
				switch e.Kind {
				case tracer.KindKernel:
					kern[n] += e.Dur
				case tracer.KindRange:
					rng[n] += e.Dur
				case tracer.KindStep:
					steps++
					stepNs += e.Dur
					all = append(all, float64(e.Dur))
				}
			}
		})
	}
	sort.Float64s(all)
	t.Logf("%d steps, mean %.1f ms, median %.1f ms", steps, float64(stepNs)/float64(steps)/1e6, all[len(all)/2]/1e6)
	var tot int64
	for _, v := range kern {
		tot += v
	}
	type kv struct {
		k string
		v int64
	}
	var ks []kv
	for k, v := range kern {
		ks = append(ks, kv{k, v})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].v > ks[j].v })
	for _, p := range ks {
		t.Logf("kernel %-20s %6.2f%%  %8.2f ms/step", p.k, 100*float64(p.v)/float64(tot), float64(p.v)/float64(steps)/1e6)
	}
	for _, s := range append(StageNames, "update.forward", "update.backward", "update.optimizer") {
		t.Logf("stage %-18s %6.2f%% of step time", s, 100*float64(rng[s])/float64(stepNs))
	}
}
