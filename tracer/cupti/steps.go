package cupti

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/rlktop/rlktop/tracer"
)

// EnvStepRange carries `rlktop run --step-range REGEX` to the traced
// process.
const EnvStepRange = "RLKTOP_STEP_RANGE"

var (
	// DefaultStepRange matches ranges named like a training step:
	// "step", "step 3", "step#3", "train_step", "iteration 12", "iter_7".
	DefaultStepRange = regexp.MustCompile(`(?i)^(train[_ ]?)?(step|iteration|iter)\b`)
	profilerStep     = regexp.MustCompile(`^ProfilerStep#(\d+)$`)
	trailingNumber   = regexp.MustCompile(`(\d+)\s*$`)
)

// StepRule turns the NVTX ranges that mark training steps into KindStep
// events (Value = the step number), as the Kineto importer does with
// ProfilerStep#N. With a user regex, ranges whose name it matches are
// steps. By default, ranges matching DefaultStepRange are steps; until the
// first of those is seen, torch.profiler's ProfilerStep#N ranges are used
// instead (after it, they stay plain ranges). The number is the last
// integer in the name, else a per-thread count from 0. Not safe for
// concurrent use.
type StepRule struct {
	re       *regexp.Regexp // nil: default rule
	stepLike bool           // default rule: a DefaultStepRange match was seen
	count    map[int32]int64
	memo     map[tracer.StrID]int8 // 0 unknown, 1 step-like / user match, 2 ProfilerStep, 3 no
}

// NewStepRule compiles expr ("" = the default rule). The error names the
// option and the bad expression.
func NewStepRule(expr string) (*StepRule, error) {
	r := &StepRule{count: map[int32]int64{}, memo: map[tracer.StrID]int8{}}
	if expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("--step-range %q: %w", expr, err)
		}
		r.re = re
	}
	return r, nil
}

func (r *StepRule) class(id tracer.StrID, strs *tracer.Strings) int8 {
	if c, ok := r.memo[id]; ok {
		return c
	}
	name := strs.Get(id)
	c := int8(3)
	switch {
	case r.re != nil:
		if r.re.MatchString(name) {
			c = 1
		}
	case DefaultStepRange.MatchString(name):
		c = 1
	case profilerStep.MatchString(name):
		c = 2
	}
	r.memo[id] = c
	return c
}

// Apply rewrites, in place, the KindRange events of evs that mark steps.
// Names are ids of strs.
func (r *StepRule) Apply(evs []tracer.Event, strs *tracer.Strings) {
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindRange {
			continue
		}
		c := r.class(e.Name, strs)
		switch {
		case c == 1:
			if r.re == nil {
				r.stepLike = true
			}
		case c == 2 && !r.stepLike:
		default:
			continue
		}
		e.Kind = tracer.KindStep
		if m := trailingNumber.FindStringSubmatch(strs.Get(e.Name)); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				e.Value = n
				continue
			}
		}
		e.Value = r.count[e.TID]
		r.count[e.TID]++
	}
}
