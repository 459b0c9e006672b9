package rocprof_test

// End-to-end test of the rocprofiler-sdk tool library without a GPU
//. It builds the tool library (go build -tags rocm
// -buildmode=c-shared ./lib) and a stand-in for rocprofiler-sdk
// (testdata/standin/host.c), which loads the tool the way the SDK does,
// delivers code-object and roctx callbacks and buffered kernel-dispatch,
// memory-copy and HIP API records in rocprofiler-sdk 0.5.0's layouts, then
// finalizes. The test acts as rlktop: it listens on the wire socket and
// compares what arrives with the manifest the stand-in wrote. It skips,
// saying why, without gcc.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/internal/injecttest"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

var libs injecttest.Build

// build returns the folder holding the tool library and the stand-in
// host, built once.
func build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the end-to-end test builds the c-shared tool library (10-30 s)")
	}
	headers := []string{"../pump/include/*.h", "include/*.h"}
	return libs.Dir(t, "rlktop-rocprof-e2e-", headers, func(dir string) ([][]string, string) {
		if _, err := exec.LookPath("gcc"); err != nil {
			return nil, "gcc not found: the end-to-end rocprof test builds C programs"
		}
		return [][]string{
			{"go", "build", "-tags", "rocm", "-buildmode=c-shared", "-o", filepath.Join(dir, "librlktop_rocprof.so"), "./lib"},
			{"gcc", "-O1", "-Wall", "-Werror", "-Iinclude", "-rdynamic", "-o", filepath.Join(dir, "host"), "testdata/standin/host.c", "-ldl", "-lpthread"},
		}, ""
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	libs.Remove()
	os.Exit(code)
}

type hostRun struct {
	recv     injecttest.Received
	summary  map[string]string
	manifest []injecttest.Row
	stderr   string
}

func runHost(t *testing.T, listen bool, env ...string) hostRun {
	return runHostHook(t, listen, nil, env...)
}

func runHostHook(t *testing.T, listen bool, onFrame func(*injecttest.Received, net.Conn), env ...string) hostRun {
	t.Helper()
	dir := build(t)
	work := t.TempDir()
	cmd := exec.Command(filepath.Join(dir, "host"))
	var stderr strings.Builder
	cmd.Stderr, cmd.Stdout = &stderr, &stderr
	cmd.Env = append(os.Environ(),
		"TOOL_LIB="+filepath.Join(dir, "librlktop_rocprof.so"),
		"FAKE_MANIFEST="+filepath.Join(work, "manifest"),
		"HOST_SUMMARY="+filepath.Join(work, "summary"),
		"RLKTOP_ROCPROF_CHUNK_KB=64", // several chunks for 20,000 dispatches
	)
	var wait func() injecttest.Received
	if listen {
		var addr string
		addr, wait = injecttest.Serve(t, func(conn net.Conn) injecttest.Received { return injecttest.ReadConn(conn, onFrame) })
		cmd.Env = append(cmd.Env, wire.EnvSocket+"="+addr)
	} else {
		var kept []string
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, wire.EnvSocket+"=") {
				kept = append(kept, kv)
			}
		}
		cmd.Env = kept
	}
	cmd.Env = append(cmd.Env, env...)
	if lateSocket(env) {
		// The host sets RLKTOP_SOCKET itself, just before loading the tool.
		for i, kv := range cmd.Env {
			if strings.HasPrefix(kv, wire.EnvSocket+"=") {
				cmd.Env[i] = "FAKE_LATE_SOCKET=" + strings.TrimPrefix(kv, wire.EnvSocket+"=")
			}
		}
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("host: %v\n%s", err, stderr.String())
	}
	h := hostRun{summary: injecttest.ReadSummary(t, filepath.Join(work, "summary")), stderr: stderr.String()}
	if listen {
		h.manifest = injecttest.ReadManifest(t, filepath.Join(work, "manifest"))
		h.recv = wait()
	}
	return h
}

func key(r injecttest.Row) string {
	return fmt.Sprintf("%s|%s|%d|%d|%d|%d|%d|%d|%d", r.Kind, r.Name, r.Start, r.Dur, r.Corr, r.TID, r.Dev, r.Stream, r.Value)
}

// TestEndToEnd: every record the stand-in delivered arrives exactly once,
// exactly as delivered; the short record is skipped and counted; the SDK's
// drop counts arrive summed; the records held until finalize's flush
// arrive too.
func TestEndToEnd(t *testing.T) {
	// 0.5.0 (ROCm 6.3) and 1.0.0 (ROCm 7.0): the latter's API and callback
	// records carry the 24-byte correlation id.
	for _, v := range []struct{ num, name string }{{"500", "0.5.0"}, {"10000", "1.0.0"}} {
		t.Run("sdk-"+v.name, func(t *testing.T) { endToEnd(t, v.num, v.name) })
	}
}

