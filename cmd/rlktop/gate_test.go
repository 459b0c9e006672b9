package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gateScript is a Python loop that reports its steps through rlktop's agent
// (rlktop.step) and sleeps 10 ms per step plus the declared flag "slow" in
// ms: a deliberately slowed arm with a known ratio (3× at slow=20).
const gateScript = `
import time, rlktop
slow = rlktop.flag("slow", "0")
for i in range(400):
    time.sleep(0.010 + float(slow.value) / 1000)
    rlktop.step()
`

// TestCompareGate (the CI gate): --fail-if-slower 5 exits 4 on an
// arm slowed from 10 to 30 ms per step and passes (exit 0) an A/A run.
func TestCompareGate(t *testing.T) {
	bin := needRecordBin(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: no command to compare")
	}
	script := filepath.Join(t.TempDir(), "loop.py")
	if err := os.WriteFile(script, []byte(gateScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(values string) (int, string) {
		cmd := exec.Command(bin, "compare", "--flag", "slow="+values, "--steps", "10", "--block", "5", "--fail-if-slower", "5", "--", py, script)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	if code, out := run("0,20"); code != 4 || !strings.Contains(out, "gate failed") {
		t.Errorf("slowed arm: exit %d, want 4 with 'gate failed'\n%s", code, tail(out, 3000))
	}
	if code, out := run("0,0"); code != 0 || !strings.Contains(out, "gate passed") {
		t.Errorf("A/A: exit %d, want 0 with 'gate passed'\n%s", code, tail(out, 3000))
	}
}
