package loop

import (
	"context"
	"fmt"

	"github.com/rlktop/rlktop/tracer/livestate"
)

// restartExec runs every segment in a fresh child started with the arm's
// flags (environment variables for a command) and cuts its steps from
// the steps the session reports for the new process(es).
type restartExec struct {
	*runner
	seen map[int32]bool // pids of earlier segments
	prev *armRun        // the previous segment's arm
}

func (r *restartExec) execute(ctx context.Context, segs []Segment) error {
	for si, seg := range segs {
		if ctx.Err() != nil {
			return fmt.Errorf("compare: %w", ctx.Err())
		}
		a := r.arms[seg.Arm]
		if a.invalid != "" {
			continue // a restart arm that already failed is not retried
		}
		if err := r.restartSegment(ctx, si == 0, seg, a); err != nil {
			return err
		}
	}
	if prev := r.prev; prev != nil && prev.invalid == "" {
		if s := r.lv.Sup.Status(); s.State == livestate.Exited && (s.ExitCode != 0 || s.Signal != "") {
			prev.invalid = fmt.Sprintf("the child of one of its segments %s", s.Describe())
		}
	}
	// Steps still owed (a restart arm that failed) leave the arm short;
	// attrib.CompareArms marks it invalid with the count.
	return nil
}

// restartSegment (re)starts the child with arm a's flags (environment for
// a command) and waits for seg's warm-up and counted steps from it.
func (r *restartExec) restartSegment(ctx context.Context, first bool, seg Segment, a *armRun) error {
	lv := r.lv
	st := lv.Session.Snapshot()
	for _, s := range st.Steps {
		r.seen[s.PID] = true
	}
	if !first {
		// The previous segment's child may have ended by itself after its
		// steps were counted: a non-zero exit still makes its arm invalid.
		if prev := r.prev; prev != nil && prev.invalid == "" {
			if s := lv.Sup.Status(); s.State == livestate.Exited && (s.ExitCode != 0 || s.Signal != "") {
				prev.invalid = fmt.Sprintf("the child of one of its segments %s", s.Describe())
			}
		}
		lv.noteFlags(r.startFlags(a), true)
		if err := lv.Restart(); err != nil {
			a.invalid = "the child did not start: " + err.Error()
			return nil
		}
	}
	r.progress("arm %s: restarted (pid %d)", a.name, lv.Sup.Status().PID)
	r.prev = a
	need := seg.Warmup + seg.Count
	var pid int32 = -1
	steps, why, err := r.waitSteps(ctx, a, func(st *livestate.State) []livestate.StepTime {
		// A distributed job: the new ranks' steps, each counted once every
		// new rank finished it (livestate.State.RankStepsOf).
		if rs := st.RankStepsOf(func(p int32) bool { return !r.seen[p] }); rs != nil {
			return rs[:min(len(rs), need)]
		}
		var out []livestate.StepTime
		for _, s := range st.Steps {
			if r.seen[s.PID] {
				continue
			}
			if pid < 0 {
				pid = s.PID
			}
			if s.PID == pid && len(out) < need {
				out = append(out, s)
			}
		}
		return out
	}, need, nil)
	if err != nil {
		return err
	}
	r.take(a, seg, steps)
	if why != "" {
		a.invalid = why
	}
	return nil
}
