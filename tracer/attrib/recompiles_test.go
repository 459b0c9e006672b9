package attrib

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestFindingRecompiles: six steps [0,10) … [50,60) ns numbered from
// base (0 as the built-in loop, 1 as the Python agent) with the agent's
// compile.frames per step 2, 1, 1, 0, 1, 2 (the built-in rule lets the
// first 3 steps compile): 4 frames in warm-up, then 3 frames in the 5th
// and 6th steps (hand count), a sample at 65 outside every step not
// counted. The finding is invalid, ranked first, and names the steps; with
// only warm-up compiles it does not fire.
func TestFindingRecompiles(t *testing.T) {
	for _, base := range []int64{0, 1} {
		tr := tracer.NewTrace("test", "")
		for i := range int64(6) {
			tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindStep, Start: i * 10, Dur: 10, Value: base + i})
		}
		cf := tr.Strings.Intern(CompileFramesCounter)
		for i, v := range []float64{2, 1, 1, 0, 1, 2} {
			tr.Counters = append(tr.Counters, tracer.Counter{TS: int64(i)*10 + 9, Name: cf, Device: -1, Value: v})
		}
		tr.Counters = append(tr.Counters, tracer.Counter{TS: 65, Name: cf, Device: -1, Value: 7})
		outs := Outputs(tr)
		if len(outs) != 1 || outs[0].Kind != "compile" || outs[0].Steps != 6 || outs[0].Max != 2 {
			t.Fatalf("base %d: outputs %+v: want one compile row over 6 steps", base, outs)
		}
		fs := EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Flags: map[string]string{"sdpa": "math"}, Outputs: outs})
		f := fs[0]
		if f.ID != "torch-compile-recompiles" || !f.Invalid {
			t.Fatalf("base %d: first finding %+v: want the recompile finding, invalid", base, f)
		}
		if f.Numbers["recompile_frames"] != 3 || f.Numbers["recompile_steps"] != 2 || f.Numbers["warmup_frames"] != 4 {
			t.Errorf("base %d: numbers %v: want 3 frames in 2 steps after warm-up, 4 in warm-up", base, f.Numbers)
		}
		want := fmt.Sprintf("(step (frames): %d (1), %d (2))", base+4, base+5)
		if !strings.Contains(f.Evidence[0], want) {
			t.Errorf("base %d: evidence %q does not say %s", base, f.Evidence[0], want)
		}
		tr.Counters = tr.Counters[:3]
		if g := findingByID(EvaluateFindings(nil, FindingInput{Snapshot: mathSnap(), Outputs: Outputs(tr)}), "torch-compile-recompiles"); g != nil {
			t.Errorf("base %d: warm-up compiles only, yet %+v", base, g)
		}
	}
}
