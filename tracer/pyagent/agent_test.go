package pyagent

import (
	"bufio"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// agentScript declares a flag and runs 60 steps of ~5 ms, printing the
// flag's value at each step, then "done".
const agentScript = `
import time, rlktop
f = rlktop.flag("sampler", "multinomial", ["multinomial", "gumbel"])
for i in range(60):
    with rlktop.stage("collect"):
        time.sleep(0.005)
    print("step", i, f.value, flush=True)
    rlktop.step()
print("done", rlktop.enabled(), flush=True)
`

func agentDir(t *testing.T) string {
	dir := t.TempDir()
	for name, b := range Files() {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(name)), b); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func startAgent(t *testing.T, sock string) (*exec.Cmd, *strings.Builder, *strings.Builder) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent cannot run")
	}
	cmd := exec.Command(py, "-c", agentScript)
	cmd.Env = append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET="+sock)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

// TestAgentFlagAtStepBoundary: rlktop sets a declared flag over the
// socket; the agent applies it at a step boundary and acknowledges the
// step number N. The script's own printout says from which step it saw
// the new value: that must be N.
func TestAgentFlagAtStepBoundary(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd, out, errb := startAgent(t, sock)
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := wire.NewReader(bufio.NewReader(conn))
	w := wire.NewWriter(conn)
	var ackStep int64 = -2
	steps := 0
	sent := false
	for ackStep == -2 {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("reading the agent: %v (stderr %s)", err, errb.String())
		}
		switch f.Type {
		case wire.TypeEvents:
			evs, _ := f.Events(nil)
			for _, e := range evs {
				if e.Kind == 11 { // tracer.KindStep
					steps++
				}
			}
			if steps >= 5 && !sent {
				if err := w.Control(&msg.Control{Op: msg.ControlSet, Seq: 7, Key: "sampler", Value: "gumbel"}); err != nil {
					t.Fatal(err)
				}
				w.Flush()
				sent = true
			}
		case wire.TypeControl:
			c, _ := f.Control()
			if c.Seq == 7 {
				if c.Err != "" {
					t.Fatalf("refused: %s", c.Err)
				}
				ackStep = c.Step
			}
		}
	}
	go func() { // drain until the agent ends
		for {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("script: %v\n%s", err, errb.String())
	}
	// The first rlktop.step() call ends script iteration 0, whose start the
	// agent never saw; the step it starts is step 1: agent step k is script
	// iteration k, so the flag is first seen in the acknowledged step.
	first := -1
	for _, m := range regexp.MustCompile(`step (\d+) gumbel`).FindAllStringSubmatch(out.String(), -1) {
		if n, _ := strconv.Atoi(m[1]); first < 0 || n < first {
			first = n
		}
	}
	if first < 0 || int64(first) != ackStep {
		t.Errorf("ack says step %d; the script first saw gumbel in iteration %d (want the same)\n%s", ackStep, first, out.String())
	}
	if !strings.Contains(out.String(), "done True") {
		t.Errorf("script did not finish reporting: %s", out.String())
	}
}

// TestAgentSurvivesLostSocket: rlktop's end of the socket closes mid-run;
// the script runs to its end, exit 0, with one warning and no traceback.
func TestAgentSurvivesLostSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	cmd, out, errb := startAgent(t, sock)
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	conn.Read(buf) // the hello arrived
	conn.Close()
	ln.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the script died after rlktop went away: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "step 59") || strings.Contains(errb.String(), "Traceback") {
		t.Errorf("stdout %q\nstderr %q", out.String(), errb.String())
	}
	// 60 steps of 5 ms: the loop must not have stalled on the dead socket.
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("took %v", el)
	}
}
