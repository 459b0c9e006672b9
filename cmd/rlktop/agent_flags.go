package main

import "github.com/rlktop/rlktop/tracer/pyagent"

// pyagentFiles are the agent's files (tests write them into the PyTorch root).
func pyagentFiles() map[string][]byte { return pyagent.Files() }
