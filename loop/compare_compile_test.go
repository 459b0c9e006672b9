package loop

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// TestAgentCompilesInvalidArm: hand-made steps of two arms with the
// agent's compile.frames counter. Arm A compiles 3 frames in its warm-up
// step 0 and none after: valid. Arm B compiles 1 frame in warm-up step 0,
// then 2 in counted step 2 and 1 in counted step 3 (3 frames after
// warm-up, hand count), and 5 in an extra step that is not counted: B is
// invalid, its reason names steps 2 and 3 and the total 3; a reason it
// already had is kept in front.
func TestAgentCompilesInvalidArm(t *testing.T) {
	r := &runner{arms: []*armRun{{name: "A"}, {name: "B"}}}
	var spans []stepSpan
	add := func(arm, phase string, step int64) {
		spans = append(spans, stepSpan{s: livestate.StepTime{PID: 1, Step: step, StartNs: int64(len(spans)) * 10, DurNs: 10},
			label: livestate.StepLabel{PID: 1, Step: step, Arm: arm, Phase: phase}, ok: true})
	}
	add("A", livestate.PhaseWarmup, 0)
	add("A", livestate.PhaseCounted, 1)
	add("A", livestate.PhaseCounted, 2)
	add("B", livestate.PhaseWarmup, 0)
	add("B", livestate.PhaseCounted, 1)
	add("B", livestate.PhaseCounted, 2)
	add("B", livestate.PhaseCounted, 3)
	add("B", livestate.PhaseExtra, 4)
	c := func(v float64) []counterAt { return []counterAt{{attrib.CompileFramesCounter, v}, {"metric.loss", 7}} }
	per := map[int][]counterAt{0: c(3), 1: c(0), 2: c(0), 3: c(1), 4: c(0), 5: c(2), 6: c(1), 7: c(5)}
	out := []attrib.ArmSteps{{Name: "A", Valid: true}, {Name: "B", Valid: false, Reason: "exit status 1"}}
	r.agentCompiles(spans, per, map[string]int{"A": 0, "B": 1}, out)
	if !out[0].Valid || r.arms[0].invalid != "" {
		t.Errorf("arm A compiled only in warm-up but is invalid: %q", out[0].Reason)
	}
	if out[1].Valid {
		t.Fatal("arm B recompiled in counted steps but stays valid")
	}
	want := "exit status 1; torch.compile compiled 3 frames during counted steps 2 (2), 3 (1) (recompiles after warm-up"
	if !strings.HasPrefix(out[1].Reason, want) || r.arms[1].invalid != out[1].Reason {
		t.Errorf("reason %q (runner %q), want prefix %q", out[1].Reason, r.arms[1].invalid, want)
	}
}
