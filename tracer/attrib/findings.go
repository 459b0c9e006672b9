package attrib

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
)

// Finding kinds: the measures the evaluator computes (FindingRule.Kind).
const (
	// FindMathAttention: GPU time of attention kernels on the math path
	// (GEMM / softmax / elementwise kernels under scaled_dot_product_attention,
	// aten::bmm / aten::_softmax on CPU, the built-in loop's attn_math_*),
	// as a share of GPU time.
	FindMathAttention = "math-attention"
	// FindDominant: the largest category or stage, as a share of GPU time.
	FindDominant = "dominant"
	// FindIdle: step wall time with no GPU work running (IdleOf).
	FindIdle = "idle"
	// FindCounter: a telemetry counter whose mean reaches a threshold.
	FindCounter = "counter"
	// FindCoTenant: a counter (gpu.cotenants) whose maximum reaches a
	// threshold; comparisons run meanwhile are marked.
	FindCoTenant = "cotenant"
	// FindInvalidOutputs: NaN/Inf seen by the Python agent's checks
	// (check.NAME.rows): the run is invalid.
	FindInvalidOutputs = "invalid-outputs"
	// FindExposedComm: communication not overlapped with compute
	// (Snapshot.Ranks: CommExposedNs over SpanNs, summed over sources).
	FindExposedComm = "exposed-comm"
	// FindStraggler: with several ranks, the one that arrives last at the
	// collectives (Snapshot.Ranks LastArrivals) and the others' wait for
	// it as a share of their span; with no matched collectives, the
	// slowest rank's step median over the fastest's.
	FindStraggler = "straggler"
	// FindRecompiles: frames torch.compile compiled after the first Warmup
	// steps (the Python agent's CompileFramesCounter: recompiles when a
	// guard failed); the steps' times include compilation, so the run (a
	// comparison arm) is invalid.
	FindRecompiles = "recompiles"
	// FindInputBound: wall time the training thread waited in DataLoader
	// next() (the Python agent's InputWaitCounter) as a share of the wall
	// time of the same steps.
	FindInputBound = "input-bound"
	// FindRooflineBound and FindMFU: findings_roofline.go.
)

//go:embed findings.toml
var defaultFindingsTOML []byte

// ErrFindings is wrapped by every error about a findings file.
var ErrFindings = errors.New("bad findings rules")

// FindingFlag is a flag that tests a finding's advice: set Key to Value
// and compare with the current setting.
type FindingFlag struct {
	Key   string `toml:"key" json:"key"`
	Value string `toml:"value" json:"value"`
	// Env: an environment variable of a command (the comparison restarts
	// it); else a flag that must be in force (FindingInput.Flags: the
	// built-in loop's or the Python agent's).
	Env bool `toml:"env" json:"env,omitempty"`
	// Arch is a regex one device's Name or ComputeCap must match ("" any).
	Arch string `toml:"arch" json:"-"`
	// From is a regex the current value must match ("" any value other
	// than Value).
	From string `toml:"from" json:"-"`
	// Current is the value in force when the finding was made ("" unset;
	// an environment variable not set).
	Current string `toml:"-" json:"current"`

	arch, from *regexp.Regexp
}

// FindingRule is one rule of a findings table (findings.toml, or a user
// file given with --findings). Kind picks the measure; see findings.toml
// for the fields each kind reads.
type FindingRule struct {
	ID       string  `toml:"id"`
	Kind     string  `toml:"kind"`
	Title    string  `toml:"title"`
	MinShare float64 `toml:"min_share"`
	Kernel   string  `toml:"kernel"`
	Context  string  `toml:"context"`
	Fused    string  `toml:"fused"`
	Group    string  `toml:"group"`
	// Category (roofline-bound): the kernel category whose roofline bound
	// is judged.
	Category  string  `toml:"category"`
	Counter   string  `toml:"counter"`
	Threshold float64 `toml:"threshold"`
	CPU       bool    `toml:"cpu"`
	// Warmup (recompiles): the first Warmup steps of each process's
	// compile row (from its first step with a sample) may compile.
	Warmup int           `toml:"warmup"`
	Try    string        `toml:"try"`
	Source string        `toml:"source"`
	Flags  []FindingFlag `toml:"flag"`
	// Off (user files) drops the rule with this ID.
	Off bool `toml:"off"`
	// Origin is "FILE finding N", filled when loaded.
	Origin string `toml:"-"`

	kernel, context, fused *regexp.Regexp
}

type findingsFile struct {
	Replace bool          `toml:"replace"`
	Finding []FindingRule `toml:"finding"`
}

// FindingRules is an ordered, compiled findings table; immutable.
type FindingRules struct{ rules []FindingRule }

var defaultFindings *FindingRules

func init() {
	r, err := ParseFindings(defaultFindingsTOML, "findings.toml (built-in)", nil)
	if err != nil {
		panic("attrib: built-in findings.toml: " + err.Error())
	}
	defaultFindings = r
}

// DefaultFindings returns the built-in table (tracer/attrib/findings.toml).
func DefaultFindings() *FindingRules { return defaultFindings }

// LoadFindings reads a user findings file layered on the built-in table,
// as LoadRules does for category rules: its rules come first, a rule
// with a built-in rule's id replaces it, `off = true` drops it, and
// `replace = true` at the top drops the whole built-in table. Errors
// wrap ErrFindings and name the file, the rule (1-based) and the field.
func LoadFindings(path string) (*FindingRules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: cannot read: %w", ErrFindings, path, err)
	}
	return ParseFindings(data, path, defaultFindings)
}

