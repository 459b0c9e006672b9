package loop

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// TestMetricCompareJSONNaN: a step that logged no value (NaN) encodes as
// null, not an encoding error (seen: "json: unsupported value: NaN").
func TestMetricCompareJSONNaN(t *testing.T) {
	b, err := json.Marshal(livestate.CompareResult{Metrics: []livestate.MetricCompare{{Metric: "loss", Arm: "B", Mean: math.NaN(),
		PerStep: []float64{1.5, math.NaN()}, APerStep: []float64{2}}},
		Audits: []livestate.AuditCompare{{Name: "x", Arm: "B", AValue: math.NaN(), BValue: 1}}})
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

// TestLoggedNaNMetricInvalidatesArm: arm B logs loss = NaN in steps 2 and
// 10 (and Inf in step 11): B is invalid, with its steps in numeric order
// ("2, 10, 11": as text they came "10, 11, 2"); arm A, which logged finite
// values, stays valid (a NaN metric counted as missing, B stayed valid).
func TestLoggedNaNMetricInvalidatesArm(t *testing.T) {
	r := &runner{arms: []*armRun{{name: "A"}, {name: "B"}}, labels: map[stepKey]livestate.StepLabel{}}
	tr := tracer.NewTrace("rlktop", "rec")
	loss := tr.Strings.Intern("metric.loss")
	for n := int64(1); n <= 12; n++ {
		arm := "A"
		if n%2 == 0 || n == 11 {
			arm = "B"
		}
		start := n * 1000
		r.all = append(r.all, livestate.StepTime{Step: n, PID: 1, StartNs: start, DurNs: 900})
		r.labels[stepKey{1, n}] = livestate.StepLabel{PID: 1, Step: n, Arm: arm, Phase: livestate.PhaseCounted}
		v := float64(n)
		switch n {
		case 2, 10:
			v = math.NaN()
		case 11:
			v = math.Inf(1)
		}
		tr.Counters = append(tr.Counters, tracer.Counter{Name: loss, TS: start + 100, Value: v})
	}
	out := []attrib.ArmSteps{{Name: "A", Valid: true}, {Name: "B", Valid: true}}
	r.agentChecks(tr, out, &livestate.CompareResult{})
	if !out[0].Valid {
		t.Errorf("arm A invalid: %s", out[0].Reason)
	}
	if out[1].Valid || !strings.Contains(out[1].Reason, "at steps 2 (metric loss: NaN), 10 (metric loss: NaN), 11 (metric loss: +Inf)") {
		t.Errorf("arm B valid %v, reason %q; want invalid naming steps 2, 10, 11 in order", out[1].Valid, out[1].Reason)
	}
}
