package loop

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// liveExec runs every segment in the one running child (the built-in loop,
// or a command through the Python agent), switching arms over the
// control channel.
type liveExec struct{ *runner }

// execute runs segs in the one child. The switch to the
// next segment's arm is sent while the current segment's last step runs,
// so it normally takes effect right after it; the child's acknowledgement
// says at which step it did, and a segment's steps end there. A segment
// cut short (the switch landed a step early) leaves its arm owing steps;
// they are run in make-up segments at the end (at most 3 rounds).
func (r liveExec) execute(ctx context.Context, segs []Segment) error {
	o := r.o
	queue := segs
	var pid int32
	cur := queue[0]
	queue = queue[1:]
	first := true
	// The first segment starts at the first step the child reports: the
	// built-in loop numbers from 0, the Python agent from 1 (a boundary
	// ends a step, so step 0 ends before the first it sees). An attached
	// process started with none of the arm's flags: it starts at the step
	// they took effect.
	var s0 int64
	var why string
	var err error
	if r.o.Attach != 0 {
		a := r.arms[cur.Arm]
		keys := append(slices.Sorted(maps.Keys(a.flags)), pyagent.ArmKey)
		pid, s0, err = r.switchLiveKeys(ctx, a, keys)
		if err == nil && a.invalid != "" {
			r.failAll("arm " + a.name + ": " + a.invalid)
			return nil
		}
	} else {
		s0, why, err = r.firstStep(ctx, r.arms[cur.Arm], &pid)
	}
	if err != nil {
		return err
	}
	if why != "" {
		r.failAll("stopped early: the child ended before its first step (" + why + ")")
		return nil
	}
	for makeup := 0; ; {
		a := r.arms[cur.Arm]
		need := int64(cur.Warmup + cur.Count)
		end := s0 + need // exclusive
		// The next segment whose arm can still run.
		for len(queue) > 0 && r.arms[queue[0].Arm].invalid != "" {
			queue = queue[1:]
		}
		if len(queue) == 0 && makeup < 3 {
			// Make-up: arms still owing steps after this segment.
			var more []Segment
			for i, x := range r.arms {
				owe := x.want
				if i == cur.Arm {
					owe -= int(need) - cur.Warmup
				}
				if x.invalid == "" && owe > 0 {
					more = append(more, Segment{Arm: i, Warmup: o.Warmup, Count: owe})
				}
			}
			if len(more) > 0 {
				makeup++
				queue = more
			}
		}
		var next *Segment
		if len(queue) > 0 {
			next = &queue[0]
			queue = queue[1:]
		}
		var s1 int64 = -1
		var refused bool
		if next != nil {
			// Send the switch once step end-2 is done (the last step runs).
			if need >= 2 {
				_, why, err := r.waitSteps(ctx, a, func(st *livestate.State) []livestate.StepTime {
					return r.stepsOf(st, &pid, first, s0, end-1)
				}, int(need-1), func(st *livestate.State) bool { return r.pastStep(st, pid, end-1) })
				if err != nil {
					return err
				}
				if why != "" {
					r.failAll("stopped early: the child ended during arm " + a.name + "'s segment (" + why + ")")
					return nil
				}
			}
			na := r.arms[next.Arm]
			p, step, err := r.switchLive(ctx, na)
			if err != nil {
				return err
			}
			switch {
			case na.invalid != "" && r.lv.Sup.Status().State != livestate.Running:
				r.failAll("stopped early: the child ended during arm " + a.name + "'s segment")
				return nil
			case na.invalid != "":
				// Refused: the flags may be half switched from some step on;
				// drop this segment's last step and switch again next round.
				refused = true
				end--
			default:
				pid, s1 = p, step
				end = min(end, s1)
			}
		}
		steps, why, err := r.waitSteps(ctx, a, func(st *livestate.State) []livestate.StepTime {
			return r.stepsOf(st, &pid, first, s0, end)
		}, int(end-s0), func(st *livestate.State) bool { return r.pastStep(st, pid, end) })
		if err != nil {
			return err
		}
		r.take(a, Segment{Arm: cur.Arm, Warmup: cur.Warmup, Count: int(end-s0) - cur.Warmup}, steps)
		if why != "" {
			r.failAll("stopped early: the child ended during arm " + a.name + "'s segment (" + why + ")")
			return nil
		}
		first = false
		if next == nil {
			return nil
		}
		if refused {
			// Put the current arm's flags back in force before going on.
			for len(queue) > 0 && r.arms[queue[0].Arm].invalid != "" {
				queue = queue[1:]
			}
			if len(queue) == 0 {
				return nil
			}
			nx := queue[0]
			queue = queue[1:]
			p, step, err := r.switchLive(ctx, r.arms[nx.Arm])
			if err != nil {
				return err
			}
			if r.arms[nx.Arm].invalid != "" {
				r.failAll("not run: a flag switch was refused and the next one failed too")
				return nil
			}
			pid, s1, next = p, step, &nx
		}
		if ctx.Err() != nil {
			return fmt.Errorf("compare: %w", ctx.Err())
		}
		cur, s0 = *next, s1
		r.progress("arm %s from step %d", r.arms[cur.Arm].name, s0)
	}
}

