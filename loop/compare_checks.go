package loop

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// The Python agent's output checks (rlktop.check, probe, audit, log) reach
// rlktop as counter samples named by these prefixes (py/rlktop/_core.py):
//
//	check.NAME.rows / .values    NaN/Inf rows and values in a step
//	probe.NAME.len / .max_abs / .max_ulp / .nan_rows / .bitwise / .error
//	                             one switch between arms (old → new)
//	audit.NAME.hash_hi / .hash_lo / .n   a step's raw-bits hash
//	metric.NAME                  a per-step metric (rlktop.log)
//	compile.frames               frames torch.compile compiled in a step
//
// A sample belongs to the step whose [start, end) holds its time; probe
// samples, taken between steps, to the first step after them.

// agentChecks reads the agent's samples from the recording t and fills
// res (Consistency, Metrics, Audits); an arm with NaN/Inf in a checked
// tensor, or that compiled frames during counted steps (agentCompiles),
// becomes invalid in out, with its steps named.
func (r *runner) agentChecks(t *tracer.Trace, out []attrib.ArmSteps, res *livestate.CompareResult) {
	if len(t.Counters) == 0 || len(r.all) == 0 {
		return
	}
	spans := make([]stepSpan, 0, len(r.all))
	for _, s := range r.all {
		l, ok := r.labels[stepKey{s.PID, s.Step}]
		spans = append(spans, stepSpan{s: s, label: l, ok: ok})
	}
	slices.SortFunc(spans, func(a, b stepSpan) int { return cmp.Compare(a.s.StartNs, b.s.StartNs) })
	// The arm of a step without a label ran under the arm of the step
	// before it (a switch on its way).
	for i := range spans {
		if !spans[i].ok && i > 0 {
			spans[i].label.Arm = spans[i-1].label.Arm
		}
	}
	per := map[int][]counterAt{} // span index → samples in it
	probes := map[int][]counterAt{}
	for _, c := range t.Counters {
		name := t.Strings.Get(c.Name)
		if !strings.HasPrefix(name, "check.") && !strings.HasPrefix(name, "probe.") &&
			!strings.HasPrefix(name, "audit.") && !strings.HasPrefix(name, "metric.") &&
			name != attrib.CompileFramesCounter {
			continue
		}
		i := spanAt(spans, c.TS)
		if strings.HasPrefix(name, "probe.") {
			// Between steps: the first step starting at or after it.
			j := i
			if j >= 0 && c.TS >= spans[j].s.StartNs {
				j++
			}
			if j >= 0 && j < len(spans) && j > 0 {
				probes[j] = append(probes[j], counterAt{name, c.Value})
			}
			continue
		}
		if i >= 0 && c.TS < spans[i].s.StartNs+spans[i].s.DurNs {
			per[i] = append(per[i], counterAt{name, c.Value})
		}
	}
	armIdx := map[string]int{}
	for i, a := range r.arms {
		armIdx[a.name] = i
	}

	// NaN validity: any step of an arm with NaN/Inf rows, or with a NaN
	// or infinite logged metric (a metric never logged in a step is
	// missing, not NaN: agentMetrics pads those).
	type nanAt struct {
		step int64
		what string
	}
	nanSteps := map[int][]nanAt{}
	checks := map[[2]string]*livestate.CheckSummary{}
	lastSpan := map[[2]string]int{} // 1 + the span index last counted
	for i, cs := range per {
		for _, c := range cs {
			if m, ok := strings.CutPrefix(c.name, "metric."); ok && (math.IsNaN(c.v) || math.IsInf(c.v, 0)) {
				if ai, ok := armIdx[spans[i].label.Arm]; ok {
					nanSteps[ai] = append(nanSteps[ai], nanAt{spans[i].s.Step, fmt.Sprintf("%d (metric %s: %v)", spans[i].s.Step, m, c.v)})
				}
				continue
			}
			if !strings.HasPrefix(c.name, "check.") || !strings.HasSuffix(c.name, ".rows") {
				continue
			}
			ai, ok := armIdx[spans[i].label.Arm]
			if !ok {
				continue
			}
			chk := strings.TrimSuffix(strings.TrimPrefix(c.name, "check."), ".rows")
			k := [2]string{chk, spans[i].label.Arm}
			cs := checks[k]
			if cs == nil {
				cs = &livestate.CheckSummary{Name: chk, Arm: k[1], NaNSteps: []int64{}}
				checks[k] = cs
			}
			if lastSpan[k] != i+1 { // several checks of one name in a step count once
				cs.Steps++
				lastSpan[k] = i + 1
			}
			if c.v > 0 {
				cs.NaNSteps = append(cs.NaNSteps, spans[i].s.Step)
				nanSteps[ai] = append(nanSteps[ai], nanAt{spans[i].s.Step, fmt.Sprintf("%d (%s: %.0f rows)", spans[i].s.Step, chk, c.v)})
			}
		}
	}
	for _, cs := range checks {
		slices.Sort(cs.NaNSteps)
		cs.NaNSteps = slices.Compact(cs.NaNSteps)
		res.Checks = append(res.Checks, *cs)
	}
	slices.SortFunc(res.Checks, func(a, b livestate.CheckSummary) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(armIdx[a.Arm], armIdx[b.Arm]))
	})
	for ai, ns := range nanSteps {
		// In step order (as text, step 10 came before step 2).
		slices.SortStableFunc(ns, func(a, b nanAt) int { return cmp.Compare(a.step, b.step) })
		ss := make([]string, len(ns))
		for i, n := range ns {
			ss[i] = n.what
		}
		r.invalidate(out, ai, "NaN or Inf in checked outputs or logged metrics at steps "+strings.Join(ss, ", "))
	}

	r.agentCompiles(spans, per, armIdx, out)
	r.agentProbes(spans, probes, armIdx, res)
	r.agentMetrics(spans, per, res)
	r.agentAudits(spans, per, res)
}