// ParseFindings compiles the findings rules in data (TOML, named name in
// errors) on top of base (nil: none; see LoadFindings for the layering).
func ParseFindings(data []byte, name string, base *FindingRules) (*FindingRules, error) {
	var f findingsFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: %s:%d: %s (the file must be TOML with [[finding]] tables)", ErrFindings, name, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrFindings, name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%w: %s: unknown key %q (a finding has id, kind, title, min_share, kernel, context, fused, group, counter, threshold, cpu, warmup, try, source, off, [[finding.flag]] with key, value, env, arch, from; the file may set replace)", ErrFindings, name, und[0].String())
	}
	seen := map[string]bool{}
	var out []FindingRule
	for i := range f.Finding {
		r := &f.Finding[i]
		if err := r.compile(name, i+1); err != nil {
			return nil, err
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("%w: %s: finding %d: field \"id\": %q is used twice", ErrFindings, name, i+1, r.ID)
		}
		seen[r.ID] = true
		if !r.Off {
			out = append(out, *r)
		}
	}
	if base != nil && !f.Replace {
		for _, r := range base.rules {
			if !seen[r.ID] {
				out = append(out, r)
			}
		}
	}
	return &FindingRules{rules: out}, nil
}

// List returns the rules in order (a copy).
func (fr *FindingRules) List() []FindingRule { return slices.Clone(fr.rules) }

func (r *FindingRule) compile(file string, idx int) error {
	r.Origin = fmt.Sprintf("%s finding %d", file, idx)
	fail := func(field, msg string) error {
		return fmt.Errorf("%w: %s: finding %d: field %q: %s", ErrFindings, file, idx, field, msg)
	}
	r.ID = strings.TrimSpace(r.ID)
	if r.ID == "" {
		return fail("id", "missing (give a stable name, e.g. \"attention-math-fallback\")")
	}
	if r.Off {
		return nil
	}
	comp := func(field, src string) (*regexp.Regexp, error) {
		if src == "" {
			return nil, nil
		}
		re, err := regexp.Compile("(?i)" + src)
		if err != nil {
			return nil, fail(field, fmt.Sprintf("bad regex %q: %v (RE2 syntax)", src, err))
		}
		return re, nil
	}
	var err error
	if r.kernel, err = comp("kernel", r.Kernel); err != nil {
		return err
	}
	if r.context, err = comp("context", r.Context); err != nil {
		return err
	}
	if r.fused, err = comp("fused", r.Fused); err != nil {
		return err
	}
	switch r.Kind {
	case FindMathAttention:
		if r.kernel == nil && r.context == nil {
			return fail("kernel", "math-attention needs kernel or context")
		}
	case FindDominant:
		if r.Group != GroupCategory && r.Group != GroupStage {
			return fail("group", fmt.Sprintf("%q: use \"category\" or \"stage\"", r.Group))
		}
	case FindIdle, FindInvalidOutputs, FindExposedComm, FindStraggler, FindInputBound, FindMFU, FindMemTemporary, FindMemGrowth, FindCPUBound:
	case FindRooflineBound:
		if r.Category == "" {
			return fail("category", "roofline-bound needs the category to judge (e.g. \"attention\")")
		}
	case FindMemPeak:
		if r.context == nil {
			return fail("context", "memory-peak needs context (the operator the peak is set inside)")
		}
	case FindRecompiles:
		if r.Warmup < 0 {
			return fail("warmup", fmt.Sprintf("%d: a number of steps, 0 or more", r.Warmup))
		}
	case FindCounter, FindCoTenant:
		if r.Counter == "" {
			return fail("counter", "missing (a counter track name, e.g. \"gpu.mem_util_pct\")")
		}
	default:
		return fail("kind", fmt.Sprintf("unknown kind %q (use %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s or %s)", r.Kind,
			FindMathAttention, FindDominant, FindIdle, FindCounter, FindCoTenant, FindInvalidOutputs, FindExposedComm, FindStraggler, FindRecompiles, FindInputBound,
			FindRooflineBound, FindMFU, FindMemTemporary, FindMemPeak, FindMemGrowth, FindCPUBound))
	}
	if r.MinShare < 0 || r.MinShare > 1 {
		return fail("min_share", fmt.Sprintf("%g is not a share in [0, 1]", r.MinShare))
	}
	if r.Title == "" {
		return fail("title", "missing")
	}
	for j := range r.Flags {
		fl := &r.Flags[j]
		if fl.Key == "" || fl.Value == "" {
			return fail("flag", fmt.Sprintf("flag %d needs key and value", j+1))
		}
		if fl.arch, err = comp("flag.arch", fl.Arch); err != nil {
			return err
		}
		if fl.from, err = comp("flag.from", fl.From); err != nil {
			return err
		}
	}
	return nil
}

// CounterStat summarises one counter track (all devices of the name
// together): Samples taken, their Mean and Max.
type CounterStat struct {
	Name    string
	Samples int
	Mean    float64
	Max     float64
}

