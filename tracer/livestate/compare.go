package livestate

import (
	"encoding/json"
	"math"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// Step phases of a schedule.
const (
	PhaseWarmup  = "warmup"  // dropped after a start or switch
	PhaseCounted = "counted" // measured
	PhaseExtra   = "extra"   // ran while the next switch was on its way; not counted
)

// StepLabel says which arm ran one step of the comparison and whether it
// counted (for the sparkline: which arm each step ran).
type StepLabel struct {
	PID   int32  `json:"pid"`
	Step  int64  `json:"step"` // step number as the child numbered it
	Arm   string `json:"arm"`  // arm name; the noise arm is "A′ (<A's name>)"
	Phase string `json:"phase"`
	DurNs int64  `json:"dur_ns"`
}

// ArmConsistency compares one arm's probe outputs with arm A's (built-in
// loop only): the fixed probe batch's legal-move logits and value outputs
// (loop/demo.Probe with the initial weights), evaluated in-process under the
// arm's backends. Arm A's own row compares A with a second evaluation of
// A (bitwise when the probe is deterministic). MaxULP is large for values
// near 0 (few ulps apart in absolute terms): read it with MaxAbs.
type ArmConsistency struct {
	Arm     string  `json:"arm"`
	Len     int     `json:"len"`     // probe values compared
	MaxAbs  float64 `json:"max_abs"` // max |arm − A| over pairs where neither is NaN
	MaxULP  int64   `json:"max_ulp"` // max distance in float32 ulps (loop/demo.ULPDistance)
	NaN     int     `json:"nan"`     // NaN probe values in this arm's own output
	Bitwise bool    `json:"bitwise"` // every value has the same bits as A's
	Err     string  `json:"err,omitempty"`
	// Probe and Switches (Python commands): the rlktop.probe name and the
	// number of switches between this arm and A it was evaluated at.
	Probe    string `json:"probe,omitempty"`
	Switches int    `json:"switches,omitempty"`
}

// CompareResult is what `rlktop compare` prints and the TUI compare view
// renders. Arms, Ratio, Verdict, Noise and Rows are the JSON: the
// second arm against the first (B/A); with more than two arms Pairs holds
// every arm against the first (Pairs[0] is the one copied to the top).
type CompareResult struct {
	Arms    []attrib.ArmStats      `json:"arms"` // every arm in order, then A′
	Ratio   attrib.Ratio           `json:"ratio"`
	Verdict string                 `json:"verdict"`
	Noise   *attrib.Noise          `json:"noise,omitempty"`
	Rows    []attrib.RowComparison `json:"rows"`
	Method  string                 `json:"method"`
	// Pairs: arm i+1 against arm 0, for i = 0 … len(Arms)−2 (A′ not
	// counted); only in JSON when there are more than two arms.
	Pairs []*attrib.Comparison `json:"pairs,omitempty"`
	// Consistency of each arm's probe outputs with arm A's (built-in
	// loop: its probe batch; a Python command: the rlktop.probe functions,
	// evaluated at every switch between arms).
	Consistency []ArmConsistency `json:"consistency,omitempty"`
	// Checks (rlktop.check): per name and arm, the steps checked and those
	// with NaN/Inf (such an arm is invalid).
	Checks []CheckSummary `json:"checks,omitempty"`
	// Metrics (rlktop.log) of each arm against the A/A′ envelope.
	Metrics []MetricCompare `json:"metrics,omitempty"`
	// Audits (rlktop.audit): each arm's raw-bits hashes against A's.
	Audits []AuditCompare `json:"audits,omitempty"`
	// Python: per arm, where its Python time went (the Python agent's
	// stack samples of its counted steps; python.go).
	Python []ArmPython `json:"python,omitempty"`
	// Mode is "live" (built-in loop flags switched over the control
	// channel at step boundaries, one child) or "restart" (one child per
	// segment with the arm's environment or flags).
	Mode     string      `json:"mode"`
	Schedule []StepLabel `json:"schedule"`
	// Notes say what the numbers cannot (e.g. how A′ differs from A).
	Notes []string `json:"notes,omitempty"`
	// CoTenant: another process shared a GPU while the arms ran (the
	// notes name it); the timings are not the command's alone.
	CoTenant bool `json:"cotenant,omitempty"`
	// Memory: each arm's peak and temporaries (memory.go); absent when
	// the recording holds no memory events.
	Memory []ArmMemory `json:"memory,omitempty"`
	WallNs int64       `json:"wall_ns"` // wall time of the whole comparison
}

// Valid reports whether every arm (A′ included) is valid.
func (r *CompareResult) Valid() bool {
	for _, a := range r.Arms {
		if !a.Valid {
			return false
		}
	}
	return true
}

// NoiseName is the noise arm's name for arm A's name a.
func NoiseName(a string) string { return "A′ (" + a + ")" }

// MetricCompare is one metric of one arm (B, C, …, A′) against the A/A′
// envelope: per counted step k, the envelope is [min, max] of A's and A′'s
// k-th values; "edge" is outside it by at most its own width, "outside"
// beyond that. Overall is the same test on the arms' means.
type MetricCompare struct {
	Metric  string    `json:"metric"`
	Arm     string    `json:"arm"`
	Steps   int       `json:"steps"`
	Mean    float64   `json:"mean"`
	EnvLow  float64   `json:"envelope_low"`  // min(mean A, mean A′)
	EnvHigh float64   `json:"envelope_high"` // max(mean A, mean A′)
	Verdict string    `json:"verdict"`       // inside | edge | outside (of the means); "" without A′
	Inside  int       `json:"steps_inside"`
	Edge    int       `json:"steps_edge"`
	Outside int       `json:"steps_outside"`
	PerStep []float64 `json:"per_step"` // the arm's value in each counted step (NaN: not logged)
	// APerStep is arm A's, for plotting the two curves together.
	APerStep []float64 `json:"a_per_step"`
}

// AuditCompare is one audited tensor of one arm against arm A over the
// step numbers both ran (restart mode replays the same steps; live mode
// runs different ones and says so).
type AuditCompare struct {
	Name      string `json:"name"`
	Arm       string `json:"arm"`
	Steps     int    `json:"steps"`  // step numbers compared
	Values    int64  `json:"values"` // elements compared
	Bitwise   bool   `json:"bitwise"`
	FirstDiff int64  `json:"first_diff_step"` // -1 when bitwise equal
	// FirstDiffElem is the first element (flat index) of FirstDiff's
	// tensor whose value differs, among the raw values the agent sampled
	// (RLKTOP_AUDIT_SAMPLE, default the first 16); -1 when those agree and
	// the difference lies beyond them, or none differ. AValue/BValue are
	// the two values there.
	FirstDiffElem int64   `json:"first_diff_element"`
	AValue        float64 `json:"a_value,omitempty"`
	BValue        float64 `json:"b_value,omitempty"`
	Note          string  `json:"note,omitempty"`
}

// CheckSummary is one rlktop.check name of one arm: the steps it was
// checked in and those holding NaN or Inf (step numbers as the child
// numbered them).
type CheckSummary struct {
	Name     string  `json:"name"`
	Arm      string  `json:"arm"`
	Steps    int     `json:"steps"`
	NaNSteps []int64 `json:"nan_steps"`
}

// finite returns &v, or nil for NaN and ±Inf (JSON has no NaN: null).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func finites(vs []float64) []*float64 {
	out := make([]*float64, len(vs))
	for i, v := range vs {
		out[i] = finite(v)
	}
	return out
}

// MarshalJSON writes NaN values (a step that logged no value, a mean of
// none) as null.
func (m MetricCompare) MarshalJSON() ([]byte, error) {
	type plain MetricCompare
	return json.Marshal(struct {
		plain
		Mean     *float64   `json:"mean"`
		EnvLow   *float64   `json:"envelope_low"`
		EnvHigh  *float64   `json:"envelope_high"`
		PerStep  []*float64 `json:"per_step"`
		APerStep []*float64 `json:"a_per_step"`
	}{plain(m), finite(m.Mean), finite(m.EnvLow), finite(m.EnvHigh), finites(m.PerStep), finites(m.APerStep)})
}

// MarshalJSON writes NaN sampled values as null.
func (a AuditCompare) MarshalJSON() ([]byte, error) {
	type plain AuditCompare
	return json.Marshal(struct {
		plain
		AValue *float64 `json:"a_value,omitempty"`
		BValue *float64 `json:"b_value,omitempty"`
	}{plain(a), finite(a.AValue), finite(a.BValue)})
}
