package attrib

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Verdicts of a comparison, for the whole step and per row. "faster" and
// "slower" describe arm B relative to arm A (B/A < 1 is faster).
const (
	VerdictFaster  = "faster"
	VerdictSlower  = "slower"
	VerdictNoise   = "within noise"
	VerdictInvalid = "invalid"
	// VerdictNew and VerdictGone mark rows with no time in A (only in B)
	// or none in B (only in A): a ratio means nothing there.
	VerdictNew  = "only in B"
	VerdictGone = "only in A"
	// VerdictFew marks rows compared over fewer than
	// StatsOptions.MinRowSteps steps in an arm (a command's profiled
	// steps, 2 of every 10 without a GPU tracer): the ratio stands, with
	// no interval — a bootstrap of one or two steps resamples the same
	// values and gives a point, not an interval — and no verdict.
	VerdictFew = "too few steps"
)

// Row groups of a comparison.
const (
	GroupKernel   = "kernel"
	GroupCategory = "category"
	GroupStage    = "stage"
)

// ArmSteps is one setting's measurements: the counted step times (warm-up steps
// already dropped) and, per row, the GPU time each of those steps spent in it.
type ArmSteps struct {
	Name  string
	Flags map[string]string
	// Valid is false when the arm cannot be trusted: it exited non-zero,
	// stopped early, or produced NaN; Reason says which. CompareArms also marks
	// arms with fewer than StatsOptions.MinSteps steps or a negative step
	// time invalid.
	Valid  bool
	Reason string
	// StepNs holds the wall time of each counted step, ns.
	StepNs []int64
	// Rows holds per-step time series, each aligned with StepNs (entry i is
	// the ns step i spent in the row; 0 when the row did not run).
	Rows []RowSamples
	// Strata, when non-nil, is aligned with StepNs and names the kind of
	// each step (e.g. 0 collection, 1 collection + update). The bootstrap
	// then resamples within each stratum, keeping the arm's mix of step
	// kinds fixed: a schedule that gives every arm the same share of a much
	// longer step kind would otherwise get intervals as wide as the gap
	// between the kinds.
	Strata []int32
	// Work sums the modelled work of each category over the arm's steps
	// (compare_work.go); nil when the steps carried none.
	Work map[string]Work

	rowIdx map[rowKeyS]int
}

// RowSamples is one kernel, category or stage's time in each step of an arm.
type RowSamples struct {
	Group     string // GroupKernel, GroupCategory or GroupStage
	Key       string // kernel name, category or stage
	PerStepNs []int64
}

type rowKeyS struct{ group, key string }

// AddStep appends one counted step of stepNs wall time whose GPU work s
// summarises (a Snapshot of an aggregator Reset at the step's start; nil
// for no per-row data). Rows absent from s get 0 for this step; rows new
// in s get 0 for the earlier steps.
func (a *ArmSteps) AddStep(stepNs int64, s *Snapshot) {
	n := len(a.StepNs)
	a.StepNs = append(a.StepNs, stepNs)
	if a.rowIdx == nil {
		a.rowIdx = map[rowKeyS]int{}
		for i, r := range a.Rows {
			a.rowIdx[rowKeyS{r.Group, r.Key}] = i
		}
	}
	add := func(group, key string, ns int64) {
		k := rowKeyS{group, key}
		i, ok := a.rowIdx[k]
		if !ok {
			i = len(a.Rows)
			a.rowIdx[k] = i
			a.Rows = append(a.Rows, RowSamples{Group: group, Key: key, PerStepNs: make([]int64, n, n+1)})
		}
		r := &a.Rows[i]
		if len(r.PerStepNs) == n+1 { // same key twice in one step
			r.PerStepNs[n] += ns
			return
		}
		r.PerStepNs = append(r.PerStepNs, ns)
	}
	if s != nil {
		for _, k := range s.Kernels {
			add(GroupKernel, k.Name, k.TotalNs)
		}
		for _, k := range s.Transfers {
			add(GroupKernel, k.Name, k.TotalNs)
		}
		for _, c := range s.Categories {
			add(GroupCategory, c.Key, c.TotalNs)
		}
		a.addWork(s)
		for _, st := range s.Stages {
			add(GroupStage, st.Key, st.TotalNs)
		}
	}
	for i := range a.Rows {
		if r := &a.Rows[i]; len(r.PerStepNs) == n {
			r.PerStepNs = append(r.PerStepNs, 0)
		}
	}
}

