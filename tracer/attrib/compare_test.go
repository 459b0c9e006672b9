package attrib

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func constArm(name string, n int, v int64) ArmSteps {
	a := ArmSteps{Name: name, Valid: true}
	for i := 0; i < n; i++ {
		a.StepNs = append(a.StepNs, v)
	}
	return a
}

func TestArmStats(t *testing.T) {
	// 10 steps 100..1000: median (500+600)/2 = 550; p10 = rank ceil(1) = 100;
	// p90 = rank ceil(9) = 900.
	a := ArmSteps{Name: "A", Valid: true, StepNs: []int64{1000, 100, 900, 200, 800, 300, 700, 400, 600, 500}}
	s := armStats(&a, "")
	if s.MedianNs != 550 || s.P10Ns != 100 || s.P90Ns != 900 || s.Steps != 10 || !s.Valid {
		t.Errorf("%+v", s)
	}
	a.StepNs = a.StepNs[:9] // 1000,100,900,200,800,300,700,400,600 → median 600
	if s := armStats(&a, ""); s.MedianNs != 600 {
		t.Errorf("odd median %d", s.MedianNs)
	}
}

// resampleMedian's counting shortcut equals drawing the same indices,
// sorting the values and taking the median.
func TestResampleMedian(t *testing.T) {
	for _, n := range []int{1, 2, 5, 50, 51} {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(i*i + 3)
		}
		r1 := rand.New(rand.NewPCG(7, uint64(n)))
		r2 := rand.New(rand.NewPCG(7, uint64(n)))
		cnt := make([]int32, n)
		for trial := 0; trial < 200; trial++ {
			got := resampleMedian(r1, v, cnt)
			draw := make([]int64, n)
			for i := range draw {
				draw[i] = v[r2.IntN(n)]
			}
			slices.Sort(draw)
			if want := median(draw); got != want {
				t.Fatalf("n=%d trial %d: %v want %v", n, trial, got, want)
			}
		}
	}
}

func TestCompareExact(t *testing.T) {
	a, b := constArm("A", 20, 1000), constArm("B", 20, 2000)
	a.Rows = []RowSamples{{GroupCategory, "gemm", slices.Repeat([]int64{600}, 20)}, {GroupCategory, "attention", slices.Repeat([]int64{300}, 20)}}
	b.Rows = []RowSamples{{GroupCategory, "gemm", slices.Repeat([]int64{600}, 20)}, {GroupCategory, "attention", slices.Repeat([]int64{1300}, 20)}, {GroupCategory, "scan", slices.Repeat([]int64{50}, 20)}}
	c := CompareArms(a, b, nil, StatsOptions{})
	if c.Ratio != (Ratio{2, 2, 2}) || c.Verdict != VerdictSlower {
		t.Errorf("ratio %+v verdict %s", c.Ratio, c.Verdict)
	}
	want := []RowComparison{
		{Group: GroupCategory, Key: "attention", ANs: 300, BNs: 1300, DeltaNs: 1000, Ratio: 1300.0 / 300, CILow: 1300.0 / 300, CIHigh: 1300.0 / 300, Verdict: VerdictSlower},
		{Group: GroupCategory, Key: "scan", ANs: 0, BNs: 50, DeltaNs: 50, Verdict: VerdictNew},
		{Group: GroupCategory, Key: "gemm", ANs: 600, BNs: 600, Ratio: 1, CILow: 1, CIHigh: 1, Verdict: VerdictNoise},
	}
	if !slices.Equal(c.Rows, want) {
		t.Errorf("rows\n got %+v\nwant %+v", c.Rows, want)
	}
	// Reversed: B is faster.
	if c := CompareArms(b, a, nil, StatsOptions{}); c.Verdict != VerdictFaster || c.Ratio.Value != 0.5 {
		t.Errorf("reversed %+v %s", c.Ratio, c.Verdict)
	}
}

// TestCompareFewRowSteps: rows over 1 step in A and 2 in B (a command's
// profiled steps, which once gave "0.002 [0.001, 0.002] faster" from
// such arms) keep the ratio of the means, 1300/300, and get no interval
// and VerdictFew; with 3 steps each they get the interval and verdict of
// TestCompareExact.
func TestCompareFewRowSteps(t *testing.T) {
	arms := func(na, nb int) (ArmSteps, ArmSteps) {
		a, b := constArm("A", na, 1000), constArm("B", nb, 2000)
		a.Rows = []RowSamples{{GroupCategory, "attention", slices.Repeat([]int64{300}, na)}}
		b.Rows = []RowSamples{{GroupCategory, "attention", slices.Repeat([]int64{1300}, nb)}}
		return a, b
	}
	a, b := arms(1, 2)
	c := CompareArms(a, b, nil, StatsOptions{MinSteps: 1})
	want := RowComparison{Group: GroupCategory, Key: "attention", ANs: 300, BNs: 1300, DeltaNs: 1000, Ratio: 1300.0 / 300, Verdict: VerdictFew}
	if len(c.Rows) != 1 || c.Rows[0] != want {
		t.Errorf("1 and 2 steps: rows %+v, want %+v", c.Rows, want)
	}
	a, b = arms(3, 3)
	c = CompareArms(a, b, nil, StatsOptions{MinSteps: 1})
	if len(c.Rows) != 1 || c.Rows[0].Verdict != VerdictSlower || c.Rows[0].CILow != 1300.0/300 {
		t.Errorf("3 steps each: rows %+v, want slower with its interval", c.Rows)
	}
}

