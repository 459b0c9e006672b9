package attrib

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
)

// FindCPUBound: the share of the step thread's Python samples (the
// Python agent's sampler) running Python bytecode or C calls outside
// torch and outside any wait, with the stage and function that hold most
// of them and, when the trace has GPU work, the GPU's idle share of the
// step.
const FindCPUBound = "cpu-bound"

// cpuBound fires when the step thread's samples running Python (state
// python or native) reach r.MinShare of its samples and, when the trace
// has GPU work to measure idle time against, the GPU is idle at least
// r.Threshold of the step (a GPU kept busy while Python runs is not
// held up by it).
func (r *FindingRule) cpuBound(p *PyProfile, tl *Timeline, devs []tracer.Device) *Finding {
	if p == nil || p.StepSamples == 0 {
		return nil
	}
	st := p.StateSamples("", true)
	n := float64(p.StepSamples)
	py := float64(st[tracer.PyRunning] + st[tracer.PyNative])
	share := py / n
	if share < r.MinShare {
		return nil
	}
	var wait int64
	for s := tracer.PySleep; s < tracer.PyStates; s++ {
		wait += st[s]
	}
	f := &Finding{Share: share, ShareOf: "the step thread's Python samples", Numbers: map[string]float64{
		"python_share": share, "bytecode_share": float64(st[tracer.PyRunning]) / n, "native_share": float64(st[tracer.PyNative]) / n,
		"torch_share": float64(st[tracer.PyTorch]) / n, "wait_share": float64(wait) / n, "samples": n, "steps": float64(p.Steps),
	}}
	// The stage with most of the step thread's Python, and its heaviest
	// function by self samples (running Python), as a share of the step.
	rows := p.StageRows()
	slices.SortStableFunc(rows, func(a, b PyStageRow) int {
		return int((b.States[tracer.PyRunning] + b.States[tracer.PyNative]) - (a.States[tracer.PyRunning] + a.States[tracer.PyNative]))
	})
	where := ""
	if len(rows) > 0 {
		sr := rows[0]
		where = quoteStage(sr.Stage)
		var top *PyFuncRow
		for _, fr := range p.Functions(sr.Stage) {
			if fr.States[tracer.PyRunning]+fr.States[tracer.PyNative] > 0 {
				top = &fr
				break
			}
		}
		if top != nil {
			fs := float64(top.States[tracer.PyRunning]+top.States[tracer.PyNative]) / n
			where += fmt.Sprintf(" (%s %s %s)", top.Where(), top.Function, units.ShareWhole(fs))
			f.Top = []string{top.Function}
			f.Numbers["top_function_share"] = fs
		}
		if sr.NsPerStep > 0 {
			f.Numbers["stage_ns_per_step"] = float64(sr.NsPerStep)
		}
	}
	head := "Python runs " + units.ShareWhole(share) + " of the step"
	if where != "" {
		head += ", most in " + where
	}
	var cpuDevs []int32
	for _, d := range devs {
		if strings.EqualFold(d.Vendor, "cpu") {
			cpuDevs = append(cpuDevs, d.ID)
		}
	}
	if idle := IdleOf(tl, append(cpuDevs, -1), false); idle != nil {
		if idle.Share() < r.Threshold {
			return nil
		}
		f.Numbers["gpu_idle_share"] = idle.Share()
		head = fmt.Sprintf("the GPU is idle %s of the step while Python runs %s", units.ShareWhole(idle.Share()), where)
		if where == "" {
			head = fmt.Sprintf("the GPU is idle %s of the step while Python runs %s of it", units.ShareWhole(idle.Share()), units.ShareWhole(share))
		}
	}
	f.Evidence = []string{
		"the step is CPU-bound: " + head,
		fmt.Sprintf("of the step thread's %d samples over %d steps: Python bytecode %s, C calls outside torch %s, inside torch %s, waiting %s (sleep, locks, queues, DataLoader)",
			p.StepSamples, p.Steps, units.ShareWhole(float64(st[tracer.PyRunning])/n), units.ShareWhole(float64(st[tracer.PyNative])/n), units.ShareWhole(float64(st[tracer.PyTorch])/n), units.ShareWhole(float64(wait)/n)),
	}
	if ns, ok := f.Numbers["stage_ns_per_step"]; ok {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s a step on the step thread", quoteStage(rows[0].Stage), units.Duration(int64(ns))))
	}
	return f
}

func quoteStage(s string) string {
	if s == StageNone {
		return "outside any stage"
	}
	return s
}
