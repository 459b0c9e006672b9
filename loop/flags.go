package loop

import (
	"slices"

	"github.com/rlktop/rlktop/loop/demo"
	"github.com/rlktop/rlktop/tracer/flagtab"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/pyagent"
)

// FlagTableOf returns the flag table of the live run o: the built-in
// loop's (demo.FlagTable), a command's Python agent built-in flags
// (tracer/pyagent.Flags: switched inside the running process at its next
// step boundary; a script may declare more with rlktop.flag), none for a
// command with NoAgent (its flags are environment variables, set by
// restarting it). The flags panel (PanelFlags), Live.SetFlag's choice
// between a live switch and a restart and a comparison's plan derive from
// it.
func FlagTableOf(o LiveOptions) flagtab.Table {
	return flagTable(len(o.Command) == 0 && o.Attach == 0, o.NoAgent)
}

func flagTable(builtin, noAgent bool) flagtab.Table {
	switch {
	case builtin:
		return demo.FlagTable
	case noAgent:
		return nil
	}
	return pyagent.Flags
}

// PanelFlags are the flags the live TUI's flags panel offers for a run
// with options o, in panel order (digit keys 1–9): the Choice flags of
// FlagTableOf(o) with their choices — the built-in loop's five backend
// flags, a command's Python agent flags, none for a command with NoAgent.
func PanelFlags(o LiveOptions) []livestate.FlagSpec { return specsOf(FlagTableOf(o).Panel()) }

// BuiltinBackends lists the built-in loop's backend flags (demo.FlagTable's
// Choice flags) with their choices, in the flags panel's order (digit keys
// 1–5).
func BuiltinBackends() []livestate.FlagSpec { return specsOf(demo.FlagTable.Panel()) }

// specsOf returns t's flags as FlagSpecs of their choices (nil for none).
func specsOf(t flagtab.Table) []livestate.FlagSpec {
	var out []livestate.FlagSpec
	for _, f := range t {
		out = append(out, livestate.FlagSpec{Key: f.Name, Values: slices.Clone(f.Choices)})
	}
	return out
}
