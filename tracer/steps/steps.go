// Package steps cuts a traced command's timeline into training steps: the
// NVTX / roctx ranges that mark steps, else torch.profiler's
// ProfilerStep#N ranges, else fixed time windows. The CUPTI injection
// library and the rocprofiler tool library both run it in the traced
// process, on each decoded batch, before sending.
package steps

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/rlktop/rlktop/tracer"
)

// EnvStepRange carries `rlktop run --step-range REGEX` to the traced
// process.
const EnvStepRange = "RLKTOP_STEP_RANGE"

var (
	// DefaultStepRange matches ranges named like a training step:
	// "step", "step 3", "step#3", "train_step", "iteration 12", "iter_7".
	DefaultStepRange = regexp.MustCompile(`(?i)^(train[_ ]?)?(step|iteration|iter)\b`)
	profilerStep     = regexp.MustCompile(`^ProfilerStep#(\d+)$`)
	trailingNumber   = regexp.MustCompile(`(\d+)\s*$`)
)

// StepRule turns the NVTX ranges that mark training steps into KindStep
// events (Value = the step number), as the Kineto importer does with
// ProfilerStep#N. With a user regex, ranges whose name it matches are
// steps. By default, ranges matching DefaultStepRange are steps; until the
// first of those is seen, torch.profiler's ProfilerStep#N ranges are used
// instead (after it, they stay plain ranges). The number is the last
// integer in the name, else a per-thread count from 0. Not safe for
// concurrent use.
type StepRule struct {
	re       *regexp.Regexp // nil: default rule
	stepLike bool           // default rule: a DefaultStepRange match was seen
	seen     bool           // any range became a step

	// Fixed-window fallback (SetWindow).
	windowNs, graceNs int64
	w0, maxEnd        int64 // first event start; latest event end
	nextWin           int64 // windows emitted so far
	tid               int32 // thread the windows are put on (first launch's)
	count             map[int32]int64
	memo              map[tracer.StrID]int8 // 0 unknown, 1 step-like / user match, 2 ProfilerStep, 3 no
}

// NewStepRule compiles expr ("" = the default rule). The error names the
// option and the bad expression.
func NewStepRule(expr string) (*StepRule, error) {
	r := &StepRule{count: map[int32]int64{}, memo: map[tracer.StrID]int8{}}
	if expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("--step-range %q: %w", expr, err)
		}
		r.re = re
	}
	return r, nil
}

func (r *StepRule) class(id tracer.StrID, name func(tracer.StrID) string) int8 {
	if c, ok := r.memo[id]; ok {
		return c
	}
	nm := name(id)
	c := int8(3)
	switch {
	case r.re != nil:
		if r.re.MatchString(nm) {
			c = 1
		}
	case DefaultStepRange.MatchString(nm):
		c = 1
	case profilerStep.MatchString(nm):
		c = 2
	}
	r.memo[id] = c
	return c
}

// Apply rewrites, in place, the KindRange events of evs that mark steps.
// name gives the text of an event's name id (a decoder's string table).
func (r *StepRule) Apply(evs []tracer.Event, name func(tracer.StrID) string) {
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindRange {
			continue
		}
		c := r.class(e.Name, name)
		switch {
		case c == 1:
			if r.re == nil {
				r.stepLike = true
			}
		case c == 2 && !r.stepLike:
		default:
			continue
		}
		e.Kind = tracer.KindStep
		r.seen = true
		if m := trailingNumber.FindStringSubmatch(name(e.Name)); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				e.Value = n
				continue
			}
		}
		e.Value = r.count[e.TID]
		r.count[e.TID]++
	}
}

// EnvStepWindow carries the fixed step window, in ms, to the traced
// process (0 turns the fallback off; default DefaultStepWindowMs).
const EnvStepWindow = "RLKTOP_STEP_WINDOW_MS"

// DefaultStepWindowMs is the fixed step window of the fallback, ms.
const DefaultStepWindowMs = 1000

