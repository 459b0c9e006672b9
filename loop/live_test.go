package loop

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/gpu"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/loop/runrecord"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// waitFor polls cond every 20 ms for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLiveRestartRecordTelemetry runs the tiny built-in loop recorded from
// the start with the run record and 50 ms telemetry, restarts it, and
// checks: the live steps start afresh with the new child only (Reset);
// the recording keeps both children's steps, each numbered from 0; the
// child's CPU/RSS counters are recorded; Telemetry follows the new pid;
// the run record ends with exit status 0.
func TestLiveRestartRecordTelemetry(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in loop child; skipped with -short")
	}
	bin := needBin(t)
	path := filepath.Join(t.TempDir(), "restart.rlk")
	live, err := StartLive(LiveOptions{
		Exe:        bin,
		Flags:      map[string]string{"envs": "8", "layers": "1", "width": "24"},
		Session:    session.Options{Source: "live: test"},
		RecordPath: path,
		RunRecord:  &runrecord.Options{Flags: []string{"envs=8"}},
		Telemetry:  50 * time.Millisecond,
	})
	if err != nil {
		if live != nil {
			live.Close()
		}
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			live.Close()
		}
	}()
	pid1 := live.Sup.Status().PID
	waitFor(t, 30*time.Second, "3 steps", func() bool { return live.Session.Snapshot().StepCount >= 3 })
	waitFor(t, 10*time.Second, "a telemetry sample of the first child", func() bool {
		s, _, ok := live.Telemetry()
		return ok && s.ProcOK && s.Proc.Root == pid1
	})
	_, status, _ := live.Telemetry()
	if status == "" {
		t.Error("empty telemetry status line")
	}

	if err := live.Restart(); err != nil {
		t.Fatal(err)
	}
	pid2 := live.Sup.Status().PID
	if pid2 == pid1 || pid2 == 0 {
		t.Fatalf("restart: pid %d → %d", pid1, pid2)
	}
	st := live.Session.Snapshot()
	for _, s := range st.Steps {
		if s.PID != int32(pid2) {
			t.Errorf("after Restart the session still holds step %d of pid %d", s.Step, s.PID)
		}
	}
	waitFor(t, 30*time.Second, "2 steps of the new child", func() bool { return live.Session.Snapshot().StepCount >= 2 })
	st = live.Session.Snapshot()
	for _, s := range st.Steps {
		if s.PID != int32(pid2) {
			t.Errorf("step %d of old pid %d after Restart", s.Step, s.PID)
		}
	}
	if st.Steps[0].Step != 0 {
		t.Errorf("the new child's first live step is %d, want 0", st.Steps[0].Step)
	}
	waitFor(t, 10*time.Second, "a telemetry sample of the new child", func() bool {
		s, _, ok := live.Telemetry()
		return ok && s.ProcOK && s.Proc.Root == pid2
	})

	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	tr, err := tracefile.Open(path, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := map[int32]int64{} // pid → smallest step number
	n := map[int32]int{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind != tracer.KindStep {
			continue
		}
		if v, ok := first[e.PID]; !ok || e.Value < v {
			first[e.PID] = e.Value
		}
		n[e.PID]++
	}
	if n[int32(pid1)] < 3 || n[int32(pid2)] < 2 || first[int32(pid1)] != 0 || first[int32(pid2)] != 0 {
		t.Errorf("recorded steps per pid %v (first step %v); want ≥3 of %d and ≥2 of %d, each from 0", n, first, pid1, pid2)
	}
	names := map[string]int{}
	for _, c := range tr.Counters {
		names[tr.Strings.Get(c.Name)]++
	}
	if names[gpu.CounterProcRSSBytes] < 2 {
		t.Errorf("recorded counters %v: want ≥2 %s samples", names, gpu.CounterProcRSSBytes)
	}
	if tr.Meta[runrecord.KeyExit] != "0" || tr.Meta[runrecord.KeyEnd] == "" {
		t.Errorf("run record exit %q end %q, want 0 and a time", tr.Meta[runrecord.KeyExit], tr.Meta[runrecord.KeyEnd])
	}
	if !strings.Contains(tr.Meta[runrecord.KeyEnvSet], "RLKTOP_SOCKET") {
		t.Errorf("run record env_set %q lacks RLKTOP_SOCKET", tr.Meta[runrecord.KeyEnvSet])
	}
}

// TestExitStatus: a shell's convention, 128+N for signal N.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		st   livestate.Status
		want int
	}{
		{livestate.Status{State: livestate.Exited, ExitCode: 0}, 0},
		{livestate.Status{State: livestate.Exited, ExitCode: 3}, 3},
		{livestate.Status{State: livestate.Stopped, ExitCode: -1, Signal: "killed"}, 137},     // SIGKILL = 9
		{livestate.Status{State: livestate.Stopped, ExitCode: -1, Signal: "terminated"}, 143}, // SIGTERM = 15
		{livestate.Status{State: livestate.Exited, ExitCode: 127, Err: "exec: not found"}, 127},
		{livestate.Status{State: livestate.Running, PID: 1}, -1},
	} {
		if got := ExitStatus(c.st); got != c.want {
			t.Errorf("ExitStatus(%+v) = %d, want %d", c.st, got, c.want)
		}
	}
}

// TestTelemetryCoTenantWarning: a co-tenant pid is warned about once, in
// the session's warnings and the comparison notes.
func TestTelemetryCoTenantWarning(t *testing.T) {
	var tel telemetry
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local).UnixNano()
	co := reading.Sample{TS: ts, CoTenants: []reading.CoTenant{{Device: 0, Vendor: "nvidia", PID: 4242, UsedMemBytes: 512 << 20}}}
	msg := tel.take(gpu.Reading{Sample: co})
	want := "GPU co-tenant since 03:04:05: pid 4242 on nvidia GPU 0 (512 MiB)"
	if !strings.HasPrefix(msg, want) {
		t.Errorf("warning %q, want prefix %q", msg, want)
	}
	if again := tel.take(gpu.Reading{Sample: co}); again != "" {
		t.Errorf("second warning for the same pid: %q", again)
	}
	if m := tel.take(gpu.Reading{Sample: reading.Sample{TS: ts}}); m != "" || tel.cotenant {
		t.Errorf("no co-tenant: %q, flag %v", m, tel.cotenant)
	}
	if len(tel.notes) != 1 {
		t.Errorf("notes %q", tel.notes)
	}
}
