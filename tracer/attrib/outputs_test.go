package attrib

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestOutputs: three steps [0,10) [10,20) [20,30) ns numbered 5, 6, 7;
// loss 3, 2, 1 logged inside them (mean 2), a sample at 35 outside every
// step (not counted); NaN rows 0, 4, 0 → step 6 named.
func TestOutputs(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	for i, n := range []int64{5, 6, 7} {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindStep, Start: int64(i) * 10, Dur: 10, Value: n})
	}
	loss, rows := tr.Strings.Intern("metric.loss"), tr.Strings.Intern("check.logits.rows")
	tr.Counters = []tracer.Counter{
		{TS: 1, Name: loss, Value: 3}, {TS: 12, Name: loss, Value: 2}, {TS: 29, Name: loss, Value: 1}, {TS: 35, Name: loss, Value: 100},
		{TS: 2, Name: rows, Value: 0}, {TS: 15, Name: rows, Value: 4}, {TS: 25, Name: rows, Value: 0},
	}
	out := Outputs(tr)
	if len(out) != 2 {
		t.Fatalf("%d rows: %+v", len(out), out)
	}
	m, c := out[0], out[1]
	if m.Kind != "metric" || m.Name != "loss" || m.Steps != 3 || m.Mean != 2 || m.First != 3 || m.Last != 1 || m.Min != 1 || m.Max != 3 {
		t.Errorf("metric %+v", m)
	}
	if c.Kind != "check" || c.Name != "logits" || c.Steps != 3 || !slices.Equal(c.NaNSteps, []int64{6}) {
		t.Errorf("check %+v", c)
	}
}

// TestOutputRowJSONNaN: a NaN loss encodes as null.
func TestOutputRowJSONNaN(t *testing.T) {
	b, err := json.Marshal(OutputRow{Kind: "metric", Name: "loss", Mean: math.NaN(), PerStep: [][2]float64{{3, math.NaN()}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"mean":null`) || !strings.Contains(s, `"per_step":[[3,null]]`) {
		t.Errorf("%s", s)
	}
}
