package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestRunHeadlessChildEnd: `run --headless -- CMD`
// whose command ends by itself before any step says so on stderr after
// the (empty) report: the command, how it ended and that no step was
// reported; rlktop's exit status is the command's. The statuses are the
// commands' own: Python exits 1 on an uncaught exception (ModuleNotFoundError
// here), `sh -c 'exit 0'` with 0, `sh -c 'kill -9 $$'` dies of SIGKILL.
func TestRunHeadlessChildEnd(t *testing.T) {
	bin := needRecordBin(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	for _, c := range []struct {
		cmd  []string
		code int
		want string
	}{
		{[]string{"python3", "-c", "import nosuchmodule"}, 1,
			"rlktop: the command (python3 -c 'import nosuchmodule') exited with status 1 before its first step: no step was reported"},
		{[]string{"sh", "-c", "exit 0"}, 0,
			"rlktop: the command (sh -c 'exit 0') exited with status 0 without reporting a step"},
		{[]string{"sh", "-c", "kill -9 $$"}, 1,
			"rlktop: the command (sh -c 'kill -9 $$') was killed by signal killed before its first step"},
	} {
		cmd := exec.Command(bin, append([]string{"run", "--headless", "--steps", "3", "--"}, c.cmd...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%q: %v", c.cmd, err)
		}
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d (want %d), stderr lacks %q:\n%s", c.cmd, code, c.code, c.want, stderr.String())
		}
		if !strings.Contains(stdout.String(), "steps: 0 reported") {
			t.Errorf("%q: the report is not the empty one:\n%s", c.cmd, stdout.String())
		}
	}
}
