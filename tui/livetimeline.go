package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// opsKeeper keeps what a live command's Timeline needs between windows:
// the Python agent collects operators only in torch.profiler windows
// (RLKTOP_KINETO, 2 of every 10 steps by default), so most windows have
// step markers and nothing else (a selfplay run's Timeline
// showed "│30 │31 │32 │33" and no lane, following or after 0, with
// nothing saying why). It remembers the latest timeline with operators,
// shown under newer steps until a newer one has operators (0 fits them),
// and the step numbers operators were seen in, for the view's note.
type opsKeeper struct {
	last  *attrib.Timeline // the latest timeline with operators
	spans [][2]int64       // step ranges (first, last) with operators, oldest first
	count int64            // State.StepCount when last was taken (a restart drops it)
}

// maxOpSpans bounds the step ranges remembered (the note names the last).
const maxOpSpans = 4

// timeline returns what to draw for cur, the session's newest window
// timeline: cur itself when it has operators (remembered), else cur's
// steps over the latest operators seen (same sources, no restart since).
func (k *opsKeeper) timeline(cur *attrib.Timeline, stepCount int64) *attrib.Timeline {
	if stepCount < k.count {
		*k = opsKeeper{} // restarted: the operators were another run's
	}
	if cur == nil {
		return nil
	}
	if len(cur.Ops) > 0 {
		k.last, k.count = cur, stepCount
		k.note(cur)
		return cur
	}
	old := k.last
	if old == nil || !slices.Equal(old.Sources, cur.Sources) {
		return cur
	}
	c := *cur
	c.Lanes, c.Ops, c.Dropped = old.Lanes, old.Ops, old.Dropped
	c.CPU = append(slices.Clip(old.CPU), cur.CPU...)
	slices.SortStableFunc(c.CPU, func(a, b attrib.TimelineSpan) int { return cmp.Compare(a.StartNs, b.StartNs) })
	first := cur.EndNs
	if len(cur.Steps) > 0 {
		first = cur.Steps[0].StartNs
	}
	c.Steps = nil
	for _, s := range old.Steps {
		if s.StartNs < first {
			c.Steps = append(c.Steps, s)
		}
	}
	c.Steps = append(c.Steps, cur.Steps...)
	c.StartNs, c.EndNs = min(old.StartNs, cur.StartNs), max(old.EndNs, cur.EndNs)
	c.ShiftNs = cur.ShiftNs
	return &c
}

// note records the steps of tl that hold an operator.
func (k *opsKeeper) note(tl *attrib.Timeline) {
	var steps []int64
	for _, s := range tl.Steps {
		end := s.StartNs + s.DurNs
		// Ops are sorted by start: the first starting at or after the step's
		// end bounds the search; any before it that ends after the step's
		// start overlaps it.
		hi, _ := slices.BinarySearchFunc(tl.Ops, end, func(o attrib.TimelineOp, t int64) int { return cmp.Compare(o.StartNs, t) })
		if slices.ContainsFunc(tl.Ops[:hi], func(o attrib.TimelineOp) bool { return o.StartNs+o.DurNs > s.StartNs }) {
			steps = append(steps, s.Step)
		}
	}
	slices.Sort(steps)
	for _, n := range slices.Compact(steps) {
		if l := len(k.spans) - 1; l >= 0 && n >= k.spans[l][0] && n <= k.spans[l][1]+1 {
			k.spans[l][1] = max(k.spans[l][1], n)
			continue
		}
		if l := len(k.spans) - 1; l >= 0 && n < k.spans[l][0] {
			continue // older than what is known
		}
		k.spans = append(k.spans, [2]int64{n, n})
	}
	if len(k.spans) > maxOpSpans {
		k.spans = k.spans[len(k.spans)-maxOpSpans:]
	}
}

// viewNote is the Timeline's note for a view without operators: where
// the operators come from and which steps have them.
func (k *opsKeeper) viewNote() string {
	if len(k.spans) == 0 {
		return "operators come only from the Python agent's torch.profiler windows (RLKTOP_KINETO); none yet"
	}
	var parts []string
	if k.spans[0][0] > 1 && len(k.spans) == maxOpSpans {
		parts = append(parts, "…")
	}
	for _, s := range k.spans {
		if s[0] == s[1] {
			parts = append(parts, fmt.Sprint(s[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", s[0], s[1]))
		}
	}
	return "torch.profiler operators come from steps " + strings.Join(parts, ", ") + " (RLKTOP_KINETO windows); 0 fits the latest"
}

// pyAgent reports whether a child is the Python agent (its hello's
// Source is pyagent.Source, "pyagent"): its operators come from
// torch.profiler windows only.
func (l *live) pyAgent() bool {
	return l.state != nil && slices.ContainsFunc(l.state.Children, func(c livestate.Child) bool { return c.Hello.Source == "pyagent" })
}
