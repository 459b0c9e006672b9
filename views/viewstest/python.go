package viewstest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// BigPython is a Python profile of n functions for the frame benchmark:
// function i (from 1) is called by function (i-1)/8 (an 8-ary call tree,
// 6 deep at 100k functions), and each function is the innermost frame of
// one stack, its path from function 0. Function i's self samples are n-i
// (+1), in stage i%4 of "forward", "backward", "optimizer" and "env_step",
// in state i%7, on the step thread unless i%3 is 0; one sample is 10 ms.
// shift takes 2 samples from every seventh function, which then trades
// places with the next, as rows move between two live snapshots.
func BigPython(n int, shift bool) *attrib.PyProfile {
	const period = 10_000_000
	p := &attrib.PyProfile{Stages: []string{attrib.StageNone, "forward", "backward", "optimizer", "env_step"},
		Stacks: [][]int32{nil}, PeriodNs: period, Steps: 100}
	for i := 0; i < n; i++ {
		p.Funcs = append(p.Funcs, attrib.PyFunc{Function: fmt.Sprintf("Trainer.layer_%d.forward", i),
			File: fmt.Sprintf("/usr/lib/python3/dist-packages/model/pkg%d/layer_%d.py", i%50, i), Line: 10 + i%400})
		var st []int32
		if i > 0 {
			parent := p.Stacks[(i-1)/8+1]
			st = append(slices.Clip(parent), int32(i))
		} else {
			st = []int32{0}
		}
		p.Stacks = append(p.Stacks, st)
		samples := int64(n - i)
		if shift && i%7 == 0 && i+1 < n {
			samples-- // below its neighbour's n-i-1: they trade places
			samples--
		}
		c := attrib.PyCell{Stage: int32(1 + i%4), Stack: int32(i + 1), State: tracer.PyState(i % tracer.PyStates),
			StepThread: i%3 != 0, Samples: samples, WeightNs: samples * period}
		p.Cells = append(p.Cells, c)
		p.Samples += c.Samples
		p.WeightNs += c.WeightNs
		if c.StepThread {
			p.StepSamples += c.Samples
		}
	}
	slices.SortFunc(p.Cells, func(x, y attrib.PyCell) int {
		return cmp.Or(cmp.Compare(x.Stage, y.Stage), cmp.Compare(x.Stack, y.Stack), cmp.Compare(x.State, y.State))
	})
	return p
}
