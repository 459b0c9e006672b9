package attrib

import "testing"

func TestKernelFilterAndSort(t *testing.T) {
	rows := []KernelRow{
		{Name: "void flash_fwd_kernel<64>(Params)", DisplayName: "flash_fwd_kernel<64>", Category: "attention", Stage: "forward", TotalNs: 30, Count: 3, MeanNs: 10, P50Ns: 9, P99Ns: 20, Share: 0.3},
		{Name: "volta_sgemm_64x64_nt", DisplayName: "volta_sgemm_64x64_nt", Category: "gemm", Stage: "backward", TotalNs: 50, Count: 10, MeanNs: 5, P50Ns: 4, P99Ns: 40, Share: 0.5},
		{Name: "volta_sgemm_64x64_nt", DisplayName: "volta_sgemm_64x64_nt", Category: "attention", Stage: "forward", TotalNs: 20, Count: 1, MeanNs: 20, P50Ns: 20, P99Ns: 20, Share: 0.2},
		{Name: "triton_red_fused", DisplayName: "triton_red_fused", Category: "norm", Stage: "", TotalNs: 1, Count: 1, MeanNs: 1, P50Ns: 1, P99Ns: 1, Share: 0.0},
	}
	count := func(f KernelFilter) (n int) {
		for i := range rows {
			if f.Match(&rows[i]) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		f    string
		want int
	}{
		{"", 4}, {"SGEMM", 2}, {"cat:attention", 2}, {"cat:attention sgemm", 1},
		{"stage:forward", 2}, {"stage:(none)", 1}, {"flash|triton", 2}, {"fwd_kernel<64", 1},
		{"foo(", 0}, // invalid expression: plain text
	} {
		if got := count(ParseKernelFilter(c.f)); got != c.want {
			t.Errorf("filter %q matched %d rows, want %d", c.f, got, c.want)
		}
	}
	// p99 descending: 40 (sgemm gemm), 20 flash and 20 sgemm attention
	// (tie: by name, "void…" > "volta…"), 1.
	SortKernels(rows, ByP99, true)
	want := []string{"volta_sgemm_64x64_nt/gemm", "void flash_fwd_kernel<64>(Params)/attention", "volta_sgemm_64x64_nt/attention", "triton_red_fused/norm"}
	for i, r := range rows {
		if got := r.Name + "/" + r.Category; got != want[i] {
			t.Errorf("p99 row %d = %s, want %s", i, got, want[i])
		}
	}
	if _, err := ParseKernelSort("p95"); err == nil {
		t.Error("p95 accepted")
	}
	if k, err := ParseKernelSort("share"); err != nil || k != ByShare {
		t.Errorf("share = %v, %v", k, err)
	}
}

// A stage or category whose name holds spaces is selected in double
// quotes, as FilterTerm writes it (HTA's ns-resolution trace names its
// stages "## forward ##" and "## backward ##").
func TestKernelFilterQuotedStage(t *testing.T) {
	term := FilterTerm("stage", "## backward ##")
	if term != `stage:"## backward ##"` {
		t.Fatalf("FilterTerm: %s", term)
	}
	f := ParseKernelFilter(term + "  gemm")
	if f.Stage != "## backward ##" || f.Name == nil || f.Name.String() != "(?i)gemm" {
		t.Fatalf("parsed %q: stage %q, name %v", term+" gemm", f.Stage, f.Name)
	}
	if !f.Match(&KernelRow{Name: "volta_sgemm_128x64_nn", Stage: "## backward ##"}) || f.Match(&KernelRow{Name: "volta_sgemm_128x64_nn", Stage: "## forward ##"}) {
		t.Error("the quoted stage does not select its rows only")
	}
	if g := ParseKernelFilter(FilterTerm("cat", "gemm")); g.Category != "gemm" || g.Name != nil {
		t.Errorf("cat:gemm: %+v", g)
	}
	if g := ParseKernelFilter(FilterTerm("stage", `a "b"`)); g.Stage != `a "b"` {
		t.Errorf("a stage with quotes: %q", g.Stage)
	}
}
