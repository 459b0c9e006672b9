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
