package steps

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

func TestStepRule(t *testing.T) {
	strs := tracer.NewStrings()
	rng := func(name string, tid int32) tracer.Event {
		return tracer.Event{Kind: tracer.KindRange, Name: strs.Intern(name), TID: tid}
	}
	type res struct {
		kind  tracer.Kind
		value int64
	}
	cases := []struct {
		expr string
		in   []tracer.Event
		want []res
	}{
		{"", []tracer.Event{rng("ProfilerStep#7", 1), rng("forward", 1), rng("ProfilerStep#8", 1)},
			[]res{{tracer.KindStep, 7}, {tracer.KindRange, 0}, {tracer.KindStep, 8}}},
		// step-like names win over ProfilerStep once seen; unnumbered steps count per thread.
		{"", []tracer.Event{rng("step", 1), rng("ProfilerStep#3", 1), rng("step", 2), rng("step", 1), rng("iteration 41", 1), rng("stepper", 1)},
			[]res{{tracer.KindStep, 0}, {tracer.KindRange, 0}, {tracer.KindStep, 0}, {tracer.KindStep, 1}, {tracer.KindStep, 41}, {tracer.KindRange, 0}}},
		{`^rollout$`, []tracer.Event{rng("rollout", 1), rng("step", 1), rng("rollout", 1)},
			[]res{{tracer.KindStep, 0}, {tracer.KindRange, 0}, {tracer.KindStep, 1}}},
	}
	for i, c := range cases {
		r, err := NewStepRule(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		r.Apply(c.in, strs.Get)
		for j, w := range c.want {
			if g := (res{c.in[j].Kind, c.in[j].Value}); g != w {
				t.Errorf("case %d event %d (%s): got %+v want %+v", i, j, strs.Get(c.in[j].Name), g, w)
			}
		}
	}
	if _, err := NewStepRule("("); err == nil {
		t.Error("bad regex accepted")
	}
}

// With no step range, fixed windows become steps after the grace period:
// events over [1000, 3600) ns with 1000 ns windows and 1500 ns of grace
// give windows [1000,2000) and [2000,3000) (the third ends at 4000, after
// the last event); a real step range stops them.
func TestStepWindows(t *testing.T) {
	r, err := NewStepRule("")
	if err != nil {
		t.Fatal(err)
	}
	r.SetWindow(1000, 1500)
	strs := tracer.NewStrings()
	k := strs.Intern("kernel")
	batch := func(start, end int64) []tracer.Event {
		return []tracer.Event{
			{Kind: tracer.KindRuntime, Name: k, Start: start, Dur: 1, PID: 4, TID: 9},
			{Kind: tracer.KindKernel, Name: k, Start: start, Dur: end - start, PID: 4, TID: -1},
		}
	}
	b := batch(1000, 2400)
	r.Apply(b, strs.Get)
	if w := r.Windows(b); w != nil {
		t.Fatalf("inside the grace period: %v", w)
	}
	b = batch(2500, 3600)
	r.Apply(b, strs.Get)
	w := r.Windows(b)
	if len(w) != 2 || w[0].Start != 1000 || w[0].Dur != 1000 || w[0].Value != 0 || w[1].Start != 2000 || w[1].Value != 1 ||
		w[0].Kind != tracer.KindStep || w[0].TID != 9 || w[0].PID != 4 {
		t.Fatalf("windows %+v", w)
	}
	st := strs.Intern("step 7")
	b = append(batch(3600, 5200), tracer.Event{Kind: tracer.KindRange, Name: st, Start: 3600, Dur: 100, TID: 9})
	r.Apply(b, strs.Get)
	if w := r.Windows(b); w != nil {
		t.Fatalf("after a real step range: %v", w)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvStepRange: "(", EnvStepWindow: "250"}
	var warned error
	r := FromEnv(func(k string) string { return env[k] }, func(err error) { warned = err })
	if warned == nil || r.re != nil {
		t.Fatalf("bad regex: warned %v, rule regex %v (want a warning and the default rule)", warned, r.re)
	}
	if r.windowNs != 250_000_000 || r.graceNs != 5_000_000_000 {
		t.Fatalf("window %d grace %d", r.windowNs, r.graceNs)
	}
	env = map[string]string{EnvStepRange: "^it", EnvStepWindow: "0"}
	r = FromEnv(func(k string) string { return env[k] }, func(err error) { t.Fatal(err) })
	if r.re == nil || r.windowNs != 0 {
		t.Fatalf("user regex %v, window %d", r.re, r.windowNs)
	}
}

// TestApplyTrace: a file's step rule. Step-like ranges win (unnumbered
// ones counted per thread in start order, whatever the file order) and
// the importer's ProfilerStep#N steps turn back into ranges; without
// step-like ranges ProfilerStep#N (as a range or as the importer's step)
// cuts the steps.
func TestApplyTrace(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	s := tr.Strings.Intern
	tr.Events = []tracer.Event{
		{Kind: tracer.KindRange, Name: s("train_step"), Start: 200, Dur: 100, TID: 1},
		{Kind: tracer.KindStep, Name: s("ProfilerStep#3"), Start: 0, Dur: 400, TID: 1, Value: 3},
		{Kind: tracer.KindRange, Name: s("train_step"), Start: 100, Dur: 100, TID: 1},
		{Kind: tracer.KindRange, Name: s("iteration 12"), Start: 100, Dur: 100, TID: 2},
		{Kind: tracer.KindRange, Name: s("forward"), Start: 110, Dur: 10, TID: 1},
	}
	if got := ApplyTrace(tr); got != RuleStepRanges {
		t.Fatalf("rule %q", got)
	}
	want := []struct {
		kind  tracer.Kind
		value int64
	}{{tracer.KindStep, 1}, {tracer.KindRange, 0}, {tracer.KindStep, 0}, {tracer.KindStep, 12}, {tracer.KindRange, 0}}
	for i, w := range want {
		if e := tr.Events[i]; e.Kind != w.kind || e.Value != w.value {
			t.Errorf("event %d (%s): %v %d, want %v %d", i, tr.Name(&e), e.Kind, e.Value, w.kind, w.value)
		}
	}

	tr = tracer.NewTrace("test", "")
	tr.Events = []tracer.Event{
		{Kind: tracer.KindRange, Name: tr.Strings.Intern("ProfilerStep#7"), Start: 0, Dur: 10},
		{Kind: tracer.KindRange, Name: tr.Strings.Intern("env.step"), Start: 1, Dur: 2}, // not at the start: no step
	}
	if got := ApplyTrace(tr); got != RuleProfilerStep || tr.Events[0].Kind != tracer.KindStep || tr.Events[0].Value != 7 || tr.Events[1].Kind != tracer.KindRange {
		t.Errorf("ProfilerStep file: rule %q, events %+v", got, tr.Events)
	}
	tr = tracer.NewTrace("test", "")
	if got := ApplyTrace(tr); got != RuleNone {
		t.Errorf("empty trace: rule %q", got)
	}
}