func endToEnd(t *testing.T, version, versionName string) {
	h := runHost(t, true, "FAKE_SDK_VERSION="+version)
	if h.summary["client"] != "rlktop" || h.summary["flushes"] != "1" || h.summary["started_after"] != "0" {
		t.Errorf("host summary %v (want the tool named rlktop, one flush and the context stopped at finalize)", h.summary)
	}
	if h.recv.Hello.Source != "rocprof" || h.recv.Hello.PID <= 0 {
		t.Errorf("hello %+v", h.recv.Hello)
	}
	// GPU agents from rocprofiler_query_available_agents, numbered by
	// logical_node_type_id (the stand-in lists the MI300X first as GPU 1).
	devs := h.recv.Hello.Devices
	if h.summary["agent_queries"] != "1" || len(devs) != 2 ||
		devs[0].ID != 1 || devs[0].Name != "AMD Instinct MI300X" || devs[0].ComputeCap != "gfx942" || devs[0].SMs != 304 ||
		devs[1].ID != 0 || devs[1].Name != "AMD Radeon 8060S Graphics" || devs[1].ComputeCap != "gfx1151" || devs[1].Vendor != "amd" {
		t.Errorf("hello devices %+v (agent queries %s)", devs, h.summary["agent_queries"])
	}
	if h.recv.Bye == nil || h.recv.Bye.Reason != "exit" {
		t.Errorf("bye %+v", h.recv.Bye)
	}
	got := map[string]int{}
	for _, r := range h.recv.Events {
		got[key(r)]++
	}
	want := map[string]int{}
	for _, r := range h.manifest {
		want[key(r)]++
	}
	if len(h.recv.Events) != len(h.manifest) {
		t.Errorf("received %d events, the stand-in delivered %d", len(h.recv.Events), len(h.manifest))
	}
	var missing, extra []string
	for k, n := range want {
		if got[k] != n {
			missing = append(missing, fmt.Sprintf("%s (got %d, want %d)", k, got[k], n))
		}
	}
	for k := range got {
		if want[k] == 0 {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%d missing/different, %d unexpected; first missing %v; first unexpected %v",
			len(missing), len(extra), missing[:min(3, len(missing))], extra[:min(3, len(extra))])
	}
	m := h.recv.Meta
	for k, v := range map[string]string{
		"rocprof.dropped_records":      h.summary["dropped"],
		"rocprof.short_records":        h.summary["short"],
		"rocprof.ring_dropped_records": "0",
		"rocprof.unpaired_markers":     "1",
		"rocprof.unknown_agents":       "0",
		"rocprof.open_ranges":          "0",
		"rocprof.sdk_version":          versionName,
		"rocprof.tracing":              "false", // after finalize
	} {
		if m[k] != v {
			t.Errorf("meta %s = %q, want %q", k, m[k], v)
		}
	}
	t.Logf("%d events; meta %v", len(h.recv.Events), m)
}

// TestDeclinesWithoutRlktop: with no RLKTOP_SOCKET, rocprofiler_configure
// returns NULL, so rocprofiler-sdk never initializes the tool.
func TestDeclinesWithoutRlktop(t *testing.T) {
	h := runHost(t, false)
	if h.summary["declined"] != "1" {
		t.Errorf("summary %v, stderr %s", h.summary, h.stderr)
	}
}

// TestRingFullDropsAreCounted: with a one-chunk ring, 4 KiB chunks and a
// slow drain, chunks are discarded; what arrives is a subset of what was
// delivered and the discarded entries are counted.
func TestRingFullDropsAreCounted(t *testing.T) {
	h := runHost(t, true, "RLKTOP_ROCPROF_RING=1", "RLKTOP_ROCPROF_CHUNK_KB=4", "RLKTOP_ROCPROF_TEST_DRAIN_DELAY=20ms",
		"RLKTOP_ROCPROF_EXIT_WAIT_MS=20000")
	want := map[string]bool{}
	for _, r := range h.manifest {
		want[key(r)] = true
	}
	for _, r := range h.recv.Events {
		if !want[key(r)] {
			t.Fatalf("received an event the stand-in never delivered: %+v", r)
		}
	}
	dropped, err := strconv.Atoi(h.recv.Meta["rocprof.ring_dropped_records"])
	if err != nil || dropped == 0 || len(h.recv.Events) >= len(h.manifest) {
		t.Errorf("ring drops %q, %d of %d events arrived", h.recv.Meta["rocprof.ring_dropped_records"], len(h.recv.Events), len(h.manifest))
	}
	t.Logf("%d of %d events arrived, %d entries dropped at the ring", len(h.recv.Events), len(h.manifest), dropped)
}

