package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
)

// independentTicks reads utime+stime of pid with a plain split of
// /proc/<pid>/stat (the command names here have no spaces).
func independentTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	u, _ := strconv.ParseUint(f[13], 10, 64)
	s, _ := strconv.ParseUint(f[14], 10, 64)
	return u + s
}

// independentRSS reads VmRSS (kB) with a line scan.
func independentRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func requireProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system: the process sampler is Linux-only")
	}
}

func start(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start %s: %v", name, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestBusyChildCPU(t *testing.T) {
	requireProc(t)
	cmd := start(t, "sh", "-c", "while :; do :; done")
	pid := cmd.Process.Pid
	s := New(pid, "")
	first, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if first.CPUPct != -1 {
		t.Errorf("first sample CPU%% = %v, want -1 (no interval yet)", first.CPUPct)
	}
	t0 := independentTicks(t, pid)
	w0 := time.Now()
	time.Sleep(1500 * time.Millisecond)
	st, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	t1 := independentTicks(t, pid)
	wall := time.Since(w0).Seconds()
	indep := float64(t1-t0) / 100 / wall * 100
	t.Logf("sampler CPU%% %.1f, independent %.1f, rss %d", st.CPUPct, indep, st.RSSBytes)
	// A busy shell loop uses at most one CPU; on a loaded 2-core machine
	// (parallel builds) it may get far less, but never nothing.
	if st.CPUPct < 1 || st.CPUPct > 115 {
		t.Errorf("busy loop CPU%% = %.1f, want 1..115", st.CPUPct)
	}
	if d := st.CPUPct - indep; d > 25 || d < -25 {
		t.Errorf("sampler CPU%% %.1f vs independent %.1f", st.CPUPct, indep)
	}
	if st.RSSBytes <= 0 {
		t.Errorf("RSS %d, want > 0", st.RSSBytes)
	}
	if len(st.PIDs) != 1 || st.PIDs[0] != pid {
		t.Errorf("tree %v, want [%d]", st.PIDs, pid)
	}
}

func TestTreeSumsDescendants(t *testing.T) {
	requireProc(t)
	// A shell with two sleeping children: three processes, idle.
	cmd := start(t, "sh", "-c", "sleep 30 & sleep 30 & wait")
	pid := cmd.Process.Pid
	var st reading.ProcStat
	var err error
	s := New(pid, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err = s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.PIDs) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(st.PIDs) != 3 {
		t.Fatalf("tree %v, want the shell and two sleeps", st.PIDs)
	}
	// Idle processes: RSS is stable between the two reads (allow one page
	// per process of drift) — once the children have exec'd sleep; right
	// after the fork a child is still a copy of sh, so a few rounds are
	// allowed for the tree to settle.
	var want int64
	for round := 0; ; round++ {
		want = 0
		for _, p := range st.PIDs {
			want += independentRSS(t, p)
		}
		d := st.RSSBytes - want
		if d <= 3*4096 && d >= -3*4096 {
			break
		}
		if round == 20 {
			t.Fatalf("tree RSS %d, independent sum %d", st.RSSBytes, want)
		}
		time.Sleep(50 * time.Millisecond)
		if st, err = s.Sample(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	st, _ = s.Sample()
	if st.CPUPct < 0 || st.CPUPct > 20 {
		t.Errorf("idle tree CPU%% = %.1f, want 0..20", st.CPUPct)
	}
}

func TestGoneAndUnset(t *testing.T) {
	requireProc(t)
	if _, err := New(0, "").Sample(); err == nil {
		t.Error("no root: want an error")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if _, err := New(cmd.Process.Pid, "").Sample(); err == nil {
		t.Error("exited root: want an error")
	}
}

func TestReadStatOddName(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/77", 0o755)
	// comm with spaces and a ')' inside, as a process may name itself.
	line := "77 (we) ird (name) S 5 77 77 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 1 0 100 1000 200 18446744073709551615\n"
	os.WriteFile(dir+"/77/stat", []byte(line), 0o644)
	p, err := ReadStat(dir, 77)
	if err != nil {
		t.Fatal(err)
	}
	if p.PPID != 5 || p.Ticks != 281 {
		t.Errorf("got %+v, want ppid 5, ticks 250+31", p)
	}
	os.WriteFile(dir+"/77/stat", []byte("77 (x) S 5\n"), 0o644)
	if _, err := ReadStat(dir, 77); err == nil || !strings.Contains(err.Error(), "77/stat") {
		t.Errorf("short stat: err %v, want one naming the file", err)
	}
}
