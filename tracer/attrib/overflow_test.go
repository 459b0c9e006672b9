package attrib

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestAddSatAgainstBig checks addSat and subSat against math/big: the
// exact result when it fits in int64, else the nearer bound.
func TestAddSatAgainstBig(t *testing.T) {
	vals := []int64{0, 1, -1, 5e18, -5e18, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 4611686018427387904}
	clamp := func(z *big.Int) int64 {
		if z.Cmp(big.NewInt(math.MaxInt64)) > 0 {
			return math.MaxInt64
		}
		if z.Cmp(big.NewInt(math.MinInt64)) < 0 {
			return math.MinInt64
		}
		return z.Int64()
	}
	for _, x := range vals {
		for _, y := range vals {
			bx, by := big.NewInt(x), big.NewInt(y)
			if got, want := addSat(x, y), clamp(new(big.Int).Add(bx, by)); got != want {
				t.Errorf("addSat(%d, %d) = %d, want %d", x, y, got, want)
			}
			if got, want := subSat(x, y), clamp(new(big.Int).Sub(bx, by)); got != want {
				t.Errorf("subSat(%d, %d) = %d, want %d", x, y, got, want)
			}
		}
	}
}

// TestOverflowSaturatesAndWarns: two kernels of 5e18 ns sum to 1e19 ns,
// past 2^63-1 (9,223,372,036,854,775,807). A sum once printed a
// negative kernel time; every sum must instead stop at 2^63-1 and the
// snapshot must say which sums did.
func TestOverflowSaturatesAndWarns(t *testing.T) {
	build := func(dur int64) *Snapshot {
		tr := tracer.NewTrace("test", "overflow.json")
		big, small := tr.Strings.Intern("huge_kernel"), tr.Strings.Intern("small_kernel")
		tr.Events = []tracer.Event{
			{Kind: tracer.KindKernel, Name: big, Start: 0, Dur: dur, Device: 0, TID: -1},
			{Kind: tracer.KindKernel, Name: big, Start: dur, Dur: dur, Device: 0, TID: -1},
			{Kind: tracer.KindKernel, Name: small, Start: 0, Dur: 10, Device: 1, TID: -1},
		}
		tr.Devices = []tracer.Device{{ID: 0, Name: "GPU0"}, {ID: 1, Name: "GPU1"}}
		a := NewAggregator(nil)
		a.AddTrace(tr)
		return a.Snapshot()
	}
	const maxNs = math.MaxInt64

	s := build(5e18)
	tt := s.Totals
	// True values: kernel total 1e19+10, busy 1e19+10, span 1e19 — all past
	// 2^63-1, so each is the maximum.
	for name, v := range map[string]int64{"KernelTotalNs": tt.KernelTotalNs, "GPUTotalNs": tt.GPUTotalNs,
		"BusyNs": tt.GPUBusyNs, "KernelBusyNs": tt.KernelBusyNs, "SpanNs": tt.SpanNs} {
		if v != maxNs {
			t.Errorf("%s = %d, want %d (saturated)", name, v, int64(maxNs))
		}
	}
	if len(s.Kernels) != 2 || s.Kernels[0].Name != "huge_kernel" || s.Kernels[0].TotalNs != maxNs ||
		s.Kernels[0].MeanNs != maxNs/2 || s.Kernels[1].TotalNs != 10 {
		t.Errorf("kernel rows %+v", s.Kernels)
	}
	for _, k := range s.Kernels {
		if k.TotalNs < 0 || k.Share < 0 || k.Share > 1 {
			t.Errorf("row %q: total %d share %g", k.Name, k.TotalNs, k.Share)
		}
	}
	for _, g := range append(s.Categories, s.Stages...) {
		if g.TotalNs < 0 {
			t.Errorf("group %q total %d", g.Key, g.TotalNs)
		}
	}
	var warn string
	for _, w := range s.Warnings {
		if strings.Contains(w, "int64 overflow") {
			warn = w
		}
	}
	t.Logf("warning: %s", warn)
	for _, want := range []string{"the kernel total", "the GPU total", "the busy time", "the kernel busy time", "the span", `kernel "huge_kernel"'s total`, "9223372036854775807 ns"} {
		if !strings.Contains(warn, want) {
			t.Errorf("overflow warning %q lacks %q", warn, want)
		}
	}
	if strings.Contains(warn, "small_kernel") {
		t.Errorf("overflow warning names a kernel that did not overflow: %q", warn)
	}

	// Just below: 2 × 4e18 + 10 fits; exact sums and no warning.
	s = build(4e18)
	if s.Totals.KernelTotalNs != 8e18+10 || s.Totals.GPUBusyNs != 8e18+10 || s.Totals.SpanNs != 8e18 {
		t.Errorf("4e18 case totals %+v", s.Totals)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "overflow") {
			t.Errorf("warning without an overflow: %q", w)
		}
	}
}
