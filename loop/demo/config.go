package demo

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/rlktop/rlktop/tracer/flagtab"
)

// Config sizes the built-in loop. Zero values are replaced by the defaults
// of DefaultConfig in New.
type Config struct {
	Envs        int     // games played in parallel (batch of a collection step)
	Group       int     // games per advantage-normalisation group (same openings)
	Layers      int     // transformer blocks
	Width       int     // model width D; must be a multiple of Heads
	Heads       int     // attention heads (6)
	MLP         int     // SwiGLU hidden width
	HeadDim     int     // from/to projection width of the move head
	MaxPlies    int     // plies after which a game is adjudicated on piece count
	Seed        uint64  // everything (weights, openings, draws) derives from it
	Temperature float32 // sampling temperature (> 0)
	TopP        float32 // nucleus mass in (0, 1]
	UpdateEvery int     // collection steps between updates (K)
	UpdateBatch int     // samples per update minibatch
	LR          float32 // AdamW learning rate
	WeightDecay float32 // AdamW decoupled weight decay
	AdvFloor    float32 // floor on the group std in advantage normalisation
	ValueCoef   float32 // weight of the value loss

	Attention string // "math" | "fused"
	QKV       string // "separate" | "fused"
	Scan      string // "serial" | "sklansky"
	Sampler   string // "multinomial" | "gumbel"
	Head      string // "materialized" | "gatherdot"
}

// DefaultConfig is the size the demo runs at by default (measured ≥ 2
// collection steps/s on the 2-core dev machine; see the package doc).
func DefaultConfig() Config {
	return Config{
		Envs: 32, Group: 8, Layers: 2, Width: 48, Heads: 6, MLP: 128, HeadDim: 32,
		MaxPlies: 120, Seed: 1, Temperature: 1, TopP: 0.95,
		UpdateEvery: 4, UpdateBatch: 32, LR: 3e-4, WeightDecay: 0.01, AdvFloor: 0.25, ValueCoef: 0.5,
		// attention starts on the math fallback (three kernels and a
		// materialized score matrix), the default path of the seed whose fix
		// was a flag: the first screen shows attention owning the step,
		// and 1 (attention=fused) shows the fix.
		Attention: "math", QKV: "fused", Scan: "serial", Sampler: "multinomial", Head: "gatherdot",
	}
}

// ErrUnknownFlag is returned (wrapped) for a key no setter knows.
var ErrUnknownFlag = errors.New("unknown flag")

// ErrBadValue is returned (wrapped) for a value a flag does not accept.
var ErrBadValue = errors.New("bad flag value")

// ParseFlag sets the field named key from its text value. Keys: the backend
// flags (attention, qkv, scan, sampler, head) and envs, group, layers,
// width, heads, mlp, head_dim, max_plies, seed, temperature, top_p,
// update_every, update_batch, lr, weight_decay, adv_floor, value_coef.
// Errors wrap ErrUnknownFlag or ErrBadValue and name the key and value.
func (c *Config) ParseFlag(key, value string) error {
	d, ok := FlagTable.Lookup(key)
	if !ok {
		return fmt.Errorf("demo: flag %q: %w (known: %v)", key, ErrUnknownFlag, flagKeys())
	}
	switch d.Kind {
	case flagtab.Choice:
		if !slices.Contains(d.Choices, value) {
			return fmt.Errorf("demo: flag %s=%q: %w: choose one of %v", key, value, ErrBadValue, d.Choices)
		}
		*c.strings()[key] = value
	case flagtab.Int:
		v, err := strconv.Atoi(value)
		if err != nil || v <= 0 {
			return fmt.Errorf("demo: flag %s=%q: %w: want a positive integer", key, value, ErrBadValue)
		}
		*c.ints()[key] = v
	case flagtab.Float:
		v, err := strconv.ParseFloat(value, 32)
		if err != nil || v < 0 || (key == "temperature" && v == 0) || (key == "top_p" && (v == 0 || v > 1)) {
			return fmt.Errorf("demo: flag %s=%q: %w: want a number (temperature > 0, 0 < top_p ≤ 1, others ≥ 0)", key, value, ErrBadValue)
		}
		*c.floats()[key] = float32(v)
	case flagtab.Uint:
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return fmt.Errorf("demo: flag %s=%q: %w: want an unsigned integer", key, value, ErrBadValue)
		}
		*c.uints()[key] = v
	}
	return nil
}

