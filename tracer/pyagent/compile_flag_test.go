package pyagent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCompileFlagNotUsedUntilCompiled (user trial: the flags panel showed
// "compile [on]" for a script that never compiles): with a stand-in torch
// (a module whose compile returns its argument), the agent's _flags
// reports compile "not used" until the script calls torch.compile, then
// "on", and calls the first-use callback exactly once.
func TestCompileFlagNotUsedUntilCompiled(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent's flags cannot run")
	}
	script := `
import types
from rlktop import _flags
torch = types.SimpleNamespace(compile=lambda f, **kw: f)
calls = []
print(_flags.current(torch, "compile"))
_flags.watch_compile(torch, lambda: calls.append(1))
print(_flags.current(torch, "compile"))
g = torch.compile(len)
torch.compile(len)
print(_flags.current(torch, "compile"), len(calls), g is len)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "not used\nnot used\non 1 True"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
