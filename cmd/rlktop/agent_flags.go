package main

import (
	"github.com/rlktop/rlktop/tracer/pyagent"
	"github.com/rlktop/rlktop/views"
)

// agentBackends lists the Python agent's built-in flags (tracer/pyagent.Flags)
// for the flags panel of a command: digit keys flip them inside the running
// process at its next step boundary (a command without the agent restarts).
func agentBackends() []views.FlagChoice {
	out := make([]views.FlagChoice, 0, len(pyagent.Flags))
	for _, f := range pyagent.Flags {
		out = append(out, views.FlagChoice{Key: f.Name, Values: f.Choices})
	}
	return out
}

// pyagentFiles are the agent's files (tests write them into the PyTorch root).
func pyagentFiles() map[string][]byte { return pyagent.Files() }
