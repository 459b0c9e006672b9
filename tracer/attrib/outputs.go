package attrib

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// OutputRow summarises one per-step output a Python command reported
// through rlktop's agent (counter tracks "metric.NAME" from rlktop.log and
// "check.NAME.rows" from rlktop.check; tracer/pyagent): a learning curve or
// a NaN/Inf check, over the steps of the trace that hold a sample (a
// sample belongs to the step whose [start, end) holds its time).
type OutputRow struct {
	Kind  string  `json:"kind"` // "metric", "check", "compile", "input" or "memory"
	Name  string  `json:"name"`
	Steps int     `json:"steps"` // steps with a sample
	First float64 `json:"first"` // metric: value in the first such step
	Last  float64 `json:"last"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	// NaNSteps (checks) are the step numbers with NaN/Inf rows.
	NaNSteps []int64 `json:"nan_steps,omitempty"`
	// PerStep holds (step, value) in step order (metrics).
	PerStep [][2]float64 `json:"per_step,omitempty"`
}

// CompileFramesCounter is the Python agent's per-step count of the
// frames torch.compile (dynamo) compiled during the step: the rise of
// torch._dynamo.utils.counters["frames"]["total"] (PyTorch 2.6), first
// compiles and recompiles (guards failed) alike (py/rlktop/_core.py).
const CompileFramesCounter = "compile.frames"

// InputWaitCounter is the Python agent's per-step wall time (ns) the
// training thread spent in next() of a torch.utils.data DataLoader
// iterator: waiting for its batch (py/rlktop/_core.py).
const InputWaitCounter = "input.wait_ns"

// MemoryCounterPrefix starts the Python agent's per-step allocator
// counters on CUDA and ROCm: "memory.gpuN.peak_allocated_bytes"
// (torch.cuda.max_memory_allocated since the previous step, the peak
// reset each step), "memory.gpuN.allocated_bytes" and
// "memory.gpuN.reserved_bytes" at the step's end (memory_allocated,
// memory_reserved); Outputs rows of kind "memory", every step, windows
// or not.
const MemoryCounterPrefix = "memory."

// Outputs returns t's agent outputs, metrics, then the "input" row
// (InputWaitCounter: per step the ns spent waiting for a batch), the
// "compile" row (CompileFramesCounter: per step the frames compiled in
// it), both summarised like a metric, then checks, each by name; nil
// when t has none. Samples outside every step are not counted.
func Outputs(t *tracer.Trace) []OutputRow {
	type step struct {
		start, end, n int64
	}
	var steps []step
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == tracer.KindStep {
			steps = append(steps, step{e.Start, e.End(), e.Value})
		}
	}
	if len(steps) == 0 || len(t.Counters) == 0 {
		return nil
	}
	slices.SortFunc(steps, func(a, b step) int { return cmp.Compare(a.start, b.start) })
	rows := map[string]*OutputRow{}
	for _, c := range t.Counters {
		name := t.Strings.Get(c.Name)
		var kind, key string
		switch {
		case strings.HasPrefix(name, "metric."):
			kind, key = "metric", strings.TrimPrefix(name, "metric.")
		case strings.HasPrefix(name, "check.") && strings.HasSuffix(name, ".rows"):
			kind, key = "check", strings.TrimSuffix(strings.TrimPrefix(name, "check."), ".rows")
		case name == CompileFramesCounter:
			kind, key = "compile", "torch.compile frames"
		case name == InputWaitCounter:
			kind, key = "input", "DataLoader wait ns"
		case strings.HasPrefix(name, MemoryCounterPrefix):
			kind, key = "memory", strings.TrimPrefix(name, MemoryCounterPrefix)
		default:
			continue
		}
		i, _ := slices.BinarySearchFunc(steps, c.TS, func(s step, ts int64) int {
			if s.start <= ts {
				return -1
			}
			return 1
		})
		if i--; i < 0 || c.TS >= steps[i].end {
			continue
		}
		r := rows[kind+"\x00"+key]
		if r == nil {
			r = &OutputRow{Kind: kind, Name: key, Min: math.Inf(1), Max: math.Inf(-1)}
			rows[kind+"\x00"+key] = r
		}
		r.Steps++
		if kind == "check" {
			if c.Value > 0 {
				r.NaNSteps = append(r.NaNSteps, steps[i].n)
			}
			r.Max = max(r.Max, c.Value)
			continue
		}
		r.PerStep = append(r.PerStep, [2]float64{float64(steps[i].n), c.Value})
	}
	out := make([]OutputRow, 0, len(rows))
	for _, r := range rows {
		if r.Kind != "check" {
			slices.SortStableFunc(r.PerStep, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
			sum := 0.0
			for _, p := range r.PerStep {
				sum += p[1]
				r.Min, r.Max = min(r.Min, p[1]), max(r.Max, p[1])
			}
			r.Mean = sum / float64(len(r.PerStep))
			r.First, r.Last = r.PerStep[0][1], r.PerStep[len(r.PerStep)-1][1]
		} else {
			slices.Sort(r.NaNSteps)
			r.Min, r.Max = 0, max(r.Max, 0)
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b OutputRow) int {
		return cmp.Or(cmp.Compare(b.Kind, a.Kind), cmp.Compare(a.Name, b.Name)) // metric, input, compile, check
	})
	return out
}

// MarshalJSON writes NaN and ±Inf (a logged NaN loss) as null: JSON has
// no NaN.
func (r OutputRow) MarshalJSON() ([]byte, error) {
	type plain OutputRow
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	per := make([][2]*float64, len(r.PerStep))
	for i, p := range r.PerStep {
		per[i] = [2]*float64{f(p[0]), f(p[1])}
	}
	return json.Marshal(struct {
		plain
		First   *float64      `json:"first"`
		Last    *float64      `json:"last"`
		Mean    *float64      `json:"mean"`
		Min     *float64      `json:"min"`
		Max     *float64      `json:"max"`
		PerStep [][2]*float64 `json:"per_step,omitempty"`
	}{plain(r), f(r.First), f(r.Last), f(r.Mean), f(r.Min), f(r.Max), per})
}