// SetWindow turns on the last fallback of the step rule (step
// ranges, else ProfilerStep#N, else fixed time windows): when no range has
// become a step during the first graceNs of trace time, Windows cuts
// consecutive windows of windowNs, from the first event on, into steps.
// windowNs <= 0 turns it off.
func (r *StepRule) SetWindow(windowNs, graceNs int64) { r.windowNs, r.graceNs = windowNs, graceNs }

// Windows returns the fixed-window steps that evs (already passed to Apply)
// complete, to append to the batch; nil while a step range has been seen,
// during the grace period, or with the fallback off. Windows cover the
// trace from its first event; a window is emitted once an event ends past
// it. Once a real step range appears no more windows are made (those
// already sent stay).
func (r *StepRule) Windows(evs []tracer.Event) []tracer.Event {
	if r.windowNs <= 0 || r.seen {
		return nil
	}
	for i := range evs {
		e := &evs[i]
		if r.w0 == 0 || e.Start < r.w0 {
			if r.nextWin == 0 {
				r.w0 = e.Start
			}
		}
		r.maxEnd = max(r.maxEnd, e.End())
		if r.tid == 0 && e.Kind.IsLaunch() {
			r.tid = e.TID
		}
	}
	if r.w0 == 0 || r.maxEnd-r.w0 < r.graceNs {
		return nil
	}
	var out []tracer.Event
	for r.maxEnd >= r.w0+(r.nextWin+1)*r.windowNs {
		out = append(out, tracer.Event{Kind: tracer.KindStep, Start: r.w0 + r.nextWin*r.windowNs, Dur: r.windowNs,
			Value: r.nextWin, PID: firstPID(evs), TID: r.tid, Device: -1})
		r.nextWin++
	}
	return out
}

func firstPID(evs []tracer.Event) int32 {
	if len(evs) > 0 {
		return evs[0].PID
	}
	return 0
}

// FromEnv is the step rule a traced process runs: the regex in
// EnvStepRange ("" = the default rule; a bad one is reported to warn and the
// default used) and the fixed-window fallback of EnvStepWindow ms (default
// DefaultStepWindowMs, 0 off) after a 5 s grace period.
func FromEnv(getenv func(string) string, warn func(error)) *StepRule {
	r, err := NewStepRule(getenv(EnvStepRange))
	if err != nil {
		warn(err)
		r, _ = NewStepRule("")
	}
	ms := int64(DefaultStepWindowMs)
	if v, err := strconv.ParseInt(getenv(EnvStepWindow), 10, 64); err == nil && v >= 0 {
		ms = v
	}
	r.SetWindow(ms*1_000_000, 5_000_000_000)
	return r
}

// applyStepRanges makes evs' ranges named like a step the steps (the
// step-like choice of ApplyTrace and TraceCaptures): ProfilerStep#N steps
// turn back into plain ranges, and the step-like ranges are cut in start
// order (a file's events need not be in time order), so unnumbered ones
// are counted per thread as the live rule counts them.
func (r *StepRule) applyStepRanges(evs []tracer.Event, name func(tracer.StrID) string) {
	for i := range evs {
		if e := &evs[i]; e.Kind == tracer.KindStep && profilerStep.MatchString(name(e.Name)) {
			e.Kind, e.Value = tracer.KindRange, 0
		}
	}
	r.stepLike = true
	var idx []int
	for i := range evs {
		if e := &evs[i]; e.Kind == tracer.KindRange && r.class(e.Name, name) == 1 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(evs[a].Start, evs[b].Start) })
	for _, i := range idx {
		r.Apply(evs[i:i+1], name)
	}
}

// Rules that cut a file's steps, as Trace.StepRule names them.
const (
	RuleStepRanges   = "ranges named like step / iteration / train_step"
	RuleProfilerStep = "torch.profiler ProfilerStep#N ranges"
	RuleSourceSteps  = "the source's own step events"
	RuleNone         = "no step ranges in the trace"
)