// SummarizeCounters returns t's counter tracks by name, sorted.
func SummarizeCounters(t *tracer.Trace) []CounterStat {
	by := map[string]*CounterStat{}
	for _, c := range t.Counters {
		n := t.Strings.Get(c.Name)
		s := by[n]
		if s == nil {
			s = &CounterStat{Name: n, Max: math.Inf(-1)}
			by[n] = s
		}
		s.Samples++
		s.Mean += c.Value
		s.Max = max(s.Max, c.Value)
	}
	out := make([]CounterStat, 0, len(by))
	for _, s := range by {
		s.Mean /= float64(s.Samples)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b CounterStat) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// FindingInput is what EvaluateFindings reads; only Snapshot is required.
type FindingInput struct {
	Snapshot *Snapshot
	// Timeline (BuildTimeline of the same events) gives the idle finding;
	// nil: no idle finding.
	Timeline *Timeline
	// Outputs (attrib.Outputs) give the NaN, recompile and input-bound
	// findings.
	Outputs []OutputRow
	// Counters (SummarizeCounters, or a live session's latest values as
	// one sample each) give the telemetry findings.
	Counters []CounterStat
	// Flags in force (the built-in loop's, the Python agent's); nil when
	// unknown: only environment flags are then offered.
	Flags map[string]string
	// Command: the run is a command (environment flags can restart it);
	// false for the built-in loop and for files.
	Command bool
	// Devices when the snapshot lists none (live sessions: the children's
	// hellos).
	Devices []tracer.Device
	// Labels, where the caller has them already (the TUI's kernels table
	// for the snapshot it shows), is the shown name of Snapshot.Kernels[i]
	// (DistinctNames over the rows); nil: made here when a finding names
	// a kernel. At 100k rows making them is a third of an evaluation.
	Labels func(i int) string
}

// Finding is one evaluated rule: what the numbers say and what to try.
type Finding struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Kind  string `json:"kind"`
	// Share is the finding's share of the step (0..1): of GPU time for
	// math-attention and dominant, of step wall time for idle and
	// input-bound; for
	// counter findings the mean as a fraction of 100%; 0 for cotenant,
	// invalid-outputs and recompiles.
	Share   float64 `json:"share"`
	ShareOf string  `json:"share_of"`
	// Evidence are sentences with the numbers.
	Evidence []string `json:"evidence"`
	// Numbers hold the raw figures the evidence quotes, by name (ns,
	// shares 0..1, counts).
	Numbers map[string]float64 `json:"numbers"`
	// Top are the top kernels (display names) behind the finding.
	Top []string `json:"top,omitempty"`
	Try string   `json:"try"`
	// Flag, when non-nil, is the flag that tests Try: compare Current
	// against Value.
	Flag *FindingFlag `json:"flag,omitempty"`
	// Invalid: the run's timings are not to be trusted (NaN outputs).
	Invalid bool   `json:"invalid,omitempty"`
	Source  string `json:"source"`
}

