package livestate

import (
	"fmt"
	"strings"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// ArmName names an arm by the flags that vary between arms, in spec order
// ("attention=fused,qkv=fused"); flags with one value are left out. An arm
// with no varying flags is "base".
func ArmName(flags map[string]string, specs []FlagSpec) string {
	var parts []string
	for _, sp := range specs {
		if len(sp.Values) > 1 {
			parts = append(parts, sp.Key+"="+flags[sp.Key])
		}
	}
	if len(parts) == 0 {
		return "base"
	}
	return strings.Join(parts, ",")
}

// Tried is the measured result of testing one finding's flag:
// the comparison of the current value (arm A) against the suggested one
// (arm B), reduced to the numbers a finding shows next to its advice.
type Tried struct {
	FindingID string `json:"finding"`
	Key       string `json:"key"`
	From      string `json:"from"` // arm A's value ("" an unset environment variable)
	To        string `json:"to"`   // arm B's value
	// Step is median step B/A with its bootstrap interval; Verdict is
	// attrib's (faster, slower, within noise, invalid).
	Step    attrib.Ratio `json:"step"`
	Verdict string       `json:"verdict"`
	// Row names the category the finding is about ("" none) and RowRatio
	// its mean time per step B/A (0 when absent from A).
	Row      string       `json:"row,omitempty"`
	RowRatio attrib.Ratio `json:"row_ratio"`
	// Outputs: arm B's consistency with A (built-in loop's probe batch,
	// a Python command's rlktop.probe); HaveOutputs false when none.
	HaveOutputs bool    `json:"have_outputs"`
	MaxAbs      float64 `json:"max_abs"`
	Bitwise     bool    `json:"bitwise"`
	NaN         int     `json:"nan"`
	// Valid is every arm's validity; Reason the first invalid arm's.
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
	// Err is why the comparison could not run ("" it ran).
	Err string `json:"error,omitempty"`
	// CoTenant: another process shared the GPU during the comparison
	// (its notes say which; CompareResult.Notes): the timing is suspect.
	CoTenant bool `json:"cotenant,omitempty"`
	// Notes are the comparison's notes (CompareResult.Notes).
	Notes []string `json:"notes,omitempty"`
}

// TriedOf reduces res, a comparison of key=from (A) against key=to (B),
// to a Tried; row is the category whose B/A to quote ("" none).
func TriedOf(res *CompareResult, findingID, key, from, to, row string) Tried {
	t := Tried{FindingID: findingID, Key: key, From: from, To: to, Row: row}
	if res == nil {
		return t
	}
	t.Step, t.Verdict, t.Valid = res.Ratio, res.Verdict, res.Valid()
	t.Notes, t.CoTenant = res.Notes, res.CoTenant
	for _, a := range res.Arms {
		if !a.Valid && t.Reason == "" {
			t.Reason = a.Name + ": " + a.Reason
		}
	}
	if row != "" {
		for _, r := range res.Rows {
			if r.Group == attrib.GroupCategory && r.Key == row {
				t.RowRatio = attrib.Ratio{Value: r.Ratio, CILow: r.CILow, CIHigh: r.CIHigh}
			}
		}
	}
	// Arm B's consistency row (A's own row is A against A).
	for _, c := range res.Consistency {
		if c.Err != "" || len(res.Arms) < 2 || c.Arm != res.Arms[1].Name {
			continue
		}
		t.HaveOutputs, t.MaxAbs, t.Bitwise, t.NaN = true, c.MaxAbs, c.Bitwise, c.NaN
		break
	}
	return t
}

// String is the one line a finding shows after its test: "tried
// sdpa=flash: step 0.71× [0.70, 0.75] faster, attention 0.68×, outputs
// max |Δ| 1.7e-06, not bitwise".
func (t Tried) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tried %s=%s", t.Key, t.To)
	if t.Err != "" {
		fmt.Fprintf(&b, ": could not compare: %s", t.Err)
		return b.String()
	}
	if !t.Valid {
		fmt.Fprintf(&b, ": INVALID (%s), step %s", t.Reason, units.Times(t.Step.Value))
		return b.String()
	}
	fmt.Fprintf(&b, ": step %s %s", units.TimesInterval(t.Step.Value, t.Step.CILow, t.Step.CIHigh), t.Verdict)
	if t.Row != "" && t.RowRatio.Value > 0 {
		fmt.Fprintf(&b, ", %s %s", t.Row, units.Times(t.RowRatio.Value))
	}
	if t.HaveOutputs {
		bw := "not bitwise"
		if t.Bitwise {
			bw = "bitwise equal"
		}
		fmt.Fprintf(&b, ", outputs max |Δ| %.2g, %s", t.MaxAbs, bw)
		if t.NaN > 0 {
			fmt.Fprintf(&b, ", %d NaN", t.NaN)
		}
	} else {
		b.WriteString(", outputs not compared")
	}
	if t.CoTenant {
		b.WriteString(" (another process shared the GPU: timing suspect)")
	}
	return b.String()
}

// FindingRow is the category a finding's comparison quotes: attention
// for the math fallback, the dominant category's key; "" otherwise.
func FindingRow(f *attrib.Finding) string {
	switch f.Kind {
	case attrib.FindMathAttention:
		return "attention"
	case attrib.FindDominant, attrib.FindRooflineBound:
		for k := range f.Numbers {
			if c, ok := strings.CutPrefix(k, "key:"); ok {
				return c
			}
		}
	}
	return ""
}

// FindingInputOf is the findings input of a live session's state: the
// cumulative snapshot, the window's timeline, the latest telemetry value
// of each counter (one sample each), the flags in force and the devices
// of the children's hellos. command is true for a command (environment
// flags restart it), false for the built-in loop.
func FindingInputOf(st *State, flags map[string]string, command bool) attrib.FindingInput {
	in := attrib.FindingInput{Flags: flags, Command: command}
	if st == nil {
		return in
	}
	in.Snapshot, in.Timeline, in.Outputs = st.Cumulative, st.Timeline, st.Outputs
	by := map[string]*attrib.CounterStat{}
	var names []string
	for _, c := range st.Counters {
		s := by[c.Name]
		if s == nil {
			s = &attrib.CounterStat{Name: c.Name, Max: c.Value}
			by[c.Name] = s
			names = append(names, c.Name)
		}
		s.Samples++
		s.Mean += c.Value
		s.Max = max(s.Max, c.Value)
	}
	for _, n := range names {
		s := by[n]
		s.Mean /= float64(s.Samples)
		in.Counters = append(in.Counters, *s)
	}
	for _, c := range st.Children {
		in.Devices = append(in.Devices, c.Hello.Devices...)
	}
	return in
}