// ApplyTrace runs the step rule of traced commands on a whole file (one
// rule for files and live commands): when any annotation range is
// named like a step (DefaultStepRange: "step", "step[3]", "iteration 12",
// "train_step"), those ranges become the steps (KindStep, Value the last
// integer in the name, else a per-thread count from 0 in start order) and ProfilerStep#N
// steps an importer made turn back into plain ranges, as the live rule does
// once it has seen a step-like range. Otherwise ProfilerStep#N ranges (made
// KindStep by the Kineto importer, or still KindRange from another
// importer) or the source's own step events stay the steps. It sets and
// returns t.StepRule, one of the Rule* constants. Files hold no fixed-window
// fallback: a trace without steps has none.
func ApplyTrace(t *tracer.Trace) string {
	r, _ := NewStepRule("")
	name := t.Strings.Get
	stepLike := false
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == tracer.KindRange && r.class(e.Name, name) == 1 {
			stepLike = true
			break
		}
	}
	switch {
	case stepLike:
		r.applyStepRanges(t.Events, name)
		t.StepRule = RuleStepRanges
	default:
		r.Apply(t.Events, name) // ProfilerStep#N still held as ranges
		t.StepRule = RuleNone
		prof, other := 0, 0
		for i := range t.Events {
			if e := &t.Events[i]; e.Kind == tracer.KindStep {
				if profilerStep.MatchString(name(e.Name)) {
					prof++
				} else {
					other++
				}
			}
		}
		switch {
		case prof > 0 && other == 0:
			t.StepRule = RuleProfilerStep
		case prof+other > 0:
			t.StepRule = RuleSourceSteps
		}
	}
	return t.StepRule
}

// TraceCaptures is ApplyTrace for a trace read window by window
// (tracefile.OpenStream: consecutive windows, each starting after the
// previous ones end). Apply each window in order; the steps equal
// ApplyTrace's on the whole trace. Not safe for concurrent use.
type TraceCaptures struct {
	r           *StepRule
	windows     int
	stepLike    bool
	prof, other bool
}

// NewTraceCaptures returns the rule before the first window.
func NewTraceCaptures() *TraceCaptures {
	r, _ := NewStepRule("")
	return &TraceCaptures{r: r}
}

// Apply cuts the steps of t, the next window (its Events only; Strings the
// whole trace's). ApplyTrace's choice (step-like ranges anywhere make them
// the steps) is taken at the first window; a non-nil error says that a
// later window holds the first step-like range, so the earlier windows'
// steps were cut by the other rule (the caller must cut the whole trace).
// Unnumbered step ranges are counted per thread in start order across
// windows, as ApplyTrace counts them.
func (w *TraceCaptures) Apply(t *tracer.Trace) error {
	r, name := w.r, t.Strings.Get
	like := false
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == tracer.KindRange && r.class(e.Name, name) == 1 {
			like = true
			break
		}
	}
	if w.windows == 0 {
		w.stepLike = like
	}
	w.windows++
	if like && !w.stepLike {
		return fmt.Errorf("window %d holds the first range named like a step; earlier windows kept ProfilerStep#N steps", w.windows-1)
	}
	if w.stepLike {
		r.applyStepRanges(t.Events, name)
		return nil
	}
	r.Apply(t.Events, name)
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == tracer.KindStep {
			if profilerStep.MatchString(name(e.Name)) {
				w.prof = true
			} else {
				w.other = true
			}
		}
	}
	return nil
}

// Rule returns the rule the windows so far were cut by, as
// Trace.StepRule names it (ApplyTrace's Rule* constants).
func (w *TraceCaptures) Rule() string {
	switch {
	case w.stepLike:
		return RuleStepRanges
	case w.prof && !w.other:
		return RuleProfilerStep
	case w.prof || w.other:
		return RuleSourceSteps
	}
	return RuleNone
}
