package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/internal/testutil"
)

// The tests of `rlktop attach` on real PyTorch: a training loop
// started without rlktop (testdata/attach_loop.py, which prints its loss
// and a hash of its parameters exactly, whether a torch.profiler records,
// and which SDPA backends are on, every iteration), attached to by a
// CGO_ENABLED=0 rlktop inside the PyTorch root, where gdb injects the
// agent (trixie's Python is 3.13: no sys.remote_exec). They skip without
// the root, saying so.

// loopLines collects a running loop's output lines.
type loopLines struct {
	mu    sync.Mutex
	lines []string
	at    []time.Time     // when each line arrived
	other strings.Builder // stderr
}

func (l *loopLines) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.at = append(l.at, time.Now())
	l.mu.Unlock()
}

func (l *loopLines) iters() []iterLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []iterLine
	for i, s := range l.lines {
		if it, ok := parseIter(s); ok {
			it.At = l.at[i]
			out = append(out, it)
		}
	}
	return out
}

// between is the iterations that ended in [from, to).
func between(its []iterLine, from, to time.Time) []iterLine {
	var out []iterLine
	for _, it := range its {
		if !it.At.Before(from) && it.At.Before(to) {
			out = append(out, it)
		}
	}
	return out
}

func (l *loopLines) stderr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.other.String()
}

