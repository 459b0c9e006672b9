package pyagent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMemoryCountersPerStep: with a stand-in torch.cuda of two devices
// (its allocator stats set by hand before each boundary), the agent sends
// per step and device the peak since the previous boundary, the
// allocated and reserved bytes, stamped inside the step, and resets each
// device's peak after reading it; with CUDA never initialised it sends
// nothing and resets nothing.
func TestMemoryCountersPerStep(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent cannot run")
	}
	script := `
import types
from rlktop import _core
stats = {"init": False, "peak": [0, 0], "alloc": [0, 0], "res": [0, 0], "resets": []}
cuda = types.SimpleNamespace(
    is_initialized=lambda: stats["init"],
    device_count=lambda: 2,
    max_memory_allocated=lambda d: stats["peak"][d],
    memory_allocated=lambda d: stats["alloc"][d],
    memory_reserved=lambda d: stats["res"][d],
    reset_peak_memory_stats=lambda d: stats["resets"].append(d),
)
a = _core.Agent("unix:/nonexistent")
a.torch = types.SimpleNamespace(cuda=cuda)
a.boundary()                 # step 1 starts: CUDA not initialised
a.boundary()                 # step 1 ends, 2 starts
print("resets before init", stats["resets"])
stats["init"] = True
stats.update(peak=[64 << 20, 8], alloc=[1 << 20, 0], res=[2 << 20, 0])
a.boundary()                 # step 2 ends
stats.update(peak=[96 << 20, 16], alloc=[3 << 20, 0], res=[4 << 20, 0])
a.boundary()                 # step 3 ends
steps = {}
for kind, name, s, d, v, tid in a.queue:
    if kind >= 0:
        steps[int(v)] = (s, s + d)
for kind, name, s, d, v, tid in a.queue:
    if kind < 0:
        st = [n for n, (b, e) in steps.items() if b <= s < e]
        print(name, int(v), st)
print("resets", stats["resets"])
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `resets before init []
memory.gpu0.peak_allocated_bytes 67108864 [2]
memory.gpu0.allocated_bytes 1048576 [2]
memory.gpu0.reserved_bytes 2097152 [2]
memory.gpu1.peak_allocated_bytes 8 [2]
memory.gpu1.allocated_bytes 0 [2]
memory.gpu1.reserved_bytes 0 [2]
memory.gpu0.peak_allocated_bytes 100663296 [3]
memory.gpu0.allocated_bytes 3145728 [3]
memory.gpu0.reserved_bytes 4194304 [3]
memory.gpu1.peak_allocated_bytes 16 [3]
memory.gpu1.allocated_bytes 0 [3]
memory.gpu1.reserved_bytes 0 [3]
resets [0, 1, 0, 1]`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