// spanAt returns the index of the last span starting at or before ts (-1).
func spanAt(spans []stepSpan, ts int64) int {
	i, _ := slices.BinarySearchFunc(spans, ts, func(s stepSpan, t int64) int {
		if s.s.StartNs <= t {
			return -1
		}
		return 1
	})
	return i - 1
}

// agentProbes turns the probe samples at each switch (old arm → new arm)
// into one consistency row per arm but A: the switches between it and A,
// either way (A′'s row: A against A′, the same flags).
func (r *runner) agentProbes(spans []stepSpan, probes map[int][]counterAt, armIdx map[string]int, res *livestate.CompareResult) {
	if len(probes) == 0 {
		return
	}
	a0 := r.arms[0].name
	rows := map[string]*livestate.ArmConsistency{}
	for j, cs := range probes {
		oldArm, newArm := spans[j-1].label.Arm, spans[j].label.Arm
		var other string
		switch {
		case oldArm == a0 && newArm != a0:
			other = newArm
		case newArm == a0 && oldArm != a0:
			other = oldArm
		default:
			continue
		}
		byProbe := map[string]map[string]float64{}
		for _, c := range cs {
			rest := strings.TrimPrefix(c.name, "probe.")
			k := strings.LastIndexByte(rest, '.')
			if k < 0 {
				continue
			}
			p, field := rest[:k], rest[k+1:]
			if byProbe[p] == nil {
				byProbe[p] = map[string]float64{}
			}
			byProbe[p][field] = c.v
		}
		for p, f := range byProbe {
			key := other + "\x00" + p
			row := rows[key]
			if row == nil {
				row = &livestate.ArmConsistency{Arm: other, Probe: p, Bitwise: true}
				rows[key] = row
			}
			row.Switches++
			if f["error"] > 0 {
				row.Err = "the probe raised (see the command's stderr)"
				continue
			}
			row.Len = max(row.Len, int(f["len"]))
			row.MaxAbs = max(row.MaxAbs, f["max_abs"])
			row.MaxULP = max(row.MaxULP, int64(f["max_ulp"]))
			row.NaN = max(row.NaN, int(f["nan_rows"]))
			row.Bitwise = row.Bitwise && f["bitwise"] == 1
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ra, rb := rows[a], rows[b]
		return cmp.Or(cmp.Compare(armIdx[ra.Arm], armIdx[rb.Arm]), cmp.Compare(ra.Probe, rb.Probe))
	})
	res.Consistency = nil
	for _, k := range keys {
		res.Consistency = append(res.Consistency, *rows[k])
	}
}

// agentMetrics compares each metric per arm with the A/A′ envelope, step
// by step over counted steps (k-th with k-th) and on the means.
func (r *runner) agentMetrics(spans []stepSpan, per map[int][]counterAt, res *livestate.CompareResult) {
	vals := map[string]map[string][]float64{} // metric → arm → per counted step
	counted := map[string]int{}
	for i, sp := range spans {
		if sp.label.Phase != livestate.PhaseCounted {
			continue
		}
		counted[sp.label.Arm]++
		for _, c := range per[i] {
			if !strings.HasPrefix(c.name, "metric.") {
				continue
			}
			m := strings.TrimPrefix(c.name, "metric.")
			if vals[m] == nil {
				vals[m] = map[string][]float64{}
			}
			v := vals[m][sp.label.Arm]
			for len(v) < counted[sp.label.Arm]-1 {
				v = append(v, math.NaN())
			}
			if len(v) == counted[sp.label.Arm]-1 {
				v = append(v, c.v)
			} else {
				v[len(v)-1] = c.v // several logs in a step: the last
			}
			vals[m][sp.label.Arm] = v
		}
	}
	if len(vals) == 0 {
		return
	}
	a := r.arms[0].name
	noise := ""
	if r.o.Noise {
		noise = r.arms[len(r.arms)-1].name
	}
	metrics := make([]string, 0, len(vals))
	for m := range vals {
		metrics = append(metrics, m)
	}
	slices.Sort(metrics)
	for _, m := range metrics {
		av, nv := vals[m][a], vals[m][noise]
		for _, arm := range r.arms[1:] {
			x := vals[m][arm.name]
			mc := livestate.MetricCompare{Metric: m, Arm: arm.name, PerStep: x, APerStep: av, Mean: mean(x), Steps: len(x)}
			if noise != "" && arm.name != noise {
				lo, hi := minmax(mean(av), mean(nv))
				mc.EnvLow, mc.EnvHigh = lo, hi
				mc.Verdict = envVerdict(mc.Mean, lo, hi)
				for k, v := range x {
					if k >= len(av) || k >= len(nv) || math.IsNaN(v) || math.IsNaN(av[k]) || math.IsNaN(nv[k]) {
						continue
					}
					l, h := minmax(av[k], nv[k])
					switch envVerdict(v, l, h) {
					case "inside":
						mc.Inside++
					case "edge":
						mc.Edge++
					default:
						mc.Outside++
					}
				}
			}
			res.Metrics = append(res.Metrics, mc)
		}
	}
}

