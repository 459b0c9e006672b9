package report

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// sweepFixture: envs=1,4,16 with A's median 10 ms; ratios to A by hand:
// envs=4 1.02 [0.98–1.06], envs=16 1.10 [1.05–1.15]. Step times: 10 ms;
// 10.2 ms [9.80–10.6]; 11.0 ms [10.5–11.5]. Per item (÷ envs): 10 ms;
// 2.55 ms [2.45–2.65]; 688 µs [656–719] (11/16 = 0.6875 ms, 10.5/16 =
// 0.65625, 11.5/16 = 0.71875).
func sweepFixture() ([]attrib.ArmStats, []*attrib.Comparison) {
	arm := func(v string) attrib.ArmStats {
		return attrib.ArmStats{Name: "envs=" + v, Flags: map[string]string{"envs": v, "attention": "math"}, Valid: true, Steps: 20, MedianNs: 10e6}
	}
	arms := []attrib.ArmStats{arm("1"), arm("4"), arm("16"), {Name: "A′", Flags: map[string]string{"envs": "1", "attention": "math"}, Valid: true}}
	pairs := []*attrib.Comparison{{Ratio: attrib.Ratio{Value: 1.02, CILow: 0.98, CIHigh: 1.06}}, {Ratio: attrib.Ratio{Value: 1.10, CILow: 1.05, CIHigh: 1.15}}}
	return arms, pairs
}

func TestSweep(t *testing.T) {
	arms, pairs := sweepFixture()
	key, pts, ok := SweepOf(arms, pairs)
	if !ok || key != "envs" || len(pts) != 3 {
		t.Fatalf("SweepOf = %q, %d points, %v", key, len(pts), ok)
	}
	var b strings.Builder
	if err := WriteSweep(&b, key, pts, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"10.2 ms [9.80 ms, 10.6 ms]", "2.55 ms [2.45 ms, 2.65 ms]",
		"11.0 ms [10.5 ms, 11.5 ms]", "688 µs [656 µs, 719 µs]",
		"step time ×1.1 and time per item ×0.0688 from envs=1 to envs=16",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("sweep lacks %q:\n%s", s, out)
		}
	}
	// The plot: per item falls, so envs=16's per-item bar is the shortest
	// (1 cell at the scale's low end, 688 µs).
	lines := strings.Split(out, "\n")
	var last string
	for _, l := range lines {
		if strings.HasPrefix(l, "16 ") && strings.Contains(l, "█") && !strings.Contains(l, "ms [") {
			last = l
		}
	}
	if f := strings.Fields(last); len(f) != 3 || f[2] != "█" {
		t.Errorf("envs=16 plot line %q, want its per-item bar one cell", last)
	}
	var md strings.Builder
	WriteSweep(&md, key, pts, Options{Format: "md"})
	if !strings.Contains(md.String(), "| 16 | 20 | 11.0 ms [10.5 ms, 11.5 ms] | 688 µs [656 µs, 719 µs] |") {
		t.Errorf("md:\n%s", md.String())
	}
	// Two flags varying, or a non-number: not a sweep.
	arms[2].Flags["attention"] = "fused"
	if _, _, ok := SweepOf(arms, pairs); ok {
		t.Error("two varying flags taken for a sweep")
	}
	arms[2].Flags["attention"] = "math"
	arms[1].Flags["envs"] = "four"
	if _, _, ok := SweepOf(arms, pairs); ok {
		t.Error("a non-numeric value taken for a sweep")
	}
}
