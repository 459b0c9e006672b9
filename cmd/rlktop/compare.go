package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
)

// exitInvalidArm is rlktop compare's exit status when an arm is invalid
// (the comparison itself is still printed).
const exitInvalidArm = 3

// exitGate is compare's exit status when --fail-if-slower / --fail-if-faster
// failed on a valid comparison.
const exitGate = 4

type compareFlags struct {
	pySampleHz    float64 // --py-sample-hz
	flags         []string
	preset        string
	presetsPath   string
	steps         int
	warmup        int
	block         int
	noNoise       bool
	restart       bool
	gate          attrib.Gate // --fail-if-slower / --fail-if-faster (negative: off)
	format        string
	by            string
	top           int
	seed          uint64
	rulesPath     string
	torchRanges   bool
	noProfMem     bool // --no-profile-memory
	untraced      bool
	tracer        string
	noAgent       bool
	verbose       bool
	attach        int           // --attach PID: compare inside a running process
	attachTimeout time.Duration // --timeout with --attach
	// --suggest: profile, find, compare each finding's flag.
	suggest      bool
	findingsPath string
	profileSteps int
}

func init() {
	var cf compareFlags
	cmd := &cobra.Command{
		Use:   "compare [--flag K=V1,V2]… [--preset P] [--steps N] [--format table|json|md] [-- CMD…]",
		Short: "compare flag settings (arms) on interleaved steps: step time ratio with a confidence interval, per-kernel deltas, output consistency",
		Long: `compare runs arms — flag sets — on interleaved steps of one training loop
and reports whether the step got faster, where the time moved, and (for the
built-in loop) whether the outputs stayed the same.

Arms: --flag K=V1,V2 gives one arm per value; several --flag combine (their
cartesian product); a flag with one value holds in every arm (e.g. the
built-in loop's size: --flag envs=1024). --preset P adds a preset's flags
(built-in: fused-attention, fused-qkv, topp-scan, sampler, move-head; more
in --presets FILE). The first arm is A; B is the second; with more arms each
is compared with A.

Without a command the built-in RL loop runs as one child and arms switch
live over the control channel at a step boundary (each switch acknowledged
with the step at which it took effect). With a command (after --), flags
are environment variables and each block of steps restarts the command with
its arm's environment; steps are cut by the step ranges the tracer reports.
After every start or switch --warmup steps are dropped; each arm gets
--steps counted steps.

Noise: unless --no-noise, arm A runs again as A′ (a command gets another
RLKTOP_SEED; the built-in loop reruns A's flags in the same child). A
difference inside the A/A′ envelope, or a 95% bootstrap interval holding 1,
is reported "within noise". An arm that exited non-zero, stopped early,
refused its flags or produced NaN is invalid: never reported faster, and
the exit status is 3. --fail-if-slower PCT / --fail-if-faster PCT make a CI
gate: exit 4 only when the confidence interval excludes the threshold.

--suggest (no arms needed): runs --profile-steps steps with the --flag
K=V settings given (one value each: where to start), evaluates the
findings (tracer/attrib/findings.toml, --findings FILE on top), then
compares, for every finding that names a flag (built-in loop: its
attention, qkv, … flags; a command with the Python agent: sdpa, compile,
…; a ROCm command on an experimental gfx: TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL),
the current value against the suggested one, and prints one table (JSON:
{"profile_steps", "flags", "findings", "tried":[{"finding", "key",
"from", "to", "step":{"value","ci_low","ci_high"}, "verdict", "row",
"row_ratio", "have_outputs", "max_abs", "bitwise", "nan", "valid",
"reason", "error"}]}).

JSON: {"arms":[{"name","flags","valid","steps","median_ns","p10_ns",
"p90_ns"}], "ratio":{"value","ci_low","ci_high"}, "verdict", "noise":
{"ratio","ci_low","ci_high"}, "rows":[{"group","key","a_ns","b_ns",
"delta_ns","ratio","ci_low","ci_high","verdict"}], "consistency":[{"arm",
"len","max_abs","max_ulp","nan","bitwise"} (Python commands also "probe",
"switches")], "checks":[{"name","arm","steps","nan_steps"}], "metrics":
[{"metric","arm","steps","mean","envelope_low","envelope_high","verdict",
"steps_inside","steps_edge","steps_outside","per_step","a_per_step"}],
"audits":[{"name","arm","steps","values","bitwise","first_diff_step",
"first_diff_element","a_value","b_value","note"}], "pairs" (more than two arms),
"mode", "schedule" (every step: pid, step, arm, phase), "notes", "wall_ns"}.
Times are integer ns.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, &cf, args)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&cf.flags, "flag", nil, "K=V1,V2,… one arm per value (repeatable; one value = held in every arm)")
	f.StringVar(&cf.preset, "preset", "", "add a preset's flags (fused-attention, fused-qkv, topp-scan, sampler, move-head, or one from --presets)")
	f.StringVar(&cf.presetsPath, "presets", "", "TOML file of [preset.NAME] tables adding to the built-in presets")
	f.IntVar(&cf.steps, "steps", 20, "counted steps per arm")
	f.IntVar(&cf.warmup, "warmup", 0, "steps dropped after every start or switch (0: 1 for live switches, 3 after a restart)")
	f.IntVar(&cf.block, "block", 0, "counted steps per switch (0: update_every=4 for the built-in loop, 20 when switching restarts)")
	f.BoolVar(&cf.noNoise, "no-noise", false, "no A′ run (no noise envelope)")
	f.Float64Var(&cf.gate.SlowerPct, "fail-if-slower", -1, "PCT: exit 4 when B is certainly slower than A by more than PCT% (the whole confidence interval above 1+PCT/100): a CI gate that a noisy runner does not trip")
	f.Float64Var(&cf.gate.FasterPct, "fail-if-faster", -1, "PCT: exit 4 when an expected PCT% win certainly vanished (the whole interval above 1-PCT/100)")
	f.BoolVar(&cf.restart, "restart", false, "start a fresh process for every segment even when flags could switch live (arms replay the same steps: audits compare bitwise)")
	f.StringVar(&cf.format, "format", "table", "table|json|md")
	f.StringVar(&cf.by, "by", "", "table/md: only kernel, category or stage rows")
	f.IntVar(&cf.top, "top", -1, "rows to show (0 = all; the kernel table shows up to this many kernels and as many memcpy/memset rows)")
	f.Uint64Var(&cf.seed, "seed", 1, "bootstrap seed; a command's RLKTOP_SEED (A′ gets seed+1)")
	f.StringVar(&cf.rulesPath, "rules", "", "TOML file of category rules tried before the built-in ones")
	f.BoolVar(&cf.torchRanges, "torch-ranges", false, "a command: wrap nn.Module.forward and SDPA in NVTX ranges")
	f.BoolVar(&cf.noProfMem, "no-profile-memory", false, "a command: torch.profiler windows without profile_memory (no memory columns)")
	f.StringVar(&cf.tracer, "tracer", "auto", "a command: auto|kineto|none (as in run)")
	f.BoolVar(&cf.noAgent, "no-agent", false, "a command: no Python agent (its flags then restart the command with environment variables)")
	f.Float64Var(&cf.pySampleHz, "py-sample-hz", pyagent.DefaultSampleHz, "a Python command: Python stack samples a second in traced arms (0: off)")
	f.BoolVar(&cf.untraced, "untraced", false, "a command: run without the injection library (step times only if the command reports steps another way)")
	f.BoolVarP(&cf.verbose, "verbose", "v", false, "progress on stderr")
	f.BoolVar(&cf.suggest, "suggest", false, "profile, list the findings, and compare every finding's suggested flag with the current value (one table)")
	f.StringVar(&cf.findingsPath, "findings", "", "with --suggest: TOML file of findings rules layered on the built-in ones (tracer/attrib/findings.toml)")
	f.IntVar(&cf.profileSteps, "profile-steps", 8, "with --suggest: steps of the profile run the findings come from")
	f.IntVar(&cf.attach, "attach", 0, "PID: compare inside this running Python process (rlktop attach) instead of launching a command; the agent's flags switch live and go back at the end")
	f.DurationVar(&cf.attachTimeout, "timeout", loop.DefaultAttachTimeout, "with --attach: the longest wait for the process to reach Python code and its agent to connect")
	rootCmd.AddCommand(cmd)
}

// compareArms builds the arms from --preset and --flag.
func compareArms(cf *compareFlags, builtin bool) ([]livestate.Arm, error) {
	var specs []livestate.FlagSpec
	if cf.preset != "" || cf.presetsPath != "" {
		ps, err := loop.Presets(cf.presetsPath)
		if err != nil {
			return nil, err
		}
		if cf.preset != "" {
			p, ok := ps[cf.preset]
			if !ok {
				names := slices.Sorted(func(yield func(string) bool) {
					for k := range ps {
						if !yield(k) {
							return
						}
					}
				})
				return nil, fmt.Errorf("unknown preset %q (have: %s)", cf.preset, strings.Join(names, ", "))
			}
			specs = p.Specs(builtin)
			if len(specs) == 0 {
				what := "a command"
				if builtin {
					what = "the built-in loop"
				}
				return nil, fmt.Errorf("preset %q has no flags for %s", cf.preset, what)
			}
		}
	}
	for _, s := range cf.flags {
		sp, err := loop.ParseFlagSpec(s)
		if err != nil {
			return nil, err
		}
		specs = append(specs, sp)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("nothing to compare: give --flag K=V1,V2 or --preset P (e.g. --flag attention=math,fused)")
	}
	return loop.Arms(specs)
}

// rulesAndTracer are the category rules (--rules on the built-in table)
// and the tracer (--tracer) both compare modes run with.
func (cf *compareFlags) rulesAndTracer() (*attrib.Rules, string, error) {
	rules, err := attrib.RulesFor(cf.rulesPath)
	if err != nil {
		return nil, "", err
	}
	tracer, err := parseTracer(cf.tracer)
	return rules, tracer, err
}

func runCompare(cmd *cobra.Command, cf *compareFlags, command []string) error {
	switch cf.format {
	case "table", "json", "md":
	default:
		return fmt.Errorf("unknown --format %q (use table, json or md)", cf.format)
	}
	if cf.attach != 0 && (len(command) > 0 || cf.suggest) {
		return fmt.Errorf("compare --attach %d compares inside that running process: give no command (and no --suggest)", cf.attach)
	}
	if cf.attach < 0 {
		return fmt.Errorf("--attach %d: want the pid of a running Python process", cf.attach)
	}
	if cf.suggest {
		return runSuggest(cmd.OutOrStdout(), cmd.ErrOrStderr(), cf, command)
	}
	arms, err := compareArms(cf, len(command) == 0 && cf.attach == 0)
	if err != nil {
		return err
	}
	rules, tracer, err := cf.rulesAndTracer()
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	o := loop.CompareOptions{
		Arms: arms, Command: command, Steps: cf.steps, Warmup: cf.warmup, Block: cf.block,
		Noise: !cf.noNoise, Seed: cf.seed, Rules: rules, TorchRanges: cf.torchRanges, Untraced: cf.untraced, Tracer: tracer, NoAgent: cf.noAgent, Restart: cf.restart, NoProfileMemory: cf.noProfMem, PySampleHz: pySampleOption(cf.pySampleHz),
		Stdout: stderr, // a command's stdout must not mix with the report
		Attach: cf.attach, AttachTimeout: cf.attachTimeout,
	}
	if cf.verbose {
		o.Stderr = stderr
		last := time.Time{}
		o.Progress = func(s string) {
			if time.Since(last) > 500*time.Millisecond {
				fmt.Fprintln(stderr, "rlktop compare:", s)
				last = time.Now()
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := loop.Compare(ctx, o)
	if err != nil {
		return err
	}
	if err := report.WriteCompareResult(cmd.OutOrStdout(), res, report.Options{Format: cf.format, Top: cf.top, By: cf.by}); err != nil {
		return err
	}
	gateFail, gateWhy := cf.gate.Check(res.Ratio, res.Valid())
	if err := report.WriteGate(cmd.OutOrStdout(), gateWhy, report.Options{Format: cf.format}); err != nil {
		return err
	}
	if gateWhy != "" {
		fmt.Fprintf(stderr, "rlktop compare: %s\n", gateWhy)
	}
	if !res.Valid() {
		for _, a := range res.Arms {
			if !a.Valid {
				fmt.Fprintf(stderr, "rlktop compare: arm %s is invalid: %s\n", a.Name, a.Reason)
			}
		}
		return exitError{code: exitInvalidArm}
	}
	if gateFail {
		return exitError{code: exitGate}
	}
	return nil
}
