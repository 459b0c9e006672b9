package cupti

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
		r.Apply(c.in, strs)
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