// agentAudits compares each audited tensor's per-step hashes of every arm
// with arm A's at the same step numbers.
func (r *runner) agentAudits(spans []stepSpan, per map[int][]counterAt, res *livestate.CompareResult) {
	type h struct {
		hi, lo uint64
		n      int64
		sample map[int]float64
	}
	hashes := map[string]map[string]map[int64]*h{} // name → arm → step → hash
	for i, sp := range spans {
		for _, c := range per[i] {
			if !strings.HasPrefix(c.name, "audit.") {
				continue
			}
			rest := strings.TrimPrefix(c.name, "audit.")
			k := strings.LastIndexByte(rest, '.')
			if k < 0 {
				continue
			}
			name, field := rest[:k], rest[k+1:]
			if hashes[name] == nil {
				hashes[name] = map[string]map[int64]*h{}
			}
			byArm := hashes[name]
			if byArm[sp.label.Arm] == nil {
				byArm[sp.label.Arm] = map[int64]*h{}
			}
			x := byArm[sp.label.Arm][sp.s.Step]
			if x == nil {
				x = &h{}
				byArm[sp.label.Arm][sp.s.Step] = x
			}
			if strings.HasPrefix(field, "s") {
				if i, err := strconv.Atoi(field[1:]); err == nil {
					if x.sample == nil {
						x.sample = map[int]float64{}
					}
					x.sample[i] = c.v
				}
				continue
			}
			switch field {
			case "hash_hi":
				x.hi = uint64(c.v)
			case "hash_lo":
				x.lo = uint64(c.v)
			case "n":
				x.n = int64(c.v)
			}
		}
	}
	names := make([]string, 0, len(hashes))
	for n := range hashes {
		names = append(names, n)
	}
	slices.Sort(names)
	a := r.arms[0].name
	for _, name := range names {
		ah := hashes[name][a]
		for _, arm := range r.arms[1:] {
			xh := hashes[name][arm.name]
			ac := livestate.AuditCompare{Name: name, Arm: arm.name, Bitwise: true, FirstDiff: -1, FirstDiffElem: -1}
			steps := make([]int64, 0, len(xh))
			for s := range xh {
				if _, ok := ah[s]; ok {
					steps = append(steps, s)
				}
			}
			slices.Sort(steps)
			for _, s := range steps {
				x, y := ah[s], xh[s]
				ac.Steps++
				ac.Values += y.n
				if (x.hi != y.hi || x.lo != y.lo || x.n != y.n) && ac.Bitwise {
					ac.Bitwise, ac.FirstDiff = false, s
					for i := 0; i < len(x.sample); i++ {
						va, oka := x.sample[i]
						vb, okb := y.sample[i]
						if oka && okb && math.Float64bits(va) != math.Float64bits(vb) {
							ac.FirstDiffElem, ac.AValue, ac.BValue = int64(i), va, vb
							break
						}
					}
				}
			}
			if ac.Steps == 0 {
				ac.Bitwise = false
				ac.Note = "no step number ran under both arms (live mode interleaves different steps; compare audits in restart mode: --no-agent, or flags the command reads at start)"
			}
			res.Audits = append(res.Audits, ac)
		}
	}
}

func mean(v []float64) float64 {
	s, n := 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

func minmax(a, b float64) (float64, float64) { return min(a, b), max(a, b) }

// envVerdict: inside [lo, hi]; "edge" within one envelope width beyond it;
// else "outside". A zero-width envelope (A and A′ equal) has no edge.
func envVerdict(v, lo, hi float64) string {
	w := hi - lo
	switch {
	case math.IsNaN(v) || math.IsNaN(lo) || math.IsNaN(hi):
		return "n/a"
	case v >= lo && v <= hi:
		return "inside"
	case v >= lo-w && v <= hi+w:
		return "edge"
	}
	return "outside"
}

// invalidate marks arm ai invalid for why, after any reason it already
// has (an arm can fail several checks: NaN outputs, recompiles).
func (r *runner) invalidate(out []attrib.ArmSteps, ai int, why string) {
	if ai < len(out) {
		out[ai].Valid = false
		if out[ai].Reason != "" {
			why = out[ai].Reason + "; " + why
		}
		out[ai].Reason = why
	}
	r.arms[ai].invalid = why
}