// TestPauseResume: rlktop's pause stops the tool's rocprofiler context and
// resume starts it again; both are acknowledged with the tracing state.
func TestPauseResume(t *testing.T) {
	var w *wire.Writer
	state := 0
	onFrame := func(r *injecttest.Received, conn net.Conn) {
		if w == nil {
			w = wire.NewWriter(conn)
		}
		switch {
		case state == 0 && r.Hello.Source != "":
			w.Control(&msg.Control{Op: msg.ControlPause, Seq: 1})
			w.Flush()
			state = 1
		case state == 1 && len(r.Acks) == 1:
			state = 2
			go func() {
				time.Sleep(300 * time.Millisecond) // the stand-in polls the context state every ms
				w.Control(&msg.Control{Op: msg.ControlResume, Seq: 2})
				w.Control(&msg.Control{Op: msg.ControlSet, Seq: 3, Key: "X", Value: "1"})
				w.Flush()
			}()
		}
	}
	h := runHostHook(t, true, onFrame, "FAKE_WAIT_PAUSE=1", "FAKE_DISPATCHES=100")
	if h.summary["paused"] != "1" || h.summary["resumed"] != "1" {
		t.Errorf("host summary %v: the context was not stopped and restarted", h.summary)
	}
	a := h.recv.Acks
	if len(a) != 3 || a[0].Seq != 1 || a[0].Tracing || a[0].Err != "" || a[1].Seq != 2 || !a[1].Tracing || a[1].Err != "" ||
		a[2].Seq != 3 || a[2].Err == "" {
		t.Errorf("acks %+v", a)
	}
	if len(h.recv.Events) != len(h.manifest) {
		t.Errorf("received %d events, delivered %d", len(h.recv.Events), len(h.manifest))
	}
}

func lateSocket(env []string) bool {
	for _, kv := range env {
		if kv == "LATE_SOCKET=1" {
			return true
		}
	}
	return false
}

// TestLateSocket: RLKTOP_SOCKET set in C's environment only just before
// the tool is loaded (as an agent does before loading it into a running
// process) still reaches the Go side: the tool connects and every
// dispatch the stand-in placed arrives.
func TestLateSocket(t *testing.T) {
	h := runHost(t, true, "LATE_SOCKET=1", "FAKE_DISPATCHES=300")
	if h.recv.Hello.Source != "rocprof" {
		t.Fatalf("no hello (the tool did not connect): summary %v, stderr %s", h.summary, h.stderr)
	}
	want, got := 0, 0
	for _, r := range h.manifest {
		if r.Kind == tracer.KindKernel.String() {
			want++
		}
	}
	for _, e := range h.recv.Events {
		if e.Kind == tracer.KindKernel.String() {
			got++
		}
	}
	if want < 300 || got != want {
		t.Errorf("kernels: %d placed (want at least the 300 dispatches), %d arrived", want, got)
	}
}

// TestNobodyListening: RLKTOP_SOCKET names a socket nobody listens on; the
// tool switches its context off, and the program runs to the end.
func TestNobodyListening(t *testing.T) {
	h := runHost(t, false, wire.EnvSocket+"="+filepath.Join(t.TempDir(), "nobody.sock"), "FAKE_DISPATCHES=100")
	if h.summary["client"] != "rlktop" || h.summary["started_after"] != "0" || !strings.Contains(h.stderr, "switched off") {
		t.Errorf("summary %v, stderr %q", h.summary, h.stderr)
	}
}

// TestForkedChildInert: a child forked after initialize calls into the tool
// (buffer and roctx callbacks); it exits cleanly and none of its records
// reach rlktop, while the parent's all do.
func TestForkedChildInert(t *testing.T) {
	h := runHost(t, true, "FAKE_FORK=1", "FAKE_DISPATCHES=300")
	if h.summary["child_exit"] != "0" {
		t.Errorf("forked child: %v; stderr %s", h.summary, h.stderr)
	}
	for _, r := range h.recv.Events {
		if r.Corr == 777777 || r.Name == "in child" {
			t.Fatalf("a forked child's record arrived: %+v", r)
		}
	}
	if len(h.recv.Events) != len(h.manifest) {
		t.Errorf("received %d events, the parent delivered %d", len(h.recv.Events), len(h.manifest))
	}
}
