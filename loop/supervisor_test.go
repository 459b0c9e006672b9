package loop

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
)

func TestSupervisorCrashKeepsTailAndStatus(t *testing.T) {
	s := NewSupervisor(Spec{
		Argv: []string{"/bin/sh", "-c", "for i in $(seq 1 30); do echo line$i >&2; done; printf partial >&2; exit 3"},
		Env:  os.Environ(),
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	st := s.Wait(context.Background())
	if st.State != livestate.Exited || st.ExitCode != 3 {
		t.Fatalf("status = %+v, want exited 3", st)
	}
	if len(st.StderrTail) != TailLines {
		t.Fatalf("tail has %d lines, want %d", len(st.StderrTail), TailLines)
	}
	// 30 lines + "partial": the last 20 are line12..line30, partial.
	if st.StderrTail[0] != "line12" || st.StderrTail[TailLines-1] != "partial" {
		t.Fatalf("tail = %q", st.StderrTail)
	}
	if got := st.Describe(); got != "exited with status 3" {
		t.Fatalf("Describe = %q", got)
	}
	select {
	case ex := <-s.Exits:
		if ex.ExitCode != 3 {
			t.Fatalf("Exits got %+v", ex)
		}
	case <-time.After(time.Second):
		t.Fatal("no exit notification")
	}
	// Restart runs it again and counts the restart.
	if err := s.Restart(time.Second); err != nil {
		t.Fatal(err)
	}
	st = s.Wait(context.Background())
	if st.Restarts != 1 || st.ExitCode != 3 {
		t.Fatalf("after restart: %+v", st)
	}
}

func TestSupervisorStopKillsGroup(t *testing.T) {
	s := NewSupervisor(Spec{Argv: []string{"/bin/sh", "-c", "trap '' TERM; sleep 30 & wait"}, Env: os.Environ()})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	s.Stop(200 * time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Stop took %v", d)
	}
	st := s.Status()
	if st.State != livestate.Stopped || st.Signal == "" {
		t.Fatalf("status = %+v, want stopped by signal", st)
	}
}

func TestSupervisorStartFailure(t *testing.T) {
	s := NewSupervisor(Spec{Argv: []string{"/nonexistent/prog"}})
	err := s.Start()
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/prog") {
		t.Fatalf("err = %v", err)
	}
	if st := s.Status(); st.State != livestate.Exited || st.Err == "" {
		t.Fatalf("status = %+v", st)
	}
}

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=1", "B=2", "PATH=/bin"}, map[string]string{"B": "3", "C": "4"})
	want := map[string]bool{"A=1": true, "B=3": true, "PATH=/bin": true, "C=4": true}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for _, kv := range got {
		if !want[kv] {
			t.Fatalf("unexpected %q in %v", kv, got)
		}
	}
}
