package attrib

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// pyTrace builds a trace of hand-placed samples: per step (steps 0..3 of
// pid 1), on the step thread, 30 in main→work_a and 5 in
// main→helper→work_a (stage a, python), 10 in main→work_b (stage b, torch;
// 1 of them in the thread's own stage b while the step thread is in a),
// 4 in main→rec→rec (no stage, lock, another thread); and 100 samples
// before the first step (step -1) in main→setup. Weights: 10 ms each,
// 20 ms for work_b's.
func pyTrace() *tracer.Trace {
	t := tracer.NewTrace("rlktop", "hand")
	t.PyStacks = tracer.NewPyStacks()
	t.PyPeriodNs = 10e6
	t.PyDropped = 2
	fn := func(name string, line int32) tracer.PyFrame {
		return tracer.PyFrame{Func: t.Strings.Intern(name), File: t.Strings.Intern("train.py"), FirstLine: line, Line: line + 1}
	}
	st := t.PyStacks
	main := st.Intern(0, fn("main", 1))
	a := st.Intern(main, fn("work_a", 10))
	helper := st.Intern(main, fn("helper", 30))
	ha := st.Intern(helper, fn("work_a", 10))
	b := st.Intern(main, fn("work_b", 20))
	rec := st.Intern(main, fn("rec", 40))
	rec2 := st.Intern(rec, fn("rec", 40))
	setup := st.Intern(main, fn("setup", 50))
	sa, sb := t.Strings.Intern("a"), t.Strings.Intern("b")
	add := func(n int, stack uint32, step int64, stage, stepStage tracer.StrID, state tracer.PyState, stepThread bool, w int32) {
		for range n {
			t.PySamples = append(t.PySamples, tracer.PySample{PID: 1, TID: 1, Stack: stack, Step: step, Stage: stage, StepStage: stepStage, State: state, StepThread: stepThread, WeightNs: w})
		}
	}
	for step := int64(0); step < 4; step++ {
		add(30, a, step, sa, sa, tracer.PyRunning, true, 10e6)
		add(5, ha, step, sa, sa, tracer.PyRunning, true, 10e6)
		add(9, b, step, sb, sb, tracer.PyTorch, true, 20e6)
		add(1, b, step, sb, sa, tracer.PyTorch, false, 20e6)
		add(4, rec2, step, 0, 0, tracer.PyLock, false, 10e6)
	}
	add(100, setup, -1, 0, 0, tracer.PyRunning, true, 10e6)
	return t
}

func TestPyProfileHandCount(t *testing.T) {
	p := PythonOf(pyTrace())
	if p == nil {
		t.Fatal("no profile")
	}
	// 4 steps × 49 samples; the 100 before the first step left out.
	if p.Samples != 196 || p.BeforeSteps != 100 || p.Steps != 4 || p.StepSamples != 4*44 || p.PeriodNs != 10e6 || p.Dropped != 2 {
		t.Fatalf("profile totals %+v", p)
	}
	rows := map[string]PyFuncRow{}
	for _, r := range p.Functions("") {
		rows[r.Function] = r
	}
	want := map[string][2]int64{ // self, total over 4 steps
		"work_a": {140, 140}, "work_b": {40, 40}, "rec": {16, 16}, "main": {0, 196}, "helper": {0, 20},
	}
	for name, w := range want {
		r := rows[name]
		if r.Self != w[0] || r.Total != w[1] {
			t.Errorf("%s: self %d total %d, want %v", name, r.Self, r.Total, w)
		}
	}
	if _, ok := rows["setup"]; ok {
		t.Errorf("setup (before the first step) has a row")
	}
	if r := rows["work_a"]; r.SelfShare != 140.0/196 || r.Line != 10 || r.File != "train.py" || r.SelfNs != 140*10e6 || r.States[tracer.PyRunning] != 140 {
		t.Errorf("work_a row %+v", r)
	}
	if r := rows["work_b"]; r.States[tracer.PyTorch] != 40 || r.SelfNs != 40*20e6 {
		t.Errorf("work_b row %+v", r)
	}
	// Stage b holds work_b's samples (one taken in the thread's own stage
	// b while the step thread was in a counts in b).
	fb := p.Functions("b")
	if len(fb) != 2 || fb[0].Function != "work_b" || fb[0].Self != 40 || fb[0].SelfShare != 1 {
		t.Errorf("stage b rows %+v", fb)
	}
	if got := p.Functions("nosuch"); got != nil {
		t.Errorf("unknown stage: %+v", got)
	}
	sr := map[string]PyStageRow{}
	for _, r := range p.StageRows() {
		sr[r.Stage] = r
	}
	if r := sr["a"]; r.Samples != 140 || r.StepSamples != 140 || r.NsPerStep != 35*10e6 || r.PythonShare() != 1 {
		t.Errorf("stage a %+v", r)
	}
	if r := sr["b"]; r.Samples != 40 || r.StepSamples != 36 || r.NsPerStep != 9*20e6 || r.States[tracer.PyTorch] != 36 {
		t.Errorf("stage b %+v", r)
	}
	if r := sr[StageNone]; r.Samples != 16 || r.StepSamples != 0 {
		t.Errorf("no stage %+v", r)
	}
	// The tree: main (196) → work_a 120, work_b 40, helper 20 → work_a 20,
	// rec 16 → rec 16.
	root := p.Tree("")
	if root.Total != 196 || len(root.Children) != 1 {
		t.Fatalf("root %+v", root)
	}
	m := root.Children[0]
	var kids []string
	for _, c := range m.Children {
		kids = append(kids, p.Funcs[c.Func].Function)
	}
	if strings.Join(kids, ",") != "work_a,work_b,helper,rec" || m.Children[0].Total != 120 || m.Children[2].Children[0].Self != 20 ||
		m.Children[3].Children[0].Self != 16 || m.Children[3].Self != 0 {
		t.Errorf("main's children %v %+v", kids, m.Children)
	}
	// Folded: one line per distinct stack, summed over states and threads.
	got := map[string]int64{}
	for _, l := range p.Folded("") {
		var names []string
		for _, f := range l.Frames {
			names = append(names, f.Function)
		}
		got[strings.Join(names, ";")] = l.Samples
	}
	wantF := map[string]int64{"main;work_a": 120, "main;helper;work_a": 20, "main;work_b": 40, "main;rec;rec": 16}
	if len(got) != len(wantF) {
		t.Errorf("folded %v", got)
	}
	for k, v := range wantF {
		if got[k] != v {
			t.Errorf("folded %s: %d, want %d", k, got[k], v)
		}
	}
	// Two sources sum.
	two := PythonOf(pyTrace(), pyTrace())
	if two.Samples != 392 || two.Steps != 8 || len(two.Funcs) != len(p.Funcs) {
		t.Errorf("two sources: %d samples %d steps %d funcs", two.Samples, two.Steps, len(two.Funcs))
	}
	if r := two.Functions("a"); r[0].Function != "work_a" || r[0].Self != 280 {
		t.Errorf("two sources, stage a: %+v", r[0])
	}
}

