package attrib

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestFindingRecompiles: six steps [0,10) … [50,60) ns numbered 0–5 with
// the agent's compile.frames per step 2, 1, 0, 0, 1, 2 (the built-in rule
// lets the first 3 steps compile): 3 frames in warm-up, then 3 frames in
// steps 4 and 5 (hand count), a sample at 65 outside every step not
// counted. The finding is invalid, ranked first, and names the steps; with
// only warm-up compiles it does not fire.
func TestFindingRecompiles(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	for i := range int64(6) {
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindStep, Start: i * 10, Dur: 10, Value: i})
	}
	cf := tr.Strings.Intern(CompileFramesCounter)
	for i, v := range []float64{2, 1, 0, 0, 1, 2} {
		tr.Counters = append(tr.Counters, tracer.Counter{TS: int64(i)*10 + 9, Name: cf, Device: -1, Value: v})
	}
	tr.Counters = append(tr.Counters, tracer.Counter{TS: 65, Name: cf, Device: -1, Value: 7})
	outs := Outputs(tr)
	if len(outs) != 1 || outs[0].Kind != "compile" || outs[0].Steps != 6 || outs[0].Max != 2 {
		t.Fatalf("outputs %+v: want one compile row over 6 steps", outs)
	}
	fs := EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Flags: map[string]string{"sdpa": "math"}, Outputs: outs})
	f := fs[0]
	if f.ID != "torch-compile-recompiles" || !f.Invalid {
		t.Fatalf("first finding %+v: want the recompile finding, invalid", f)
	}
	if f.Numbers["recompile_frames"] != 3 || f.Numbers["recompile_steps"] != 2 || f.Numbers["warmup_frames"] != 3 {
		t.Errorf("numbers %v: want 3 frames in 2 steps after warm-up, 3 in warm-up", f.Numbers)
	}
	if !strings.Contains(f.Evidence[0], "(step (frames): 4 (1), 5 (2))") {
		t.Errorf("evidence %q does not name steps 4 and 5", f.Evidence[0])
	}
	tr.Counters = tr.Counters[:3]
	if g := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Outputs: Outputs(tr)}), "torch-compile-recompiles"); g != nil {
		t.Errorf("warm-up compiles only, yet %+v", g)
	}
}
