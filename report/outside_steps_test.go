package report

import (
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// The header says how much GPU work was launched in no step when it is
// more than 1% of the GPU time: the H100 Qwen trace's one step holds 1,198
// of its 1,707 GPU ops, and the other 509 (13.7 ms, 30% of 45.6 ms; the
// same 509 and 13.74 ms counted over the JSON by the launches'
// correlation ids and the ProfilerStep ranges) went unsaid. Hand totals:
// 1,000 ns of GPU time in 10 ops, steps holding 600 ns in 7 → 3 ops,
// 400 ns, 40%; steps holding 99.5% → nothing said; one op left → "was".
func TestOutsideSteps(t *testing.T) {
	snap := func(stepNs, stepOps int64) *attrib.Snapshot {
		return &attrib.Snapshot{
			Totals: attrib.Totals{KernelCount: 8, TransferCount: 2, GPUTotalNs: 1000},
			Steps:  []attrib.StepRow{{Step: 1, KernelNs: stepNs / 2, Count: stepOps / 2}, {Step: 2, KernelNs: stepNs - stepNs/2, Count: stepOps - stepOps/2}},
		}
	}
	for _, c := range []struct {
		ns, ops int64
		want    string
	}{
		{600, 7, "; 3 GPU ops (400 ns, 40.0% of GPU time) were launched outside every step"},
		{995, 9, ""},
		{900, 9, "; 1 GPU op (100 ns, 10.0% of GPU time) was launched outside every step"},
	} {
		if got := outsideSteps(snap(c.ns, c.ops)); got != c.want {
			t.Errorf("steps holding %d ns in %d ops: %q, want %q", c.ns, c.ops, got, c.want)
		}
	}
}
