package pyagent

import (
	"bufio"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/wire"
)

// agentRun runs script under the agent (host python3, no torch) with env
// added, reads every frame it sends until it ends, and returns them with
// its stderr.
func agentRun(t *testing.T, script string, env ...string) ([]wire.Frame, string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the agent cannot run")
	}
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(append(cmd.Environ(), "PYTHONPATH="+agentDir(t), "RLKTOP_SOCKET="+sock), env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := wire.NewReader(bufio.NewReader(conn))
	var frames []wire.Frame
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		f.Payload = append([]byte(nil), f.Payload...)
		frames = append(frames, f)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("script: %v\n%s", err, errb.String())
	}
	return frames, errb.String()
}

// TestAgentNeverDropsSteps: 4 threads emit stage events as fast as they
// can into a queue of 64 while the main thread calls rlktop.step() 20
// times: all 19 step events arrive (steps shared the queue and were
// dropped with the rest: with 16 threads, 13 of 39 reported), the stage
// events past the bound are dropped and counted.
func TestAgentNeverDropsSteps(t *testing.T) {
	const script = `
import threading, time, rlktop
stop = False
def noise():
    while not stop:
        with rlktop.stage("noise"):
            pass
ts = [threading.Thread(target=noise) for _ in range(4)]
for th in ts: th.start()
for i in range(20):
    time.sleep(0.01)
    rlktop.step()
stop = True
for th in ts: th.join()
`
	frames, stderr := agentRun(t, script, "RLKTOP_AGENT_QUEUE=64")
	steps, dropped := 0, uint64(0)
	for i := range frames {
		switch frames[i].Type {
		case wire.TypeEvents:
			evs, err := frames[i].Events(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Kind == 11 { // tracer.KindStep
					steps++
				}
			}
		case wire.TypeDrops:
			d, _ := frames[i].Drops()
			dropped = d.Events
		}
	}
	if steps != 19 {
		t.Errorf("%d step events, want all 19 (stderr %s)", steps, stderr)
	}
	if dropped == 0 {
		t.Errorf("no events dropped: the queue bound was never reached, the test shows nothing")
	}
}

// TestAgentFlagsLinear: 2,000 declared flags cost the training thread
// O(N), not O(N²): the declarations take well under a second and the
// agent sends a handful of acknowledgements, not 2,000 of up to 2,000
// values each (80 MB). A flag named like a built-in one (compile) is
// refused with a warning that reaches rlktop, and keeps its default.
func TestAgentFlagsLinear(t *testing.T) {
	const script = `
import time, rlktop
t0 = time.perf_counter()
fs = [rlktop.flag("f%d" % i, "a", ["a", "b"]) for i in range(2000)]
dt = time.perf_counter() - t0
c = rlktop.flag("compile", "x")
print("declared in", dt, c.value, flush=True)
assert dt < 1.0, dt
for i in range(3):
    time.sleep(0.06)
    rlktop.step()
`
	frames, stderr := agentRun(t, script)
	acks, ackBytes := 0, 0
	var warned []string
	for i := range frames {
		switch frames[i].Type {
		case wire.TypeControl:
			acks++
			ackBytes += len(frames[i].Payload)
		case wire.TypeMeta:
			kv, _ := frames[i].Meta()
			for _, e := range kv {
				if e.Key == "agent.warning" {
					warned = append(warned, e.Value)
				}
			}
		}
	}
	if acks > 20 || ackBytes > 2<<20 {
		t.Errorf("%d acknowledgements, %d bytes, for 2,000 declarations; want a handful", acks, ackBytes)
	}
	found := false
	for _, w := range warned {
		found = found || strings.Contains(w, "rlktop.flag('compile'): refused")
	}
	if !found {
		t.Errorf("no refusal of the flag named compile reached rlktop: %q (stderr %s)", warned, stderr)
	}
}

// TestAgentExitSendsLastBatch: 16 threads log stage events as fast as
// they can (the queue stays full) while the main thread ends 11 steps,
// then the script ends: all 10 step events and the Bye arrive, two runs
// out of two. The agent's exit waited only for the queue to be empty,
// and the sender had just taken it (up to 65,536 events to encode): the
// interpreter ended the sender mid-batch and the last steps and the Bye
// were lost (with 40 steps, 29 of 39 arrived).
func TestAgentExitSendsLastBatch(t *testing.T) {
	const script = `
import threading, time, rlktop
stop = False
def noise():
    while not stop:
        with rlktop.stage("noise"):
            pass
ts = [threading.Thread(target=noise) for _ in range(16)]
for th in ts: th.start()
for i in range(11):
    time.sleep(0.01)
    rlktop.step()
stop = True
for th in ts: th.join()
`
	for run := range 2 {
		frames, stderr := agentRun(t, script)
		steps, bye := 0, false
		for i := range frames {
			switch frames[i].Type {
			case wire.TypeEvents:
				evs, err := frames[i].Events(nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					if e.Kind == 11 { // tracer.KindStep
						steps++
					}
				}
			case wire.TypeBye:
				bye = true
			}
		}
		if steps != 10 || !bye {
			t.Fatalf("run %d: %d step events, bye %v; want all 10 and the Bye (stderr %s)", run+1, steps, bye, stderr)
		}
	}
}
