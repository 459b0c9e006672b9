package loop

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// addRows reads the recording back and adds every counted step, with the
// GPU events launched in it aggregated, to its arm. For a command it also
// returns, per arm, an arm of its profiled steps only (those with GPU
// events): without a GPU tracer the Python agent's torch.profiler windows
// cover some steps only (2 of every 10), and a step outside them is not a
// step without kernels; rowsOf then compares rows over those.
func (r *runner) addRows(t *tracer.Trace, out []attrib.ArmSteps) (profiled []attrib.ArmSteps) {
	want := map[stepKey]bool{}
	for _, a := range r.arms {
		for _, s := range a.steps {
			want[stepKey{s.pid, s.step}] = true
		}
	}
	per := map[stepKey][]tracer.Event{}
	for i := range t.Events {
		e := &t.Events[i]
		if !e.Kind.IsGPU() || e.Kind == tracer.KindGPURange {
			continue
		}
		k := stepKey{e.PID, t.Contexts[e.Ctx].Step}
		if want[k] {
			per[k] = append(per[k], *e)
		}
	}
	// The built-in loop's update steps (an "update" range) run 3–10× longer
	// than collection steps; every arm counts the same share of them, and
	// the bootstrap keeps that share (attrib.ArmSteps.Strata).
	updateID, hasUpdate := t.Strings.Lookup("update")
	isUpdate := func(evs []tracer.Event) bool {
		for i := range evs {
			for _, rg := range t.Contexts[evs[i].Ctx].Ranges {
				if rg == updateID {
					return true
				}
			}
		}
		return false
	}
	agg := attrib.NewAggregator(r.o.Rules)
	if !r.builtin {
		profiled = make([]attrib.ArmSteps, len(out))
		for i := range out {
			profiled[i] = attrib.ArmSteps{Name: out[i].Name, Flags: out[i].Flags, Valid: out[i].Valid, Reason: out[i].Reason}
		}
	}
	for i, a := range r.arms {
		for _, s := range a.steps {
			evs := per[stepKey{s.pid, s.step}]
			agg.Reset()
			agg.AddEvents(evs, t.Strings, t.Contexts)
			snap := agg.Snapshot()
			out[i].AddStep(s.dur, snap)
			if profiled != nil && len(evs) > 0 {
				profiled[i].AddStep(s.dur, snap)
			}
			if r.builtin && hasUpdate {
				st := int32(0)
				if isUpdate(evs) {
					st = 1
				}
				out[i].Strata = append(out[i].Strata, st)
			}
		}
	}
	return profiled
}

// rowsOf compares the rows of arms a and b (and A′) over their profiled
// steps only (addRows), when some counted step of any arm was not
// profiled; ok false when every step was (the step arms' rows stand), or
// with a note and no rows when an arm has no profiled step at all (its
// rows would read "only in A" for work it did). MinSteps does not apply:
// the step arms decide validity.
func (r *runner) rowsOf(steps, profiled []attrib.ArmSteps, a, b int, noise int, o attrib.StatsOptions) (rows []attrib.RowComparison, note string, ok bool) {
	if profiled == nil {
		return nil, "", false
	}
	all := true
	for i := range steps {
		all = all && len(profiled[i].StepNs) == len(steps[i].StepNs)
	}
	if all {
		return nil, "", false
	}
	var counts []string
	for i := range steps {
		counts = append(counts, fmt.Sprintf("%s %d of %d", steps[i].Name, len(profiled[i].StepNs), len(steps[i].StepNs)))
	}
	for _, i := range []int{a, b, noise} {
		if i >= 0 && len(profiled[i].StepNs) == 0 {
			return []attrib.RowComparison{}, fmt.Sprintf("no per-kernel, category or stage rows: arm %s has no profiled step (steps with GPU events: %s; without a GPU tracer the Python agent profiles 2 of every 10 steps): run more --steps", steps[i].Name, strings.Join(counts, ", ")), true
		}
	}
	var nz *attrib.ArmSteps
	if noise >= 0 {
		nz = &profiled[noise]
	}
	o.MinSteps = 1
	if o.MinRowSteps <= 0 {
		o.MinRowSteps = attrib.DefaultMinRowSteps
	}
	c := attrib.CompareArms(profiled[a], profiled[b], nz, o)
	note = "rows compare the profiled steps only (steps with GPU events: " + strings.Join(counts, ", ") + ")"
	if min(len(profiled[a].StepNs), len(profiled[b].StepNs)) < o.MinRowSteps {
		note += fmt.Sprintf("; with fewer than %d in an arm a row has its ratio only, no interval and no verdict (%q): run more --steps", o.MinRowSteps, attrib.VerdictFew)
	}
	return c.Rows, note, true
}

// probe evaluates the built-in loop's probe batch under arm a's flags
// (over the common ones) with the initial weights.
func (r *runner) probe(a *armRun) ([]float32, error) {
	cfg := demo.DefaultConfig()
	for _, m := range []map[string]string{r.common, a.flags} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := cfg.ParseFlag(k, m[k]); err != nil {
				return nil, err
			}
		}
	}
	return demo.Probe(cfg)
}

// consistency evaluates the probe under each arm's flags (in this process,
// initial weights from the arm's seed) and compares it with arm A's. An
// arm whose probe holds NaN becomes invalid.
func (r *runner) consistency(out []attrib.ArmSteps) []livestate.ArmConsistency {
	probes := make([][]float32, len(r.arms))
	errs := make([]error, len(r.arms))
	for i, a := range r.arms {
		if i == len(r.o.Arms) {
			break // A′: the same flags as A (its seed only changes the weights)
		}
		probes[i], errs[i] = r.probe(a)
	}
	var cs []livestate.ArmConsistency
	for i := range r.o.Arms {
		c := livestate.ArmConsistency{Arm: r.arms[i].name}
		if errs[i] != nil {
			c.Err = errs[i].Error()
			cs = append(cs, c)
			continue
		}
		c.NaN = CountNaN(probes[i])
		if c.NaN > 0 && out[i].Valid {
			out[i].Valid = false
			out[i].Reason = fmt.Sprintf("the probe outputs hold %d NaN value(s) of %d under these flags", c.NaN, len(probes[i]))
		}
		if errs[0] == nil {
			other := probes[i]
			if i == 0 {
				// A against a second evaluation of A: shows that the probe
				// itself is deterministic (bitwise), so B's differences
				// come from its flags.
				var err error
				if other, err = r.probe(r.arms[0]); err != nil {
					c.Err = err.Error()
					cs = append(cs, c)
					continue
				}
			}
			d := demo.CompareProbe(probes[0], other)
			c.Len, c.MaxAbs, c.MaxULP, c.Bitwise = d.Len, d.MaxAbs, d.MaxULP, d.Bitwise
		} else {
			c.Err = "arm A's probe failed: " + errs[0].Error()
		}
		cs = append(cs, c)
	}
	return cs
}
