package session

import (
	"slices"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// stepTable is what the session knows of its processes' steps, each fact
// once: the step times in arrival order (State.Steps: the sparkline,
// steps/s, the agent's outputs per step, each rank's median), the GPU work
// each process launched in each of its steps (the cumulative step rows of
// several ranks: the aggregate keys steps by number only, so their step N
// would merge) and each process's whole run (steps received, first start,
// latest end). The aggregate holds the step rows of one process; the
// window's come from its events. A per-step figure a source adds (device
// memory, samples) belongs in stepSums. Guarded by Session.mu.
type stepTable struct {
	keep  int                  // step times kept (Options.MaxSteps); up to twice as many between trims
	times []livestate.StepTime // arrival order
	count int64                // steps received
	// gpu is each process's GPU work per step, for the steps whose times
	// are kept; last caches the entry of the previous op.
	gpu     map[stepKey]*stepSums
	lastKey stepKey
	last    *stepSums
	runs    map[int32]*procRun
	// onePID is the first process that sent a step or GPU op; multi is
	// set once another did (only then are per-process rows built).
	onePID int32
	seen   bool
	multi  bool
}

// stepKey is one process's step.
type stepKey struct {
	pid  int32
	step int64
}

// stepSums is the GPU work launched in one process's step: summed
// duration (ns) and count of its kernels, memcpys and memsets.
type stepSums struct{ ns, n int64 }

// procRun is one process's steps since the session began (or Reset):
// the whole run, where the window and the kept step times hold only the
// newest.
type procRun struct {
	steps       int64 // steps received
	first, last int64 // its first step's start and its latest step end, ns
}

// addStep records a step event (KindStep: Value the step number).
func (t *stepTable) addStep(e *tracer.Event) {
	t.see(e.PID)
	if t.runs == nil {
		t.runs = map[int32]*procRun{}
	}
	r := t.runs[e.PID]
	if r == nil {
		r = &procRun{first: e.Start, last: e.End()}
		t.runs[e.PID] = r
	}
	r.steps++
	r.first, r.last = min(r.first, e.Start), max(r.last, e.End())
	t.count++
	t.times = append(t.times, livestate.StepTime{Step: e.Value, PID: e.PID, StartNs: e.Start, DurNs: e.Dur})
	if len(t.times) > 2*t.keep {
		t.times = append(t.times[:0], t.times[len(t.times)-t.keep:]...)
		t.pruneGPU()
	}
}

// addGPU adds a linked kernel, memcpy or memset launched in step of its
// process (other events and step < 0 are ignored).
func (t *stepTable) addGPU(e *tracer.Event, step int64) {
	if k := e.Kind; (k != tracer.KindKernel && k != tracer.KindMemcpy && k != tracer.KindMemset) || step < 0 {
		return
	}
	key := stepKey{e.PID, step}
	if t.last == nil || t.lastKey != key {
		sm := t.gpu[key]
		if sm == nil {
			t.see(e.PID)
			if t.gpu == nil {
				t.gpu = map[stepKey]*stepSums{}
			}
			sm = &stepSums{}
			t.gpu[key] = sm
		}
		t.lastKey, t.last = key, sm
	}
	t.last.ns += max(e.Dur, 0)
	t.last.n++
}

// see notes a process that sent a step or GPU op.
func (t *stepTable) see(pid int32) {
	switch {
	case t.multi:
	case !t.seen:
		t.onePID, t.seen = pid, true
	case pid != t.onePID:
		t.multi = true
	}
}

// pruneGPU forgets the step sums of steps older than every kept step
// time of their process (after times was trimmed), so that gpu holds
// about as many steps as times.
func (t *stepTable) pruneGPU() {
	oldest := map[int32]int64{}
	for _, st := range t.times {
		if o, ok := oldest[st.PID]; !ok || st.Step < o {
			oldest[st.PID] = st.Step
		}
	}
	for k := range t.gpu {
		if o, ok := oldest[k.pid]; !ok || k.step < o {
			delete(t.gpu, k)
		}
	}
	t.last = nil
}

// recent is a copy of the newest kept step times (at most keep).
func (t *stepTable) recent() []livestate.StepTime {
	n := min(len(t.times), t.keep)
	return slices.Clone(t.times[len(t.times)-n:])
}

// perProcess is a copy of the GPU sums and whole-run counts, for the step
// rows and ranks of several processes (nil for one process).
func (t *stepTable) perProcess() (gpu map[stepKey]stepSums, runs map[int32]procRun) {
	if !t.multi {
		return nil, nil
	}
	gpu = make(map[stepKey]stepSums, len(t.gpu))
	for k, v := range t.gpu {
		gpu[k] = *v
	}
	runs = make(map[int32]procRun, len(t.runs))
	for pid, r := range t.runs {
		runs[pid] = *r
	}
	return gpu, runs
}

// reset forgets every step (Session.Reset).
func (t *stepTable) reset() { *t = stepTable{keep: t.keep} }
