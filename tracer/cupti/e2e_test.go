package cupti_test

// End-to-end test of the CUPTI injection library without a GPU
//. It builds, with the real CUPTI headers:
//   - the injection library (go build -tags cupti -buildmode=c-shared ./lib),
//   - a stand-in libcupti (testdata/standin/fakecupti.c) that implements the
//     calls the library makes and fills real-layout records,
//   - a host program (testdata/standin/host.c) that loads the library the
//     way the CUDA driver does,
// then acts as rlktop: listens on the wire socket, reads what the library
// sends, and compares it with the manifest the stand-in wrote of every
// record it handed over. It skips, saying why, without gcc or the headers.

import (
	"debug/elf"
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

	"github.com/rlktop/rlktop/tracer/internal/injecttest"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

var libs injecttest.Build

// cuptiHeaders returns the include directory holding cupti_activity.h and
// the build tags to use, or "" when none is available.
func cuptiHeaders() (dir string, tags string) {
	if h := os.Getenv("CUDA_HOME"); h != "" {
		for _, d := range []string{filepath.Join(h, "extras/CUPTI/include"), filepath.Join(h, "include")} {
			if _, err := os.Stat(filepath.Join(d, "cupti_activity.h")); err == nil {
				return d, "cupti,cudahome"
			}
		}
	}
	if _, err := os.Stat("/usr/include/cupti_activity.h"); err == nil {
		return "/usr/include", "cupti"
	}
	return "", ""
}

// build returns the folder holding the injection library, the stand-in
// libcupti and the host, built once.
func build(t *testing.T) string {
	t.Helper()
	headers := []string{"../pump/include/*.h", "include/mincuda/*.h"}
	return libs.Dir(t, "rlktop-cupti-e2e-", headers, func(dir string) ([][]string, string) {
		if _, err := exec.LookPath("gcc"); err != nil {
			return nil, "gcc not found: the end-to-end CUPTI test builds C programs"
		}
		inc, tags := cuptiHeaders()
		if inc == "" {
			return nil, "CUPTI headers not found (run scripts/setup-cupti-headers.sh, or set CUDA_HOME)"
		}
		incFlags := []string{"-I" + inc}
		if tags == "cupti" {
			incFlags = []string{"-Iinclude/mincuda"}
		} else {
			incFlags = append(incFlags, "-I"+filepath.Join(os.Getenv("CUDA_HOME"), "include"))
		}
		return [][]string{
			{"go", "build", "-tags", tags, "-buildmode=c-shared", "-o", filepath.Join(dir, "librlktop_cupti.so"), "./lib"},
			append(append([]string{"gcc", "-O1", "-Wall", "-shared", "-fPIC"}, incFlags...),
				"-o", filepath.Join(dir, "libcupti.so.12"), "testdata/standin/fakecupti.c", "-lpthread"),
			{"gcc", "-O1", "-Wall", "-o", filepath.Join(dir, "host"), "testdata/standin/host.c", "-ldl", "-lpthread"},
		}, ""
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	libs.Remove()
	os.Exit(code)
}

func num(t *testing.T, m map[string]string, k string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(m[k], 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, m[k], err)
	}
	return v
}

type hostRun struct {
	recv    injecttest.Received
	summary map[string]string
	wall    time.Duration
	stderr  string
	dir     string
}

// listener modes
const (
	readAll   = iota // read as frames arrive
	stallRead        // accept, read nothing for stall, then read
	noServer         // RLKTOP_SOCKET names a socket nobody listens on
	hangUp           // read until stall after the first events, then close the connection
)

func runHost(t *testing.T, mode int, stall time.Duration, env ...string) hostRun {
	return runHostHook(t, mode, stall, nil, env...)
}

func runHostHook(t *testing.T, mode int, stall time.Duration, onFrame func(*injecttest.Received, net.Conn), env ...string) hostRun {
	t.Helper()
	dir := build(t)
	work := t.TempDir()
	addr := filepath.Join(work, "nobody.sock")
	var wait func() injecttest.Received
	if mode != noServer {
		addr, wait = injecttest.Serve(t, func(conn net.Conn) injecttest.Received {
			if mode == hangUp {
				// Hang up stall after the first events arrived (not after
				// the accept: on a loaded machine the host's first buffer
				// can take longer than stall), at most 20 s in.
				conn.SetReadDeadline(time.Now().Add(20 * time.Second))
				armed := false
				r := injecttest.ReadConn(conn, func(r *injecttest.Received, c net.Conn) {
					if !armed && len(r.Events) > 0 {
						armed = true
						c.SetReadDeadline(time.Now().Add(stall))
					}
				})
				conn.Close()
				r.Err = nil // the deadline ends the read
				return r
			}
			if mode == stallRead {
				if uc, ok := conn.(*net.UnixConn); ok {
					uc.SetReadBuffer(4096) // so that the stall reaches the sender's queue sooner
				}
				time.Sleep(stall)
			}
			return injecttest.ReadConn(conn, onFrame)
		})
	}
	cmd := exec.Command(filepath.Join(dir, "host"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	cmd.Env = append(os.Environ(),
		"CUDA_INJECTION64_PATH="+filepath.Join(dir, "librlktop_cupti.so"),
		"FAKE_CUPTI="+filepath.Join(dir, "libcupti.so.12"),
		"FAKE_MANIFEST="+filepath.Join(work, "manifest"),
		"HOST_SUMMARY="+filepath.Join(work, "summary"),
		wire.EnvSocket+"="+addr,
		"RLKTOP_CUPTI_BUFFER_MB=1",
	)
	cmd.Env = append(cmd.Env, env...)
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		t.Fatalf("host: %v\n%s", err, stderr.String())
	}
	h := hostRun{summary: injecttest.ReadSummary(t, filepath.Join(work, "summary")), wall: wall, stderr: stderr.String(), dir: work}
	if wait != nil {
		h.recv = wait()
	}
	t.Logf("host wall %v; summary %v; meta %v; drops %+v", wall, h.summary, h.recv.Meta, h.recv.Drops)
	return h
}

// compare matches received rows to the manifest: same multiset of kind,
// name, correlation, thread, device, stream and value, with start and
// duration within tol ns (the CUPTI→host mapping only adds the jitter of
// sampling two clocks back to back).
func compare(t *testing.T, got, want []injecttest.Row, tol int64) {
	t.Helper()
	key := func(r injecttest.Row) string {
		return fmt.Sprintf("%s|%s|%d|%d|%d|%d|%d", r.Kind, r.Name, r.Corr, r.TID, r.Dev, r.Stream, r.Value)
	}
	sortRows := func(rs []injecttest.Row) {
		sort.Slice(rs, func(i, j int) bool {
			ki, kj := key(rs[i]), key(rs[j])
			if ki != kj {
				return ki < kj
			}
			return rs[i].Start < rs[j].Start
		})
	}
	sortRows(got)
	sortRows(want)
	if len(got) != len(want) {
		t.Errorf("received %d events, the stand-in handed over %d", len(got), len(want))
	}
	bad := 0
	for i := 0; i < min(len(got), len(want)) && bad < 10; i++ {
		g, w := got[i], want[i]
		if key(g) != key(w) || abs(g.Start-w.Start) > tol || abs(g.Dur-w.Dur) > tol {
			t.Errorf("event %d:\n got  %+v\n want %+v", i, g, w)
			bad++
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func count(rows []injecttest.Row, kind string) int {
	n := 0
	for _, r := range rows {
		if r.Kind == kind {
			n++
		}
	}
	return n
}

const timeTol = 20_000 // ns

// maxCallback is the longest the stand-in's CUPTI thread may spend in one
// of the library's buffer callbacks. They take a mutex and copy a pointer;
// the bound is loose for a loaded 2-core CI machine.
const maxCallback = 50 * time.Millisecond

// TestInjectionEndToEnd: bursts from a second thread, a fork, more rounds
// from the main thread, CUPTI-reported drops, a partial buffer delivered
// only by the forced flush at exit.
func TestInjectionEndToEnd(t *testing.T) {
	h := runHost(t, readAll, 0, "HOST_ROUNDS=40", "HOST_KERNELS=4", "HOST_DROPPED=5")
	want := injecttest.ReadManifest(t, filepath.Join(h.dir, "manifest"))
	// Independent count: 40 rounds × (4 launches + 4 kernels + driver
	// launch + graph kernel + memcpy + 2 ranges).
	if len(want) != 40*(4+4+1+1+1+2) {
		t.Fatalf("manifest has %d rows, want %d", len(want), 40*13)
	}
	compare(t, h.recv.Events, want, timeTol)

	s := h.summary
	if s["init_results"] != "1,1" || num(t, s, "register_calls") != 1 {
		t.Errorf("InitializeInjection twice: results %s, cuptiActivityRegisterCallbacks called %s times (want once)", s["init_results"], s["register_calls"])
	}
	if num(t, s, "child_status") != 0 || time.Duration(num(t, s, "child_ns")) > 2*time.Second {
		t.Errorf("forked child: status %s after %v (must exit at once: inert)", s["child_status"], time.Duration(num(t, s, "child_ns")))
	}
	if d := time.Duration(num(t, s, "max_callback_ns")); d > maxCallback {
		t.Errorf("a buffer callback took %v", d)
	}
	m := h.recv.Meta
	if m["cupti.dropped_records"] != "5" {
		t.Errorf("cupti.dropped_records = %q, want the 5 the stand-in reported", m["cupti.dropped_records"])
	}
	if m["cupti.subscriber"] != "held" || m["cupti.found_by"] != "already loaded" || m["cupti.unpaired_markers"] != "0" {
		t.Errorf("meta: subscriber %q, found_by %q, unpaired %q", m["cupti.subscriber"], m["cupti.found_by"], m["cupti.unpaired_markers"])
	}
	if h.recv.Drops.Events != 0 {
		t.Errorf("sender dropped %d events with a reader keeping up", h.recv.Drops.Events)
	}
	if h.recv.Bye == nil || h.recv.Bye.Reason != "exit" {
		t.Errorf("no Bye at exit: %+v", h.recv.Bye)
	}
	hl := h.recv.Hello
	if hl.Source != "cupti" || hl.PID <= 0 {
		t.Errorf("hello %+v", hl)
	}
	// The hello's offset maps host CLOCK_MONOTONIC to CLOCK_REALTIME.
	if off := time.Duration(hl.ClockOffsetNs); hl.StartNs <= 0 || off <= 0 {
		t.Errorf("hello clock offset %v, start %d", off, hl.StartNs)
	}
}

// TestInjectionStalledReader: rlktop reads nothing for a while. The host
// must not slow down; what could not be queued is dropped and counted, and
// every record is either received or counted as dropped.
func TestInjectionStalledReader(t *testing.T) {
	const rounds, kernels, gapUS = 300, 100, 3000
	h := runHost(t, stallRead, 1500*time.Millisecond,
		"HOST_ROUNDS="+strconv.Itoa(rounds), "HOST_KERNELS="+strconv.Itoa(kernels), "HOST_MARKERS=0",
		"HOST_GAP_US="+strconv.Itoa(gapUS), "HOST_RECORDS_PER_BUFFER=500", "RLKTOP_CUPTI_SENDER_EVENTS=2048")
	s := h.summary
	placed := num(t, s, "placed")
	if placed != rounds*(2*kernels+3) {
		t.Fatalf("stand-in placed %d records, want %d", placed, rounds*(2*kernels+3))
	}
	m := h.recv.Meta
	var libDropped int64
	for _, k := range []string{"cupti.dropped_records", "cupti.ring_dropped_records"} {
		v, _ := strconv.ParseInt(m[k], 10, 64)
		libDropped += v
	}
	got := int64(len(h.recv.Events))
	t.Logf("received %d, sender dropped %d, library dropped %d, placed %d", got, h.recv.Drops.Events, libDropped, placed)
	if h.recv.Drops.Events == 0 {
		t.Errorf("a %v stall with a 2048-event sender queue dropped nothing: the test did not stall the reader", 1500*time.Millisecond)
	}
	if got+int64(h.recv.Drops.Events)+libDropped != placed {
		t.Errorf("received %d + sender dropped %d + library dropped %d != %d handed over", got, h.recv.Drops.Events, libDropped, placed)
	}
	// Every event that did arrive is one the stand-in handed over.
	want := map[string]bool{}
	for _, r := range injecttest.ReadManifest(t, filepath.Join(h.dir, "manifest")) {
		want[fmt.Sprintf("%s|%s|%d", r.Kind, r.Name, r.Corr)] = true
	}
	for _, r := range h.recv.Events {
		if !want[fmt.Sprintf("%s|%s|%d", r.Kind, r.Name, r.Corr)] {
			t.Errorf("received an event the stand-in never made: %+v", r)
			break
		}
	}
	if d := time.Duration(num(t, s, "max_callback_ns")); d > maxCallback {
		t.Errorf("a buffer callback took %v while the reader stalled", d)
	}
	// The rounds themselves sleep rounds×gap; the tracer may add little.
	budget := time.Duration(rounds*gapUS)*time.Microsecond + 2*time.Second
	if d := time.Duration(num(t, s, "rounds_ns")); d > budget {
		t.Errorf("host rounds took %v with a stalled reader (budget %v)", d, budget)
	}
}

// TestInjectionNoReader: nobody listens. The library switches CUPTI off
// and detaches; the host runs and exits normally.
func TestInjectionNoReader(t *testing.T) {
	// The detach happens at the next CUDA API exit after the library found
	// nobody listening: rounds are spaced so that some come after it.
	h := runHost(t, noServer, 0, "HOST_ROUNDS=20", "HOST_GAP_US=20000")
	s := h.summary
	if num(t, s, "disable_calls") < 8 || num(t, s, "finalize_calls") != 1 || num(t, s, "enabled_mask") != 0 {
		t.Errorf("CUPTI not switched off and detached: %v", s)
	}
	if !strings.Contains(h.stderr, "CUPTI tracing switched off") {
		t.Errorf("no message saying tracing is off; stderr %q", h.stderr)
	}
	if h.wall > 5*time.Second {
		t.Errorf("host took %v", h.wall)
	}
}

// TestInjectionSubscriberBusy: another tool holds the CUPTI subscriber.
// Activity records still flow and the hello meta says so.
func TestInjectionSubscriberBusy(t *testing.T) {
	h := runHost(t, readAll, 0, "HOST_ROUNDS=6", "FAKE_CUPTI_SUBSCRIBE_BUSY=1", "HOST_FORK=0")
	compare(t, h.recv.Events, injecttest.ReadManifest(t, filepath.Join(h.dir, "manifest")), timeTol)
	if v := h.recv.Meta["cupti.subscriber"]; !strings.HasPrefix(v, "unavailable: another tool holds CUPTI") {
		t.Errorf("cupti.subscriber = %q", v)
	}
}

// TestInjectionRingFull: the drain is slowed (test hook) so that completed
// buffers overflow a 2-slot ring and the 3-buffer pool runs out. The host
// never waits; overflowing buffers are counted record by record and
// recycled; requests the pool cannot serve get NULL (CUPTI then drops and
// counts).
func TestInjectionRingFull(t *testing.T) {
	h := runHost(t, readAll, 0, "HOST_ROUNDS=100", "HOST_KERNELS=10", "HOST_MARKERS=0", "HOST_FORK=0",
		"HOST_RECORDS_PER_BUFFER=50", "RLKTOP_CUPTI_RING=2", "RLKTOP_CUPTI_MAX_BUFFERS=3",
		"RLKTOP_CUPTI_TEST_DRAIN_DELAY=30ms")
	s, m := h.summary, h.recv.Meta
	placed := num(t, s, "placed")
	ring, _ := strconv.ParseInt(m["cupti.ring_dropped_records"], 10, 64)
	nulls, _ := strconv.ParseInt(m["cupti.null_buffers"], 10, 64)
	got := int64(len(h.recv.Events))
	t.Logf("placed %d, received %d, ring-dropped %d, NULL buffers %d (stand-in: %s)", placed, got, ring, nulls, s["null_buffers"])
	if ring == 0 {
		t.Error("no record counted as dropped by a full ring")
	}
	if nulls == 0 || strconv.FormatInt(nulls, 10) != s["null_buffers"] {
		t.Errorf("NULL buffers: library counted %d, stand-in saw %s", nulls, s["null_buffers"])
	}
	if got+ring != placed {
		t.Errorf("received %d + ring-dropped %d != %d placed in buffers", got, ring, placed)
	}
	if d := time.Duration(num(t, s, "max_callback_ns")); d > maxCallback {
		t.Errorf("a buffer callback took %v with a full ring", d)
	}
}

// TestInjectionPauseResume: rlktop pauses tracing (CUPTI is disabled,
// flushed and detached at the next API exit) and resumes it (callbacks
// registered again). Every record placed while tracing arrives; the rounds
// while paused place none.
func TestInjectionPauseResume(t *testing.T) {
	const rounds, kernels = 60, 4
	state := 0
	var atPause int
	var w *wire.Writer // one stream (one preamble) per connection
	onFrame := func(r *injecttest.Received, conn net.Conn) {
		if w == nil {
			w = wire.NewWriter(conn)
		}
		switch {
		case state == 0 && len(r.Events) >= 100:
			w.Control(&msg.Control{Op: msg.ControlPause, Seq: 1})
			w.Flush()
			state = 1
		case state == 1 && len(r.Acks) == 1:
			atPause = len(r.Events)
			state = 2
			go func() {
				time.Sleep(300 * time.Millisecond)
				w.Control(&msg.Control{Op: msg.ControlResume, Seq: 2})
				w.Flush()
			}()
		}
	}
	h := runHostHook(t, readAll, 0, onFrame, "HOST_ROUNDS="+strconv.Itoa(rounds), "HOST_KERNELS="+strconv.Itoa(kernels),
		"HOST_MARKERS=0", "HOST_FORK=0", "HOST_GAP_US=20000", "HOST_RECORDS_PER_BUFFER=20")
	acks := h.recv.Acks
	if len(acks) != 2 || acks[0].Seq != 1 || acks[0].Tracing || acks[0].Err != "" || acks[1].Seq != 2 || !acks[1].Tracing || acks[1].Err != "" {
		t.Fatalf("acks %+v", acks)
	}
	s := h.summary
	if num(t, s, "finalize_calls") != 1 || num(t, s, "register_calls") != 2 {
		t.Errorf("pause must detach once and resume register again: %v", s)
	}
	placed := num(t, s, "placed")
	full := int64(rounds * (2*kernels + 3))
	got := int64(len(h.recv.Events))
	t.Logf("placed %d of %d, received %d, %d before the pause took effect", placed, full, got, atPause)
	if got != placed {
		t.Errorf("received %d, placed %d", got, placed)
	}
	if placed >= full || got <= int64(atPause) {
		t.Errorf("pause had no effect or resume brought nothing back: placed %d of %d, received %d, at pause %d", placed, full, got, atPause)
	}
}

// TestLibraryExports checks the built library the way the CUDA driver and
// NVTX will use it: both entry points exported, and libcupti/libcuda not
// linked (they are opened with dlopen at run time).
func TestLibraryExports(t *testing.T) {
	dir := build(t)
	f, err := elf.Open(filepath.Join(dir, "librlktop_cupti.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			exported[s.Name] = true
		}
	}
	for _, want := range []string{"InitializeInjection", "InitializeInjectionNvtx2"} {
		if !exported[want] {
			t.Errorf("%s is not exported", want)
		}
	}
	libs, _ := f.ImportedLibraries()
	for _, l := range libs {
		if strings.HasPrefix(l, "libcupti") || strings.HasPrefix(l, "libcuda.") {
			t.Errorf("links %s; it must be opened with dlopen", l)
		}
	}
}

// TestInjectionReaderHangsUp: rlktop closes the connection mid-run. The
// library notices, switches CUPTI off and detaches; the host finishes.
func TestInjectionReaderHangsUp(t *testing.T) {
	h := runHost(t, hangUp, 300*time.Millisecond, "HOST_ROUNDS=100", "HOST_GAP_US=10000", "HOST_RECORDS_PER_BUFFER=20", "HOST_FORK=0")
	s := h.summary
	if len(h.recv.Events) == 0 {
		t.Error("nothing received before the hang-up")
	}
	if num(t, s, "finalize_calls") != 1 || num(t, s, "enabled_mask") != 0 {
		t.Errorf("CUPTI not switched off after the hang-up: %v", s)
	}
	if !strings.Contains(h.stderr, "lost the connection to rlktop") {
		t.Errorf("stderr %q", h.stderr)
	}
	if placed := num(t, s, "placed"); placed >= 100*(2*4+3+4) {
		t.Errorf("records kept being placed after detaching: %d", placed)
	}
}
