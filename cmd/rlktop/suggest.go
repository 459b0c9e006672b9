package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

// loadFindingRules returns the built-in findings table, or path's layered
// on it.
func loadFindingRules(path string) (*attrib.FindingRules, error) {
	if path == "" {
		return attrib.DefaultFindings(), nil
	}
	return attrib.LoadFindings(path)
}

// runSuggest is `rlktop compare --suggest`: a profile run of
// cf.profileSteps steps with the held flags (--flag K=V, one value each),
// the findings of what it saw, then, for every finding that names a flag
// (in rank order), a comparison of the flag's current value against the
// suggested one (the other held flags fixed), and one table of the
// results. An invalid arm is reported in its row, never as faster.
func runSuggest(stdout, stderr io.Writer, cf *compareFlags, command []string) error {
	fr, err := loadFindingRules(cf.findingsPath)
	if err != nil {
		return err
	}
	held := map[string]string{}
	for _, s := range cf.flags {
		sp, err := loop.ParseFlagSpec(s)
		if err != nil {
			return err
		}
		if len(sp.Values) != 1 {
			return fmt.Errorf("--suggest: --flag %s: give one value (the setting to start from); the findings choose what to compare", s)
		}
		held[sp.Key] = sp.Values[0]
	}
	builtin := len(command) == 0
	if builtin {
		cfg := demo.DefaultConfig()
		for _, k := range slices.Sorted(maps.Keys(held)) {
			if err := cfg.ParseFlag(k, held[k]); err != nil {
				return err
			}
		}
	}
	rules, tr, err := cf.rulesAndTracer()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	say := func(format string, a ...any) {
		if cf.verbose {
			fmt.Fprintf(stderr, "rlktop compare --suggest: "+format+"\n", a...)
		}
	}

	// 1. Profile, with the device's limits for the roofline findings
	// (as run does).
	src := "live: built-in RL loop"
	if !builtin {
		src = "live: " + strings.Join(command, " ")
	} else {
		measurePeakFirst()
	}
	lo := loop.LiveOptions{Command: command, Flags: held, Tracer: tr, NoAgent: cf.noAgent, TorchRanges: cf.torchRanges,
		Telemetry: 0, Session: session.Options{Rules: rules, Source: src, Peak: livePeak}, Stdout: stderr}
	if cf.verbose {
		lo.StderrCopy = stderr
	}
	if builtin {
		lo.Steps = int64(cf.profileSteps)
	}
	say("profiling %d steps", cf.profileSteps)
	st, flags, err := profileRun(ctx, lo, int64(cf.profileSteps))
	if err != nil {
		return err
	}
	in := livestate.FindingInputOf(st, flags, !builtin)
	fs := attrib.EvaluateFindings(fr, in)
	doc := report.SuggestDoc{ProfileSteps: st.StepCount, Flags: flags, Findings: fs, Tried: []livestate.Tried{}}
	if doc.Findings == nil {
		doc.Findings = []attrib.Finding{}
	}

	// 2. One comparison per testable finding.
	plan := loop.PlanSuggestions(fs)
	for i, f := range plan.Findings {
		fl := f.Flag
		t := livestate.Tried{FindingID: f.ID, Key: fl.Key, From: fl.Current, To: fl.Value, Row: livestate.FindingRow(&f)}
		specs := []livestate.FlagSpec{{Key: fl.Key, Values: []string{fl.Current, fl.Value}}}
		for _, k := range slices.Sorted(maps.Keys(held)) {
			if k != fl.Key {
				specs = append(specs, livestate.FlagSpec{Key: k, Values: []string{held[k]}})
			}
		}
		arms, err := loop.Arms(specs)
		if err != nil {
			t.Err = err.Error()
			doc.Tried = append(doc.Tried, t)
			continue
		}
		say("%d/%d: %s: %s=%s vs %s", i+1, len(plan.Findings), f.ID, fl.Key, fl.Current, fl.Value)
		o := loop.CompareOptions{
			Arms: arms, Command: command, Steps: cf.steps, Warmup: cf.warmup, Block: cf.block,
			Noise: !cf.noNoise, Seed: cf.seed, Rules: rules, TorchRanges: cf.torchRanges, Untraced: cf.untraced, Tracer: tr,
			NoAgent: cf.noAgent, Restart: cf.restart, Stdout: stderr,
		}
		res, err := loop.Compare(ctx, o)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			t.Err = err.Error()
			doc.Tried = append(doc.Tried, t)
			continue
		}
		t = livestate.TriedOf(res, f.ID, fl.Key, fl.Current, fl.Value, t.Row)
		doc.Tried = append(doc.Tried, t)
	}
	return report.WriteSuggest(stdout, &doc, report.Options{Format: cf.format})
}

// profileRun runs lo until steps steps arrived (or the child ended), stops
// it, and returns the session's state and the flags in force.
func profileRun(ctx context.Context, lo loop.LiveOptions, steps int64) (*livestate.State, map[string]string, error) {
	live, err := loop.StartLive(lo)
	if live == nil {
		return nil, nil, err
	}
	defer live.Close()
	if err != nil {
		return nil, nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		st := live.Session.Snapshot()
		if st.StepCount >= steps || live.Sup.Status().State != livestate.Running {
			break
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-tick.C:
		}
	}
	if len(lo.Command) > 0 && live.Sup.Status().State == livestate.Running {
		if live.AgentConnected() {
			live.StopChild(context.Background(), 10*time.Second, 3*time.Second)
		} else {
			live.Sup.Stop(3 * time.Second)
		}
	}
	// A torch.profiler window with shapes and memory events takes seconds
	// to write and import; the connection ends once it is imported.
	live.Session.Wait(10 * time.Second)
	st := live.Session.Snapshot()
	if st.StepCount == 0 {
		exit := live.Sup.Status()
		return nil, nil, fmt.Errorf("--suggest: the profile run ended with no step (%s); nothing to find", exit.Describe())
	}
	return st, live.FlagsIn(st), nil
}
