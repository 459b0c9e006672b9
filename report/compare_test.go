package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

func comparison() *attrib.Comparison {
	return &attrib.Comparison{
		Arms: []attrib.ArmStats{
			{Name: "A", Flags: map[string]string{"attention": "math"}, Valid: true, Steps: 50, MedianNs: 10_000_000, P10Ns: 9_500_000, P90Ns: 11_000_000},
			{Name: "B", Flags: map[string]string{"attention": "fused"}, Valid: true, Steps: 50, MedianNs: 8_000_000, P10Ns: 7_600_000, P90Ns: 8_800_000},
			{Name: "A'", Flags: map[string]string{"attention": "math"}, Valid: false, Reason: "exited with status 1", Steps: 12},
		},
		Ratio:   attrib.Ratio{Value: 0.8, CILow: 0.78, CIHigh: 0.82},
		Verdict: attrib.VerdictFaster,
		Rows: []attrib.RowComparison{
			{Group: "category", Key: "attention", ANs: 4_000_000, BNs: 2_000_000, DeltaNs: -2_000_000, Ratio: 0.5, CILow: 0.48, CIHigh: 0.52, Verdict: attrib.VerdictFaster},
			{Group: "kernel", Key: "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)", ANs: 100, BNs: 0, DeltaNs: -100, Verdict: attrib.VerdictGone},
			{Group: "category", Key: "gemm", ANs: 6_000_000, BNs: 6_000_050, DeltaNs: 50, Ratio: 1.00001, CILow: 0.99, CIHigh: 1.01, Verdict: attrib.VerdictNoise},
		},
		Method: "ratio of medians",
	}
}

func TestComparisonWriters(t *testing.T) {
	var b bytes.Buffer
	if err := WriteComparison(&b, comparison(), Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"arms", "ratio", "verdict", "rows"} {
		if _, ok := m[k]; !ok {
			t.Errorf("json lacks %q: %s", k, b.String())
		}
	}
	if _, ok := m["noise"]; ok {
		t.Error("noise present without an A' result")
	}
	if len(m["rows"].([]any)) != 3 || m["verdict"] != "faster" {
		t.Errorf("rows/verdict: %v", m)
	}

	b.Reset()
	if err := WriteComparison(&b, comparison(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"attention=fused", "NO: exited with status 1", "step time B/A: 0.800 [0.780, 0.820] — FASTER",
		"A′ was invalid, so no noise envelope", "at::native::vectorized_elementwise_kernel",
		"-2.00 ms", "0.500 [0.480, 0.520]", "only in A", "10.0 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	b.Reset()
	if err := WriteComparison(&b, comparison(), Options{Format: "md", By: "category", Top: 1}); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if !strings.Contains(out, "| category | attention | 4.00 ms | 2.00 ms | -2.00 ms | 0.500 [0.480, 0.520] | faster |") ||
		strings.Contains(out, "gemm") || !strings.Contains(out, "1 more rows") || !strings.Contains(out, "**step time B/A") {
		t.Errorf("md:\n%s", out)
	}
	if err := WriteComparison(&b, comparison(), Options{Format: "csv"}); err == nil {
		t.Error("csv comparison: no error")
	}
}

// The writer works on a real CompareArms result.
func TestComparisonFromArms(t *testing.T) {
	mk := func(name string, v int64) attrib.ArmSteps {
		a := attrib.ArmSteps{Name: name, Valid: true}
		for i := 0; i < 10; i++ {
			a.AddStep(v+int64(i), &attrib.Snapshot{Categories: []attrib.GroupRow{{Key: "attention", TotalNs: v / 2}}})
		}
		return a
	}
	c := attrib.CompareArms(mk("A", 1000), mk("B", 2000), nil, attrib.StatsOptions{})
	var b bytes.Buffer
	if err := WriteComparison(&b, c, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| category | attention | 500 ns | 1.00 µs | +500 ns | 2.000 [2.000, 2.000] | slower |") {
		t.Errorf("md:\n%s", b.String())
	}
}