// The Config fields behind FlagTable's names, by kind.
func (c *Config) strings() map[string]*string {
	return map[string]*string{"attention": &c.Attention, "qkv": &c.QKV, "scan": &c.Scan, "sampler": &c.Sampler, "head": &c.Head}
}

func (c *Config) ints() map[string]*int {
	return map[string]*int{"envs": &c.Envs, "group": &c.Group, "layers": &c.Layers, "width": &c.Width, "heads": &c.Heads,
		"mlp": &c.MLP, "head_dim": &c.HeadDim, "max_plies": &c.MaxPlies, "update_every": &c.UpdateEvery, "update_batch": &c.UpdateBatch}
}

func (c *Config) floats() map[string]*float32 {
	return map[string]*float32{"temperature": &c.Temperature, "top_p": &c.TopP, "lr": &c.LR, "weight_decay": &c.WeightDecay,
		"adv_floor": &c.AdvFloor, "value_coef": &c.ValueCoef}
}

func (c *Config) uints() map[string]*uint64 { return map[string]*uint64{"seed": &c.Seed} }

func flagKeys() []string {
	var k []string
	for n := range (Config{}).Flags() {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// Flags returns every flag's current value as text (ParseFlag's inverse).
func (c Config) Flags() map[string]string {
	f := func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
	return map[string]string{
		"attention": c.Attention, "qkv": c.QKV, "scan": c.Scan, "sampler": c.Sampler, "head": c.Head,
		"envs": strconv.Itoa(c.Envs), "group": strconv.Itoa(c.Group), "layers": strconv.Itoa(c.Layers),
		"width": strconv.Itoa(c.Width), "heads": strconv.Itoa(c.Heads), "mlp": strconv.Itoa(c.MLP),
		"head_dim": strconv.Itoa(c.HeadDim), "max_plies": strconv.Itoa(c.MaxPlies), "seed": strconv.FormatUint(c.Seed, 10),
		"temperature": f(c.Temperature), "top_p": f(c.TopP), "update_every": strconv.Itoa(c.UpdateEvery),
		"update_batch": strconv.Itoa(c.UpdateBatch), "lr": f(c.LR), "weight_decay": f(c.WeightDecay),
		"adv_floor": f(c.AdvFloor), "value_coef": f(c.ValueCoef),
	}
}

// withDefaults fills zero fields from DefaultConfig and validates.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	setI := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setF := func(p *float32, v float32) {
		if *p == 0 {
			*p = v
		}
	}
	setS := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	setI(&c.Envs, d.Envs)
	setI(&c.Group, d.Group)
	setI(&c.Layers, d.Layers)
	setI(&c.Width, d.Width)
	setI(&c.Heads, d.Heads)
	setI(&c.MLP, d.MLP)
	setI(&c.HeadDim, d.HeadDim)
	setI(&c.MaxPlies, d.MaxPlies)
	setI(&c.UpdateEvery, d.UpdateEvery)
	setI(&c.UpdateBatch, d.UpdateBatch)
	setF(&c.Temperature, d.Temperature)
	setF(&c.TopP, d.TopP)
	setF(&c.LR, d.LR)
	setF(&c.AdvFloor, d.AdvFloor)
	setF(&c.ValueCoef, d.ValueCoef)
	setS(&c.Attention, d.Attention)
	setS(&c.QKV, d.QKV)
	setS(&c.Scan, d.Scan)
	setS(&c.Sampler, d.Sampler)
	setS(&c.Head, d.Head)
	if c.Width%c.Heads != 0 {
		return c, fmt.Errorf("demo: width %d is not a multiple of heads %d: %w", c.Width, c.Heads, ErrBadValue)
	}
	for k, p := range c.strings() {
		if d, _ := FlagTable.Lookup(k); !slices.Contains(d.Choices, *p) {
			return c, fmt.Errorf("demo: %s=%q: %w: choose one of %v", k, *p, ErrBadValue, d.Choices)
		}
	}
	if c.TopP <= 0 || c.TopP > 1 || c.Temperature <= 0 {
		return c, fmt.Errorf("demo: temperature %g top_p %g: %w", c.Temperature, c.TopP, ErrBadValue)
	}
	return c, nil
}