// StatsOptions tune CompareArms. The zero value means the defaults.
type StatsOptions struct {
	Resamples int     // bootstrap resamples; default 2000
	Level     float64 // confidence level; default 0.95
	Seed      uint64  // PRNG seed (results are reproducible); default 1
	MinSteps  int     // fewer counted steps make an arm invalid; default 5
	// MinRowSteps: with fewer steps in arm A or B, rows get VerdictFew and
	// no interval; default DefaultMinRowSteps.
	MinRowSteps int
}

// DefaultMinRowSteps is StatsOptions.MinRowSteps's default: three steps
// per arm, the fewest whose resamples differ in more than one value.
const DefaultMinRowSteps = 3

func (o *StatsOptions) defaults() {
	if o.Resamples <= 0 {
		o.Resamples = 2000
	}
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = 0.95
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MinSteps <= 0 {
		o.MinSteps = 5
	}
	if o.MinRowSteps <= 0 {
		o.MinRowSteps = DefaultMinRowSteps
	}
}

// ArmStats summarises one arm's step times (ns, nearest-rank percentiles;
// the median is the usual one, the mean of the two middle values for an
// even count, rounded to ns).
type ArmStats struct {
	Name     string            `json:"name"`
	Flags    map[string]string `json:"flags"`
	Valid    bool              `json:"valid"`
	Reason   string            `json:"reason,omitempty"`
	Steps    int               `json:"steps"`
	MedianNs int64             `json:"median_ns"`
	P10Ns    int64             `json:"p10_ns"`
	P90Ns    int64             `json:"p90_ns"`
}

