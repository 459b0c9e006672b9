// Command pyagentfiles writes the Python agent's files (pyagent.Files: the
// embedded package and its generated flag table) into a folder, as `rlktop
// run` does before it starts a Python command, for scripts that import the
// agent outside rlktop (scripts/pyagent_sendbench.py).
//
//	go run ./scripts/pyagentfiles DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rlktop/rlktop/tracer/pyagent"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pyagentfiles DIR")
		os.Exit(2)
	}
	for name, b := range pyagent.Files() {
		p := filepath.Join(os.Args[1], filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
