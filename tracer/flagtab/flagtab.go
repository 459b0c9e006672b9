// Package flagtab is the shape of a run's flag table: every flag's name,
// kind, choices, whether it switches live or needs a restart, and its
// description, in display order. The built-in loop's table
// (loop/demo.FlagTable) and the Python agent's (tracer/pyagent.Flags) are
// values of it; parsing, the refusals of a flag that needs a restart, live
// switching, a comparison's plan, the TUI's flags panel (and so its digit
// keys) and --flag completion derive from the table of the run at hand
// (loop.FlagTableOf). No dependencies: the agent's package, which the
// injection libraries link, imports it.
package flagtab

import "slices"

// Kind says how a flag's text value is read.
type Kind int

const (
	Choice Kind = iota // one of Flag.Choices
	Int                // a positive integer
	Float              // a number ≥ 0 (the built-in loop: temperature > 0, 0 < top_p ≤ 1)
	Uint               // an unsigned integer (seed)
)

// Flag describes one flag.
type Flag struct {
	Name string
	Kind Kind
	// Choices are a Choice flag's values in the order they are offered
	// (the TUI's flags panel cycles through them).
	Choices []string
	// Live flags are applied inside the running process at its next step
	// boundary (over rlktop's control channel); the others change what
	// only a fresh process can (tensor shapes, the seed), so the child
	// refuses them and rlktop restarts it instead.
	Live bool
	// Doc says what the flag sets, in a user's words ("" when the name
	// says it).
	Doc string
}

// Table is a run's flags in display order.
type Table []Flag

// Lookup returns the flag named name.
func (t Table) Lookup(name string) (Flag, bool) {
	i := slices.IndexFunc(t, func(f Flag) bool { return f.Name == name })
	if i < 0 {
		return Flag{}, false
	}
	return t[i], true
}

// IsLive reports whether the table has a flag named name that switches
// live.
func (t Table) IsLive(name string) bool {
	f, ok := t.Lookup(name)
	return ok && f.Live
}

// Names returns the flags' names in table order.
func (t Table) Names() []string {
	out := make([]string, len(t))
	for i, f := range t {
		out[i] = f.Name
	}
	return out
}

// Panel returns the Choice flags in table order: the flags the TUI's
// flags panel offers (flag i on digit key i+1) and cycles through.
func (t Table) Panel() Table {
	var out Table
	for _, f := range t {
		if f.Kind == Choice {
			out = append(out, f)
		}
	}
	return out
}