// Ratio is a B/A ratio with its bootstrap confidence interval.
type Ratio struct {
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// Noise is the A/A′ yardstick: the ratio of a second run of arm A (another
// seed) to A, with its interval. A B/A ratio r counts as noise when
// |ln r| <= max(|ln CILow|, |ln CIHigh|).
type Noise struct {
	Ratio  float64 `json:"ratio"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// RowComparison is one kernel, category or stage: mean time per step in
// each arm (ns), B−A, B/A with its interval, and a verdict.
type RowComparison struct {
	Group   string  `json:"group"`
	Key     string  `json:"key"`
	ANs     int64   `json:"a_ns"` // mean ns per step in A
	BNs     int64   `json:"b_ns"`
	DeltaNs int64   `json:"delta_ns"` // BNs - ANs
	Ratio   float64 `json:"ratio"`    // B/A of the means; 0 when A is 0
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
	Verdict string  `json:"verdict"`
	// Noise is the row's A/A′ envelope half-width in ln units (0 = no A′).
	NoiseLn float64 `json:"noise_ln,omitempty"`
	// A and B, for a category row whose arms carry modelled work: its
	// bytes and FLOPs per step and achieved FLOP/s and bytes/s (the
	// flipped category: math attention moves far more bytes than flash
	// for the same FLOPs); nil otherwise.
	AWork *ArmWork `json:"a_work,omitempty"`
	BWork *ArmWork `json:"b_work,omitempty"`
}

// Comparison is the result of CompareArms: the JSON of `rlktop compare`
// minus consistency, which the caller adds.
type Comparison struct {
	Arms    []ArmStats      `json:"arms"` // A, B, then A′ when given
	Ratio   Ratio           `json:"ratio"`
	Verdict string          `json:"verdict"`
	Noise   *Noise          `json:"noise,omitempty"`
	Rows    []RowComparison `json:"rows"`
	// Method says how the numbers were computed, for the report.
	Method string `json:"method"`
}

// CompareArms compares arm b against arm a. noise, when non-nil and valid, is a
// second run of arm A (A′): its difference from A is the envelope inside
// which a B/A ratio is reported as noise.
//
// Method. Step times: the ratio of medians median(B)/median(A), with a
// percentile bootstrap interval: Resamples times, each arm's steps are
// resampled with replacement independently (arms are separate runs) and
// the ratio of the resampled medians kept; the interval is the
// ((1−Level)/2, (1+Level)/2) quantiles of those ratios. Rows: the same on
// the mean time per step (means add up across rows; medians would not),
// with one set of resampled step indices per arm shared by all rows.
// Verdict: "invalid" when A or B is invalid; else "within noise" when the
// interval contains 1 or the ratio lies inside the A/A′ envelope; else
// "faster" (ratio < 1) or "slower". An invalid arm is never "faster".
// The PRNG is seeded (Seed), so the same inputs give the same result.
func CompareArms(a, b ArmSteps, noise *ArmSteps, o StatsOptions) *Comparison {
	o.defaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x726c6b746f70)) // "rlktop"
	c := &Comparison{
		Rows: []RowComparison{},
		Method: fmt.Sprintf("ratio of medians (rows: of means per step), %g%% percentile bootstrap, %d resamples per arm, seed %d; noise if the interval holds 1 or the ratio is inside the A/A' envelope",
			100*o.Level, o.Resamples, o.Seed),
	}
	if a.strata() != nil || b.strata() != nil {
		c.Method += "; steps resampled within their kind (e.g. the built-in loop's collection and update steps), keeping each arm's mix of step kinds"
	}
	av, bv := checkArm(&a, o), checkArm(&b, o)
	c.Arms = append(c.Arms, armStats(&a, av), armStats(&b, bv))
	var nv bool
	if noise != nil {
		nv = checkArm(noise, o) == ""
		c.Arms = append(c.Arms, armStats(noise, checkArm(noise, o)))
	}
	valid := c.Arms[0].Valid && c.Arms[1].Valid

	// Steps.
	if len(a.StepNs) > 0 && len(b.StepNs) > 0 {
		c.Ratio = bootMedianRatio(rng, a.StepNs, b.StepNs, a.strata(), b.strata(), o)
	}
	var envelope float64 = -1
	if noise != nil && nv && len(a.StepNs) > 0 {
		n := bootMedianRatio(rng, a.StepNs, noise.StepNs, a.strata(), noise.strata(), o)
		c.Noise = &Noise{Ratio: n.Value, CILow: n.CILow, CIHigh: n.CIHigh}
		envelope = envelopeLn(n)
	}
	c.Verdict = verdict(valid, c.Ratio, envelope)

	// Rows: union of A's and B's keys. Each arm's steps are resampled once
	// (the same index sets serve every row), so the rows' intervals come
	// from the same bootstrap worlds and cost additions only.
	idxA := bootIndices(rng, len(a.StepNs), a.strata(), o.Resamples)
	idxB := bootIndices(rng, len(b.StepNs), b.strata(), o.Resamples)
	var idxN [][]int32
	if noise != nil && nv {
		idxN = bootIndices(rng, len(noise.StepNs), noise.strata(), o.Resamples)
	}
	type pair struct{ a, b, n []int64 }
	rows := map[rowKeyS]*pair{}
	var order []rowKeyS
	get := func(k rowKeyS) *pair {
		p := rows[k]
		if p == nil {
			p = &pair{}
			rows[k] = p
			order = append(order, k)
		}
		return p
	}
	for _, r := range a.Rows {
		get(rowKeyS{r.Group, r.Key}).a = r.PerStepNs
	}
	for _, r := range b.Rows {
		get(rowKeyS{r.Group, r.Key}).b = r.PerStepNs
	}
	if noise != nil && nv {
		for _, r := range noise.Rows {
			if p := rows[rowKeyS{r.Group, r.Key}]; p != nil {
				p.n = r.PerStepNs
			}
		}
	}
	for _, k := range order {
		p := rows[k]
		ra := padSteps(p.a, len(a.StepNs))
		rb := padSteps(p.b, len(b.StepNs))
		rc := RowComparison{Group: k.group, Key: k.key}
		rc.setWork(a, b)
		ma, mb := mean(ra), mean(rb)
		rc.ANs, rc.BNs = int64(math.Round(ma)), int64(math.Round(mb))
		rc.DeltaNs = rc.BNs - rc.ANs
		switch {
		case !valid:
			rc.Verdict = VerdictInvalid
			if ma > 0 {
				rc.Ratio = mb / ma
			}
		case ma == 0 && mb == 0:
			rc.Verdict = VerdictNoise
		case ma == 0:
			rc.Verdict = VerdictNew
		case mb == 0:
			rc.Verdict = VerdictGone
		case len(a.StepNs) < o.MinRowSteps || len(b.StepNs) < o.MinRowSteps:
			rc.Ratio, rc.Verdict = mb/ma, VerdictFew
		default:
			r := bootMeanRatio(ra, rb, idxA, idxB, o.Level)
			rc.Ratio, rc.CILow, rc.CIHigh = r.Value, r.CILow, r.CIHigh
			env := -1.0
			if noise != nil && nv {
				rn := padSteps(p.n, len(noise.StepNs))
				if mean(rn) > 0 {
					env = envelopeLn(bootMeanRatio(ra, rn, idxA, idxN, o.Level))
					rc.NoiseLn = env
				}
			}
			rc.Verdict = verdict(true, r, env)
		}
		c.Rows = append(c.Rows, rc)
	}
	slices.SortStableFunc(c.Rows, func(x, y RowComparison) int {
		dx, dy := abs64(x.DeltaNs), abs64(y.DeltaNs)
		if dx != dy {
			if dx > dy {
				return -1
			}
			return 1
		}
		if x.Group != y.Group {
			return groupOrder(x.Group) - groupOrder(y.Group)
		}
		if x.Key < y.Key {
			return -1
		}
		if x.Key > y.Key {
			return 1
		}
		return 0
	})
	return c
}

func groupOrder(g string) int {
	switch g {
	case GroupCategory:
		return 0
	case GroupStage:
		return 1
	}
	return 2
}

// checkArm returns why an arm is invalid ("" when valid).
func checkArm(a *ArmSteps, o StatsOptions) string {
	switch {
	case !a.Valid:
		if a.Reason == "" {
			return "marked invalid"
		}
		return a.Reason
	case len(a.StepNs) < o.MinSteps:
		return fmt.Sprintf("too few counted steps (%d < %d)", len(a.StepNs), o.MinSteps)
	}
	for _, s := range a.StepNs {
		if s < 0 {
			return fmt.Sprintf("negative step time %d ns", s)
		}
	}
	return ""
}

func armStats(a *ArmSteps, why string) ArmStats {
	s := ArmStats{Name: a.Name, Flags: a.Flags, Valid: why == "", Reason: why, Steps: len(a.StepNs)}
	if s.Flags == nil {
		s.Flags = map[string]string{}
	}
	st := SummarizeSteps(a.StepNs)
	s.MedianNs, s.P10Ns, s.P90Ns = st.MedianNs, st.P10Ns, st.P90Ns
	return s
}

// StepSummary summarises step times: the count, the median (mean of the
// two middle values for an even count, rounded to ns) and the nearest-rank
// p10 and p90, ns. It is the "steps" object of `rlktop run --headless`
// and of the report JSON.
type StepSummary struct {
	Count    int   `json:"count"`
	MedianNs int64 `json:"median_ns"`
	P10Ns    int64 `json:"p10_ns"`
	P90Ns    int64 `json:"p90_ns"`
}

// SummarizeSteps computes a StepSummary of step times in ns (any order;
// the slice is not modified).
func SummarizeSteps(ns []int64) StepSummary {
	s := StepSummary{Count: len(ns)}
	if len(ns) == 0 {
		return s
	}
	v := slices.Clone(ns)
	slices.Sort(v)
	s.MedianNs = int64(math.Round(median(v)))
	s.P10Ns = percentile(v, 10)
	s.P90Ns = percentile(v, 90)
	return s
}

func verdict(valid bool, r Ratio, envelopeLn float64) string {
	switch {
	case !valid:
		return VerdictInvalid
	case r.Value == 0 || math.IsNaN(r.Value):
		return VerdictInvalid
	case r.CILow <= 1 && 1 <= r.CIHigh:
		return VerdictNoise
	case envelopeLn >= 0 && math.Abs(math.Log(r.Value)) <= envelopeLn:
		return VerdictNoise
	case r.Value < 1:
		return VerdictFaster
	}
	return VerdictSlower
}

// envelopeLn is the A/A′ noise half-width in ln units.
func envelopeLn(n Ratio) float64 {
	if n.CILow <= 0 || n.CIHigh <= 0 {
		return 0
	}
	return math.Max(math.Abs(math.Log(n.CILow)), math.Abs(math.Log(n.CIHigh)))
}

func padSteps(v []int64, n int) []int64 {
	if len(v) >= n {
		return v[:n]
	}
	out := make([]int64, n)
	copy(out, v)
	return out
}

func mean(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

// median of sorted v: the middle value, or the mean of the two middle ones.
func median(sorted []int64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return float64(sorted[n/2])
	}
	return (float64(sorted[n/2-1]) + float64(sorted[n/2])) / 2
}

// bootMedianRatio returns median(b)/median(a) and its percentile bootstrap
// interval, each arm resampled independently o.Resamples times.
func bootMedianRatio(rng *rand.Rand, a, b []int64, stA, stB []int32, o StatsOptions) Ratio {
	if stA != nil || stB != nil {
		return bootMedianRatioStrata(rng, a, b, stA, stB, o)
	}
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	r := Ratio{}
	if d := median(sa); d > 0 {
		r.Value = median(sb) / d
	}
	if len(sa) == 0 || len(sb) == 0 {
		return r
	}
	ratios := make([]float64, 0, o.Resamples)
	ca, cb := make([]int32, len(sa)), make([]int32, len(sb))
	for i := 0; i < o.Resamples; i++ {
		x, y := resampleMedian(rng, sa, ca), resampleMedian(rng, sb, cb)
		if x > 0 {
			ratios = append(ratios, y/x)
		}
	}
	if len(ratios) == 0 {
		return r
	}
	sort.Float64s(ratios)
	lo := (1 - o.Level) / 2
	r.CILow = quantile(ratios, lo)
	r.CIHigh = quantile(ratios, 1-lo)
	return r
}

// bootMedianRatioStrata is bootMedianRatio with each arm resampled within
// its strata (see ArmSteps.Strata).
func bootMedianRatioStrata(rng *rand.Rand, a, b []int64, stA, stB []int32, o StatsOptions) Ratio {
	r := Ratio{}
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	if d := median(sa); d > 0 {
		r.Value = median(sb) / d
	}
	if len(a) == 0 || len(b) == 0 {
		return r
	}
	ia, ib := bootIndices(rng, len(a), stA, o.Resamples), bootIndices(rng, len(b), stB, o.Resamples)
	va, vb := make([]int64, len(a)), make([]int64, len(b))
	ratios := make([]float64, 0, o.Resamples)
	for k := range ia {
		for i, j := range ia[k] {
			va[i] = a[j]
		}
		for i, j := range ib[k] {
			vb[i] = b[j]
		}
		slices.Sort(va)
		slices.Sort(vb)
		if x := median(va); x > 0 {
			ratios = append(ratios, median(vb)/x)
		}
	}
	if len(ratios) == 0 {
		return r
	}
	sort.Float64s(ratios)
	lo := (1 - o.Level) / 2
	r.CILow, r.CIHigh = quantile(ratios, lo), quantile(ratios, 1-lo)
	return r
}

// strata returns a.Strata when it is aligned with the steps, else nil.
func (a *ArmSteps) strata() []int32 {
	if len(a.Strata) != len(a.StepNs) {
		return nil
	}
	return a.Strata
}

// bootIndices draws r resamples of n step indices with replacement; with
// strata (aligned, non-nil) position i draws among the steps of i's stratum,
// so every resample keeps the arm's count of each step kind.
func bootIndices(rng *rand.Rand, n int, strata []int32, r int) [][]int32 {
	if n == 0 {
		return nil
	}
	flat := make([]int32, n*r)
	if strata != nil {
		members := map[int32][]int32{}
		for i, s := range strata {
			members[s] = append(members[s], int32(i))
		}
		for i := range flat {
			m := members[strata[i%n]]
			flat[i] = m[rng.IntN(len(m))]
		}
	} else {
		for i := range flat {
			flat[i] = int32(rng.IntN(n))
		}
	}
	out := make([][]int32, r)
	for i := range out {
		out[i] = flat[i*n : (i+1)*n]
	}
	return out
}

// bootMeanRatio returns mean(b)/mean(a) and its percentile bootstrap
// interval over the given resample index sets (one per arm, same count).
func bootMeanRatio(a, b []int64, ia, ib [][]int32, level float64) Ratio {
	r := Ratio{}
	ma := mean(a)
	if ma > 0 {
		r.Value = mean(b) / ma
	}
	if len(a) == 0 || len(b) == 0 || len(ia) == 0 || len(ib) == 0 {
		return r
	}
	ratios := make([]float64, 0, len(ia))
	for k := range ia {
		var sa, sb int64
		for _, j := range ia[k] {
			sa += a[j]
		}
		for _, j := range ib[k] {
			sb += b[j]
		}
		if sa > 0 {
			ratios = append(ratios, (float64(sb)/float64(len(b)))/(float64(sa)/float64(len(a))))
		}
	}
	if len(ratios) == 0 {
		return r
	}
	sort.Float64s(ratios)
	lo := (1 - level) / 2
	r.CILow, r.CIHigh = quantile(ratios, lo), quantile(ratios, 1-lo)
	return r
}

// quantile of sorted v at q in [0,1], linear between order statistics.
func quantile(v []float64, q float64) float64 {
	if len(v) == 1 {
		return v[0]
	}
	pos := q * float64(len(v)-1)
	i := int(pos)
	if i >= len(v)-1 {
		return v[len(v)-1]
	}
	f := pos - float64(i)
	return v[i]*(1-f) + v[i+1]*f
}

// resampleMedian draws len(sorted) indices with replacement and returns the
// median of the drawn values. Since sorted is sorted, the drawn values in
// order are sorted[j] repeated count[j] times, so a counting pass finds the
// middle without sorting.
func resampleMedian(rng *rand.Rand, sorted []int64, count []int32) float64 {
	n := len(sorted)
	clear(count)
	for i := 0; i < n; i++ {
		count[rng.IntN(n)]++
	}
	// Order statistics k1 = (n-1)/2 and k2 = n/2 (0-based).
	k1, k2 := (n-1)/2, n/2
	var v1, v2 int64
	seen, got1 := 0, false
	for j, c := range count {
		if c == 0 {
			continue
		}
		seen += int(c)
		if !got1 && seen > k1 {
			v1, got1 = sorted[j], true
		}
		if seen > k2 {
			v2 = sorted[j]
			break
		}
	}
	return (float64(v1) + float64(v2)) / 2
}
