package views_test

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
)

// TestCompareMetricCurves: a learning curve per arm on one scale — A's
// loss rising 1, 2, 3 and B's falling 3, 2, 1 plot as mirror images (the
// lowest and highest values of both share the bottom and top blocks), with
// the arm's mean and its verdict against the A/A′ envelope.
func TestCompareMetricCurves(t *testing.T) {
	r := explainFixture()
	r.Metrics = []livestate.MetricCompare{{Metric: "loss", Arm: "attention=fused", Steps: 3, Mean: 2,
		PerStep: []float64{3, 2, 1}, APerStep: []float64{1, 2, 3}, Verdict: "inside"}}
	v := views.NewCompare(styles())
	v.SetSize(160, 60)
	v.SetState(views.CompareState{Phase: views.CompareDone, What: "attention: math vs fused", Flag: "attention", Result: r})
	var line string
	for _, l := range strings.Split(render(t, v.View(), 160, 60), "\n") {
		if strings.Contains(l, "loss") && strings.Contains(l, "mean 2 (inside)") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no loss curve line in\n%s", render(t, v.View(), 160, 60))
	}
	f := strings.Fields(line[strings.Index(line, "loss"):]) // loss A <A's curve> <arm> <B's curve> mean 2 (inside)
	if len(f) < 5 {
		t.Fatalf("line %q", line)
	}
	a, b := f[2], f[4]
	ra := []rune(a)
	rb := []rune(b)
	if len(ra) != 3 || len(rb) != 3 || ra[0] != rb[2] || ra[2] != rb[0] || ra[1] != rb[1] || ra[0] == ra[2] {
		t.Errorf("curves A %q B %q: want mirror images over three steps", a, b)
	}
}
