package loop

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid runs (a zombie counts as ended).
func alive(pid int) bool {
	s := procState("/proc/" + strconv.Itoa(pid))
	return s != 0 && s != 'Z'
}

// TestCloseEndsLeftovers: a command that starts a background process, a
// setsid one (out of its process group) and a worker that ignores
// SIGTERM, then exits, leaves none of them running once its Live closes,
// and Close says which it ended; a process started outside rlktop (as
// `rlktop attach` would trace) is untouched. All three used to stay.
func TestCloseEndsLeftovers(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	outsider := exec.Command("sleep", "300")
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	defer outsider.Process.Kill()
	pidFile := t.TempDir() + "/pids"
	script := `sleep 300 & echo $! >> ` + pidFile + `
setsid sleep 301 & echo $! >> ` + pidFile + `
sh -c 'trap "" TERM; while :; do sleep 1; done' & echo $! >> ` + pidFile + `
exit 0`
	var stderr strings.Builder
	live, err := StartLive(LiveOptions{Command: []string{"sh", "-c", script}, Untraced: true, NoAgent: true, Telemetry: -1, StderrCopy: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	live.Sup.WaitFor(10 * time.Second)
	b, _ := os.ReadFile(pidFile)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		p, _ := strconv.Atoi(f)
		pids = append(pids, p)
	}
	if len(pids) != 3 {
		t.Fatalf("pids %q", b)
	}
	for _, p := range pids {
		if !alive(p) {
			t.Fatalf("pid %d ended before Close: the test shows nothing", p)
		}
	}
	start := time.Now()
	live.Close()
	for _, p := range pids {
		if alive(p) {
			t.Errorf("pid %d still runs after Close", p)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Close took %v", d)
	}
	if !alive(outsider.Process.Pid) {
		t.Error("a process rlktop did not start was ended")
	}
	msg := stderr.String()
	if !strings.Contains(msg, "ended ") || !strings.Contains(msg, "processes the command left running:") {
		t.Errorf("stderr %q does not say what was ended", msg)
	}
	for _, p := range pids {
		if !strings.Contains(msg, " "+strconv.Itoa(p)+" (") {
			t.Errorf("stderr %q does not name pid %d", msg, p)
		}
	}
}
