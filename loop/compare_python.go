package loop

import (
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// pythonByArm splits the recording's Python samples by the arm whose
// counted step (process, step number) they lie in and sums each arm's
// (livestate.ArmPython); nil without samples.
func (r *runner) pythonByArm(t *tracer.Trace) []livestate.ArmPython {
	if len(t.PySamples) == 0 || t.PyStacks == nil {
		return nil
	}
	arm := map[stepKey]int{}
	for i, a := range r.arms {
		for _, s := range a.steps {
			arm[stepKey{s.pid, s.step}] = i
		}
	}
	per := make([][]tracer.PySample, len(r.arms))
	for _, s := range t.PySamples {
		if i, ok := arm[stepKey{s.PID, s.Step}]; ok {
			per[i] = append(per[i], s)
		}
	}
	var out []livestate.ArmPython
	for i, a := range r.arms {
		agg := attrib.NewPyAggregator()
		agg.Add(per[i])
		p := agg.Profile(t.PyStacks, t.Strings)
		p.SetSteps(int64(len(a.steps)))
		ap := livestate.ArmPython{Arm: a.name, Stages: []livestate.ArmPythonStage{}, Functions: []livestate.ArmPythonFunc{}}
		if p != nil {
			ap.Samples, ap.Steps = p.Samples, p.Steps
			st := p.StateSamples("", true)
			if n := float64(p.StepSamples); n > 0 {
				ap.PythonShare = float64(st[tracer.PyRunning]+st[tracer.PyNative]) / n
				ap.TorchShare = float64(st[tracer.PyTorch]) / n
				var w int64
				for s := tracer.PySleep; s < tracer.PyStates; s++ {
					w += st[s]
				}
				ap.WaitShare = float64(w) / n
			}
			for _, sr := range p.StageRows() {
				ap.StepNs += sr.NsPerStep
				ap.Stages = append(ap.Stages, livestate.ArmPythonStage{Stage: sr.Stage, NsPerStep: sr.NsPerStep, PythonShare: sr.PythonShare()})
			}
			for j, f := range p.Functions("") {
				if j == 5 || f.Self == 0 {
					break
				}
				ap.Functions = append(ap.Functions, livestate.ArmPythonFunc{Function: f.Function, Where: f.Where(), SelfSamples: f.Self, SelfShare: f.SelfShare})
			}
		}
		out = append(out, ap)
	}
	return out
}
