package demo

import (
	"math"
	"testing"
)

// TestProbeArms: the probe is deterministic, identical bit for bit between
// head=materialized and head=gatherdot (same dot products), and within
// float32 rounding between attention=math and attention=fused.
func TestProbeArms(t *testing.T) {
	base := smallCfg()
	run := func(k, v string) []float32 {
		c := base
		if err := c.ParseFlag(k, v); err != nil {
			t.Fatal(err)
		}
		p, err := Probe(c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := run("head", "materialized"), run("head", "gatherdot")
	if d := CompareProbe(a, b); !d.Bitwise || d.NaN != 0 {
		t.Fatalf("head arms differ: %+v", d)
	}
	if d := CompareProbe(a, run("head", "materialized")); !d.Bitwise {
		t.Fatalf("probe not deterministic: %+v", d)
	}
	m, f := run("attention", "math"), run("attention", "fused")
	d := CompareProbe(m, f)
	t.Logf("attention math vs fused probe: %+v", d)
	if d.NaN != 0 || d.MaxAbs > 1e-4 || d.Len < ProbeBoards+1 {
		t.Fatalf("attention arms: %+v", d)
	}
	if ULPDistance(1, math.Nextafter32(1, 2)) != 1 || ULPDistance(float32(math.Copysign(0, -1)), 0) != 0 || ULPDistance(-1, 1) != 2*int64(math.Float32bits(1)) {
		t.Fatal("ULPDistance")
	}
}
