package attrib

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestKernelLaunchesHandCounts: handTrace's gemm row (counted by hand in
// its comment): three launches under aten::mm › forward in step 1 (10,
// 20, 30 ns) and one under the range backward in step 2 (10 ns), all four
// from every launch, not a timeline: by context 3/60 ns and 1/10 ns, by
// stage forward 3/60, backward 1/10, by step (newest first) 2: 1/10,
// 1: 3/60. The memcpy without a context has one group "" and no step.
func TestKernelLaunchesHandCounts(t *testing.T) {
	a := NewAggregator(nil)
	a.AddTrace(handTrace())
	s := a.Snapshot()
	g := s.Kernels[0].Launches
	if g == nil {
		t.Fatal("gemm row has no Launches")
	}
	if want := []LaunchGroup{{"aten::mm › forward", 3, 60}, {"backward", 1, 10}}; !slices.Equal(g.Contexts, want) {
		t.Errorf("contexts %+v, want %+v", g.Contexts, want)
	}
	if want := []LaunchGroup{{"forward", 3, 60}, {"backward", 1, 10}}; !slices.Equal(g.Stages, want) {
		t.Errorf("stages %+v, want %+v", g.Stages, want)
	}
	if want := []LaunchStep{{2, 1, 10}, {1, 3, 60}}; !slices.Equal(g.Steps, want) || g.OlderSteps.Count != 0 || g.NoStep.Count != 0 {
		t.Errorf("steps %+v older %+v none %+v, want %+v", g.Steps, g.OlderSteps, g.NoStep, want)
	}
	c := s.Transfers[0].Launches
	if c == nil || !slices.Equal(c.Contexts, []LaunchGroup{{"", 1, 50}}) || c.NoStep != (LaunchGroup{Count: 1, TotalNs: 50}) {
		t.Errorf("memcpy launches %+v", c)
	}
}

// TestKernelLaunchesOlderSteps: one kernel launched once (1 ns) in each of
// MaxLaunchSteps+6 steps lists the newest MaxLaunchSteps, newest first,
// and sums the 6 oldest in OlderSteps; Reset empties everything.
func TestKernelLaunchesOlderSteps(t *testing.T) {
	tr := tracer.NewTrace("test", "steps")
	k := tr.Strings.Intern("k")
	n := MaxLaunchSteps + 6
	for i := 0; i < n; i++ {
		tr.Contexts = append(tr.Contexts, tracer.Context{Step: int64(i)})
		tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindKernel, Name: k, Start: int64(10 * i), Dur: 1,
			Ctx: tracer.CtxID(len(tr.Contexts) - 1), TID: -1})
	}
	a := NewAggregator(nil)
	a.AddTrace(tr)
	l := a.Snapshot().Kernels[0].Launches
	if len(l.Steps) != MaxLaunchSteps || l.Steps[0].Step != int64(n-1) || l.Steps[MaxLaunchSteps-1].Step != 6 ||
		l.OlderSteps != (LaunchGroup{Count: 6, TotalNs: 6}) {
		t.Errorf("steps %d (first %+v) older %+v", len(l.Steps), l.Steps[0], l.OlderSteps)
	}
	a.Reset()
	if ks := a.Snapshot().Kernels; len(ks) != 0 {
		t.Errorf("after Reset: %d rows", len(ks))
	}
}

// TestKernelLaunchesStepsOutOfOrder: launches of 3×MaxLaunchSteps steps
// (step i launched i%5+1 times, i ns each) arriving in random order list
// the MaxLaunchSteps largest steps with their own counts, newest first,
// and sum every other step's launches in OlderSteps — counted here from
// the steps themselves, not from the aggregator.
func TestKernelLaunchesStepsOutOfOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tr := tracer.NewTrace("test", "steps")
	k := tr.Strings.Intern("k")
	n := 3 * MaxLaunchSteps
	for i := range n {
		tr.Contexts = append(tr.Contexts, tracer.Context{Step: int64(i)})
		for range i%5 + 1 {
			tr.Events = append(tr.Events, tracer.Event{Kind: tracer.KindKernel, Name: k, Dur: int64(i), Ctx: tracer.CtxID(i + 1), TID: -1})
		}
	}
	rng.Shuffle(len(tr.Events), func(i, j int) { tr.Events[i], tr.Events[j] = tr.Events[j], tr.Events[i] })
	a := NewAggregator(nil)
	a.AddEvents(tr.Events, tr.Strings, tr.Contexts)
	l := a.Snapshot().Kernels[0].Launches
	var want []LaunchStep
	var older LaunchGroup
	for i := n - 1; i >= 0; i-- {
		c := int64(i%5 + 1)
		if i >= n-MaxLaunchSteps {
			want = append(want, LaunchStep{Step: int64(i), Count: c, TotalNs: c * int64(i)})
		} else {
			older.Count += c
			older.TotalNs += c * int64(i)
		}
	}
	if !slices.Equal(l.Steps, want) || l.OlderSteps != older {
		t.Errorf("steps %v\nwant %v\nolder %+v, want %+v", l.Steps, want, l.OlderSteps, older)
	}
}
