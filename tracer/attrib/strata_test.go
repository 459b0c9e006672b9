package attrib

import (
	"math/rand/v2"
	"testing"
)

// A schedule that gives each arm 15 short collection steps and 5 long update
// steps (the built-in loop's update_every = 4): with the strata known, the
// bootstrap keeps that mix in every resample, and a 30% faster collection
// step is found; the interval is narrow. Values are drawn from a seeded
// source: collection 100 ms (B: 70 ms) ± 5%, update 600 ms ± 5%.
func TestStrataKeepStepMix(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	mk := func(collect int64) ArmSteps {
		a := ArmSteps{Valid: true}
		for i := 0; i < 20; i++ {
			base, st := collect, int32(0)
			if i%4 == 3 {
				base, st = 600_000_000, 1
			}
			jitter := 1 + (rng.Float64()-0.5)*0.1
			a.StepNs = append(a.StepNs, int64(float64(base)*jitter))
			a.Strata = append(a.Strata, st)
		}
		return a
	}
	a, b := mk(100_000_000), mk(70_000_000)
	c := CompareArms(a, b, nil, StatsOptions{})
	// Hand reasoning: both medians fall among the 15 collection steps, so the
	// ratio is about 0.70; a resample keeps 15 of them, so the interval stays
	// within ±10% of it.
	if c.Verdict != VerdictFaster || c.Ratio.Value < 0.6 || c.Ratio.Value > 0.8 || c.Ratio.CIHigh > 0.8 || c.Ratio.CILow < 0.6 {
		t.Fatalf("stratified: verdict %q ratio %+v, want faster near 0.70 with a CI inside [0.6, 0.8]", c.Verdict, c.Ratio)
	}
	// Without strata the resampled mix varies and the interval widens.
	a.Strata, b.Strata = nil, nil
	u := CompareArms(a, b, nil, StatsOptions{})
	if u.Ratio.CIHigh-u.Ratio.CILow <= c.Ratio.CIHigh-c.Ratio.CILow {
		t.Fatalf("unstratified CI %+v is not wider than stratified %+v", u.Ratio, c.Ratio)
	}
	// Misaligned strata are ignored, not trusted.
	a.Strata = []int32{0}
	if got := a.strata(); got != nil {
		t.Fatalf("misaligned strata used: %v", got)
	}
}