func TestCompareInvalidNeverFaster(t *testing.T) {
	a, b := constArm("A", 20, 1000), constArm("B", 20, 500)
	b.Valid, b.Reason = false, "exited with status 1"
	b.Rows = []RowSamples{{GroupKernel, "k", slices.Repeat([]int64{100}, 20)}}
	c := CompareArms(a, b, nil, StatsOptions{})
	if c.Verdict != VerdictInvalid || c.Arms[1].Valid || c.Arms[1].Reason != "exited with status 1" || c.Rows[0].Verdict != VerdictInvalid {
		t.Errorf("%+v", c)
	}
	// Too few steps, and a negative step time.
	short := constArm("B", 3, 500)
	if c := CompareArms(a, short, nil, StatsOptions{}); c.Verdict != VerdictInvalid || !strings.Contains(c.Arms[1].Reason, "too few counted steps (3 < 5)") {
		t.Errorf("short arm: %s %q", c.Verdict, c.Arms[1].Reason)
	}
	neg := constArm("B", 10, 500)
	neg.StepNs[3] = -1
	if c := CompareArms(a, neg, nil, StatsOptions{}); c.Verdict != VerdictInvalid {
		t.Errorf("negative step: %s", c.Verdict)
	}
	// An invalid A′ is ignored, not fatal.
	bad := constArm("A'", 2, 1000)
	if c := CompareArms(a, constArm("B", 20, 500), &bad, StatsOptions{}); c.Verdict != VerdictFaster || c.Noise != nil || len(c.Arms) != 3 || c.Arms[2].Valid {
		t.Errorf("invalid noise arm: %+v", c)
	}
}

func TestArmAddStep(t *testing.T) {
	var a ArmSteps
	a.AddStep(100, &Snapshot{Categories: []GroupRow{{Key: "gemm", TotalNs: 40}}, Kernels: []KernelRow{{Name: "k1", TotalNs: 40}}})
	a.AddStep(110, &Snapshot{Categories: []GroupRow{{Key: "attention", TotalNs: 30}}, Stages: []GroupRow{{Key: "fwd", TotalNs: 30}}})
	a.AddStep(120, nil)
	want := map[string][]int64{
		"kernel/k1": {40, 0, 0}, "category/gemm": {40, 0, 0}, "category/attention": {0, 30, 0}, "stage/fwd": {0, 30, 0},
	}
	if len(a.Rows) != len(want) || !slices.Equal(a.StepNs, []int64{100, 110, 120}) {
		t.Fatalf("rows %+v steps %v", a.Rows, a.StepNs)
	}
	for _, r := range a.Rows {
		if w := want[r.Group+"/"+r.Key]; !slices.Equal(r.PerStepNs, w) {
			t.Errorf("%s/%s: %v want %v", r.Group, r.Key, r.PerStepNs, w)
		}
	}
}

// TestComparisonJSON checks the keys of compare's JSON contract.
func TestComparisonJSON(t *testing.T) {
	a, b := constArm("A", 10, 1000), constArm("B", 10, 1100)
	a.Flags = map[string]string{"attention": "math"}
	n := constArm("A'", 10, 1000)
	c := CompareArms(a, b, &n, StatsOptions{})
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	arm := m["arms"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "flags", "valid", "steps", "median_ns", "p10_ns", "p90_ns"} {
		if _, ok := arm[k]; !ok {
			t.Errorf("arms[0] lacks %q", k)
		}
	}
	for _, k := range []string{"median_ns", "p10_ns", "p90_ns", "steps"} {
		if s := string(arm[k].(json.Number)); strings.ContainsAny(s, ".eE") {
			t.Errorf("arms[0].%s = %s, want an integer", k, s)
		}
	}
	for _, sec := range []string{"ratio", "noise"} {
		obj := m[sec].(map[string]any)
		first := "value"
		if sec == "noise" {
			first = "ratio"
		}
		for _, k := range []string{first, "ci_low", "ci_high"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s lacks %q", sec, k)
			}
		}
	}
	if m["verdict"] != VerdictSlower || m["rows"] == nil {
		t.Errorf("verdict %v rows %v", m["verdict"], m["rows"])
	}
}