// EvaluateFindings evaluates rules (nil: DefaultFindings) over in and
// returns the findings that fire, ranked: invalid runs first (nothing
// else can be trusted), then findings that name a flag to test, then by
// Share, descending; ties by id.
func EvaluateFindings(rules *FindingRules, in FindingInput) []Finding {
	if rules == nil {
		rules = DefaultFindings()
	}
	s := in.Snapshot
	if s == nil {
		return nil
	}
	devs := in.Devices
	if len(devs) == 0 {
		devs = s.Devices
	}
	var out []Finding
	labels := &kernelLabelSet{s: s, fn: in.Labels} // made at most once, for all rules
	bounds := &boundScan{s: s}
	for i := range rules.rules {
		r := &rules.rules[i]
		var f *Finding
		switch r.Kind {
		case FindMathAttention:
			f = r.mathAttention(s, labels)
		case FindDominant:
			f = r.dominant(s, labels)
		case FindIdle:
			f = r.idle(in.Timeline, devs)
		case FindCounter, FindCoTenant:
			f = r.counter(in.Counters)
		case FindInvalidOutputs:
			f = r.invalidOutputs(in.Outputs)
		case FindRecompiles:
			f = r.recompiles(in.Outputs)
		case FindInputBound:
			f = r.inputBound(in.Outputs, s.Steps)
		case FindExposedComm:
			f = r.exposedComm(s.Ranks, s.CPUOnly())
		case FindStraggler:
			f = r.straggler(s.Ranks)
		case FindRooflineBound:
			f = r.rooflineBound(s, labels, bounds)
		case FindMFU:
			f = r.mfu(s, labels, bounds)
		case FindMemTemporary, FindMemPeak, FindMemGrowth:
			f = r.memory(s.Memory, s) // findings_memory.go
		case FindCPUBound: // findings_python.go
			f = r.cpuBound(s.Python, in.Timeline, devs)
		}
		if f == nil {
			continue
		}
		f.ID, f.Title, f.Kind, f.Try, f.Source = r.ID, r.Title, r.Kind, r.Try, r.Source
		if f.ShareOf != "" && f.ShareOf != "GPU time" {
			// A CPU-only run's title names what its share is of, as its
			// evidence does (Snapshot.TimeName).
			f.Title = strings.ReplaceAll(f.Title, "GPU time", f.ShareOf)
		}
		f.Flag = r.pickFlag(in, devs)
		out = append(out, *f)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(-cmpBool(a.Invalid, b.Invalid), -cmpBool(a.Flag != nil, b.Flag != nil),
			cmp.Compare(b.Share, a.Share), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// pickFlag returns the first of r's flags that applies: its arch matches
// a device, and it is an environment flag of a command or a flag in
// force whose current value differs from Value (and matches From).
func (r *FindingRule) pickFlag(in FindingInput, devs []tracer.Device) *FindingFlag {
	for _, fl := range r.Flags {
		if fl.arch != nil && !slices.ContainsFunc(devs, func(d tracer.Device) bool {
			return fl.arch.MatchString(d.Name) || fl.arch.MatchString(d.ComputeCap)
		}) {
			continue
		}
		cur, ok := in.Flags[fl.Key]
		switch {
		case fl.Env && !in.Command:
			continue
		case !fl.Env && !ok:
			continue
		}
		if cur == fl.Value || (fl.from != nil && !fl.from.MatchString(cur)) {
			continue
		}
		out := fl
		out.Current = cur
		return &out
	}
	return nil
}

// perStep returns ns per step when the snapshot has steps, else 0.
func perStep(s *Snapshot, ns int64) float64 {
	if len(s.Steps) == 0 {
		return 0
	}
	return float64(ns) / float64(len(s.Steps))
}

func (r *FindingRule) mathAttention(s *Snapshot, labels *kernelLabelSet) *Finding {
	if s.Totals.GPUTotalNs <= 0 {
		return nil
	}
	any := func(re *regexp.Regexp, row *KernelRow) bool {
		if re == nil {
			return false
		}
		if re.MatchString(row.Name) || re.MatchString(row.DisplayName) {
			return true
		}
		return slices.ContainsFunc(row.Ops, re.MatchString) || slices.ContainsFunc(row.Ranges, re.MatchString)
	}
	var mathNs, fusedNs, attnNs, calls int64
	var top []string
	for i := range s.Kernels {
		k := &s.Kernels[i]
		if k.Category != "attention" {
			continue
		}
		attnNs += k.TotalNs
		if any(r.fused, k) {
			fusedNs += k.TotalNs
			continue
		}
		name := func(re *regexp.Regexp) bool {
			return re != nil && (re.MatchString(k.Name) || re.MatchString(k.DisplayName))
		}
		ctx := func(re *regexp.Regexp) bool {
			return re != nil && (slices.ContainsFunc(k.Ops, re.MatchString) || slices.ContainsFunc(k.Ranges, re.MatchString))
		}
		if name(r.kernel) || ctx(r.context) {
			mathNs += k.TotalNs
			calls += k.Count
			if len(top) < 3 {
				top = append(top, fmt.Sprintf("%s %s (%d calls)", labels.of(i), units.Duration(k.TotalNs), k.Count))
			}
		}
	}
	share := float64(mathNs) / float64(s.Totals.GPUTotalNs)
	if mathNs == 0 || share < r.MinShare {
		return nil
	}
	f := &Finding{Share: share, ShareOf: s.TimeName(), Top: top, Numbers: map[string]float64{
		"math_ns": float64(mathNs), "fused_ns": float64(fusedNs), "attention_ns": float64(attnNs),
		"gpu_ns": float64(s.Totals.GPUTotalNs), "math_share": share, "math_ns_per_step": perStep(s, mathNs), "steps": float64(len(s.Steps)),
	}}
	ev := fmt.Sprintf("math-path attention kernels: %s of %s %s (%s)", units.Duration(mathNs), units.Duration(s.Totals.GPUTotalNs), s.TimeName(), units.Share(share))
	if ps := perStep(s, mathNs); ps > 0 {
		ev += fmt.Sprintf(", %s per step over %d steps", units.Duration(int64(ps)), len(s.Steps))
	}
	f.Evidence = append(f.Evidence, ev)
	f.Evidence = append(f.Evidence, fmt.Sprintf("fused attention kernels: %s; attention in all: %s", units.Duration(fusedNs), units.Duration(attnNs)))
	return f
}

func (r *FindingRule) dominant(s *Snapshot, labels *kernelLabelSet) *Finding {
	rows := s.Categories
	if r.Group == GroupStage {
		rows = s.Stages
	}
	if len(rows) == 0 || s.Totals.GPUTotalNs <= 0 {
		return nil
	}
	g := rows[0]
	if g.Share < r.MinShare || (r.Group == GroupStage && g.Key == "(none)") {
		return nil
	}
	f := &Finding{Share: g.Share, ShareOf: s.TimeName(), Numbers: map[string]float64{
		"group_ns": float64(g.TotalNs), "gpu_ns": float64(s.Totals.GPUTotalNs), "share": g.Share, "count": float64(g.Count),
		"group_ns_per_step": perStep(s, g.TotalNs),
	}}
	ev := fmt.Sprintf("%s %q: %s of %s %s (%s), %s ops", r.Group, g.Key, units.Duration(g.TotalNs), units.Duration(s.Totals.GPUTotalNs), s.TimeName(), units.Share(g.Share), units.Count(g.Count))
	if ps := perStep(s, g.TotalNs); ps > 0 {
		ev += fmt.Sprintf(", %s per step", units.Duration(int64(ps)))
	}
	f.Evidence = append(f.Evidence, ev)
	f.Numbers["key:"+g.Key] = 1
	for i := range s.Kernels {
		k := &s.Kernels[i]
		in := k.Category == g.Key
		if r.Group == GroupStage {
			in = k.Stage == g.Key
		}
		if in {
			f.Top = append(f.Top, fmt.Sprintf("%s %s (%s of the %s)", labels.of(i), units.Duration(k.TotalNs), units.Share(float64(k.TotalNs)/float64(g.TotalNs)), r.Group))
			if len(f.Top) == 3 {
				break
			}
		}
	}
	return f
}

func (r *FindingRule) counter(cs []CounterStat) *Finding {
	i := slices.IndexFunc(cs, func(c CounterStat) bool { return c.Name == r.Counter })
	if i < 0 || cs[i].Samples == 0 {
		return nil
	}
	c := cs[i]
	f := &Finding{Numbers: map[string]float64{"mean": c.Mean, "max": c.Max, "samples": float64(c.Samples)}}
	if r.Kind == FindCoTenant {
		if c.Max < r.Threshold {
			return nil
		}
		f.Evidence = []string{fmt.Sprintf("%s reached %g (%d samples)", c.Name, c.Max, c.Samples)}
		return f
	}
	if c.Mean < r.Threshold {
		return nil
	}
	f.Share, f.ShareOf = c.Mean/100, c.Name
	f.Evidence = []string{fmt.Sprintf("%s mean %.1f (max %.1f) over %d samples, threshold %g", c.Name, c.Mean, c.Max, c.Samples, r.Threshold)}
	for _, o := range []string{"gpu.util_pct", "gpu.power_mw", "gpu.power_limit_mw"} {
		if j := slices.IndexFunc(cs, func(c CounterStat) bool { return c.Name == o }); j >= 0 {
			f.Numbers[o] = cs[j].Mean
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s mean %.1f", o, cs[j].Mean))
		}
	}
	return f
}

func (r *FindingRule) invalidOutputs(outs []OutputRow) *Finding {
	var bad []string
	steps := 0
	for _, o := range outs {
		if o.Kind == "check" && len(o.NaNSteps) > 0 {
			bad = append(bad, fmt.Sprintf("check %q: NaN/Inf in %d of %d steps (first step %d)", o.Name, len(o.NaNSteps), o.Steps, o.NaNSteps[0]))
			steps += len(o.NaNSteps)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &Finding{Invalid: true, Evidence: bad, Numbers: map[string]float64{"nan_steps": float64(steps)}}
}

// recompiles reads the "compile" output row (frames compiled per step):
// it fires when frames were compiled after the row's first r.Warmup
// steps (counted from its first sample: the Python agent numbers its
// first measured step 1, and sends nothing before dynamo compiled a
// frame), naming those steps (at most 8) and the frames compiled in
// warm-up. Several processes' rows add up (one row per trace).
func (r *FindingRule) recompiles(outs []OutputRow) *Finding {
	var late, warm float64
	var steps []string
	n := 0
	for _, o := range outs {
		if o.Kind != "compile" {
			continue
		}
		if len(o.PerStep) == 0 {
			continue
		}
		first := slices.MinFunc(o.PerStep, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })[0]
		for _, p := range o.PerStep {
			switch {
			case p[0] < first+float64(r.Warmup):
				warm += p[1]
			case p[1] > 0:
				late += p[1]
				n++
				if len(steps) < 8 {
					steps = append(steps, fmt.Sprintf("%.0f (%.0f)", p[0], p[1]))
				}
			}
		}
	}
	if late == 0 {
		return nil
	}
	more := ""
	if n > len(steps) {
		more = fmt.Sprintf(" and %d more", n-len(steps))
	}
	return &Finding{Invalid: true, Evidence: []string{
		fmt.Sprintf("torch.compile compiled %.0f frames in %d steps after the first %d (step (frames): %s%s): guards failed and the frames were compiled again", late, n, r.Warmup, strings.Join(steps, ", "), more),
		fmt.Sprintf("%.0f frames compiled in the first %d steps (warm-up)", warm, r.Warmup),
	}, Numbers: map[string]float64{"recompile_frames": late, "recompile_steps": float64(n), "warmup_frames": warm}}
}

// inputBound reads the "input" output row (ns per step in DataLoader
// next()) against the wall time of the same step numbers in steps (the
// first row of a number: one source); it fires when the wait reaches
// r.MinShare of those steps' wall time.
func (r *FindingRule) inputBound(outs []OutputRow, steps []StepRow) *Finding {
	if !slices.ContainsFunc(outs, func(o OutputRow) bool { return o.Kind == "input" }) {
		return nil // no map of a live run's every step for nothing
	}
	dur := map[int64]int64{}
	for _, st := range steps {
		if _, ok := dur[st.Step]; !ok {
			dur[st.Step] = st.DurNs
		}
	}
	var wait, wall float64
	n := 0
	for _, o := range outs {
		if o.Kind != "input" {
			continue
		}
		for _, p := range o.PerStep {
			d, ok := dur[int64(p[0])]
			if !ok || d <= 0 {
				continue
			}
			wait += p[1]
			wall += float64(d)
			n++
		}
	}
	if n == 0 || wall <= 0 || wait/wall < r.MinShare {
		return nil
	}
	share := wait / wall
	return &Finding{Share: share, ShareOf: "step wall time", Evidence: []string{
		fmt.Sprintf("the training thread waited in DataLoader next() %s of %s step wall time (%s) over %d steps, %s per step",
			units.Duration(int64(wait)), units.Duration(int64(wall)), units.Share(share), n, units.Duration(int64(wait/float64(n)))),
	}, Numbers: map[string]float64{"wait_ns": wait, "step_ns": wall, "steps": float64(n)}}
}

// IdleStats is the GPU idle time of a run's steps (IdleOf).
type IdleStats struct {
	// Steps are the steps measured, in step order.
	Steps []StepIdle
	// StepNs and IdleNs sum them.
	StepNs, IdleNs int64
	// QuarterNs is the idle time in each quarter of the steps' wall time
	// (first 25%, …), summed over the steps: where in the step the gaps are.
	QuarterNs [4]int64
	// Gaps are the longest idle intervals (at most 3), longest first.
	Gaps []IdleGap
}

// StepIdle is one step's wall time and the part of it no GPU op covered.
type StepIdle struct {
	Step           int64
	StartNs, DurNs int64
	BusyNs, IdleNs int64
}

// IdleGap is one idle interval inside a step, with the ops around it and
// the innermost CPU range open at its middle ("" none).
type IdleGap struct {
	Step           int64
	StartNs, DurNs int64
	// AtPct is where the gap starts, in % of its step's wall time.
	AtPct         float64
	Before, After string // display names of the ops around it ("" step edge)
	Range         string
}

// Share returns IdleNs / StepNs (0 with no steps).
func (st *IdleStats) Share() float64 {
	if st == nil || st.StepNs <= 0 {
		return 0
	}
	return float64(st.IdleNs) / float64(st.StepNs)
}

// IdleOf measures, for every step of tl whose window lies after the
// first op kept (a bounded timeline drops the earliest ops), the union of
// the GPU ops (kernels, memcpy, memset, on every lane; with cpu false,
// lanes of the devices in cpuDevs are left out) clipped to the step's
// [start, start+dur), and the rest of the step as idle. This is the
// "idle time" of HTA's temporal breakdown, per step. nil when tl has no
// steps or no ops.
func IdleOf(tl *Timeline, cpuDevs []int32, cpu bool) *IdleStats {
	if tl == nil || len(tl.Steps) == 0 || len(tl.Ops) == 0 {
		return nil
	}
	type iv struct {
		s, e int64
		i    int
	}
	// Per lane, whether its ops count (decided once, not per op).
	keep := make([]bool, len(tl.Lanes))
	for i, l := range tl.Lanes {
		keep[i] = cpu || !slices.Contains(cpuDevs, l.Device)
	}
	ops := make([]iv, 0, len(tl.Ops))
	first := int64(math.MaxInt64)
	var maxDur int64
	sorted := true // a timeline's ops are sorted by start already: checked while copying
	for i := range tl.Ops {
		o := &tl.Ops[i]
		if int(o.Lane) < len(keep) && !keep[o.Lane] {
			continue
		}
		e := o.EndNs()
		if n := len(ops); n > 0 && (ops[n-1].s > o.StartNs || ops[n-1].s == o.StartNs && ops[n-1].e > e) {
			sorted = false
		}
		ops = append(ops, iv{o.StartNs, e, i})
		first = min(first, o.StartNs)
		maxDur = max(maxDur, o.DurNs)
	}
	if len(ops) == 0 {
		return nil
	}
	if !sorted {
		slices.SortFunc(ops, func(a, b iv) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.e, b.e)) })
	}
	st := &IdleStats{}
	steps := slices.Clone(tl.Steps)
	slices.SortStableFunc(steps, func(a, b TimelineStep) int { return cmp.Compare(a.Step, b.Step) })
	for _, sp := range steps {
		s0, s1 := sp.StartNs, sp.StartNs+sp.DurNs
		if sp.DurNs <= 0 || (tl.Dropped > 0 && s0 < first) {
			continue
		}
		// ops overlapping [s0, s1): ops are sorted by start; an op that
		// starts before s0 (by at most maxDur) may still reach into the step.
		j, _ := slices.BinarySearchFunc(ops, s0-maxDur, func(o iv, t int64) int { return cmp.Compare(o.s, t) })
		cur := s0 // covered up to here
		prevOp := -1
		var busy int64
		addGap := func(g0, g1 int64, next int) {
			if g1 <= g0 {
				return
			}
			// quarters
			for q := 0; q < 4; q++ {
				q0 := s0 + sp.DurNs*int64(q)/4
				q1 := s0 + sp.DurNs*int64(q+1)/4
				if o := min(g1, q1) - max(g0, q0); o > 0 {
					st.QuarterNs[q] += o
				}
			}
			// The three longest, the earliest first among equals: after
			// the gaps at least as long (one step can have 100k gaps, so
			// only the kept ones are described).
			at := len(st.Gaps)
			for at > 0 && st.Gaps[at-1].DurNs < g1-g0 {
				at--
			}
			if at >= 3 {
				return
			}
			g := IdleGap{Step: sp.Step, StartNs: g0, DurNs: g1 - g0, AtPct: 100 * float64(g0-s0) / float64(sp.DurNs)}
			if prevOp >= 0 {
				g.Before = tl.Ops[prevOp].Display
			}
			if next >= 0 {
				g.After = tl.Ops[next].Display
			}
			st.Gaps = slices.Insert(st.Gaps, at, g)[:min(len(st.Gaps)+1, 3)]
		}
		for k := j; k < len(ops) && ops[k].s < s1; k++ {
			o := ops[k]
			if o.e <= cur {
				if o.e > s0 {
					prevOp = o.i
				}
				continue
			}
			if o.s > cur {
				addGap(cur, o.s, o.i)
				cur = o.s
			}
			e := min(o.e, s1)
			busy += e - cur
			cur = e
			prevOp = o.i
		}
		if cur < s1 {
			addGap(cur, s1, -1)
		}
		st.Steps = append(st.Steps, StepIdle{Step: sp.Step, StartNs: s0, DurNs: sp.DurNs, BusyNs: busy, IdleNs: sp.DurNs - busy})
		st.StepNs += sp.DurNs
		st.IdleNs += sp.DurNs - busy
	}
	if len(st.Steps) == 0 {
		return nil
	}
	// The CPU range open in the middle of each gap.
	for gi := range st.Gaps {
		g := &st.Gaps[gi]
		mid := g.StartNs + g.DurNs/2
		depth := -1
		for _, c := range tl.CPU {
			if c.Kind == tracer.KindRange && c.StartNs <= mid && mid < c.StartNs+c.DurNs && c.Depth > depth && !isStepName(c.Name) {
				g.Range, depth = c.Name, c.Depth
			}
		}
	}
	return st
}

// isStepName reports the step ranges themselves (ProfilerStep#N, the
// built-in loop's step), which hold every gap and say nothing.
func isStepName(n string) bool {
	return strings.HasPrefix(n, "ProfilerStep#") || n == "step"
}

func (r *FindingRule) idle(tl *Timeline, devs []tracer.Device) *Finding {
	var cpuDevs []int32
	for _, d := range devs {
		if strings.EqualFold(d.Vendor, "cpu") {
			cpuDevs = append(cpuDevs, d.ID)
		}
	}
	if !r.CPU {
		cpuDevs = append(cpuDevs, -1) // CPU operators shown as kernels (tracer.Trace.CPUOpKernels)
	}
	st := IdleOf(tl, cpuDevs, r.CPU)
	if st == nil || st.Share() < r.MinShare {
		return nil
	}
	f := &Finding{Share: st.Share(), ShareOf: "step wall time", Numbers: map[string]float64{
		"idle_ns": float64(st.IdleNs), "step_ns": float64(st.StepNs), "idle_share": st.Share(), "steps": float64(len(st.Steps)),
	}}
	f.Evidence = append(f.Evidence, fmt.Sprintf("GPU idle %s of %s step time (%s) over %d steps", units.Duration(st.IdleNs), units.Duration(st.StepNs), units.Share(st.Share()), len(st.Steps)))
	var per []string
	for i, s := range st.Steps {
		if i == 8 {
			per = append(per, "…")
			break
		}
		per = append(per, fmt.Sprintf("%d: %s", s.Step, units.ShareWhole(float64(s.IdleNs)/float64(s.DurNs))))
	}
	f.Evidence = append(f.Evidence, "idle per step: "+strings.Join(per, ", "))
	if st.IdleNs > 0 {
		q := st.QuarterNs
		f.Evidence = append(f.Evidence, fmt.Sprintf("where in the step: %s of the idle time in the first quarter, %s second, %s third, %s last",
			units.ShareWhole(float64(q[0])/float64(st.IdleNs)), units.ShareWhole(float64(q[1])/float64(st.IdleNs)), units.ShareWhole(float64(q[2])/float64(st.IdleNs)), units.ShareWhole(float64(q[3])/float64(st.IdleNs))))
		for qi, v := range q {
			f.Numbers[fmt.Sprintf("quarter%d_ns", qi+1)] = float64(v)
		}
	}
	for _, g := range st.Gaps {
		where := fmt.Sprintf("longest gap %s in step %d at %s", units.Duration(g.DurNs), g.Step, units.PercentWhole(g.AtPct))
		if g.Before != "" {
			where += " after " + g.Before
		}
		if g.After != "" {
			where += ", before " + g.After
		}
		if g.Range != "" {
			where += fmt.Sprintf(" (CPU in %q)", g.Range)
		}
		f.Evidence = append(f.Evidence, where)
	}
	return f
}

// exposedComm: communication not overlapped with compute, as a share of
// the span, without the time a source spent waiting in collectives for a
// late rank (SourceRow.CollWaitNs, at most its exposed time): that wait
// is the straggler finding's, and counting it here again blamed the
// ranks that waited ("most exposed: rank 0" where rank 1
// was slowed on purpose). A wait overlapped with compute would be left
// out twice; on the CPU ranks and the GPU traces seen, waits are exposed.
func (r *FindingRule) exposedComm(rs *RankSummary, cpuOnly bool) *Finding {
	if rs == nil {
		return nil
	}
	var exp, comm, span, waited int64
	worst, worstShare := -1, 0.0
	for i := range rs.Sources {
		src := &rs.Sources[i]
		w := min(max(src.CollWaitNs, 0), src.CommExposedNs)
		e := src.CommExposedNs - w
		exp += e
		waited += w
		comm += src.CommNs
		span += src.SpanNs
		if src.SpanNs > 0 {
			if sh := float64(e) / float64(src.SpanNs); sh > worstShare {
				worst, worstShare = src.Index, sh
			}
		}
	}
	if span <= 0 || exp <= 0 {
		return nil
	}
	share := float64(exp) / float64(span)
	if share < r.MinShare {
		return nil
	}
	of := "span (first to last GPU op)"
	if cpuOnly {
		of = "span (first to last op traced)" // a CPU run's collectives (gloo) are its ops
	}
	f := &Finding{Share: share, ShareOf: of, Numbers: map[string]float64{
		"comm_exposed_ns": float64(exp), "comm_ns": float64(comm), "span_ns": float64(span), "exposed_share": share, "sources": float64(len(rs.Sources)),
	}}
	f.Numbers["waited_ns"] = float64(waited)
	f.Evidence = append(f.Evidence, fmt.Sprintf("communication exposed (not overlapped with compute): %s of %s span (%s); communication in all %s, %s of it exposed",
		units.Duration(exp), units.Duration(span), units.Share(share), units.Duration(comm), units.ShareWhole(float64(exp)/float64(max(comm, 1)))))
	if waited > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("not counted: %s of exposed communication spent waiting for a late rank (the straggler finding's)", units.Duration(waited)))
	}
	if len(rs.Sources) > 1 && worst >= 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("most exposed: %s (%s of its span)", rs.Label(worst), units.Share(worstShare)))
	}
	return f
}

