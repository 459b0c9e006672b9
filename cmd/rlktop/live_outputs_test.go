package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rlktop/rlktop/loop"
	"github.com/rlktop/rlktop/tracer/session"
)

// TestLiveAgentOutputsRealAgent: the real Python agent (rlktop's package
// on PYTHONPATH, no torch needed) logs loss = 1/(i+1) before each of its
// steps; the live session's State.Outputs summarises it as report does a
// recording: a metric row "loss", falling, between 0 and 1. (The session
// side is hand-checked in tracer/session's TestLiveAgentOutputs; this
// checks the names and frames the real agent sends.)
func TestLiveAgentOutputsRealAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Python command; skipped with -short")
	}
	live, _ := startPythonLive(t, "import time, rlktop\nfor i in range(600):\n    time.sleep(0.01)\n    rlktop.log(loss=1.0/(i+1))\n    rlktop.step()\n")
	defer live.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, r := range live.Session.Snapshot().Outputs {
			if r.Kind == "metric" && r.Name == "loss" && r.Steps >= 10 {
				if !(r.First > r.Last && r.Last > 0 && r.Max <= 1 && r.Min > 0) {
					t.Fatalf("loss row %+v: want a falling 1/(i+1)", r)
				}
				t.Logf("loss over %d steps: first %.4g, last %.4g", r.Steps, r.First, r.Last)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no loss row after 60 s: outputs %+v", live.Session.Snapshot().Outputs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startPythonLive writes src to a script and starts it under a live
// session with the real Python agent and no tracer (no torch needed);
// it skips without python3. The caller closes the Live.
func startPythonLive(t *testing.T, src string) (*loop.Live, loop.LiveOptions) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	script := filepath.Join(t.TempDir(), "loop.py")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := loop.LiveOptions{Command: []string{py, script}, Tracer: loop.TracerNone, Telemetry: -1,
		Session: session.Options{Source: "live: test"}}
	live, err := loop.StartLive(o)
	if err != nil {
		if live != nil {
			live.Close()
		}
		t.Fatal(err)
	}
	return live, o
}
