package loop

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestMetricCompareJSONNaN: a step that logged no value (NaN) encodes as
// null, not an encoding error (seen: "json: unsupported value: NaN").
func TestMetricCompareJSONNaN(t *testing.T) {
	b, err := json.Marshal(CompareResult{Metrics: []MetricCompare{{Metric: "loss", Arm: "B", Mean: math.NaN(),
		PerStep: []float64{1.5, math.NaN()}, APerStep: []float64{2}}},
		Audits: []AuditCompare{{Name: "x", Arm: "B", AValue: math.NaN(), BValue: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"per_step":[1.5,null]`, `"a_per_step":[2]`, `"mean":null`, `"metric":"loss"`, `"b_value":1`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %s", s, want)
		}
	}
}
