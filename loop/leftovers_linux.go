package loop

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Leftover is a process the command started that was still running after
// it (a DataLoader worker, a setsid daemon, a fork outliving its parent).
type Leftover struct {
	PID  int
	Comm string // its /proc/PID/comm
}

// findMarked returns the live processes (not zombies, not rlktop itself)
// whose environment holds the line mark ("RLKTOP_RUN=…"): every process a
// child of this supervisor started inherits it, even one that left the
// process group with setsid. A process that is not rlktop's descendant
// (one `rlktop attach` traces) never has it.
func findMarked(mark string) []Leftover {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	want := []byte(mark)
	var out []Leftover
	var empty []string // dirs whose environ read empty
	check := func(dir string, retry bool) {
		if s := procState(dir); s == 'Z' || s == 0 {
			return
		}
		env, err := os.ReadFile(dir + "/environ")
		if err == nil && len(env) == 0 && retry {
			empty = append(empty, dir)
			return
		}
		if err != nil || !hasEnvLine(env, want) {
			return
		}
		comm, _ := os.ReadFile(dir + "/comm")
		pid, _ := strconv.Atoi(dir[len("/proc/"):])
		out = append(out, Leftover{PID: pid, Comm: strings.TrimSpace(string(comm))})
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != self {
			check("/proc/"+e.Name(), true)
		}
	}
	if len(empty) > 0 {
		// A process in the middle of execve shows an empty environment
		// until the new image's stack is set up; kernel threads always
		// do. One pause for all of them, then each is read again.
		time.Sleep(5 * time.Millisecond)
		for _, dir := range empty {
			check(dir, false)
		}
	}
	return out
}

// hasEnvLine reports whether the NUL-separated environment env holds line.
func hasEnvLine(env, line []byte) bool {
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		if i < 0 {
			i = len(env)
		}
		if bytes.Equal(env[:i], line) {
			return true
		}
		env = env[min(i+1, len(env)):]
	}
	return false
}

// procState is the state letter of /proc/PID/stat (0 when gone).
func procState(dir string) byte {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// endMarked ends the processes carrying mark: SIGTERM, then SIGKILL to
// those still running after grace, and waits (up to 2 s more) until each
// is gone or a zombie. It returns the processes it signalled.
//
// /proc is scanned up to three times: a process that forks as it ends,
// or one caught between fork and exec, can be missed by one scan.
func endMarked(mark string, grace time.Duration) []Leftover {
	var left []Leftover
	seen := map[int]bool{}
	for range 3 {
		found := 0
		for _, p := range findMarked(mark) {
			if !seen[p.PID] {
				seen[p.PID] = true
				left = append(left, p)
				_ = syscall.Kill(p.PID, syscall.SIGTERM)
				found++
			}
		}
		if found == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) == 0 {
		return nil
	}
	alive := func() []Leftover {
		var a []Leftover
		for _, p := range left {
			if s := procState("/proc/" + strconv.Itoa(p.PID)); s != 0 && s != 'Z' {
				a = append(a, p)
			}
		}
		return a
	}
	deadline := time.Now().Add(grace)
	for len(alive()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range alive() {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	deadline = time.Now().Add(2 * time.Second)
	for len(alive()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return left
}
