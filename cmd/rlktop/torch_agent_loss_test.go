package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestTorchAgentWindowWarningsAndLeftovers: real PyTorch under `rlktop run
// --headless`. A torch.profiler window the agent cannot write (the export
// fails as on a full TMPDIR) is said in rlktop's output (it was lost with
// no warning anywhere), and a script ending with os._exit leaves no
// rlktop-kineto-* folder behind (the agent made it in TMPDIR and never
// removed it).
func TestTorchAgentWindowWarningsAndLeftovers(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := `
import os, errno, time, torch, rlktop
from torch.profiler import profile
real = profile.export_chrome_trace
n = [0]
def export(self, path):
    n[0] += 1
    if n[0] == 1:
        raise OSError(errno.ENOSPC, "No space left on device")
    return real(self, path)
profile.export_chrome_trace = export
x = torch.randn(32, 32)
for i in range(9):
    y = x @ x
    rlktop.step()
    time.sleep(0.05)
time.sleep(0.5)
os._exit(0)
`
	if err := os.WriteFile(filepath.Join(r.Dir, r.Dst, "lossy.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := r.Dst + "/tmp"
	if err := os.MkdirAll(filepath.Join(r.Dir, tmp), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := r.Command(r.Bin, "run", "--headless", "--", "python3", r.Dst+"/lossy.py")
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=3:1", "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !regexp.MustCompile(`warning: child pid \d+: torch.profiler window of steps 2-2 not written \(OSError\(28, 'No space left on device'\)\)`).Match(out) {
		t.Errorf("no warning about the window not written:\n%s", out)
	}
	ents, _ := os.ReadDir(filepath.Join(r.Dir, tmp))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "rlktop-kineto-") {
			t.Errorf("%s left in TMPDIR after os._exit", e.Name())
		}
	}
}

// TestTorchAgentWindowsOneThread: torch.profiler windows start only on
// the thread of the first step boundary: a second thread calling
// rlktop.step() opens none (one started there recorded no operator of the
// training thread, and Kineto errors followed).
func TestTorchAgentWindowsOneThread(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	out := runAgentScript(t, r, true, map[string]string{"RLKTOP_KINETO": "2:1"}, `
rlktop.step()  # the main thread's boundary: step 1, no window
def other():
    for i in range(6):
        rlktop.step()
th = threading.Thread(target=other); th.start(); th.join()
a = rlktop._agent
print("after the other thread: window", a.window, "written", a.windows_out)
`)
	if !strings.Contains(out, "after the other thread: window None written []") {
		t.Fatal(out)
	}
}