// firstStep waits for the first step a child reports and returns its
// number, setting *pid to that child; why says why none came (the child
// ended, or no step within the step timeout).
func (r liveExec) firstStep(ctx context.Context, a *armRun, pid *int32) (int64, string, error) {
	steps, why, err := r.waitSteps(ctx, a, func(st *livestate.State) []livestate.StepTime {
		all := r.stepsOf(st, pid, true, math.MinInt64, math.MaxInt64)
		if len(all) == 0 {
			return nil
		}
		return []livestate.StepTime{slices.MinFunc(all, func(x, y livestate.StepTime) int { return cmp.Compare(x.Step, y.Step) })}
	}, 1, nil)
	if err != nil || why != "" {
		return 0, why, err
	}
	return steps[0].Step, "", nil
}

// stepsOf picks the steps numbered [from, to) of child *pid (the first
// child to report a step, when first and *pid is 0). The ranks of a
// distributed job (several processes whose hellos name a world > 1) count
// a step once every rank has finished it, as long as the slowest rank's
// (livestate.State.RankSteps), whichever rank *pid is.
func (r liveExec) stepsOf(st *livestate.State, pid *int32, first bool, from, to int64) []livestate.StepTime {
	steps := st.Steps
	ranks := st.RankSteps()
	if ranks != nil {
		steps = ranks
	}
	var out []livestate.StepTime
	for _, s := range steps {
		if first && *pid == 0 {
			*pid = s.PID
		}
		if (s.PID == *pid || ranks != nil) && s.Step >= from && s.Step < to {
			out = append(out, s)
		}
	}
	return out
}

// pastStep reports whether child pid (any, when 0) reported a step
// numbered to or later; for a distributed job, whether every rank did
// (as stepsOf counts them).
func (r liveExec) pastStep(st *livestate.State, pid int32, to int64) bool {
	if ranks := st.RankSteps(); ranks != nil {
		return slices.ContainsFunc(ranks, func(s livestate.StepTime) bool { return s.Step >= to })
	}
	return slices.ContainsFunc(st.Steps, func(s livestate.StepTime) bool { return (pid == 0 || s.PID == pid) && s.Step >= to })
}

// switchKeys are the flags a switch to arm a sends: those that vary
// between arms and that a sets, and always "attention" (set to a's value,
// which may be the one in force), so that every switch is acknowledged
// with a step number even when the arms' flags are all the same (an A/A
// run, or A′). It fills a.flags["attention"] from the loop's default when
// a does not set it.
func (r liveExec) switchKeys(a *armRun) []string {
	var keys []string
	for _, k := range r.vary {
		if _, ok := a.flags[k]; ok {
			keys = append(keys, k)
		}
	}
	if r.agent {
		// The agent acknowledges its arm label at the next step boundary
		// and changes nothing for it (pyagent.ArmKey).
		return append(keys, pyagent.ArmKey)
	}
	if _, ok := a.flags["attention"]; !ok {
		a.flags["attention"] = demo.DefaultConfig().Attention
	}
	if !slices.Contains(keys, "attention") {
		keys = append(keys, "attention")
	}
	return keys
}

