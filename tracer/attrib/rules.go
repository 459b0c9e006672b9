package attrib

import (
	_ "embed"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/ianlancetaylor/demangle"
	"github.com/rlktop/rlktop/tracer"
)

// CategoryOther is the category of GPU work no rule matched.
const CategoryOther = "other"

//go:embed rules.toml
var defaultRulesTOML []byte

// ErrRules is wrapped by every error about a rules file.
var ErrRules = errors.New("bad category rules")

// Rule is one category rule as written in a rules TOML file. A rule matches
// an event when every condition it gives holds:
//
//   - Kernel: RE2 regex (case-insensitive) found in the kernel name, as
//     written in the trace or demangled;
//   - Context: regex found in any enclosing CPU operator or annotation range
//     name (tracer.Context Ops and Ranges);
//   - Ops: regex found in any enclosing CPU operator name (Context.Ops);
//   - Ranges: regex found in any enclosing annotation range name
//     (Context.Ranges: NVTX/roctx/record_function ranges, nn.Module ranges);
//   - AfterAttention: the launch came after the attention operator of the
//     range it is in (true) or not (false) (tracer.Context.AfterAttention);
//   - Any: regex found in the kernel name or in any context name;
//   - Kinds: the event kind is one of these ("kernel", "memcpy", "memset",
//     "sync"); empty means ["kernel"].
//
// The first matching rule of a Rules wins.
type Rule struct {
	Category string `toml:"category"`
	Kernel   string `toml:"kernel"`
	Context  string `toml:"context"`
	Ops      string `toml:"ops"`
	Ranges   string `toml:"ranges"`
	// AfterAttention nil: either.
	AfterAttention *bool    `toml:"after_attention"`
	Any            string   `toml:"any"`
	Kinds          []string `toml:"kinds"`
	// Source says where the name pattern comes from (a trace, a doc); it is
	// for people and has no effect.
	Source string `toml:"source"`
	// Origin is "FILE rule N" (N 1-based), filled when the rule is loaded.
	Origin string `toml:"-"`

	kernel, context, ops, ranges, any *matcher
	kinds                             uint32 // bit per tracer.Kind
}

// rulesFile is the TOML shape of a rules file.
type rulesFile struct {
	// Replace drops the default table (user files only).
	Replace bool   `toml:"replace"`
	Rule    []Rule `toml:"rule"`
}

// Rules is an ordered, compiled rule table. It is immutable and safe for
// concurrent use.
type Rules struct {
	rules   []Rule
	cats    []string // category id → name; CategoryOther is always present
	ruleCat []int32  // rule index → category id
	other   int32
	words   int      // uint64 words per rule bitset
	noCtx   []uint64 // rules without a context condition
	noOps   []uint64 // rules without an ops condition
	noRng   []uint64 // rules without a ranges condition
	after   []uint64 // rules holding for a launch after attention (AfterAttention nil or true)
	before  []uint64 // rules holding for one not after attention (nil or false)
}

var defaultRules *Rules

func init() {
	r, err := ParseRules(defaultRulesTOML, "rules.toml (built-in)", nil, false)
	if err != nil {
		panic("attrib: built-in rules.toml: " + err.Error())
	}
	defaultRules = r
}

// DefaultRules returns the built-in table (tracer/attrib/rules.toml).
func DefaultRules() *Rules { return defaultRules }

// RulesFor returns the rules a command classifies with: the built-in
// table when path is "", else LoadRules(path) (the --rules flag of report,
// open, diff, export, run and compare).
func RulesFor(path string) (*Rules, error) {
	if path == "" {
		return DefaultRules(), nil
	}
	return LoadRules(path)
}

// LoadRules reads a user rules file: its rules are tried before the
// built-in ones, or replace them when the file says `replace = true`.
// Errors wrap ErrRules and name the file, the rule (1-based) and the field.
func LoadRules(path string) (*Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: cannot read: %w", ErrRules, path, err)
	}
	return ParseRules(data, path, defaultRules, true)
}

// ParseRules compiles the rules in data (TOML, named name in errors). When
// base is non-nil the new rules are tried first and base's rules follow,
// unless the file sets replace = true; user controls whether replace is
// honoured (it is ignored for the built-in table).
func ParseRules(data []byte, name string, base *Rules, user bool) (*Rules, error) {
	var f rulesFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: %s:%d: %s (the file must be TOML with [[rule]] tables)", ErrRules, name, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrRules, name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%w: %s: unknown key %q (a rule has category, kernel, context, ops, ranges, after_attention, any, kinds, source; the file may set replace)", ErrRules, name, und[0].String())
	}
	if len(f.Rule) == 0 && !user {
		return nil, fmt.Errorf("%w: %s: no [[rule]] tables", ErrRules, name)
	}
	for i := range f.Rule {
		if err := f.Rule[i].compile(name, i+1); err != nil {
			return nil, err
		}
	}
	all := f.Rule
	if base != nil && !(user && f.Replace) {
		all = append(all, base.rules...)
	}
	return newRules(all), nil
}

