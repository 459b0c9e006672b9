package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

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
func Compare(ctx context.Context, o CompareOptions) (*livestate.CompareResult, error) {
	if len(o.Arms) < 2 {
		return nil, fmt.Errorf("%w: %d arm(s); give a flag with two or more values (--flag attention=math,fused) or a preset", ErrCompare, len(o.Arms))
	}
	builtin := len(o.Command) == 0 && o.Attach == 0
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

func (r *runner) run(ctx context.Context) (*livestate.CompareResult, error) {
	o := r.o
	res := &livestate.CompareResult{Mode: "restart", Schedule: []livestate.StepLabel{}}
	if r.live {
		res.Mode = "live"
	}
	r.labels = map[stepKey]livestate.StepLabel{}

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
	armsOut := make([]attrib.ArmSteps, len(r.arms))
	var profiled []attrib.ArmSteps // a command's arms of profiled steps (addRows)
	for i, a := range r.arms {
		armsOut[i] = attrib.ArmSteps{Name: a.name, Flags: a.flags, Valid: a.invalid == "", Reason: a.invalid}
	}
	if rec != nil {
		t, err := tracefile.Open(rec.Name(), tracefile.Options{Own: true})
		if err != nil {
			return nil, fmt.Errorf("compare: reading the session's recording back: %w", err)
		}
		profiled = r.addRows(t, armsOut)
		res.Memory = r.armMemory(t) // compare_memory.go
		if !r.builtin {
			r.agentChecks(t, armsOut, res)
			res.Python = r.pythonByArm(t) // compare_python.go
		}
	}

	// Consistency (built-in loop).
	if r.builtin {
		res.Consistency = r.consistency(armsOut)
	}

	// Statistics.
	var noise *attrib.ArmSteps
	nArms := len(o.Arms)
	if o.Noise {
		noise = &armsOut[nArms]
	}
	noiseIdx := -1
	if o.Noise {
		noiseIdx = nArms
	}
	for i := 1; i < nArms; i++ {
		c := attrib.CompareArms(armsOut[0], armsOut[i], noise, o.Stats)
		if rows, note, ok := r.rowsOf(armsOut, profiled, 0, i, noiseIdx, o.Stats); ok {
			c.Rows = rows
			if !slices.Contains(r.notes, note) {
				r.notes = append(r.notes, note)
			}
		}
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
	switch {
	case o.Attach != 0:
		src = fmt.Sprintf("compare: attached pid %d", o.Attach)
	case !r.builtin:
		src = "compare: " + strings.Join(o.Command, " ")
	}
	lo := LiveOptions{
		Command:         o.Command,
		Exe:             o.Exe,
		Flags:           r.startFlags(first),
		TorchRanges:     o.TorchRanges,
		Untraced:        o.Untraced,
		Tracer:          o.Tracer,
		NoAgent:         o.NoAgent,
		NoProfileMemory: o.NoProfileMemory,
		PySampleHz:      o.PySampleHz,
		Session: session.Options{Rules: o.Rules, Source: src, MaxSteps: 1 << 20,
			RecentNs: int64(time.Second), RecentMaxEvents: 1 << 12},
		Stdout:        o.Stdout,
		StderrCopy:    o.Stderr,
		Attach:        o.Attach,
		AttachTimeout: o.AttachTimeout,
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
	if err := r.executor().execute(ctx, segs); err != nil {
		return err
	}
	return r.finishRecording()
}

// executor runs a comparison's schedule in one of its two modes: live
// switches inside one running process (liveExec, compare_live.go) or a
// fresh process per segment (restartExec, compare_restart.go). Both fill
// the arms' counted steps and the step labels through the runner's
// waitSteps and take (compare_steps.go); planning (compare_plan.go)
// picks the mode, the rows come from the recording afterwards
// (compare_rows.go).
type executor interface {
	// execute runs segs (their arms runnable at the start) in the child
	// the runner started; an error ends the comparison (ctx, a failed
	// control write is not one: the arm becomes invalid).
	execute(ctx context.Context, segs []Segment) error
}

// executor returns the plan's mode.
func (r *runner) executor() executor {
	if r.live {
		return liveExec{r}
	}
	return &restartExec{runner: r, seen: map[int32]bool{}}
}

func (r *runner) finishRecording() error {
	// Stop the child (politely first), then let in-flight frames land
	// before the recording stops.
	lv := r.lv
	lv.StopChild(context.Background(), 3*time.Second, 2*time.Second)
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
