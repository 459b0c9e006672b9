package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
)

// waitSteps polls the session until pick returns n steps, the child ends
// (why says how) or the step timeout passes. past, when not nil, reports
// whether the child has already reported a step after the ones pick
// wants: once it has for gapWait and pick still has fewer than n, the
// missing ones will not come (a gap in the child's step numbers) and
// waitSteps returns what pick has, with no reason, instead of waiting out
// the step timeout while the child runs on.
func (r *runner) waitSteps(ctx context.Context, a *armRun, pick func(*livestate.State) []livestate.StepTime, n int, past func(*livestate.State) bool) ([]livestate.StepTime, string, error) {
	lv := r.lv
	last, lastAt := -1, time.Now()
	var pastAt time.Time
	for {
		st := lv.Session.Snapshot()
		r.observe(st)
		steps := pick(st)
		if len(steps) >= n {
			return steps[:n], "", nil
		}
		if len(steps) != last {
			last, lastAt = len(steps), time.Now()
			r.progress("arm %s: %d/%d steps of this segment (%d counted of %d)", a.name, len(steps), n, len(a.steps), r.o.Steps)
		}
		if s := lv.Sup.Status(); s.State != livestate.Running {
			// Frames may still be in flight: look once more after they land.
			lv.Session.Wait(time.Second)
			st = lv.Session.Snapshot()
			r.observe(st)
			steps = pick(st)
			if len(steps) >= n {
				return steps[:n], "", nil
			}
			why := fmt.Sprintf("stopped early after %d of %d steps of a segment: %s", len(steps), n, s.Describe())
			if err := ChildError(s); err != nil {
				why = fmt.Sprintf("stopped early after %d of %d steps of a segment: %v", len(steps), n, err)
			}
			return steps, why, nil
		}
		if past != nil && past(st) {
			if pastAt.IsZero() {
				pastAt = time.Now()
			} else if time.Since(pastAt) > gapWait {
				r.progress("arm %s: %d of %d steps of this segment came, and the child is past them: going on without the rest", a.name, len(steps), n)
				return steps, "", nil
			}
		} else {
			pastAt = time.Time{}
		}
		if time.Since(lastAt) > r.o.StepTimeout {
			return steps, fmt.Sprintf("no step for %s (after %d of %d steps of a segment)", r.o.StepTimeout, len(steps), n), nil
		}
		select {
		case <-ctx.Done():
			return nil, "", fmt.Errorf("compare: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// gapWait is how long waitSteps lets a step before later ones be late
// (frames of one connection arrive in order; this covers a step of one
// rank behind another's).
const gapWait = 5 * time.Second

// observe adds the steps of st not seen before to r.all.
func (r *runner) observe(st *livestate.State) {
	if r.allSeen == nil {
		r.allSeen = map[stepKey]bool{}
	}
	for _, s := range st.Steps {
		k := stepKey{s.PID, s.Step}
		if !r.allSeen[k] {
			r.allSeen[k] = true
			r.all = append(r.all, s)
		}
	}
}

// take labels a segment's steps: the first seg.Warmup are warm-up, the
// rest counted (up to what the arm still owes).
func (r *runner) take(a *armRun, seg Segment, steps []livestate.StepTime) {
	for i, s := range steps {
		ph := livestate.PhaseWarmup
		if i >= seg.Warmup && a.want > 0 {
			ph = livestate.PhaseCounted
			a.want--
			a.steps = append(a.steps, stepRef{pid: s.PID, step: s.Step, dur: s.DurNs})
		} else if i >= seg.Warmup {
			ph = livestate.PhaseExtra
		}
		l := livestate.StepLabel{PID: s.PID, Step: s.Step, Arm: a.name, Phase: ph, DurNs: s.DurNs}
		r.labels[stepKey{s.PID, s.Step}] = l
		if r.o.OnStep != nil {
			r.o.OnStep(l)
		}
	}
}

// schedule lists every step the session saw, in order, with its label;
// unlabelled steps ran under the arm of the step before them (same child)
// while a switch was on its way.
func (r *runner) schedule() []livestate.StepLabel {
	out := []livestate.StepLabel{}
	prev := map[int32]string{}
	for _, s := range r.all {
		l, ok := r.labels[stepKey{s.PID, s.Step}]
		if !ok {
			l = livestate.StepLabel{PID: s.PID, Step: s.Step, Arm: prev[s.PID], Phase: livestate.PhaseExtra, DurNs: s.DurNs}
		}
		prev[s.PID] = l.Arm
		out = append(out, l)
	}
	return out
}

// counterAt is one sample of a counter track the agent sent (its name and
// value), read back from a comparison's recording (compare_checks.go,
// compare_compile.go).
type counterAt struct {
	name string
	v    float64
}

// stepSpan is one step the session reported, with its arm label.
type stepSpan struct {
	s     livestate.StepTime
	label livestate.StepLabel
	ok    bool
}