func (r *Rule) compile(file string, idx int) error {
	r.Origin = fmt.Sprintf("%s rule %d", file, idx)
	fail := func(field, msg string) error {
		return fmt.Errorf("%w: %s: rule %d: field %q: %s", ErrRules, file, idx, field, msg)
	}
	r.Category = strings.TrimSpace(r.Category)
	if r.Category == "" {
		return fail("category", "missing or empty (give the category this rule assigns, e.g. \"attention\")")
	}
	comp := func(field, src string) (*matcher, error) {
		if src == "" {
			return nil, nil
		}
		re, err := regexp.Compile("(?i)" + src)
		if err != nil {
			return nil, fail(field, fmt.Sprintf("bad regex %q: %v (RE2 syntax, see https://golang.org/s/re2syntax)", src, err))
		}
		return newMatcher(re, src), nil
	}
	var err error
	if r.kernel, err = comp("kernel", r.Kernel); err != nil {
		return err
	}
	if r.context, err = comp("context", r.Context); err != nil {
		return err
	}
	if r.ops, err = comp("ops", r.Ops); err != nil {
		return err
	}
	if r.ranges, err = comp("ranges", r.Ranges); err != nil {
		return err
	}
	if r.any, err = comp("any", r.Any); err != nil {
		return err
	}
	r.kinds = 0
	for _, k := range r.Kinds {
		kind, ok := tracer.ParseKind(strings.ToLower(strings.TrimSpace(k)))
		if !ok || !(kind.IsGPU() || kind == tracer.KindSync) || kind == tracer.KindGPURange {
			return fail("kinds", fmt.Sprintf("unknown kind %q (use kernel, memcpy, memset or sync)", k))
		}
		r.kinds |= 1 << kind
	}
	if len(r.Kinds) == 0 {
		r.kinds = 1 << tracer.KindKernel
	}
	if r.kernel == nil && r.context == nil && r.ops == nil && r.ranges == nil && r.any == nil && r.AfterAttention == nil && len(r.Kinds) == 0 {
		return fail("kernel", "the rule has no condition (give kernel, context, ops, ranges, after_attention, any or kinds)")
	}
	return nil
}

func newRules(rs []Rule) *Rules {
	out := &Rules{rules: rs, words: (len(rs) + 63) / 64}
	if out.words == 0 {
		out.words = 1
	}
	ids := map[string]int32{}
	for _, r := range rs {
		id, ok := ids[r.Category]
		if !ok {
			id = int32(len(out.cats))
			ids[r.Category] = id
			out.cats = append(out.cats, r.Category)
		}
		out.ruleCat = append(out.ruleCat, id)
	}
	out.noCtx = make([]uint64, out.words)
	out.noOps = make([]uint64, out.words)
	out.noRng = make([]uint64, out.words)
	out.after = make([]uint64, out.words)
	out.before = make([]uint64, out.words)
	for i := range rs {
		bit := uint64(1) << (i % 64)
		if rs[i].Context == "" {
			out.noCtx[i/64] |= bit
		}
		if rs[i].Ops == "" {
			out.noOps[i/64] |= bit
		}
		if rs[i].Ranges == "" {
			out.noRng[i/64] |= bit
		}
		if a := rs[i].AfterAttention; a == nil || *a {
			out.after[i/64] |= bit
		}
		if a := rs[i].AfterAttention; a == nil || !*a {
			out.before[i/64] |= bit
		}
	}
	if id, ok := ids[CategoryOther]; ok {
		out.other = id
	} else {
		out.other = int32(len(out.cats))
		out.cats = append(out.cats, CategoryOther)
	}
	return out
}

// List returns the rules in matching order (a copy).
func (r *Rules) List() []Rule { return append([]Rule(nil), r.rules...) }

// Categories returns every category name the rules can assign, in first-rule
// order, CategoryOther included.
func (r *Rules) Categories() []string { return append([]string(nil), r.cats...) }

// Launch is what the rules see of a GPU op's launch context
// (tracer.Context with its names): the operators and the annotation
// ranges open at the launch (any order) and Context.AfterAttention.
type Launch struct {
	Ops, Ranges    []string
	AfterAttention bool
}

// LaunchOf returns the Launch of context c, its names from strs.
func LaunchOf(strs *tracer.Strings, c *tracer.Context) Launch {
	l := Launch{AfterAttention: c.AfterAttention}
	for _, s := range c.Ops {
		l.Ops = append(l.Ops, strs.Get(s))
	}
	for _, s := range c.Ranges {
		l.Ranges = append(l.Ranges, strs.Get(s))
	}
	return l
}