// TestPyProfileNoSteps: a script that never ends a step keeps every
// sample.
func TestPyProfileNoSteps(t *testing.T) {
	tr := pyTrace()
	for i := range tr.PySamples {
		tr.PySamples[i].Step = -1
	}
	p := PythonOf(tr)
	if p.Samples != 296 || p.BeforeSteps != 0 || p.Steps != 0 {
		t.Errorf("%+v", p)
	}
}

// TestCPUBoundFinding: pyTrace's step thread has 140 samples running
// Python (work_a in stage a) of 176: 79.5% ≥ the rule's 60%, the stage a
// and work_a (train.py:10) named; with work_a's samples inside torch
// instead, 0% and no finding.
func TestCPUBoundFinding(t *testing.T) {
	tr := pyTrace()
	s := &Snapshot{Python: PythonOf(tr)}
	var got *Finding
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: s}) {
		if f.ID == "cpu-bound" {
			got = &f
		}
	}
	if got == nil {
		t.Fatal("no cpu-bound finding")
	}
	if want := 140.0 / 176; got.Share != want || got.Numbers["top_function_share"] != want || got.Numbers["torch_share"] != 36.0/176 ||
		got.Evidence[0] != "the step is CPU-bound: Python runs 80% of the step, most in a (train.py:10 work_a 80%)" {
		t.Errorf("finding %+v", got)
	}
	// With GPU work: two 100 ms steps, a 10 ms kernel in each (idle
	// 90%): it fires and says so; a 95 ms kernel in each (idle 5%, under
	// the rule's 50%): the GPU is not held up, no finding.
	tl := func(kernelNs int64) *Timeline {
		return &Timeline{Lanes: []TimelineLane{{Device: 0}}, Steps: []TimelineStep{{Step: 0, DurNs: 100e6}, {Step: 1, StartNs: 100e6, DurNs: 100e6}},
			Ops: []TimelineOp{{Kind: tracer.KindKernel, StartNs: 0, DurNs: kernelNs}, {Kind: tracer.KindKernel, StartNs: 100e6, DurNs: kernelNs}}}
	}
	fired := func(k int64) *Finding {
		for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: s, Timeline: tl(k), Devices: []tracer.Device{{ID: 0, Vendor: "nvidia"}}}) {
			if f.ID == "cpu-bound" {
				return &f
			}
		}
		return nil
	}
	if f := fired(10e6); f == nil || f.Evidence[0] != "the step is CPU-bound: the GPU is idle 90% of the step while Python runs a (train.py:10 work_a 80%)" || f.Numbers["gpu_idle_share"] != 0.9 {
		t.Errorf("GPU idle 90%%: %+v", f)
	}
	if f := fired(95e6); f != nil {
		t.Errorf("GPU busy 95%%: %+v", f)
	}
	for i := range tr.PySamples {
		if tr.PySamples[i].State == tracer.PyRunning {
			tr.PySamples[i].State = tracer.PyTorch
		}
	}
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: &Snapshot{Python: PythonOf(tr)}}) {
		if f.ID == "cpu-bound" {
			t.Errorf("torch-bound step: %+v", f)
		}
	}
}
