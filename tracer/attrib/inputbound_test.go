package attrib

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestFindingInputBound: four steps of 100 ns numbered 0–3, the agent's
// input.wait_ns 40, 30, 20, 10 in them (a sample at 450 outside every
// step not counted): 100 of 400 ns (25%, hand count) — the built-in rule's
// min_share 0.25 fires; with the last step waiting 9 ns (99 of 400) it
// does not.
func TestFindingInputBound(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	snap := &Snapshot{}
	for i := range int64(4) {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindStep, Start: i * 100, Dur: 100, Value: i})
		snap.Steps = append(snap.Steps, StepRow{Step: i, StartNs: i * 100, DurNs: 100})
	}
	w := tr.Strings.Intern(InputWaitCounter)
	for i, v := range []float64{40, 30, 20, 10} {
		tr.Counters = append(tr.Counters, tracer.Counter{TS: int64(i)*100 + 99, Name: w, Device: -1, Value: v})
	}
	tr.Counters = append(tr.Counters, tracer.Counter{TS: 450, Name: w, Device: -1, Value: 1000})
	outs := Outputs(tr)
	if len(outs) != 1 || outs[0].Kind != "input" || outs[0].Steps != 4 {
		t.Fatalf("outputs %+v: want one input row over 4 steps", outs)
	}
	f := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: snap, Outputs: outs}), "input-bound")
	if f == nil {
		t.Fatal("no input-bound finding at 25% of step time")
	}
	if f.Share != 0.25 || f.Numbers["wait_ns"] != 100 || f.Numbers["step_ns"] != 400 || f.Numbers["steps"] != 4 {
		t.Errorf("input-bound %+v: want 100 of 400 ns over 4 steps", f)
	}
	if !strings.Contains(f.Evidence[0], "100 ns of 400 ns step wall time (25.0%) over 4 steps, 25 ns per step") {
		t.Errorf("evidence %q", f.Evidence[0])
	}
	tr.Counters[3].Value = 9
	if g := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: snap, Outputs: Outputs(tr)}), "input-bound"); g != nil {
		t.Errorf("99 of 400 ns (below 25%%) fired: %+v", g)
	}
}
