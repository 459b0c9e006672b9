package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestWriteDiffText: a hand-made diff; every expected cell worked out by
// hand (B/A 1,500,000 / 999,700 = 1.50045 → "1.500"; 999,700 ns is
// "1.00 ms", the unit after rounding).
func TestWriteDiffText(t *testing.T) {
	d := &attrib.Diff{A: "a.json", B: "b.json",
		TotalsA: attrib.Totals{KernelCount: 3, GPUTotalNs: 999_700},
		TotalsB: attrib.Totals{KernelCount: 4, GPUTotalNs: 1_500_000},
		OnlyB:   1,
		Kernels: []attrib.DiffRow{
			{Key: "gemm<float>|x", Display: "gemm<float>|x", MatchBy: "name", CountA: 3, CountB: 3, TotalA: 999_700, TotalB: 1_000_000, DeltaNs: 300, Ratio: 1_000_000.0 / 999_700},
			{Key: "new_kernel", Display: "new_kernel", MatchBy: "only_b", CountB: 1, TotalB: 500_000, DeltaNs: 500_000},
		}}
	var b strings.Builder
	if err := WriteDiff(&b, d, Options{Format: "md", Top: -1}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"A: a.json — 3 kernels, GPU time 1.00 ms  \n",
		"GPU time B/A 1.500; kernel names only in A: 0, only in B: 1  \n",
		"| kernel | match | count A | count B | Δ count | time A | time B | Δ time | B/A |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
		"| gemm&lt;float>\\|x | name | 3 | 3 | +0 | 1.00 ms | 1.00 ms | +300 ns | 1.000 |\n",
		"| new\\_kernel | only in B | 0 | 1 | +1 | 0 ns | 500 µs | +500 µs | new |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("md lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteDiff(&b, d, Options{Format: "table", By: attrib.GroupKernel, Top: 1}); err != nil {
		t.Fatal(err)
	}
	// Text: numbers right-aligned as in report's tables (writeTextGrid);
	// column widths by hand: "count A" 7, "time A" 7 ("1.00 ms"), "B/A" 5.
	if !strings.Contains(b.String(), "kernel         match  count A  count B  Δ count   time A   time B   Δ time    B/A\ngemm<float>|x  name         3        3       +0  1.00 ms  1.00 ms  +300 ns  1.000\n") ||
		!strings.Contains(b.String(), "… 1 more rows (--top 0 for all)\n") {
		t.Errorf("table:\n%s", b.String())
	}
	if err := WriteDiff(&b, d, Options{Format: "csv"}); err == nil {
		t.Error("csv: no error")
	}
}

// TestDiffJSONBusy: diff's totals mean what report's do (diff's
// busy_ns included copies): busy_ns the kernels' union, gpu_busy_ns with
// memcpy/memset.
func TestDiffJSONBusy(t *testing.T) {
	d := &attrib.Diff{A: "a", B: "b", TotalsA: attrib.Totals{KernelBusyNs: 100, GPUBusyNs: 150}, TotalsB: attrib.Totals{KernelBusyNs: 7, GPUBusyNs: 9}}
	var b strings.Builder
	if err := WriteDiff(&b, d, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		A struct {
			Busy    int64 `json:"busy_ns"`
			GPUBusy int64 `json:"gpu_busy_ns"`
		} `json:"totals_a"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.A.Busy != 100 || doc.A.GPUBusy != 150 {
		t.Errorf("totals_a busy_ns %d gpu_busy_ns %d, want 100 and 150", doc.A.Busy, doc.A.GPUBusy)
	}
}

// TestDiffOnlyInA: a row only in A reads "gone", the mirror of "new"
// (it printed 0.000).
func TestDiffOnlyInA(t *testing.T) {
	d := &attrib.Diff{A: "a", B: "b", OnlyA: 1, Kernels: []attrib.DiffRow{{Key: "old", Display: "old", MatchBy: "only_a", CountA: 2, TotalA: 700, DeltaNs: -700}}}
	var b strings.Builder
	if err := WriteDiff(&b, d, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	if want := "| old | only in A | 2 | 0 | -2 | 700 ns | 0 ns | -700 ns | gone |\n"; !strings.Contains(b.String(), want) {
		t.Errorf("md lacks %q:\n%s", want, b.String())
	}
}
