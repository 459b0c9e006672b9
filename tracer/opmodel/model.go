// Package opmodel is rlktop's operator model: the FLOPs and bytes of an
// operator call from the input shapes a trace recorded (torch.profiler
// record_shapes), as data — model.toml maps operator names to formulas
// and says each one's source — and Assign, which gives each kernel the
// work of the innermost modelled operator that launched it.
//
// Conventions (Convention prints them next to every total): a
// multiply-add is 2 FLOPs; causal attention counts half the score matrix;
// a backward counts 2× its forward unless its entry says otherwise; bytes
// are tensor inputs read plus outputs written at their dtypes, a lower
// bound of traffic.
package opmodel

import (
	_ "embed"
	"fmt"
	"os"
	"slices"

	"github.com/BurntSushi/toml"
)

// Convention is the counting convention of every FLOP and byte total, in
// the words reports print.
const Convention = "multiply-add = 2 FLOPs; causal attention counted as half; backward = 2× forward unless modelled otherwise; bytes = tensor inputs read + outputs written (a lower bound)"

//go:embed model.toml
var defaultTOML string

// Entry is one [[op]] table of the model.
type Entry struct {
	Names      []string `toml:"names"`
	Formula    string   `toml:"formula"`
	Source     string   `toml:"source"`
	PerElement float64  `toml:"per_element"`
	Layout     string   `toml:"layout"`
	Causal     *int     `toml:"causal"`
	Args       []int    `toml:"args"`
	Backward   bool     `toml:"backward"`

	fn formula
}

// Model maps operator names to their entries. Safe for concurrent use
// once built.
type Model struct {
	byName  map[string]*Entry
	replace bool // the file said replace = true (Load)
}

var defaultModel = func() *Model {
	m, err := parse(defaultTOML, "model.toml (built in)")
	if err != nil {
		panic(err)
	}
	return m
}()

// Default returns the built-in model (model.toml).
func Default() *Model { return defaultModel }

// Load returns the built-in model with the entries of the TOML file at
// path on top (an operator named there takes that entry; `replace =
// true` at the file's top drops the built-in entries). Errors name the
// file and the entry.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("operator model: %w", err)
	}
	user, err := parse(string(data), path)
	if err != nil {
		return nil, err
	}
	m := &Model{byName: map[string]*Entry{}}
	if !user.replace {
		for k, v := range defaultModel.byName {
			m.byName[k] = v
		}
	}
	for k, v := range user.byName {
		m.byName[k] = v
	}
	return m, nil
}

func parse(text, where string) (*Model, error) {
	var f struct {
		Replace bool     `toml:"replace"`
		Op      []*Entry `toml:"op"`
	}
	md, err := toml.Decode(text, &f)
	if err != nil {
		return nil, fmt.Errorf("operator model %s: %w", where, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("operator model %s: unknown key %q (known: replace; in [[op]]: names, formula, source, per_element, layout, causal, args, backward)", where, und[0].String())
	}
	m := &Model{byName: map[string]*Entry{}, replace: f.Replace}
	for i, e := range f.Op {
		fn, ok := formulas[e.Formula]
		if !ok {
			return nil, fmt.Errorf("operator model %s: [[op]] %d (%v): unknown formula %q (known: %v)", where, i+1, e.Names, e.Formula, formulaNames())
		}
		if len(e.Names) == 0 {
			return nil, fmt.Errorf("operator model %s: [[op]] %d has no names", where, i+1)
		}
		if e.Formula == "conv" || e.Formula == "conv_backward" {
			if len(e.Args) != 5 {
				return nil, fmt.Errorf("operator model %s: [[op]] %d (%v): a %s entry needs args = [stride, padding, dilation, transposed, groups] positions", where, i+1, e.Names, e.Formula)
			}
		}
		if e.Layout != "" && e.Layout != "bhtd" && e.Layout != "bthd" {
			return nil, fmt.Errorf("operator model %s: [[op]] %d (%v): layout %q is neither \"bhtd\" nor \"bthd\"", where, i+1, e.Names, e.Layout)
		}
		e.fn = fn
		for _, n := range e.Names {
			m.byName[n] = e
		}
	}
	return m, nil
}

// Has reports whether operator name (as bytes: the importer's) has an
// entry.
func (m *Model) Has(name []byte) bool {
	_, ok := m.byName[string(name)]
	return ok
}

// Lookup returns the entry of operator name, or nil.
func (m *Model) Lookup(name string) *Entry { return m.byName[name] }

// Names returns every modelled operator name, sorted.
func (m *Model) Names() []string {
	out := make([]string, 0, len(m.byName))
	for n := range m.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
