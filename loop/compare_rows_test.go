package loop

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// TestRowsOfProfiledSteps: a command's steps outside the agent's
// torch.profiler windows carry no GPU events; rows compare the profiled
// steps only. Hand values: A's 2 profiled steps ran kernel k 10 ns each,
// B's 2 ran it 5 ns each — rows A 10, B 5 per step (over all 4 counted
// steps they would read 5 and 2.5). An arm with no profiled step gives no
// rows and a note (every row "only in A", B's forward "0 ns").
// Every step profiled: the step arms' rows stand (ok false).
func TestRowsOfProfiledSteps(t *testing.T) {
	snap := func(ns int64) *attrib.Snapshot {
		return &attrib.Snapshot{Kernels: []attrib.KernelRow{{Name: "k", TotalNs: ns, Count: 1, Category: "gemm"}}}
	}
	arm := func(name string, steps int, ns ...int64) (all, prof attrib.ArmSteps) {
		all = attrib.ArmSteps{Name: name, Valid: true}
		prof = attrib.ArmSteps{Name: name, Valid: true}
		for i := 0; i < steps; i++ {
			if i < len(ns) {
				all.AddStep(100, snap(ns[i]))
				prof.AddStep(100, snap(ns[i]))
			} else {
				all.AddStep(100, &attrib.Snapshot{})
			}
		}
		return
	}
	r := &runner{}
	o := attrib.StatsOptions{Resamples: 200}
	a, pa := arm("sdpa=math", 4, 10, 10)
	b, pb := arm("sdpa=flash", 4, 5, 5)
	rows, note, ok := r.rowsOf([]attrib.ArmSteps{a, b}, []attrib.ArmSteps{pa, pb}, 0, 1, -1, o)
	var k *attrib.RowComparison
	for i := range rows {
		if rows[i].Group == attrib.GroupKernel && rows[i].Key == "k" {
			k = &rows[i]
		}
	}
	if !ok || k == nil || k.ANs != 10 || k.BNs != 5 || !strings.Contains(note, "sdpa=math 2 of 4, sdpa=flash 2 of 4") {
		t.Errorf("partly profiled: ok %v, row %+v, note %q; want A 10, B 5 per step", ok, k, note)
	}
	b0, pb0 := arm("sdpa=flash", 4)
	if rows, note, ok := r.rowsOf([]attrib.ArmSteps{a, b0}, []attrib.ArmSteps{pa, pb0}, 0, 1, -1, o); !ok || len(rows) != 0 || !strings.Contains(note, "arm sdpa=flash has no profiled step") {
		t.Errorf("B unprofiled: ok %v, %d rows, note %q", ok, len(rows), note)
	}
	af, paf := arm("sdpa=math", 2, 10, 10)
	bf, pbf := arm("sdpa=flash", 2, 5, 5)
	if _, _, ok := r.rowsOf([]attrib.ArmSteps{af, bf}, []attrib.ArmSteps{paf, pbf}, 0, 1, -1, o); ok {
		t.Error("every step profiled: want the step arms' rows (ok false)")
	}
	if _, _, ok := r.rowsOf([]attrib.ArmSteps{a, b}, nil, 0, 1, -1, o); ok {
		t.Error("built-in loop (no profiled arms): want ok false")
	}
}

// TestPlanSaysNotInterleaved: with --steps no larger than one block each
// arm runs once, one after another; the plan says so and how many steps
// interleave (a command over the Python agent: blocks of 5).
func TestPlanSaysNotInterleaved(t *testing.T) {
	for _, c := range []struct {
		steps int
		want  bool
	}{{4, true}, {5, true}, {10, false}} {
		r := &runner{o: CompareOptions{Command: []string{"python3", "train.py"}, Steps: c.steps, Noise: true,
			Arms: []livestate.Arm{{Flags: map[string]string{"sdpa": "math"}}, {Flags: map[string]string{"sdpa": "flash"}}}}}
		r.defaults()
		if err := r.plan(); err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(r.notes, "\n"), "not interleaved")
		if got != c.want || (c.want && !strings.Contains(strings.Join(r.notes, "\n"), "--steps 10 or more interleaves")) {
			t.Errorf("--steps %d: notes %q; want the not-interleaved note: %v", c.steps, r.notes, c.want)
		}
	}
}
