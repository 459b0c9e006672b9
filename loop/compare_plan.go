package loop

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
)

func (r *runner) defaults() {
	o := &r.o
	if o.Steps <= 0 {
		o.Steps = 20
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = 10 * time.Minute
	}
	if o.Stats.MinSteps <= 0 {
		o.Stats.MinSteps = o.Steps
	}
	if o.Stats.Seed == 0 {
		o.Stats.Seed = o.Seed
	}
}

// plan splits flags into common and varying, picks the mode, validates the
// built-in loop's values and sets the defaults that depend on the mode.
func (r *runner) plan() error {
	o := &r.o
	r.common = map[string]string{}
	keys := map[string]bool{}
	for _, a := range o.Arms {
		for k := range a.Flags {
			keys[k] = true
		}
	}
	for k := range keys {
		v0, ok0 := o.Arms[0].Flags[k]
		same := ok0
		for _, a := range o.Arms[1:] {
			if v, ok := a.Flags[k]; !ok || v != v0 {
				same = false
			}
		}
		if same {
			r.common[k] = v0
		} else {
			r.vary = append(r.vary, k)
		}
	}
	sort.Strings(r.vary)
	// Live: every varying flag is applied inside the running process — a
	// live flag of the run's table (flagTable: the built-in loop's, or the
	// Python agent's for a command; o.NoAgent keeps them environment
	// variables), or one a command's script may declare to the agent
	// (pyagent.MayDeclare).
	r.live = (r.builtin || !o.NoAgent) && !o.Restart
	tab := flagTable(r.builtin, o.NoAgent)
	for _, k := range r.vary {
		if !tab.IsLive(k) && (r.builtin || !pyagent.MayDeclare(k)) {
			r.live = false
		}
	}
	r.agent = r.live && !r.builtin
	if o.Attach != 0 {
		switch {
		case o.Restart:
			return fmt.Errorf("%w: --attach compares inside the running process; --restart would restart it, which rlktop does not do to a process it attached to", ErrCompare)
		case o.NoAgent:
			return fmt.Errorf("%w: --attach needs the Python agent (--no-agent turns it off)", ErrCompare)
		case !r.live:
			return fmt.Errorf("%w: --attach switches flags inside the running process: %s are not flags the Python agent sets (built-in: %s; or one the script declares with rlktop.flag); an environment variable needs a restart: launch the job under rlktop compare -- CMD",
				ErrCompare, strings.Join(r.vary, ", "), strings.Join(pyagent.Flags.Names(), ", "))
		}
	}
	for _, a := range o.Arms {
		ar := &armRun{name: a.Name, flags: maps.Clone(a.Flags), want: o.Steps}
		if ar.flags == nil {
			ar.flags = map[string]string{}
		}
		if ar.name == "" {
			ar.name = livestate.ArmName(ar.flags, nil)
		}
		r.arms = append(r.arms, ar)
	}
	// Arms with the same name (--flag attention=fused,fused: an A/A run)
	// get "#2", "#3", … so that rows and the schedule tell them apart.
	names := map[string]int{}
	for _, a := range r.arms {
		names[a.name]++
		if n := names[a.name]; n > 1 {
			a.name = fmt.Sprintf("%s #%d", a.name, n)
		}
	}
	if r.builtin {
		// Every switch sends "attention" (switchKeys), so every arm lists
		// it, the first one too: arms then show the same set of flags.
		for _, a := range r.arms {
			if _, ok := a.flags["attention"]; !ok {
				a.flags["attention"] = demo.DefaultConfig().Attention
			}
		}
	}
	if o.Noise {
		a := r.arms[0]
		n := &armRun{name: livestate.NoiseName(a.name), flags: maps.Clone(a.flags), want: o.Steps}
		r.arms = append(r.arms, n)
	}
	seedNote := ""
	// orDefault sets the warm-up and block lengths the options leave 0.
	orDefault := func(warmup, block int) {
		if o.Warmup <= 0 {
			o.Warmup = warmup
		}
		if o.Block <= 0 {
			o.Block = block
		}
	}
	switch {
	case r.agent:
		orDefault(1, 5)
		if o.Noise {
			seedNote = "A′ reruns arm A's flags in the same process (switched over the Python agent like the other arms), so the yardstick measures step-to-step and drift noise between two interleaved sets of A's steps, not seed-to-seed variation"
		}
	case r.live:
		if o.Warmup <= 0 {
			o.Warmup = 1
		}
		ue := 4 // demo.DefaultConfig().UpdateEvery
		if v, err := strconv.Atoi(r.common["update_every"]); err == nil && v > 0 {
			ue = v
		}
		if o.Block <= 0 {
			o.Block = ue
			// Every run of update_every consecutive steps holds exactly one
			// update step, so whole blocks give every arm the same share.
			if o.Steps%ue != 0 {
				n := (o.Steps + ue - 1) / ue * ue
				r.notes = append(r.notes, fmt.Sprintf("steps per arm rounded up from %d to %d, a multiple of update_every=%d, so that every arm counts the same share of update steps", o.Steps, n, ue))
				o.Steps = n
				for _, a := range r.arms {
					a.want = n
				}
				if o.Stats.MinSteps < n {
					o.Stats.MinSteps = n
				}
			}
		} else if o.Steps%ue != 0 || o.Block%ue != 0 {
			r.notes = append(r.notes, fmt.Sprintf("--steps %d / --block %d are not multiples of update_every=%d: arms may count different shares of the (much longer) update steps", o.Steps, o.Block, ue))
		}
		if o.Noise {
			seedNote = "A′ reruns arm A's flags in the same child: the built-in loop cannot change its seed without a restart, so the yardstick measures step-to-step and drift noise between two interleaved sets of A's steps, not seed-to-seed variation"
		}
	case r.builtin:
		orDefault(3, 20)
		if o.Noise {
			r.arms[len(r.arms)-1].flags["seed"] = strconv.FormatUint(o.Seed+1, 10)
			seedNote = fmt.Sprintf("A′ restarts the built-in loop with seed=%d (other weights, openings and draws)", o.Seed+1)
		}
	default:
		orDefault(3, 20)
		for i, a := range r.arms {
			s := o.Seed
			if o.Noise && i == len(r.arms)-1 {
				s = o.Seed + 1
			}
			a.flags[EnvSeed] = strconv.FormatUint(s, 10)
		}
		if o.Noise {
			seedNote = fmt.Sprintf("A′ restarts the command with %s=%d (arms A, B, … get %d); a command that ignores %s runs A′ with A's seed", EnvSeed, o.Seed+1, o.Seed, EnvSeed)
		}
	}
	if seedNote != "" {
		r.notes = append(r.notes, seedNote)
	}
	if o.Block > 0 && o.Steps <= o.Block && len(r.arms) > 1 {
		// One block per arm is one A, B, A′ sequence: nothing interleaves
		// (a reader of "interleaved" would expect ABAB, and gets
		// AAAAA BBBBB A′A′A′A′A′).
		r.notes = append(r.notes, fmt.Sprintf("--steps %d fits in one block of %d steps per arm: the arms ran once each, one after another, not interleaved, so drift between them is not averaged out; --steps %d or more interleaves them", o.Steps, o.Block, 2*o.Block))
	}
	if r.builtin {
		// Validate every arm's values before running: a value the loop
		// refuses makes that arm invalid and it is not scheduled.
		for _, a := range r.arms {
			cfg := demo.DefaultConfig()
			for _, k := range slices.Sorted(maps.Keys(a.flags)) {
				if err := cfg.ParseFlag(k, a.flags[k]); err != nil {
					a.invalid = fmt.Sprintf("the built-in loop refuses %s=%s: %v", k, a.flags[k], err)
					break
				}
			}
		}
		if r.arms[0].invalid != "" {
			// Nothing can start without A's flags; every arm is reported.
			for _, a := range r.arms[1:] {
				if a.invalid == "" {
					a.invalid = "not run: arm A is invalid (" + r.arms[0].invalid + ")"
				}
			}
		}
	}
	return nil
}