func (r *FindingRule) straggler(rs *RankSummary) *Finding {
	if rs == nil || len(rs.Sources) < 2 || rs.NotOneJob != "" {
		return nil // unrelated runs have no straggler
	}
	if late := rs.LateSource(); late >= 0 && rs.Collectives > 0 {
		// The others' wait for the last arrival, as a share of their span.
		var wait, span int64
		for i := range rs.Sources {
			s := &rs.Sources[i]
			if s.Index != late {
				wait += s.CollWaitNs
				span += s.SpanNs
			}
		}
		if span <= 0 {
			return nil
		}
		share := float64(wait) / float64(span)
		if share < r.MinShare {
			return nil
		}
		l := rs.Source(late)
		f := &Finding{Share: share, ShareOf: "the other ranks' span (waiting)", Numbers: map[string]float64{
			"late_source": float64(late), "last_arrivals": float64(l.LastArrivals), "collectives": float64(rs.Collectives),
			"wait_ns": float64(wait), "span_ns": float64(span), "wait_share": share,
		}}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s arrived last at %d of %d matched collectives", rs.Label(late), l.LastArrivals, rs.Collectives),
			fmt.Sprintf("the other sources waited %s for it, %s of their %s span", units.Duration(wait), units.Share(share), units.Duration(span)))
		lateStageEvidence(f, rs, late)
		for i := range rs.Sources {
			s := &rs.Sources[i]
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: step median %s, waited %s, exposed communication %s", rs.Label(s.Index), units.Duration(s.StepMedianNs), units.Duration(s.CollWaitNs), units.Duration(s.CommExposedNs)))
		}
		return f
	}
	// No matched collectives: the step medians.
	slow, fast := -1, -1
	for i := range rs.Sources {
		s := &rs.Sources[i]
		if s.Steps == 0 || s.StepMedianNs <= 0 {
			continue
		}
		if slow < 0 || s.StepMedianNs > rs.Source(slow).StepMedianNs {
			slow = s.Index
		}
		if fast < 0 || s.StepMedianNs < rs.Source(fast).StepMedianNs {
			fast = s.Index
		}
	}
	if slow < 0 || slow == fast {
		return nil
	}
	sl, fa := rs.Source(slow), rs.Source(fast)
	share := float64(sl.StepMedianNs-fa.StepMedianNs) / float64(sl.StepMedianNs)
	if share < r.MinShare {
		return nil
	}
	f := &Finding{Share: share, ShareOf: "the slowest rank's step", Numbers: map[string]float64{
		"slow_source": float64(slow), "fast_source": float64(fast), "slow_step_ns": float64(sl.StepMedianNs), "fast_step_ns": float64(fa.StepMedianNs),
	}}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s's step median %s against %s's %s (%s of the slow step); no collectives matched across the sources",
		rs.Label(slow), units.Duration(sl.StepMedianNs), rs.Label(fast), units.Duration(fa.StepMedianNs), units.Share(share)))
	lateStageEvidence(f, rs, slow)
	return f
}

