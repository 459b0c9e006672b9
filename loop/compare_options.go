package loop

import (
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// EnvSeed is the environment variable a command's arms get their seed in:
// arms A, B, … get CompareOptions.Seed, the noise arm A′ gets Seed+1. A
// command that does not read it runs A′ with A's seed (the yardstick then
// measures run-to-run noise only).
const EnvSeed = "RLKTOP_SEED"

// CompareOptions configure Compare.
type CompareOptions struct {
	// Arms to compare; the first is the baseline A. Every arm's Flags are
	// complete (flags held fixed appear in every arm, as Arms builds them).
	// Two or more.
	Arms []livestate.Arm
	// Command is the program and arguments; empty runs the built-in loop.
	Command []string
	// Exe is the rlktop binary for the built-in loop's child ("" =
	// os.Executable).
	Exe string
	// Steps is the number of counted steps per arm (default 20).
	Steps int
	// Warmup steps are dropped after every start and every switch (default
	// 1 for live switches of the built-in loop, 3 after a restart).
	Warmup int
	// Block is the number of counted steps between switches (default: the
	// built-in loop's update_every, 4, so that every block holds the same
	// share of update steps — Steps is then rounded up to a multiple of
	// it, with a note; 20 when a switch restarts the child).
	Block int
	// Noise adds the A/A′ yardstick: arm A's flags again as its own arm.
	Noise bool
	// Seed seeds the bootstrap and, for restarts, the arms' EnvSeed
	// (default 1).
	Seed uint64
	// Rules classify kernels (nil: attrib.DefaultRules()).
	Rules *attrib.Rules
	// TorchRanges, Untraced, Tracer and NoAgent as in LiveOptions
	// (commands only). Without NoAgent, flags the Python agent knows
	// (tracer/pyagent.Flags) switch inside one running process.
	TorchRanges, Untraced, NoAgent bool
	Tracer                         string
	// NoProfileMemory as in LiveOptions.
	NoProfileMemory bool
	// PySampleHz as in LiveOptions.
	PySampleHz float64
	// Restart runs every segment in a fresh process (flags at start), even
	// when the flags could switch live: arms then replay the same step
	// numbers from the same seed (what rlktop.audit compares bitwise).
	Restart bool
	// StepTimeout bounds the wait for one step or one acknowledgement
	// (default 10 min).
	StepTimeout time.Duration
	// Stats tunes the statistics; MinSteps defaults to Steps (an arm that
	// stopped early is invalid).
	Stats attrib.StatsOptions
	// Stdout and Stderr receive the child's output (nil: discarded; the
	// stderr tail is kept for error messages either way).
	Stdout, Stderr io.Writer
	// Progress, when set, is told what runs now ("arm attention=math: 3/20").
	Progress func(string)
	// OnStep, when set, receives each step's label as soon as its segment
	// is cut (for a live sparkline of which arm ran each step). Called from
	// Compare's goroutine.
	OnStep func(livestate.StepLabel)
	// TempDir holds the temporary recording ("" = os.TempDir()).
	TempDir string
	// Attach, when set, compares inside the running Python process with
	// that pid (StartAttach) instead of launching Command: every varying
	// flag must be one the agent switches live, the first arm's flags are
	// sent at attach, and the end detaches (the flags go back to what they
	// were). AttachTimeout bounds attaching (0: DefaultAttachTimeout).
	Attach        int
	AttachTimeout time.Duration
}

type armRun struct {
	name    string
	flags   map[string]string // complete flags of the arm (A′: A's, plus seed for restarts)
	invalid string            // why invalid ("" valid so far)
	steps   []stepRef         // counted steps in order
	want    int               // counted steps still owed
}

type stepRef struct {
	pid  int32
	step int64
	dur  int64
}

type runner struct {
	o        CompareOptions
	builtin  bool
	live     bool // every varying flag is set inside the running process (built-in loop or Python agent)
	agent    bool // live, through the Python agent of a command
	t0       time.Time
	common   map[string]string // flags equal in every arm
	vary     []string          // keys that differ between arms (sorted)
	arms     []*armRun         // arms then A′ (index len(o.Arms))
	labels   map[stepKey]livestate.StepLabel
	notes    []string
	cotenant bool // a co-tenant note was added
	lv       *Live
	// all holds every step the session reported, in order of first sight:
	// a restart resets the session's step list, so it is kept here.
	all     []livestate.StepTime
	allSeen map[stepKey]bool
}

type stepKey struct {
	pid  int32
	step int64
}

func (r *runner) progress(f string, a ...any) {
	if r.o.Progress != nil {
		r.o.Progress(fmt.Sprintf(f, a...))
	}
}

func (r *runner) failAll(why string) {
	for _, a := range r.arms {
		if a.invalid == "" && a.want > 0 {
			a.invalid = why
		}
	}
}

// startFlags are the child's flags at start: for the built-in loop in live
// mode the common flags plus the first arm's; otherwise the arm's flags.
func (r *runner) startFlags(a *armRun) map[string]string {
	m := maps.Clone(r.common)
	for k, v := range a.flags {
		m[k] = v
	}
	return m
}
