package attrib

import (
	"math"
	"testing"
)

func TestCompareMatchesByNameThenDisplayName(t *testing.T) {
	a := &Snapshot{Kernels: []KernelRow{
		{Name: "k1", DisplayName: "k1", Count: 2, TotalNs: 100},
		{Name: "gemm<float, 64>", DisplayName: "gemm", Count: 1, TotalNs: 50},
		{Name: "gemm<float, 32>", DisplayName: "gemm", Count: 1, TotalNs: 30},
		{Name: "onlyA", DisplayName: "onlyA", Count: 1, TotalNs: 7},
	}, Categories: []GroupRow{{Key: "gemm", Count: 2, TotalNs: 80}, {Key: "other", Count: 3, TotalNs: 107}}}
	b := &Snapshot{Kernels: []KernelRow{
		{Name: "k1", DisplayName: "k1", Count: 3, TotalNs: 90},
		{Name: "gemm<half, 128>", DisplayName: "gemm", Count: 4, TotalNs: 200},
		{Name: "onlyB", DisplayName: "onlyB", Count: 5, TotalNs: 11},
	}, Categories: []GroupRow{{Key: "gemm", Count: 4, TotalNs: 200}, {Key: "collective", Count: 1, TotalNs: 5}}}
	d := DiffSnapshots(a, b)
	byKey := map[string]DiffRow{}
	for _, r := range d.Kernels {
		byKey[r.Display] = r
	}
	// Hand-computed: gemm group A = 50+30 = 80 over 2 calls; B = 200 over 4.
	g := byKey["gemm"]
	if g.MatchBy != "display_name" || g.TotalA != 80 || g.TotalB != 200 || g.CountA != 2 || g.CountB != 4 || g.DeltaNs != 120 || g.Ratio != 2.5 {
		t.Fatalf("gemm row = %+v", g)
	}
	if k := byKey["k1"]; k.MatchBy != "name" || k.DeltaNs != -10 || k.Ratio != 0.9 {
		t.Fatalf("k1 row = %+v", k)
	}
	if r := byKey["onlyA"]; r.MatchBy != "only_a" || r.Ratio != 0 || r.DeltaNs != -7 {
		t.Fatalf("onlyA row = %+v", r)
	}
	if r := byKey["onlyB"]; r.MatchBy != "only_b" || !math.IsInf(r.Ratio, 1) || r.CountB != 5 {
		t.Fatalf("onlyB row = %+v", r)
	}
	if d.OnlyA != 1 || d.OnlyB != 1 {
		t.Fatalf("only counts %d %d", d.OnlyA, d.OnlyB)
	}
	// Sorted by |Δ|: gemm 120, other 107 … for categories: gemm +120, other -107, collective +5.
	if d.Kernels[0].Display != "gemm" {
		t.Fatalf("first kernel row %q, want gemm", d.Kernels[0].Display)
	}
	want := []string{"gemm", "other", "collective"}
	for i, w := range want {
		if d.Categories[i].Key != w {
			t.Fatalf("categories order %v", d.Categories)
		}
	}
}
