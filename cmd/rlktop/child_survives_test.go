package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chattyChild writes a 4,000-byte line to stderr and to stdout per
// iteration (a 64 KiB pipe fills in 16 iterations) and then its pid and
// iteration count to the heartbeat file $HB.
const chattyChild = `s=$(printf '%4000s' '' | tr ' ' x); i=0
while :; do i=$((i+1)); printf '%s\n' "$s" >&2; printf '%s\n' "$s"; echo "$$ $i" > "$HB"; sleep 0.01; done`

// heartbeat reads the chatty child's pid and count (retrying while the
// file is being rewritten).
func heartbeat(t *testing.T, path string) (pid, n int) {
	t.Helper()
	for range 300 { // up to 3 s: a loaded machine runs the child slowly
		b, err := os.ReadFile(path)
		if err == nil {
			if _, err := fmt.Sscan(string(b), &pid, &n); err == nil {
				return pid, n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no heartbeat in %s", path)
	return 0, 0
}

// progress is how far the heartbeat moves in d.
func progress(t *testing.T, hb string, d time.Duration) int {
	_, a := heartbeat(t, hb)
	time.Sleep(d)
	_, b := heartbeat(t, hb)
	return b - a
}

// TestChildSurvivesStoppedAndKilledRlktop checks the first promise:
// the command's output reaches rlktop through files, so a stopped rlktop
// (SIGSTOP) does not block the child's writes and a killed one (kill -9)
// leaves no broken pipe behind. With pipes the child stalled after ~16
// iterations under SIGSTOP and died of SIGPIPE after kill -9.
func TestChildSurvivesStoppedAndKilledRlktop(t *testing.T) {
	bin := needRecordBin(t)
	hb := filepath.Join(t.TempDir(), "heartbeat")
	cmd := exec.Command(bin, "run", "--headless", "--untraced", "--", "/bin/sh", "-c", chattyChild)
	cmd.Env = append(os.Environ(), "HB="+hb)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rlktopDone := make(chan struct{})
	go func() { cmd.Wait(); close(rlktopDone) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		<-rlktopDone
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(hb); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never wrote its heartbeat; rlktop stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pid, _ := heartbeat(t, hb)
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	base := progress(t, hb, time.Second)
	t.Logf("heartbeat: %d iterations/s with rlktop running", base)
	if base < 10 {
		t.Skipf("the child manages only %d iterations/s on this machine; too slow to tell a stall", base)
	}

	// Stopped rlktop: the child keeps going (a pipe would hold it at ≤16
	// more iterations).
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := progress(t, hb, 3*time.Second)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// A pipe (64 KiB, 4,000-byte lines on two streams) lets the child
	// advance at most 16 iterations; the threshold leaves room for a loaded
	// machine where the child itself runs slower than base.
	if stopped < 25 {
		t.Errorf("with rlktop stopped for 3 s the child advanced %d iterations (%d/s before): it blocked on its output", stopped, base)
	}

	// Killed rlktop: no broken pipe, the child runs on.
	time.Sleep(300 * time.Millisecond) // rlktop catches up on the backlog
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-rlktopDone
	after := progress(t, hb, 2*time.Second)
	// SIGPIPE would end the child at its next write: any steady progress
	// shows it runs on (the liveness check below is the other half).
	if after < 8 {
		t.Errorf("after kill -9 of rlktop the child advanced %d iterations in 2 s", after)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the child (pid %d) is gone after kill -9 of rlktop: %v", pid, err)
	}
	// rlktop copied the child's stderr until it died.
	if !strings.Contains(stderr.String(), strings.Repeat("x", 4000)) {
		t.Errorf("rlktop's stderr holds none of the child's lines:\n%.300s", stderr.String())
	}
}
