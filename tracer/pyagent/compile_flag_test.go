package pyagent

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestCompileFlagNotUsedUntilCompiled (the flags panel showed
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

// TestCompileFramesPerStep: with a stand-in torch._dynamo.utils (its
// counters["frames"]["total"] set by hand), the agent sends nothing while
// dynamo has compiled no frame, then per step the frames compiled during
// it: totals 0, 0, 1, 1, 3, 3 read at the boundaries after steps 0 (not
// measured: its start is before the first boundary), 1, 2, 3, 4, 5 give
// compile.frames 1, 0, 2, 0 for steps 2–5 (hand count), each stamped inside
// its step.
func TestCompileFramesPerStep(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent cannot run")
	}
	script := `
import sys, types
from rlktop import _core
mod = types.ModuleType("torch._dynamo.utils")
mod.counters = {"frames": {}}
sys.modules["torch._dynamo.utils"] = mod
a = _core.Agent("unix:/nonexistent")
for total in (0, 0, 1, 1, 3, 3):
    mod.counters["frames"]["total"] = total
    a.boundary()
steps = {}
for kind, name, s, d, v, tid in a.queue:
    if kind >= 0:
        steps[int(v)] = (s, s + d)
for kind, name, s, d, v, tid in a.queue:
    if kind < 0:
        st = [n for n, (b, e) in steps.items() if b <= s < e]
        print(name, int(v), st)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "compile.frames 1 [2]\ncompile.frames 0 [3]\ncompile.frames 2 [4]\ncompile.frames 0 [5]"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestInputWaitPerStep: with a stand-in torch.utils.data.dataloader (an
// iterator class whose __next__ sleeps 30 ms), the agent sends nothing
// before a loader is used, then per step the time spent in next(): one
// call in step 0 and two in step 1 give input.wait_ns in [30, 80) ms and
// [60, 110) ms (the sleeps, plus at most 50 ms of scheduling), and the
// wrapped __next__ still returns the batch.
func TestInputWaitPerStep(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent cannot run")
	}
	script := `
import sys, time, types
from rlktop import _core
for name in ("torch", "torch.utils", "torch.utils.data", "torch.utils.data.dataloader"):
    sys.modules[name] = types.ModuleType(name)
dl = sys.modules["torch.utils.data.dataloader"]
sys.modules["torch.utils.data"].dataloader = dl
class It:
    def __next__(self):
        time.sleep(0.03)
        return 7
dl._BaseDataLoaderIter = It
a = _core.Agent("unix:/nonexistent")
a._watch_loader()
a.boundary()            # step 0 starts
print(next(It()))
a.boundary()            # step 0 ends, 1 starts
next(It()); next(It())
a.boundary()            # step 1 ends
for kind, name, s, d, v, tid in a.queue:
    if kind < 0:
        print(name, int(v // 1e6))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) != 5 || lines[0] != "7" || lines[1] != "input.wait_ns" || lines[3] != "input.wait_ns" {
		t.Fatalf("got %q: want the batch 7, then two input.wait_ns samples", out)
	}
	for i, lo := range map[int]int{2: 30, 4: 60} {
		ms, _ := strconv.Atoi(lines[i])
		if ms < lo || ms >= lo+50 {
			t.Errorf("sample %d: %d ms in next(), want [%d, %d)", i/2, ms, lo, lo+50)
		}
	}
}
