package loop

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// ErrBadFlag is wrapped by ParseFlagSpec errors.
var ErrBadFlag = errors.New("bad --flag")

// ParseFlagSpec parses "K=V1,V2,…". A single value is allowed (a flag held
// fixed in every arm).
func ParseFlagSpec(s string) (livestate.FlagSpec, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || v == "" {
		return livestate.FlagSpec{}, fmt.Errorf("%w %q: want KEY=VALUE[,VALUE…], e.g. attention=math,fused", ErrBadFlag, s)
	}
	var vals []string
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			return livestate.FlagSpec{}, fmt.Errorf("%w %q: empty value", ErrBadFlag, s)
		}
		vals = append(vals, x)
	}
	return livestate.FlagSpec{Key: k, Values: vals}, nil
}

// Arms combines flag specs into arms: the cartesian product of their
// values, the first spec varying slowest. Repeated keys are an error. With
// no specs there is one arm with no flags.
func Arms(specs []livestate.FlagSpec) ([]livestate.Arm, error) {
	seen := map[string]bool{}
	arms := []livestate.Arm{{Flags: map[string]string{}}}
	for _, sp := range specs {
		if seen[sp.Key] {
			return nil, fmt.Errorf("%w: %s given twice; put all values in one --flag %s=V1,V2", ErrBadFlag, sp.Key, sp.Key)
		}
		seen[sp.Key] = true
		var next []livestate.Arm
		for _, a := range arms {
			for _, v := range sp.Values {
				f := make(map[string]string, len(a.Flags)+1)
				for k, x := range a.Flags {
					f[k] = x
				}
				f[sp.Key] = v
				next = append(next, livestate.Arm{Flags: f})
			}
		}
		arms = next
	}
	for i := range arms {
		arms[i].Name = livestate.ArmName(arms[i].Flags, specs)
	}
	return arms, nil
}

// Preset is a named set of flag specs, one for commands (environment
// variables) and one for the built-in loop (live flags).
type Preset struct {
	Description string              `toml:"description"`
	Command     map[string][]string `toml:"command"` // env var → values
	Builtin     map[string][]string `toml:"builtin"` // built-in loop flag → values
}

// Specs returns the preset's flag specs for a command (builtin=false) or the
// built-in loop, sorted by key for a stable arm order.
func (p Preset) Specs(builtin bool) []livestate.FlagSpec {
	m := p.Command
	if builtin {
		m = p.Builtin
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []livestate.FlagSpec
	for _, k := range keys {
		out = append(out, livestate.FlagSpec{Key: k, Values: m[k]})
	}
	return out
}

//go:embed presets.toml
var builtinPresets string

// Presets returns the built-in presets, overridden and extended by the TOML
// file at path when path is not "" (same shape as loop/presets.toml).
// Errors name the file and the TOML problem.
func Presets(path string) (map[string]Preset, error) {
	var base struct {
		Preset map[string]Preset `toml:"preset"`
	}
	if _, err := toml.Decode(builtinPresets, &base); err != nil {
		return nil, fmt.Errorf("built-in presets: %w", err)
	}
	if path == "" {
		return base.Preset, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("presets file: %w", err)
	}
	var user struct {
		Preset map[string]Preset `toml:"preset"`
	}
	md, err := toml.Decode(string(data), &user)
	if err != nil {
		return nil, fmt.Errorf("presets file %s: %w (expected [preset.NAME] tables with command/builtin maps of KEY = [\"V1\", \"V2\"])", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("presets file %s: unknown key %q (expected description, command, builtin)", path, und[0].String())
	}
	for name, p := range user.Preset {
		for _, m := range []map[string][]string{p.Command, p.Builtin} {
			for k, v := range m {
				if len(v) == 0 {
					return nil, fmt.Errorf("presets file %s: preset %q key %q has no values", path, name, k)
				}
			}
		}
		base.Preset[name] = p
	}
	return base.Preset, nil
}

// Segment is a run of consecutive steps under one arm in a schedule.
type Segment struct {
	Arm    int // index into the arms; NoiseArm marks A′
	Warmup int // steps dropped at the start of the segment
	Count  int // steps counted after the warm-up
}

// NoiseArm is the Segment.Arm of the noise yardstick A′: arm 0's flags run
// again with another seed.
const NoiseArm = -1

// Interleave builds a schedule that runs every arm (and A′ when noise is
// true) for stepsPerArm counted steps, in blocks of block counted steps,
// alternating arms. Rounds alternate direction (A B A′, A′ B A, …) so that a
// slow drift of the machine affects the arms alike. Each segment starts with
// warmup dropped steps (after a start or a switch).
func Interleave(nArms, stepsPerArm, block, warmup int, noise bool) []Segment {
	if nArms < 1 || stepsPerArm < 1 {
		return nil
	}
	if block < 1 {
		block = 1
	}
	order := make([]int, 0, nArms+1)
	for i := 0; i < nArms; i++ {
		order = append(order, i)
	}
	if noise {
		order = append(order, NoiseArm)
	}
	var segs []Segment
	for round, left := 0, stepsPerArm; left > 0; round, left = round+1, left-block {
		n := min(block, left)
		for j := range order {
			a := order[j]
			if round%2 == 1 {
				a = order[len(order)-1-j]
			}
			segs = append(segs, Segment{Arm: a, Warmup: warmup, Count: n})
		}
	}
	return segs
}
