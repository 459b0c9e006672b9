package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/pyagent"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tracer/wire"
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
	Arms []Arm
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
	// Restart runs every segment in a fresh process (flags at start), even
	// when the flags could switch live: arms then replay the same step
	// numbers from the same seed (what rlktop.audit compares bitwise).
	Restart bool
	// StepTimeout bounds the wait for one step or one acknowledgement
	// (default 10 min).
	StepTimeout time.Duration
	// Stats tunes the statistics; MinSteps defaults to Steps (an arm that
	// stopped early is invalid).
	Stats attrib.CompareOptions
	// Stdout and Stderr receive the child's output (nil: discarded; the
	// stderr tail is kept for error messages either way).
	Stdout, Stderr io.Writer
	// Progress, when set, is told what runs now ("arm attention=math: 3/20").
	Progress func(string)
	// OnStep, when set, receives each step's label as soon as its segment
	// is cut (for a live sparkline of which arm ran each step). Called from
	// Compare's goroutine.
	OnStep func(StepLabel)
	// TempDir holds the temporary recording ("" = os.TempDir()).
	TempDir string
}

// ErrCompare is wrapped by Compare's option errors.
var ErrCompare = errors.New("compare")

// Compare runs a comparison and returns its result; the statistics (ratio
// of medians, bootstrap interval, A/A′ envelope, verdicts) are
// attrib.CompareArms's, arm B…N each against arm A. For the built-in loop whose arms differ
// only in live flags, one child runs throughout and each segment of the
// Interleave schedule begins by setting the arm's flags over the control
// channel; the child acknowledges each with the step number at which it
// took effect, and the segment's steps are numbered from there. Otherwise
// (a command, or built-in flags that change shapes) each segment restarts
// the child with the arm's environment (or flags) and cuts its steps from
// the step ranges the session reports. Per-row times come from a recording
// of the session, read back at the end with tracefile.Open and split by
// each GPU event's launch step.
//
// An arm whose child exited non-zero, stopped before its steps were
// counted, refused a flag value, or (built-in loop) whose probe outputs
// hold NaN is invalid, with the reason in ArmStats.Reason; the comparison
// still returns. Errors are for unusable options, a failed listener or
// recording, ctx ending, and a recording that cannot be read back.
func Compare(ctx context.Context, o CompareOptions) (*CompareResult, error) {
	if len(o.Arms) < 2 {
		return nil, fmt.Errorf("%w: %d arm(s); give a flag with two or more values (--flag attention=math,fused) or a preset", ErrCompare, len(o.Arms))
	}
	builtin := len(o.Command) == 0
	r := &runner{o: o, builtin: builtin, t0: time.Now()}
	r.defaults()
	if err := r.plan(); err != nil {
		return nil, err
	}
	res, err := r.run(ctx)
	if res != nil {
		res.WallNs = time.Since(r.t0).Nanoseconds()
	}
	return res, err
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
	labels   map[stepKey]StepLabel
	notes    []string
	cotenant bool // a co-tenant note was added
	lv       *Live
	seen     map[int32]bool // pids of earlier segments (restart mode)
	prev     *armRun        // the previous segment's arm (restart mode)
	// all holds every step the session reported, in order of first sight:
	// a restart resets the session's step list, so it is kept here.
	all     []session.StepTime
	allSeen map[stepKey]bool
}