// Classify returns the category of a GPU event of kind k named name,
// launched in context l. It is the slow path the Aggregator caches; use
// it for one-off lookups.
func (r *Rules) Classify(k tracer.Kind, name string, l Launch) string {
	nm := r.nameMasks(name)
	cm := r.ctxMasks(l)
	return r.cats[r.pick(k, nm, cm)]
}

// nameMasks holds, per rule bit, N (kernel cond holds) and NA (kernel cond
// and any-on-name both hold), words apiece: [N..., NA...].
func (r *Rules) nameMasks(name string) []uint64 {
	m := make([]uint64, 2*r.words)
	names := []string{name}
	if strings.HasPrefix(name, "_Z") {
		if d := demangle.Filter(name); d != name {
			names = append(names, d)
		}
	}
	type cand struct {
		s, lower string
		ascii    bool
	}
	cs := make([]cand, len(names))
	for i, n := range names {
		cs[i] = cand{n, strings.ToLower(n), isASCII(n)}
	}
	hit := func(mt *matcher) bool {
		for _, c := range cs {
			if mt.match(c.s, c.lower, c.ascii) {
				return true
			}
		}
		return false
	}
	for i := range r.rules {
		ru := &r.rules[i]
		if ru.kernel == nil || hit(ru.kernel) {
			m[i/64] |= 1 << (i % 64)
			if ru.any == nil || hit(ru.any) {
				m[r.words+i/64] |= 1 << (i % 64)
			}
		}
	}
	return m
}

// ctxMasks holds, per rule bit, C (the context conditions hold) and CA
// (they hold and any matches a context name): [C..., CA...].
func (r *Rules) ctxMasks(l Launch) []uint64 {
	acc := make([]uint64, 4*r.words)
	for _, n := range l.Ops {
		r.orCtxName(acc, r.ctxNameBits(n), false)
	}
	for _, n := range l.Ranges {
		r.orCtxName(acc, r.ctxNameBits(n), true)
	}
	return r.ctxCombine(acc, l.AfterAttention)
}

// ctxNameBits returns, for one context name, the rules whose context, ops,
// ranges and any regexes match it: [C..., O..., R..., A...].
func (r *Rules) ctxNameBits(name string) []uint64 {
	m := make([]uint64, 4*r.words)
	lower, ascii := strings.ToLower(name), isASCII(name)
	for i := range r.rules {
		ru := &r.rules[i]
		bit := uint64(1) << (i % 64)
		for part, mt := range [...]*matcher{ru.context, ru.ops, ru.ranges, ru.any} {
			if mt != nil && mt.match(name, lower, ascii) {
				m[part*r.words+i/64] |= bit
			}
		}
	}
	return m
}

// orCtxName adds the ctxNameBits of an operator name (isRange false: its
// ranges part is left out) or of a range name (its ops part left out) to
// a context's accumulator acc.
func (r *Rules) orCtxName(acc, bits []uint64, isRange bool) {
	w := r.words
	orInto(acc[:w], bits[:w])
	if isRange {
		orInto(acc[2*w:3*w], bits[2*w:3*w])
	} else {
		orInto(acc[w:2*w], bits[w:2*w])
	}
	orInto(acc[3*w:], bits[3*w:])
}

// ctxCombine turns a context's accumulated ctxNameBits and its
// AfterAttention into its ctxMasks: C = each of the context, ops and
// ranges conditions absent or matched, and after_attention absent or
// equal; CA = C & any-matched.
func (r *Rules) ctxCombine(acc []uint64, after bool) []uint64 {
	m := make([]uint64, 2*r.words)
	at := r.before
	if after {
		at = r.after
	}
	for w, n := 0, r.words; w < n; w++ {
		c := (r.noCtx[w] | acc[w]) & (r.noOps[w] | acc[n+w]) & (r.noRng[w] | acc[2*n+w]) & at[w]
		m[w] = c
		m[n+w] = c & acc[3*n+w]
	}
	return m
}

func orInto(dst, src []uint64) {
	for i := range dst {
		dst[i] |= src[i]
	}
}

// kindMask returns the rule bitset of rules applying to kind k.
func (r *Rules) kindMask(k tracer.Kind) []uint64 {
	m := make([]uint64, r.words)
	for i := range r.rules {
		if r.rules[i].kinds&(1<<k) != 0 {
			m[i/64] |= 1 << (i % 64)
		}
	}
	return m
}

// pick returns the category id of the first rule matching:
// K & ((NA & C) | (N & CA)).
func (r *Rules) pick(k tracer.Kind, nm, cm []uint64) int32 {
	km := r.kindMask(k)
	return r.pickMasks(km, nm, cm)
}

func (r *Rules) pickMasks(km, nm, cm []uint64) int32 {
	w := r.words
	for i := 0; i < w; i++ {
		m := km[i] & ((nm[w+i] & cm[i]) | (nm[i] & cm[w+i]))
		if m != 0 {
			return r.ruleCat[i*64+bits.TrailingZeros64(m)]
		}
	}
	return r.other
}