// synthetic is a seeded step-time source: each category's time per step
// is base × scale × exp(σ·N(0,1)) (lognormal, σ = 5%), plus a CPU part with
// 10% lognormal noise and, in 3% of steps, a 1.5× hiccup.
type synthetic struct {
	rng *rand.Rand
}

var synthBase = []struct {
	cat string
	ns  float64
}{{"attention", 4e6}, {"gemm", 6e6}, {"elementwise", 2e6}}

func (s synthetic) arm(name string, steps int, slow map[string]float64) ArmSteps {
	a := ArmSteps{Name: name, Valid: true}
	rows := make([]RowSamples, len(synthBase))
	for i, b := range synthBase {
		rows[i] = RowSamples{Group: GroupCategory, Key: b.cat}
	}
	for i := 0; i < steps; i++ {
		var total float64
		for j, b := range synthBase {
			scale := 1.0
			if f, ok := slow[b.cat]; ok {
				scale = f
			}
			v := b.ns * scale * math.Exp(0.05*s.rng.NormFloat64())
			rows[j].PerStepNs = append(rows[j].PerStepNs, int64(v))
			total += v
		}
		cpu := 1e6 * math.Exp(0.1*s.rng.NormFloat64())
		if s.rng.Float64() < 0.03 {
			cpu *= 1.5
		}
		a.StepNs = append(a.StepNs, int64(total+cpu))
	}
	a.Rows = rows
	return a
}

// A/A comparisons say "within noise" in >= 95% of 100
// trials (step verdict and every row).
func TestProofAANoise(t *testing.T) {
	src := synthetic{rand.New(rand.NewPCG(2026, 4))}
	const trials, steps = 100, 50
	noiseOK, rowsOK := 0, 0
	for i := 0; i < trials; i++ {
		a := src.arm("A", steps, nil)
		b := src.arm("A2", steps, nil)
		n := src.arm("A'", steps, nil)
		c := CompareArms(a, b, &n, StatsOptions{Seed: uint64(i + 1), Resamples: 1000})
		if c.Verdict == VerdictNoise {
			noiseOK++
		}
		all := true
		for _, r := range c.Rows {
			if r.Verdict != VerdictNoise {
				all = false
			}
		}
		if all {
			rowsOK++
		}
	}
	t.Logf("A/A: step verdict within noise in %d/%d trials, all rows within noise in %d/%d", noiseOK, trials, rowsOK, trials)
	if noiseOK < 95 {
		t.Errorf("A/A step verdict within noise in only %d/%d trials (want >= 95)", noiseOK, trials)
	}
	if rowsOK < 90 {
		t.Errorf("A/A: all rows within noise in only %d/%d trials", rowsOK, trials)
	}
}

// A 10% slowdown injected into one category is detected
// ("slower") with its CI covering 1.10 in >= 90% of trials, and the other
// categories stay within noise.
func TestProofSlowdownDetected(t *testing.T) {
	src := synthetic{rand.New(rand.NewPCG(2026, 8))}
	const trials, steps = 100, 50
	covered, detected, othersQuiet, stepSlower := 0, 0, 0, 0
	for i := 0; i < trials; i++ {
		a := src.arm("A", steps, nil)
		b := src.arm("B", steps, map[string]float64{"attention": 1.10})
		n := src.arm("A'", steps, nil)
		c := CompareArms(a, b, &n, StatsOptions{Seed: uint64(i + 1), Resamples: 1000})
		if c.Verdict == VerdictSlower {
			stepSlower++
		}
		quiet := true
		for _, r := range c.Rows {
			if r.Key == "attention" {
				if r.CILow <= 1.10 && 1.10 <= r.CIHigh {
					covered++
				}
				if r.Verdict == VerdictSlower {
					detected++
				}
			} else if r.Verdict != VerdictNoise {
				quiet = false
			}
		}
		if quiet {
			othersQuiet++
		}
	}
	t.Logf("10%% slowdown: CI covers 1.10 in %d/%d, verdict slower in %d/%d, other rows within noise in %d/%d; whole step (about +3%%) slower in %d/%d",
		covered, trials, detected, trials, othersQuiet, trials, stepSlower, trials)
	if covered < 90 {
		t.Errorf("CI covered 1.10 in only %d/%d trials (want >= 90)", covered, trials)
	}
	if detected < 90 {
		t.Errorf("slowdown detected in only %d/%d trials", detected, trials)
	}
	if othersQuiet < 85 {
		t.Errorf("untouched categories within noise in only %d/%d trials", othersQuiet, trials)
	}
}