type stepKey struct {
	pid  int32
	step int64
}

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
	// Live: every varying flag is applied inside the running process — the
	// built-in loop's live flags, or the Python agent's (tracer/pyagent) for
	// a command (o.NoAgent keeps them environment variables).
	r.live = (r.builtin || !o.NoAgent) && !o.Restart
	for _, k := range r.vary {
		if r.builtin && !builtinLiveFlags[k] || !r.builtin && !pyagent.MayDeclare(k) {
			r.live = false
		}
	}
	r.agent = r.live && !r.builtin
	for _, a := range o.Arms {
		ar := &armRun{name: a.Name, flags: maps.Clone(a.Flags), want: o.Steps}
		if ar.flags == nil {
			ar.flags = map[string]string{}
		}
		if ar.name == "" {
			ar.name = ArmName(ar.flags, nil)
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
		n := &armRun{name: NoiseName(a.name), flags: maps.Clone(a.flags), want: o.Steps}
		r.arms = append(r.arms, n)
	}
	seedNote := ""
	switch {
	case r.agent:
		if o.Warmup <= 0 {
			o.Warmup = 1
		}
		if o.Block <= 0 {
			o.Block = 5
		}
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
		if o.Warmup <= 0 {
			o.Warmup = 3
		}
		if o.Block <= 0 {
			o.Block = 20
		}
		if o.Noise {
			r.arms[len(r.arms)-1].flags["seed"] = strconv.FormatUint(o.Seed+1, 10)
			seedNote = fmt.Sprintf("A′ restarts the built-in loop with seed=%d (other weights, openings and draws)", o.Seed+1)
		}
	default:
		if o.Warmup <= 0 {
			o.Warmup = 3
		}
		if o.Block <= 0 {
			o.Block = 20
		}
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
	if r.builtin {
		// Validate every arm's values before running: a value the loop
		// refuses makes that arm invalid and it is not scheduled.
		for _, a := range r.arms {
			cfg := demo.DefaultConfig()
			for _, k := range sortedKeys(a.flags) {
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

func (r *runner) progress(f string, a ...any) {
	if r.o.Progress != nil {
		r.o.Progress(fmt.Sprintf(f, a...))
	}
}

func (r *runner) run(ctx context.Context) (*CompareResult, error) {
	o := r.o
	res := &CompareResult{Mode: "restart", Schedule: []StepLabel{}}
	if r.live {
		res.Mode = "live"
	}
	r.labels = map[stepKey]StepLabel{}
	r.seen = map[int32]bool{}

	var rec *os.File
	if r.arms[0].invalid == "" {
		var err error
		rec, err = os.CreateTemp(o.TempDir, "rlktop-compare-*.rlk.gz")
		if err != nil {
			return nil, fmt.Errorf("compare: temporary recording: %w", err)
		}
		defer os.Remove(rec.Name())
		defer rec.Close()
		if err := r.execute(ctx, rec); err != nil {
			return nil, err
		}
	}

	// Per-row data from the recording.
	armsOut := make([]attrib.Arm, len(r.arms))
	for i, a := range r.arms {
		armsOut[i] = attrib.Arm{Name: a.name, Flags: a.flags, Valid: a.invalid == "", Reason: a.invalid}
	}
	if rec != nil {
		t, err := tracefile.Open(rec.Name(), tracefile.Options{})
		if err != nil {
			return nil, fmt.Errorf("compare: reading the session's recording back: %w", err)
		}
		r.addRows(t, armsOut)
		if !r.builtin {
			r.agentChecks(t, armsOut, res)
		}
	}

	// Consistency (built-in loop).
	if r.builtin {
		res.Consistency = r.consistency(armsOut)
	}

	// Statistics.
	var noise *attrib.Arm
	nArms := len(o.Arms)
	if o.Noise {
		noise = &armsOut[nArms]
	}
	for i := 1; i < nArms; i++ {
		c := attrib.CompareArms(armsOut[0], armsOut[i], noise, o.Stats)
		res.Pairs = append(res.Pairs, c)
	}
	p := res.Pairs[0]
	res.Ratio, res.Verdict, res.Noise, res.Rows, res.Method = p.Ratio, p.Verdict, p.Noise, p.Rows, p.Method
	// Arms: every arm's stats in order (Pairs[i].Arms[1] is arm i+1), then A′.
	res.Arms = append(res.Arms, p.Arms[0])
	for _, c := range res.Pairs {
		res.Arms = append(res.Arms, c.Arms[1])
	}
	if o.Noise {
		res.Arms = append(res.Arms, p.Arms[2])
	}
	if nArms == 2 {
		res.Pairs = nil
	}
	res.Notes = r.notes
	res.CoTenant = r.cotenant
	res.Schedule = r.schedule()
	return res, nil
}

// execute runs the schedule, filling r.arms' counted steps and r.labels.
func (r *runner) execute(ctx context.Context, rec *os.File) error {
	o := r.o
	// Schedule over the runnable arms only; an invalid arm is skipped.
	var runnable []int
	for i, a := range r.arms {
		if a.invalid == "" {
			runnable = append(runnable, i)
		}
	}
	segs := Interleave(len(runnable), o.Steps, o.Block, o.Warmup, false)
	for i := range segs {
		segs[i].Arm = runnable[segs[i].Arm]
	}
	first := r.arms[segs[0].Arm]
	src := "compare: built-in RL loop"
	if !r.builtin {
		src = "compare: " + strings.Join(o.Command, " ")
	}
	lo := LiveOptions{
		Command:     o.Command,
		Exe:         o.Exe,
		Flags:       r.startFlags(first),
		TorchRanges: o.TorchRanges,
		Untraced:    o.Untraced,
		Tracer:      o.Tracer,
		NoAgent:     o.NoAgent,
		Session: session.Options{Rules: o.Rules, Source: src, MaxSteps: 1 << 20,
			WindowNs: int64(time.Second), WindowMaxEvents: 1 << 12},
		Stdout:     o.Stdout,
		StderrCopy: o.Stderr,
	}
	if lo.Stdout == nil {
		lo.Stdout = io.Discard
	}
	lv, err := StartLive(lo)
	if lv == nil {
		return fmt.Errorf("compare: %w", err)
	}
	r.lv = lv
	defer lv.Close()
	if rerr := lv.Session.Record(rec); rerr != nil {
		return fmt.Errorf("compare: recording the session: %w", rerr)
	}
	if lv.Banner != "" {
		r.notes = append(r.notes, lv.Banner)
	}
	if err != nil {
		// The first child did not start: its arm is invalid; in restart
		// mode the next segment tries again.
		first.invalid = "the child did not start: " + err.Error()
		if r.live {
			r.failAll(first.invalid)
			return r.finishRecording()
		}
	}
	if r.live {
		if err := r.executeLive(ctx, segs); err != nil {
			return err
		}
		return r.finishRecording()
	}
	for si, seg := range segs {
		if ctx.Err() != nil {
			return fmt.Errorf("compare: %w", ctx.Err())
		}
		a := r.arms[seg.Arm]
		if a.invalid != "" {
			continue // a restart arm that already failed is not retried
		}
		if err := r.restartSegment(ctx, si == 0, seg, a); err != nil {
			return err
		}
	}
	if prev := r.prev; prev != nil && prev.invalid == "" {
		if s := r.lv.Sup.Status(); s.State == Exited && (s.ExitCode != 0 || s.Signal != "") {
			prev.invalid = fmt.Sprintf("the child of one of its segments %s", s.Describe())
		}
	}
	// Steps still owed (a restart arm that failed) leave the arm short;
	// attrib.CompareArms marks it invalid with the count.
	return r.finishRecording()
}

func (r *runner) finishRecording() error {
	// Stop the child (politely first), then let in-flight frames land
	// before the recording stops.
	lv := r.lv
	if lv.Sup.Status().State == Running {
		if _, err := lv.Session.StopChildren(); err == nil {
			lv.Sup.WaitFor(3 * time.Second)
		}
		lv.Sup.Stop(2 * time.Second)
	}
	lv.Session.Wait(2 * time.Second)
	r.observe(lv.Session.Snapshot())
	if cn := lv.CoTenantNotes(); len(cn) > 0 {
		r.notes = append(r.notes, cn...) // a shared GPU marks the comparison
		r.cotenant = true
	}
	if _, err := r.lv.Session.StopRecording(); err != nil && !errors.Is(err, session.ErrNotRecording) {
		return fmt.Errorf("compare: finishing the recording: %w", err)
	}
	return nil
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

// executeLive runs segs in the one built-in loop child. The switch to the
// next segment's arm is sent while the current segment's last step runs,
// so it normally takes effect right after it; the child's acknowledgement
// says at which step it did, and a segment's steps end there. A segment
// cut short (the switch landed a step early) leaves its arm owing steps;
// they are run in make-up segments at the end (at most 3 rounds).
func (r *runner) executeLive(ctx context.Context, segs []Segment) error {
	o := r.o
	queue := segs
	var pid int32
	s0 := int64(0)
	cur := queue[0]
	queue = queue[1:]
	first := true
	for makeup := 0; ; {
		a := r.arms[cur.Arm]
		need := int64(cur.Warmup + cur.Count)
		end := s0 + need // exclusive
		// The next segment whose arm can still run.
		for len(queue) > 0 && r.arms[queue[0].Arm].invalid != "" {
			queue = queue[1:]
		}
		if len(queue) == 0 && makeup < 3 {
			// Make-up: arms still owing steps after this segment.
			var more []Segment
			for i, x := range r.arms {
				owe := x.want
				if i == cur.Arm {
					owe -= int(need) - cur.Warmup
				}
				if x.invalid == "" && owe > 0 {
					more = append(more, Segment{Arm: i, Warmup: o.Warmup, Count: owe})
				}
			}
			if len(more) > 0 {
				makeup++
				queue = more
			}
		}
		var next *Segment
		if len(queue) > 0 {
			next = &queue[0]
			queue = queue[1:]
		}
		var s1 int64 = -1
		var refused bool
		if next != nil {
			// Send the switch once step end-2 is done (the last step runs).
			if need >= 2 {
				_, why, err := r.waitSteps(ctx, a, func(st *session.State) []session.StepTime {
					return r.stepsOf(st, &pid, first, s0, end-1)
				}, int(need-1))
				if err != nil {
					return err
				}
				if why != "" {
					r.failAll("stopped early: the child ended during arm " + a.name + "'s segment (" + why + ")")
					return nil
				}
			}
			na := r.arms[next.Arm]
			p, step, err := r.switchLive(ctx, na)
			if err != nil {
				return err
			}
			switch {
			case na.invalid != "" && r.lv.Sup.Status().State != Running:
				r.failAll("stopped early: the child ended during arm " + a.name + "'s segment")
				return nil
			case na.invalid != "":
				// Refused: the flags may be half switched from some step on;
				// drop this segment's last step and switch again next round.
				refused = true
				end--
			default:
				pid, s1 = p, step
				end = min(end, s1)
			}
		}
		steps, why, err := r.waitSteps(ctx, a, func(st *session.State) []session.StepTime {
			return r.stepsOf(st, &pid, first, s0, end)
		}, int(end-s0))
		if err != nil {
			return err
		}
		r.take(a, Segment{Arm: cur.Arm, Warmup: cur.Warmup, Count: int(end-s0) - cur.Warmup}, steps)
		if why != "" {
			r.failAll("stopped early: the child ended during arm " + a.name + "'s segment (" + why + ")")
			return nil
		}
		first = false
		if next == nil {
			return nil
		}
		if refused {
			// Put the current arm's flags back in force before going on.
			for len(queue) > 0 && r.arms[queue[0].Arm].invalid != "" {
				queue = queue[1:]
			}
			if len(queue) == 0 {
				return nil
			}
			nx := queue[0]
			queue = queue[1:]
			p, step, err := r.switchLive(ctx, r.arms[nx.Arm])
			if err != nil {
				return err
			}
			if r.arms[nx.Arm].invalid != "" {
				r.failAll("not run: a flag switch was refused and the next one failed too")
				return nil
			}
			pid, s1, next = p, step, &nx
		}
		if ctx.Err() != nil {
			return fmt.Errorf("compare: %w", ctx.Err())
		}
		cur, s0 = *next, s1
		r.progress("arm %s from step %d", r.arms[cur.Arm].name, s0)
	}
}

// stepsOf picks the steps numbered [from, to) of child *pid (the first
// child to report a step, when first and *pid is 0). The ranks of a
// distributed job (several processes whose hellos name a world > 1) count
// a step once every rank has finished it, as long as the slowest rank's
// (session.State.RankSteps), whichever rank *pid is.
func (r *runner) stepsOf(st *session.State, pid *int32, first bool, from, to int64) []session.StepTime {
	steps := st.Steps
	ranks := st.RankSteps()
	if ranks != nil {
		steps = ranks
	}
	var out []session.StepTime
	for _, s := range steps {
		if first && *pid == 0 {
			*pid = s.PID
		}
		if (s.PID == *pid || ranks != nil) && s.Step >= from && s.Step < to {
			out = append(out, s)
		}
	}
	return out
}

// switchKeys are the flags a switch to arm a sends: those that vary
// between arms and that a sets, and always "attention" (set to a's value,
// which may be the one in force), so that every switch is acknowledged
// with a step number even when the arms' flags are all the same (an A/A
// run, or A′). It fills a.flags["attention"] from the loop's default when
// a does not set it.
func (r *runner) switchKeys(a *armRun) []string {
	var keys []string
	for _, k := range r.vary {
		if _, ok := a.flags[k]; ok {
			keys = append(keys, k)
		}
	}
	if r.agent {
		// The agent acknowledges its arm label at the next step boundary
		// and changes nothing for it (pyagent.ArmKey).
		return append(keys, pyagent.ArmKey)
	}
	if _, ok := a.flags["attention"]; !ok {
		a.flags["attention"] = demo.DefaultConfig().Attention
	}
	if !slices.Contains(keys, "attention") {
		keys = append(keys, "attention")
	}
	return keys
}

// switchLive sets arm a's varying flags over the control channel and
// waits for every acknowledgement; it returns the child's pid and the step
// at which all of them were in force. A refused value, or a child that is
// gone, makes a invalid.
func (r *runner) switchLive(ctx context.Context, a *armRun) (int32, int64, error) {
	lv := r.lv
	if lv.Sup.Status().State != Running {
		a.invalid = "stopped early: " + lv.Sup.Status().Describe()
		return 0, 0, nil
	}
	st0 := lv.Session.Snapshot()
	nMarks, nWarn := len(st0.Marks), len(st0.Warnings)
	keys := r.switchKeys(a)
	kv := make([]wire.KV, 0, len(keys))
	for _, k := range keys {
		v := a.flags[k]
		if r.agent && k == pyagent.ArmKey {
			v = a.name
		} else {
			lv.mu.Lock()
			lv.flags[k] = v
			lv.mu.Unlock()
		}
		kv = append(kv, wire.KV{Key: k, Value: v})
	}
	// All keys in one write: the child applies them at one step boundary.
	if _, err := lv.Session.SetFlags(kv); err != nil {
		a.invalid = fmt.Sprintf("setting %v: %v", kv, err)
		return 0, 0, nil
	}
	deadline := time.Now().Add(r.o.StepTimeout)
	for {
		st := lv.Session.Snapshot()
		// The ranks of a distributed job (hello world > 1) each
		// acknowledge at their own step boundary: a key is in force once
		// every connected rank acknowledged it, from the latest step.
		ranks := map[int64]bool{}
		for _, c := range st.Children {
			if c.Connected && c.Hello.World > 1 {
				ranks[c.Hello.PID] = true
			}
		}
		acked := map[string]session.Mark{}
		ackedBy := map[string]map[int64]bool{}
		for _, m := range st.Marks[nMarks:] {
			if p, ok := acked[m.Key]; ok && ranks[m.PID] {
				m.Step = max(m.Step, p.Step)
			}
			acked[m.Key] = m
			if ackedBy[m.Key] == nil {
				ackedBy[m.Key] = map[int64]bool{}
			}
			ackedBy[m.Key][m.PID] = true
		}
		if len(ranks) > 1 {
			for k, by := range ackedBy {
				for pid := range ranks {
					if !by[pid] {
						delete(acked, k) // not yet in force on every rank
					}
				}
			}
		}
		for _, w := range st.Warnings[min(nWarn, len(st.Warnings)):] {
			for _, k := range keys {
				if v := a.flags[k]; strings.Contains(w, " refused ") && strings.Contains(w, k+"="+v) {
					a.invalid = w
					return 0, 0, nil
				}
			}
		}
		var pid int32
		step, all := int64(0), true
		for _, k := range keys {
			m, ok := acked[k]
			if !ok {
				all = false
				break
			}
			pid, step = int32(m.PID), max(step, m.Step)
		}
		if all {
			return pid, step, nil
		}
		if s := lv.Sup.Status(); s.State != Running {
			a.invalid = "stopped early: " + s.Describe()
			return 0, 0, nil
		}
		if time.Now().After(deadline) {
			a.invalid = fmt.Sprintf("no acknowledgement of the flag switch within %s", r.o.StepTimeout)
			if r.agent {
				a.invalid += fmt.Sprintf(" (%s are switched by rlktop's Python agent: is the command a Python program that reaches a step boundary — rlktop.step() or an optimizer step? --no-agent restarts it with environment variables instead)", strings.Join(r.vary, ", "))
			}
			return 0, 0, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("compare: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// restartSegment (re)starts the child with arm a's flags (environment for
// a command) and waits for seg's warm-up and counted steps from it.
func (r *runner) restartSegment(ctx context.Context, first bool, seg Segment, a *armRun) error {
	lv := r.lv
	st := lv.Session.Snapshot()
	for _, s := range st.Steps {
		r.seen[s.PID] = true
	}
	if !first {
		// The previous segment's child may have ended by itself after its
		// steps were counted: a non-zero exit still makes its arm invalid.
		if prev := r.prev; prev != nil && prev.invalid == "" {
			if s := lv.Sup.Status(); s.State == Exited && (s.ExitCode != 0 || s.Signal != "") {
				prev.invalid = fmt.Sprintf("the child of one of its segments %s", s.Describe())
			}
		}
		lv.mu.Lock()
		lv.flags = r.startFlags(a)
		lv.mu.Unlock()
		if err := lv.Restart(); err != nil {
			a.invalid = "the child did not start: " + err.Error()
			return nil
		}
	}
	r.progress("arm %s: restarted (pid %d)", a.name, lv.Sup.Status().PID)
	r.prev = a
	need := seg.Warmup + seg.Count
	var pid int32 = -1
	steps, why, err := r.waitSteps(ctx, a, func(st *session.State) []session.StepTime {
		// A distributed job: the new ranks' steps, each counted once every
		// new rank finished it (session.State.RankStepsOf).
		if rs := st.RankStepsOf(func(p int32) bool { return !r.seen[p] }); rs != nil {
			return rs[:min(len(rs), need)]
		}
		var out []session.StepTime
		for _, s := range st.Steps {
			if r.seen[s.PID] {
				continue
			}
			if pid < 0 {
				pid = s.PID
			}
			if s.PID == pid && len(out) < need {
				out = append(out, s)
			}
		}
		return out
	}, need)
	if err != nil {
		return err
	}
	r.take(a, seg, steps)
	if why != "" {
		a.invalid = why
	}
	return nil
}

// waitSteps polls the session until pick returns n steps, the child ends
// (why says how) or the step timeout passes.
func (r *runner) waitSteps(ctx context.Context, a *armRun, pick func(*session.State) []session.StepTime, n int) ([]session.StepTime, string, error) {
	lv := r.lv
	last, lastAt := -1, time.Now()
	for {
		st := lv.Session.Snapshot()
		r.observe(st)
		steps := pick(st)
		if len(steps) >= n {
			return steps[:n], "", nil
		}
		if len(steps) != last {
			last, lastAt = len(steps), time.Now()
			r.progress("arm %s: %d/%d steps of this segment (%d counted of %d)", a.name, len(steps), n, len(a.steps), r.o.Steps)
		}
		if s := lv.Sup.Status(); s.State != Running {
			// Frames may still be in flight: look once more after they land.
			lv.Session.Wait(time.Second)
			st = lv.Session.Snapshot()
			r.observe(st)
			steps = pick(st)
			if len(steps) >= n {
				return steps[:n], "", nil
			}
			why := fmt.Sprintf("stopped early after %d of %d steps of a segment: %s", len(steps), n, s.Describe())
			if err := ChildError(s); err != nil {
				why = fmt.Sprintf("stopped early after %d of %d steps of a segment: %v", len(steps), n, err)
			}
			return steps, why, nil
		}
		if time.Since(lastAt) > r.o.StepTimeout {
			return steps, fmt.Sprintf("no step for %s (after %d of %d steps of a segment)", r.o.StepTimeout, len(steps), n), nil
		}
		select {
		case <-ctx.Done():
			return nil, "", fmt.Errorf("compare: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// observe adds the steps of st not seen before to r.all.
func (r *runner) observe(st *session.State) {
	if r.allSeen == nil {
		r.allSeen = map[stepKey]bool{}
	}
	for _, s := range st.Steps {
		k := stepKey{s.PID, s.Step}
		if !r.allSeen[k] {
			r.allSeen[k] = true
			r.all = append(r.all, s)
		}
	}
}

// take labels a segment's steps: the first seg.Warmup are warm-up, the
// rest counted (up to what the arm still owes).
func (r *runner) take(a *armRun, seg Segment, steps []session.StepTime) {
	for i, s := range steps {
		ph := PhaseWarmup
		if i >= seg.Warmup && a.want > 0 {
			ph = PhaseCounted
			a.want--
			a.steps = append(a.steps, stepRef{pid: s.PID, step: s.Step, dur: s.DurNs})
		} else if i >= seg.Warmup {
			ph = PhaseExtra
		}
		l := StepLabel{PID: s.PID, Step: s.Step, Arm: a.name, Phase: ph, DurNs: s.DurNs}
		r.labels[stepKey{s.PID, s.Step}] = l
		if r.o.OnStep != nil {
			r.o.OnStep(l)
		}
	}
}

// schedule lists every step the session saw, in order, with its label;
// unlabelled steps ran under the arm of the step before them (same child)
// while a switch was on its way.
func (r *runner) schedule() []StepLabel {
	out := []StepLabel{}
	prev := map[int32]string{}
	for _, s := range r.all {
		l, ok := r.labels[stepKey{s.PID, s.Step}]
		if !ok {
			l = StepLabel{PID: s.PID, Step: s.Step, Arm: prev[s.PID], Phase: PhaseExtra, DurNs: s.DurNs}
		}
		prev[s.PID] = l.Arm
		out = append(out, l)
	}
	return out
}

// addRows reads the recording back and adds every counted step, with the
// GPU events launched in it aggregated, to its arm.
func (r *runner) addRows(t *tracer.Trace, out []attrib.Arm) {
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
	// the bootstrap keeps that share (attrib.Arm.Strata).
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
	for i, a := range r.arms {
		for _, s := range a.steps {
			evs := per[stepKey{s.pid, s.step}]
			agg.Reset()
			agg.AddEvents(evs, t.Strings, t.Contexts)
			out[i].AddStep(s.dur, agg.Snapshot())
			if r.builtin && hasUpdate {
				st := int32(0)
				if isUpdate(evs) {
					st = 1
				}
				out[i].Strata = append(out[i].Strata, st)
			}
		}
	}
}

// probe evaluates the built-in loop's probe batch under arm a's flags
// (over the common ones) with the initial weights.
func (r *runner) probe(a *armRun) ([]float32, error) {
	cfg := demo.DefaultConfig()
	for _, m := range []map[string]string{r.common, a.flags} {
		for _, k := range sortedKeys(m) {
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
func (r *runner) consistency(out []attrib.Arm) []ArmConsistency {
	probes := make([][]float32, len(r.arms))
	errs := make([]error, len(r.arms))
	for i, a := range r.arms {
		if i == len(r.o.Arms) {
			break // A′: the same flags as A (its seed only changes the weights)
		}
		probes[i], errs[i] = r.probe(a)
	}
	var cs []ArmConsistency
	for i := range r.o.Arms {
		c := ArmConsistency{Arm: r.arms[i].name}
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
			d := CompareProbes(probes[0], other)
			c.Len, c.MaxAbs, c.MaxULP, c.Bitwise = d.Len, d.MaxAbs, d.MaxULP, d.Bitwise
		} else {
			c.Err = "arm A's probe failed: " + errs[0].Error()
		}
		cs = append(cs, c)
	}
	return cs
}