// waitIters waits until the loop printed n iterations.
func (l *loopLines) waitIters(t *testing.T, n int, d time.Duration) []iterLine {
	t.Helper()
	end := time.Now().Add(d)
	for {
		its := l.iters()
		if len(its) >= n {
			return its
		}
		if time.Now().After(end) {
			t.Fatalf("the loop printed %d of %d iterations in %s; stderr:\n%s", len(its), n, d, tail(l.stderr(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// iterLine is one line of attach_loop.py.
type iterLine struct {
	N            int
	Loss, Params string
	Prof         bool
	SDPA         string
	StepMs       float64
	At           time.Time // when rlktop's test read the line
}

func parseIter(s string) (iterLine, bool) {
	f := strings.Fields(s)
	if len(f) != 12 || f[0] != "iter" {
		return iterLine{}, false
	}
	n, err1 := strconv.Atoi(f[1])
	ms, err2 := strconv.ParseFloat(f[11], 64)
	return iterLine{N: n, Loss: f[3], Params: f[5], Prof: f[7] == "1", SDPA: f[9], StepMs: ms}, err1 == nil && err2 == nil
}

// startLoop starts attach_loop.py in the root without rlktop and returns
// it (its pid is the Python's: chroot and env exec) and its lines.
func startLoop(t *testing.T, r *testutil.TorchRoot, args ...string) (*exec.Cmd, *loopLines) {
	t.Helper()
	script := filepath.Join(r.Dst, "attach_loop.py")
	if _, err := os.Stat(filepath.Join(r.Dir, script)); err != nil {
		testutil.CopyIntoRoot(t, r, "testdata/attach_loop.py")
	}
	cmd := r.Command(append([]string{"python3", script}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &loopLines{}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		l.other.Write(p)
		l.mu.Unlock()
		return len(p), nil
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l.add(sc.Text())
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, l
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// procCounts are a process's threads and open files.
func procCounts(t *testing.T, pid int) (threads, fds int) {
	t.Helper()
	ts, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	fs, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	return len(ts), len(fs)
}

// tracerPid is /proc/PID/status's TracerPid (0: nobody ptraces it).
func tracerPid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

func medianMs(its []iterLine) float64 {
	if len(its) == 0 {
		return 0
	}
	v := make([]float64, len(its))
	for i, it := range its {
		v[i] = it.StepMs
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// leftovers lists what an agent leaves in the root's /tmp: its attach
// folder for pid (which holds its torch.profiler window folders too).
func leftovers(r *testutil.TorchRoot, pid int) []string {
	var out []string
	m, _ := filepath.Glob(filepath.Join(r.Dir, "tmp", "rlktop-attach-*", fmt.Sprintf("%d-*", pid)))
	out = append(out, m...)
	return out
}

// TestTorchAttach: a loop started without rlktop; `rlktop attach PID
// --headless --steps 6` reports its steps (no more than the loop ran),
// its record_function stages and its CPU operators (torch.profiler
// windows, RLKTOP_KINETO=3:1); after the detach the loop runs on with the
// threads and open files it had before, no profiler recording, nothing of
// the agent's left in /tmp, and at its speed (median step after within
// 1.5× of before: a profiler left running costs far more; judged when
// the untouched run's own speed held steady); a second
// attach while one is attached is refused; `kill -9` of an attached
// rlktop leaves the loop running, and the agent stops its profiler (the
// loop's own lines say prof 1, then prof 0) and removes its files; and
// every iteration's loss and parameters equal those of a reference run
// with the same seed that rlktop never touched. The loop registers a
// global optimizer post hook of its own once profiled, after the agent's:
// the detach, which runs inside torch's loop over those hooks, must not
// change their table's size there (RuntimeError in the loop's step).
func TestTorchAttach(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	target, tl := startLoop(t, r, "--seed", "7", "--hook-when-profiled")
	ref, rl := startLoop(t, r, "--seed", "7", "--steps", "400")
	_ = ref
	pid := target.Process.Pid
	// Both loops past their first two iterations (warm-up), then twelve
	// more of each before attaching: medians of a few steps of two loops
	// sharing two cores swing 2× between identical runs.
	before := tl.waitIters(t, 3, 3*time.Minute)
	tBefore := rl.waitIters(t, 3, 3*time.Minute)[2].At
	if before[2].At.After(tBefore) {
		tBefore = before[2].At
	}
	for len(between(tl.iters(), tBefore, time.Now())) < 12 || len(between(rl.iters(), tBefore, time.Now())) < 12 {
		time.Sleep(50 * time.Millisecond)
	}
	_, fds0 := procCounts(t, pid)
	tids0 := taskIDs(t, pid)

	// Attach, six steps, detach.
	t0 := time.Now()
	before = between(tl.iters(), tBefore, t0)
	cmd := r.Command(r.Bin, "attach", strconv.Itoa(pid), "--headless", "--steps", "6", "--format", "json", "--top", "0")
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=3:1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	nBefore := len(tl.iters())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("attach --headless: %v\n%s", err, tail(stderr.String(), 3000))
	}
	t1 := time.Now()
	took := t1.Sub(t0)
	nAfterAttach := len(tl.iters())
	t.Logf("attach --headless --steps 6: %s wall; %s", took.Round(time.Millisecond), firstLine(stderr.String()))
	var doc struct {
		Steps struct {
			Count int64 `json:"count"`
		} `json:"steps"`
		Flags   map[string]string `json:"flags"`
		Kernels []struct {
			Name     string `json:"name"`
			Category string `json:"category"`
		} `json:"kernels"`
		Stages []struct {
			Stage string `json:"stage"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, tail(string(out), 2000))
	}
	ran := nAfterAttach - nBefore
	if doc.Steps.Count < 6 || int(doc.Steps.Count) > ran+1 {
		t.Errorf("steps %d: want >= 6 and no more than the %d iterations the loop printed while attached (+1 in flight)", doc.Steps.Count, ran)
	}
	stages := map[string]bool{}
	for _, s := range doc.Stages {
		stages[s.Stage] = true
	}
	// (The optimizer stage holds torch's own Optimizer.step#AdamW.step
	// range, the innermost: its time is that range's.)
	for _, s := range []string{"collect", "forward", "backward"} {
		if !stages[s] {
			t.Errorf("stage %q missing: %v", s, stages)
		}
	}
	cats := map[string]string{}
	for _, k := range doc.Kernels {
		cats[k.Name] = k.Category
	}
	if cats["aten::addmm"] != "gemm" || cats["aten::_scaled_dot_product_flash_attention_for_cpu"] != "attention" {
		t.Errorf("operators: aten::addmm %q, flash SDPA %q among %d: want gemm, attention", cats["aten::addmm"], cats["aten::_scaled_dot_product_flash_attention_for_cpu"], len(cats))
	}
	if doc.Flags["sdpa"] != "default" {
		t.Errorf("flags %v: want the agent's sdpa=default", doc.Flags)
	}
	if !strings.Contains(stderr.String(), "detached from pid") {
		t.Errorf("no detach line on stderr:\n%s", tail(stderr.String(), 1000))
	}

	// Detached: the loop goes on as it was.
	tl.waitIters(t, nAfterAttach+25, 3*time.Minute)
	t2 := time.Now()
	after := between(tl.iters(), t1, t2)[1:] // the step rlktop left in
	during := between(tl.iters(), t0, t1)
	_, fds1 := procCounts(t, pid)
	if fds1 != fds0 {
		t.Errorf("after detaching: %d open files; before attaching %d", fds1, fds0)
	}
	checkThreads(t, r, pid, tids0, "after detaching")
	for _, it := range after {
		if it.Prof {
			t.Errorf("iteration %d after detaching: a torch.profiler still records", it.N)
		}
	}
	if l := leftovers(r, pid); len(l) > 0 {
		t.Errorf("left after detaching: %v", l)
	}
	// Speed: each period's median step over the untouched run's in the
	// same period (the machine's load changes both alike).
	refs := rl.iters()
	rel := func(its []iterLine, from, to time.Time) float64 {
		rs := between(refs, from, to)
		if len(its) == 0 || len(rs) == 0 {
			t.Fatalf("%d iterations of the loop and %d of the untouched run between %s and %s: no speed to compare", len(its), len(rs), from.Format(time.TimeOnly), to.Format(time.TimeOnly))
		}
		return medianMs(its) / medianMs(rs)
	}
	rb, rd, ra := rel(before, tBefore, t0), rel(during, t0, t1), rel(after, t1, t2)
	t.Logf("loop step time, median: before %.1f ms (%d steps), attached %.1f ms (%d), after %.1f ms (%d); over the untouched run's in the same periods: %.2f, %.2f, %.2f",
		medianMs(before), len(before), medianMs(during), len(during), medianMs(after), len(after), rb, rd, ra)
	// Both processes share the machine: when the untouched run's own
	// steps in the period before attaching are off the loop's by more than
	// a quarter (it was still starting, or other work took the cores:
	// in CI, beside other packages' tests, 0.61× and 0.79× were seen), the
	// yardstick is gone and the speed is not judged.
	slow := func(after []iterLine, ra float64) (float64, bool) {
		// A slowdown left behind shows in both yardsticks; the untouched
		// run alone can speed up when the machine's other load ends.
		ab := medianMs(after) / medianMs(before)
		return ab, ra > 1.5*rb && ab > 1.5
	}
	// The machine's own change: the untouched run's median step after
	// over before. Two CI failures had it at 0.77× and 1.93× (other
	// packages' tests starting or ending beside this one), and the loop's
	// ratio to it swung with it although no profiler recorded.
	load := medianMs(between(refs, t1, t2)) / medianMs(between(refs, tBefore, t0))
	switch {
	case rb < 0.8 || rb > 1.25:
		t.Logf("before attaching the loop ran at %.2f× the untouched run: too disturbed a yardstick to compare after with before", rb)
	case load < 0.8 || load > 1.25:
		t.Logf("the untouched run's own steps after the detach were %.2f× those before: the machine's load changed, so after is not compared with before", load)
	default:
		ab, bad := slow(after, ra)
		if !bad {
			break
		}
		// A cost left behind stays; other tests' load beside this one
		// comes and goes (2.11× and 1.62× were seen once in CI, the
		// loop's own lines saying no profiler recorded). So a slow
		// period is judged again on the next 40 steps, and only a
		// slowdown in both fails.
		tl.waitIters(t, len(tl.iters())+40, 3*time.Minute)
		t3 := time.Now()
		again := between(tl.iters(), t2, t3)
		ra2 := rel(again, t2, t3)
		if ab2, bad2 := slow(again, ra2); bad2 {
			t.Errorf("after detaching the loop's steps are %.2f× the untouched run's (before attaching %.2f×) and %.2f× its own before attaching, and in the 40 steps after those %.2f× and %.2f×: want within 1.5× of before", ra, rb, ab, ra2, ab2)
		} else {
			t.Logf("after detaching the loop's first steps ran at %.2f× the untouched run's, %.2f× its own before; the next %d at %.2f× and %.2f×: not a cost left behind", ra, ab, len(again), ra2, ab2)
		}
	}

	// kill -9 of rlktop while attached, with a profiler window open
	// (99 of every 100 steps from step 2).
	long := r.Command(r.Bin, "attach", strconv.Itoa(pid), "--headless", "--steps", "100000")
	long.Env = append(long.Env, "RLKTOP_KINETO=100:99")
	var lerr strings.Builder
	long.Stderr = &lerr
	long.Stdout = io.Discard
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	n0 := len(tl.iters())
	for end := time.Now().Add(2 * time.Minute); ; {
		its := tl.iters()
		if slices.ContainsFunc(its[n0:], func(it iterLine) bool { return it.Prof }) {
			break
		}
		if time.Now().After(end) {
			long.Process.Kill()
			t.Fatalf("no iteration recorded by the attached agent's profiler; rlktop:\n%s", tail(lerr.String(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A second rlktop is refused while this one is attached.
	twice := r.Command(r.Bin, "attach", strconv.Itoa(pid), "--headless", "--steps", "1")
	b, err := twice.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "is attached to it already") {
		t.Errorf("second attach: %v\n%s\nwant a refusal saying another rlktop is attached", err, b)
	}
	if err := long.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	long.Wait()
	nKill := len(tl.iters())
	its := tl.waitIters(t, nKill+6, 3*time.Minute)
	if !its[nKill-1].Prof {
		t.Errorf("iteration %d, the last before rlktop was killed, recorded no profiler: the kill did not test stopping one", its[nKill-1].N)
	}
	for _, it := range its[nKill+2:] {
		if it.Prof {
			t.Errorf("iteration %d, after rlktop was killed (at iteration %d), still records a profiler", it.N, its[nKill-1].N)
		}
	}
	time.Sleep(3 * time.Second) // the agent waits up to 2 s for the window's importer
	if l := leftovers(r, pid); len(l) > 0 {
		t.Errorf("left after rlktop was killed: %v", l)
	}
	checkThreads(t, r, pid, tids0, "after rlktop was killed")

	// Seeded results: every iteration as in the run rlktop never touched.
	final := tl.iters()
	refs = rl.waitIters(t, min(len(final), 400), 5*time.Minute)
	for i := range min(len(final), len(refs)) {
		if final[i].Loss != refs[i].Loss || final[i].Params != refs[i].Params {
			t.Fatalf("iteration %d: loss %s params %s; the untouched run with the same seed: loss %s params %s", i, final[i].Loss, final[i].Params, refs[i].Loss, refs[i].Params)
		}
	}
	t.Logf("%d iterations bit-identical to the untouched run (loss and parameters)", min(len(final), len(refs)))
}

// taskIDs are pid's threads.
func taskIDs(t *testing.T, pid int) []string {
	t.Helper()
	ts, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	var out []string
	for _, e := range ts {
		out = append(out, e.Name())
	}
	return out
}

// checkThreads fails unless every thread of pid that was not there
// before (tids0) is libkineto's config thread, which torch starts at the
// first torch.profiler use in a process and keeps for its life (it is
// torch's, not the agent's, and sleeps); gdb's backtraces say which
// thread is which.
func checkThreads(t *testing.T, r *testutil.TorchRoot, pid int, tids0 []string, when string) {
	t.Helper()
	extra := newDirs(taskIDs(t, pid), tids0)
	if len(extra) == 0 {
		return
	}
	out, err := r.Command("gdb", "-p", strconv.Itoa(pid), "-batch", "-nx", "-iex", "set debuginfod enabled off", "-ex", "thread apply all bt 8").CombinedOutput()
	if err != nil {
		t.Fatalf("gdb backtraces: %v\n%s", err, tail(string(out), 2000))
	}
	for _, tid := range extra {
		i := strings.Index(string(out), "(LWP "+tid+")")
		if i < 0 {
			t.Errorf("%s: thread %s not in gdb's backtraces", when, tid)
			continue
		}
		block := string(out[i:])
		if j := strings.Index(block[1:], "\nThread "); j >= 0 {
			block = block[:j+1]
		}
		if !strings.Contains(block, "libkineto::ConfigLoader") {
			t.Errorf("%s: a new thread %s that is not libkineto's config thread:\n%s", when, tid, block)
		}
	}
}

// newDirs is now less was.
func newDirs(now, was []string) []string {
	var out []string
	for _, d := range now {
		if !slices.Contains(was, d) {
			out = append(out, d)
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestTorchCompareAttach: `rlktop compare --attach PID --flag
// sdpa=math,flash` switches SDPA inside a loop started without rlktop
// (mode live, both arms valid): the loop's own lines show the math backend
// alone, then flash alone, and both again after the detach (the flag put
// back as found); the flash operator is only in the flash arm, aten::bmm
// (the math backend's) only in the math arm. Then `record --attach` of
// the same process: its recording reports >= 4 steps and the operators,
// and the loop runs on.
func TestTorchCompareAttach(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	target, tl := startLoop(t, r, "--seed", "3")
	pid := target.Process.Pid
	tl.waitIters(t, 3, 3*time.Minute)
	n0 := len(tl.iters())
	res, code := runCompareJSON(t, r, "2:1", []string{"--attach", strconv.Itoa(pid), "--flag", "sdpa=math,flash", "--steps", "4", "--block", "2", "--no-noise", "--top", "0"}, nil)
	n1 := len(tl.iters())
	if code != 0 || res.Mode != "live" || len(res.Arms) != 2 || !res.Arms[0].Valid || !res.Arms[1].Valid || res.Arms[0].Steps < 4 || res.Arms[1].Steps < 4 {
		t.Fatalf("compare --attach: exit %d, mode %q, arms %+v: want two valid arms of >= 4 steps switched live; the loop printed %d iterations meanwhile, its stderr:\n%s", code, res.Mode, res.Arms, n1-n0, tail(tl.stderr(), 2000))
	}
	row := func(key string) (a, b int64, ok bool) {
		for _, x := range res.Rows {
			if x.Group == "kernel" && x.Key == key {
				return x.ANs, x.BNs, true
			}
		}
		return 0, 0, false
	}
	if a, b, ok := row("aten::_scaled_dot_product_flash_attention_for_cpu"); !ok || a != 0 || b <= 0 {
		t.Errorf("flash operator A %v B %v (found %v): want it only in the flash arm", a, b, ok)
	}
	if a, b, ok := row("aten::bmm"); !ok || a <= 0 || b != 0 {
		t.Errorf("aten::bmm A %v B %v (found %v): want it only in the math arm", a, b, ok)
	}
	its := tl.waitIters(t, n1+3, 3*time.Minute)
	seen := map[string]bool{}
	for _, it := range its[n0:n1] {
		seen[it.SDPA] = true
	}
	if !seen["1,0"] || !seen["0,1"] {
		t.Errorf("SDPA backends (math,flash) the loop saw during the comparison: %v; want 1,0 (math) and 0,1 (flash)", seen)
	}
	for _, it := range its[n1+1:] {
		if it.SDPA != "1,1" {
			t.Errorf("iteration %d after the comparison (which ended at iteration %d): SDPA backends %s, want 1,1 as before attaching; the loop's stderr:\n%s", it.N, n1, it.SDPA, tail(tl.stderr(), 1500))
		}
	}

	// record --attach on the same process: a recording report reads back
	// with the steps and operators, and the loop runs on.
	rec := filepath.Join(r.Dst, "attached.rlk")
	cmd := r.Command(r.Bin, "record", "--attach", strconv.Itoa(pid), "-o", rec, "--steps", "4")
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=2:1")
	recOut, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(recOut), "recorded "+rec) {
		t.Fatalf("record --attach: %v\n%s", err, tail(string(recOut), 2000))
	}
	out, err := r.Command(r.Bin, "report", rec, "--format", "json", "--top", "0").Output()
	if err != nil {
		t.Fatalf("report of the recording: %v", err)
	}
	var doc struct {
		Steps   []json.RawMessage `json:"steps"` // one per step
		Kernels []struct {
			Name string `json:"name"`
		} `json:"kernels"`
	}
	addmm := false
	err = json.Unmarshal(out, &doc)
	for _, k := range doc.Kernels {
		addmm = addmm || k.Name == "aten::addmm"
	}
	if err != nil || len(doc.Steps) < 4 || !addmm {
		steps, _ := r.Command(r.Bin, "report", rec, "--by", "step").CombinedOutput()
		t.Errorf("report of record --attach: %v, %d steps, %d operators: want >= 4 steps and aten::addmm\nrecord said: %s\nreport --by step:\n%s", err, len(doc.Steps), len(doc.Kernels), tail(string(recOut), 500), tail(string(steps), 2000))
	}
	nr := len(tl.iters())
	tl.waitIters(t, nr+2, 3*time.Minute)
}

// TestTorchAttachAgentLeaves: an attached agent that leaves by itself (as
// it does when rlktop stops reading its sends; here the loop's SIGUSR1
// handler asks it to) ends `attach --headless --steps N` at once, with an
// error that says why, not at the 10-minute step timeout; the agent says
// why on the process's stderr, and the loop runs on.
func TestTorchAttachAgentLeaves(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	target, tl := startLoop(t, r, "--seed", "5", "--leave-on-usr1")
	pid := target.Process.Pid
	tl.waitIters(t, 3, 3*time.Minute)
	cmd := r.Command(r.Bin, "attach", strconv.Itoa(pid), "--headless", "--steps", "100000", "--top", "0")
	cmd.Env = append(cmd.Env, "RLKTOP_KINETO=0")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for !strings.Contains(stderr.String(), "attached to pid") {
		select {
		case err := <-done:
			t.Fatalf("attach ended before attaching: %v\n%s", err, tail(stderr.String(), 2000))
		case <-time.After(50 * time.Millisecond):
		}
	}
	n0 := len(tl.iters())
	tl.waitIters(t, n0+2, 3*time.Minute) // a step or two while attached
	asked := time.Now()
	if err := target.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("attach --headless still waited 60 s after the agent left; stderr:\n%s\nloop's stderr:\n%s", tail(stderr.String(), 2000), tail(tl.stderr(), 2000))
	}
	t.Logf("attach ended %s after SIGUSR1: %v", time.Since(asked).Round(time.Millisecond), err)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("attach --headless exit: %v, want status 1", err)
	}
	want := "no longer traced: its agent left: SIGUSR1 asked it to (pid " + strconv.Itoa(pid) + " runs on untraced)"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("rlktop's stderr lacks %q:\n%s", want, tail(stderr.String(), 2000))
	}
	if w := "rlktop agent: detached: SIGUSR1 asked it to; the program goes on untraced"; !strings.Contains(tl.stderr(), w) {
		t.Errorf("the loop's stderr lacks %q:\n%s", w, tail(tl.stderr(), 2000))
	}
	n1 := len(tl.iters())
	tl.waitIters(t, n1+3, 3*time.Minute)
}

// TestTorchAttachRefusals: what attach cannot do, on real processes in
// the root, each refused with what to do, exit status 1, and the process
// left as it was (alive, not traced, no agent folder, nothing on its
// stderr): a program that is not Python, a Python of another user, one
// launched by rlktop run, one inside one long C call (--timeout 2s), no
// gdb on PATH, a "Python" without the C API gdb calls (sleep named
// python3.13), and rlktop without the ptrace permission (setpriv drops
// CAP_SYS_PTRACE from rlktop, and the root-owned target holds it).
func TestTorchAttachRefusals(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	fake := filepath.Join(r.Dst, "python3.13")
	b, err := os.ReadFile(filepath.Join(r.Dir, "usr/bin/sleep"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, fake), b, 0o755); err != nil {
		t.Fatal(err)
	}
	sleeper := []string{"python3", "-c", "import time; time.sleep(300)"}
	cases := []struct {
		name   string
		target *exec.Cmd
		wrap   []string // before chroot (setpriv)
		env    []string // rlktop's
		args   []string
		want   string
		child  bool // attach to the target's child
	}{
		{name: "not python", target: r.Command("sleep", "300"), want: "it is not a Python process"},
		{name: "another user", target: exec.Command("chroot", append([]string{"--userspec=1234:1234", r.Dir, "/usr/bin/env", "-C", "/tmp"}, sleeper...)...), want: "it runs as uid 1234"},
		{name: "launched by rlktop", target: r.Command(append([]string{"env", "RLKTOP_SOCKET=unix:/nonexistent"}, sleeper...)...), want: "it was launched by rlktop"},
		// The child of a process group leader, attached to: neither may
		// see a signal (gdb's interrupt would SIGINT the whole group).
		{name: "long C call", target: groupLeader(r.Command("python3", "-c", "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); time.sleep(300)")),
			child: true, args: []string{"--timeout", "2s"}, want: "did not reach a point where Python code can run within 2s"},
		{name: "no gdb", target: r.Command(sleeper...), env: []string{"PATH=/nonexistent"}, want: "there is no gdb on PATH"},
		{name: "no symbols", target: r.Command(fake, "300"), want: "exports no PyEval_SaveThread symbol"},
		{name: "no ptrace permission", target: r.Command(sleeper...), wrap: []string{"setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace"}, want: "ptrace access denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.wrap) > 0 {
				if _, err := exec.LookPath(c.wrap[0]); err != nil {
					t.Skipf("%s not on this machine: %v", c.wrap[0], err)
				}
			}
			var terr strings.Builder
			c.target.Stderr = &terr
			if c.target.Env == nil {
				c.target.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp"}
			}
			if err := c.target.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				syscall.Kill(-c.target.Process.Pid, syscall.SIGKILL) // its group, where it leads one
				c.target.Process.Kill()
				c.target.Wait()
			}()
			pid := c.target.Process.Pid
			waitSleeping(t, pid)
			if c.child {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
				if err != nil || len(strings.Fields(string(b))) != 1 {
					t.Fatalf("the child of %d: %q %v", pid, b, err)
				}
				leader := pid
				pid, _ = strconv.Atoi(strings.Fields(string(b))[0])
				waitSleeping(t, pid)
				defer func() {
					if tracerPid(t, leader) != 0 {
						t.Errorf("the group leader %d is traced", leader)
					}
				}()
			}
			cmd := r.Command(append([]string{r.Bin, "attach", strconv.Itoa(pid), "--headless", "--steps", "1"}, c.args...)...)
			if len(c.wrap) > 0 {
				cmd = exec.Command(c.wrap[0], append(append(c.wrap[1:], cmd.Path), cmd.Args[1:]...)...)
				cmd.Env = r.Command().Env
			}
			cmd.Env = append(cmd.Env, c.env...)
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "(the process was not changed)") {
				t.Errorf("attach: %v\n%s\nwant exit status 1 and %q", err, out, c.want)
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil || tracerPid(t, pid) != 0 {
				t.Errorf("pid %d after the refusal: %v, tracer %d: want it running, not traced", pid, err, tracerPid(t, pid))
			}
			if l := leftovers(r, pid); len(l) > 0 {
				t.Errorf("left: %v", l)
			}
			if s := terr.String(); s != "" {
				t.Errorf("the process wrote on its stderr: %q", s)
			}
		})
	}
}

func groupLeader(c *exec.Cmd) *exec.Cmd {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return c
}

// waitSleeping waits (up to 30 s) until pid sits in clock_nanosleep or
// nanosleep (x86-64 syscalls 230, 35): its startup is over.
func waitSleeping(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
		if err != nil {
			t.Fatalf("pid %d: %v", pid, err)
		}
		if f := strings.Fields(string(b)); len(f) > 0 && (f[0] == "230" || f[0] == "35") {
			return
		}
	}
	t.Fatalf("pid %d never slept", pid)
}

// TestTorchAttachDuringImport: attaching while the program is still in
// `import torch` (libtorch mapped, the import not done) waits for the
// import to finish before installing anything: the attach reports its
// steps and the loop runs to its end with status 0 and no traceback (the
// agent's thread once imported torch's submodules against the import in
// progress, and the interpreter's import-deadlock error ended the program).
func TestTorchAttachDuringImport(t *testing.T) {
	r := testutil.NeedTorchRoot(t)
	script := testutil.CopyIntoRoot(t, r, "testdata/attach_loop.py")
	target := r.Command("python3", script, "--steps", "12")
	var terr strings.Builder
	target.Stderr = &terr
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	pid := target.Process.Pid
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if strings.Contains(string(b), "libtorch") {
			break
		}
		if time.Now().After(end) {
			t.Fatal("libtorch never mapped")
		}
	}
	cmd := r.Command(r.Bin, "attach", strconv.Itoa(pid), "--headless", "--steps", "3", "--format", "json")
	var aerr strings.Builder
	cmd.Stderr = &aerr
	if _, err := cmd.Output(); err != nil {
		t.Errorf("attach during import torch: %v\n%s", err, tail(aerr.String(), 2000))
	}
	if err := target.Wait(); err != nil || strings.Contains(terr.String(), "Traceback") {
		t.Errorf("the loop attached to during its import: %v\n%s", err, tail(terr.String(), 3000))
	}
}