// switchLive sets arm a's varying flags over the control channel and
// waits for every acknowledgement; it returns the child's pid and the step
// at which all of them were in force. A refused value, or a child that is
// gone, makes a invalid.
func (r liveExec) switchLive(ctx context.Context, a *armRun) (int32, int64, error) {
	return r.switchLiveKeys(ctx, a, r.switchKeys(a))
}

// switchLiveKeys is switchLive setting keys (switchKeys, or all of an
// arm's flags at attach).
func (r liveExec) switchLiveKeys(ctx context.Context, a *armRun, keys []string) (int32, int64, error) {
	lv := r.lv
	if lv.Sup.Status().State != livestate.Running {
		a.invalid = "stopped early: " + lv.Sup.Status().Describe()
		return 0, 0, nil
	}
	st0 := lv.Session.Snapshot()
	nMarks, nRef := len(st0.Marks), len(st0.Refusals)
	kv := make([]msg.KV, 0, len(keys))
	for _, k := range keys {
		v := a.flags[k]
		if r.agent && k == pyagent.ArmKey {
			v = a.name
		} else {
			lv.noteFlags(map[string]string{k: v}, false)
		}
		kv = append(kv, msg.KV{Key: k, Value: v})
	}
	// All keys in one write: the child applies them at one step boundary.
	seqs, err := lv.Session.SetFlags(kv)
	if err != nil {
		a.invalid = fmt.Sprintf("setting %v: %v", kv, err)
		return 0, 0, nil
	}
	deadline := time.Now().Add(r.o.StepTimeout)
	for {
		st := lv.Session.Snapshot()
		// The ranks of a distributed job (hello world > 1) each
		// acknowledge at their own step boundary: a key is in force once
		// every connected rank acknowledged it, from the latest step.
		ranks := map[int64]bool{}
		for _, c := range st.Children {
			if c.Connected && c.Hello.World > 1 {
				ranks[c.Hello.PID] = true
			}
		}
		acked := map[string]livestate.Mark{}
		ackedBy := map[string]map[int64]bool{}
		for _, m := range st.Marks[nMarks:] {
			if p, ok := acked[m.Key]; ok && ranks[m.PID] {
				m.Step = max(m.Step, p.Step)
			}
			acked[m.Key] = m
			if ackedBy[m.Key] == nil {
				ackedBy[m.Key] = map[int64]bool{}
			}
			ackedBy[m.Key][m.PID] = true
		}
		if len(ranks) > 1 {
			for k, by := range ackedBy {
				for pid := range ranks {
					if !by[pid] {
						delete(acked, k) // not yet in force on every rank
					}
				}
			}
		}
		for _, rf := range st.Refusals[min(nRef, len(st.Refusals)):] {
			if slices.Contains(seqs, rf.Seq) {
				a.invalid = rf.String()
				return 0, 0, nil
			}
		}
		var pid int32
		step, all := int64(0), true
		for _, k := range keys {
			m, ok := acked[k]
			if !ok {
				all = false
				break
			}
			pid, step = int32(m.PID), max(step, m.Step)
		}
		if all {
			return pid, step, nil
		}
		if s := lv.Sup.Status(); s.State != livestate.Running {
			a.invalid = "stopped early: " + s.Describe()
			return 0, 0, nil
		}
		if time.Now().After(deadline) {
			a.invalid = fmt.Sprintf("no acknowledgement of the flag switch within %s", r.o.StepTimeout)
			if r.agent {
				a.invalid += fmt.Sprintf(" (%s are switched by rlktop's Python agent: is the command a Python program that reaches a step boundary — rlktop.step() or an optimizer step? --no-agent restarts it with environment variables instead)", strings.Join(r.vary, ", "))
			}
			return 0, 0, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("compare: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