// lateStageEvidence adds to a straggler finding the stage in which the
// late source spends longer than the others (RankSummary.LateStage);
// Numbers get late_stage_ns and others_stage_ns (per step).
func lateStageEvidence(f *Finding, rs *RankSummary, late int) {
	ls, ok := rs.LateStage(late)
	if !ok {
		return
	}
	f.Numbers["late_stage_ns"], f.Numbers["others_stage_ns"] = float64(ls.LateNs), float64(ls.OthersNs)
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s spends %s per step in stage %q, the others %s (median): that is where it falls behind",
		rs.Label(late), units.Duration(ls.LateNs), ls.Name, units.Duration(ls.OthersNs)))
}

// kernelLabels are s.Kernels' display names told apart where they collide
// (DistinctNames: kernels differing only in template arguments), in
// s.Kernels order, as the report's table and the Kernels view show them.
func kernelLabels(s *Snapshot) []string {
	names := make([]string, len(s.Kernels))
	displays := make([]string, len(s.Kernels))
	for i := range s.Kernels {
		names[i], displays[i] = s.Kernels[i].Name, s.Kernels[i].DisplayName
	}
	return DistinctNames(names, displays)
}

// kernelLabelSet is kernelLabels(s), made at the first call of of, once per
// evaluation: it tells every kernel of s apart, 100k rows or more, and a
// finding labels three.
type kernelLabelSet struct {
	s  *Snapshot
	fn func(int) string // FindingInput.Labels
	v  []string
}

// of is row i's label cut to FindingNameRunes: a finding quotes it in a
// sentence, and whole templated names (400 characters of
// direct_copy_kernel_cuda lambdas) buried the sentence; the tables and
// the detail panes give the whole name.
func (l *kernelLabelSet) of(i int) string {
	if l.fn != nil {
		return cutString(l.fn(i), FindingNameRunes)
	}
	if l.v == nil {
		l.v = kernelLabels(l.s)
	}
	return cutString(l.v[i], FindingNameRunes)
}

// FindingNameRunes is the longest kernel name a finding quotes, runes
// ("…" ending a cut one): the report's name column (report.NameColumnWidth).
const FindingNameRunes = 72
