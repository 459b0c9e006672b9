package loop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// agentCompiles marks invalid, in out and r.arms, every arm whose
// torch.compile compiled frames during counted steps (the Python agent's
// attrib.CompileFramesCounter, per step: first compiles and recompiles
// after a guard failed). Compiling in warm-up steps is expected; in a
// counted step the step time includes the compilation (seconds against
// milliseconds), so the arm's timings compare compile work, not the flag:
// it is named invalid with the steps, as NaN outputs are (agentChecks),
// never "faster". Source: PyTorch's torch.compile troubleshooting guide (recompilations: each
// guard failure compiles the frame again, up to cache_size_limit).
//
// spans are the session's steps in time order with their labels; per
// holds each span's counter samples.
func (r *runner) agentCompiles(spans []stepSpan, per map[int][]counterAt, armIdx map[string]int, out []attrib.ArmSteps) {
	type hit struct {
		step   int64
		frames float64
	}
	byArm := map[int][]hit{}
	for i, cs := range per {
		if i < 0 || i >= len(spans) || spans[i].label.Phase != livestate.PhaseCounted {
			continue
		}
		ai, ok := armIdx[spans[i].label.Arm]
		if !ok {
			continue
		}
		for _, c := range cs {
			if c.name == attrib.CompileFramesCounter && c.v > 0 {
				byArm[ai] = append(byArm[ai], hit{spans[i].s.Step, c.v})
			}
		}
	}
	for ai, hs := range byArm {
		slices.SortFunc(hs, func(a, b hit) int { return int(a.step - b.step) })
		ss := make([]string, len(hs))
		total := 0.0
		for i, h := range hs {
			ss[i] = fmt.Sprintf("%d (%.0f)", h.step, h.frames)
			total += h.frames
		}
		why := fmt.Sprintf("torch.compile compiled %.0f frames during counted steps %s (recompiles after warm-up: guards failed; the step times include compilation)",
			total, strings.Join(ss, ", "))
		r.invalidate(out, ai, why)
	}
}
