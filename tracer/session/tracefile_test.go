package session

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// traceFileFrame is a TraceFile frame's payload (tracer/wire/FORMAT.md:
// format, path as strings, first and last step as zigzag varints).
func traceFileFrame(format, path string, first, last int64) []byte {
	var p []byte
	for _, s := range []string{format, path} {
		p = binary.AppendUvarint(p, uint64(len(s)))
		p = append(p, s...)
	}
	p = binary.AppendVarint(p, first)
	p = binary.AppendVarint(p, last)
	return p
}

// A client's TraceFile frame naming a FIFO, a symbolic link or a file
// outside a private rlktop-kineto-* folder is refused with a warning, and
// the session still closes at once (a FIFO at a window path blocked the
// import for ever and rlktop never exited). A real window in the agent's
// private folder is still imported and removed.
func TestTraceFileOnlyRegularPrivate(t *testing.T) {
	priv, err := os.MkdirTemp("", "rlktop-kineto-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(priv)
	open, err := os.MkdirTemp("", "rlktop-kineto-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(open)
	os.Chmod(open, 0o777)
	fifo := filepath.Join(priv, "window-1.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, nothing stays blocked on the FIFO after the test.
	defer func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	window := `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":5}]}`
	good := filepath.Join(priv, "window-2.json")
	os.WriteFile(good, []byte(window), 0o600)
	link := filepath.Join(priv, "window-3.json")
	os.Symlink(good, link)
	public := filepath.Join(open, "window-4.json")
	os.WriteFile(public, []byte(window), 0o666)

	sess := New(Options{})
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	go func() {
		w.Hello(&msg.Hello{Source: "python", PID: 7})
		for i, p := range []string{fifo, link, public, good} {
			w.WriteFrame(wire.TypeTraceFile, 0, traceFileFrame("kineto", p, int64(i), int64(i)))
		}
		w.Flush()
	}()
	deadline := time.Now().Add(10 * time.Second)
	var warns []string
	for time.Now().Before(deadline) {
		st := sess.Snapshot()
		warns = st.Warnings
		if len(warns) >= 3 && sess.windowsImported() == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{fifo + " not imported: not a regular file", link + " not imported", public + " not imported: its folder is not the agent's private directory"} {
		found := false
		for _, w := range warns {
			found = found || strings.Contains(w, want)
		}
		if !found {
			t.Errorf("no warning containing %q in %q", want, warns)
		}
	}
	if n := sess.windowsImported(); n != 1 {
		t.Errorf("%d windows imported, want the one real window", n)
	}
	if _, err := os.Stat(good); !os.IsNotExist(err) {
		t.Errorf("the imported window is still there (%v)", err)
	}
	if _, err := os.Lstat(fifo); err != nil {
		t.Errorf("the FIFO was removed: %v", err)
	}
	b.Close()
	done := make(chan struct{})
	go func() { sess.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the session does not close: an import is blocked")
	}
}

// windowsImported is how many trace windows the session merged.
func (s *Session) windowsImported() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.windows
}

// RecordFile never writes through a link or over a file already at the
// name: a dangling link's target is not created (os.Create created it),
// an existing file is left as it was; a device is written in place.
func TestRecordFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	link := filepath.Join(dir, "run.rlk")
	os.Symlink(target, link)
	sess := New(Options{})
	defer sess.Close()
	if err := sess.RecordFile(link); err == nil {
		t.Error("a dangling link: no error")
		sess.StopRecording()
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was created (%v)", err)
	}
	old := filepath.Join(dir, "old.rlk")
	os.WriteFile(old, []byte("precious"), 0o644)
	if err := sess.RecordFile(old); err == nil {
		t.Error("an existing file: no error")
		sess.StopRecording()
	}
	if b, _ := os.ReadFile(old); string(b) != "precious" {
		t.Errorf("the existing file now holds %q", b)
	}
	if err := sess.RecordFile(os.DevNull); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	} else if _, err := sess.StopRecording(); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
}

// RecordFile at a FIFO: without a reader it is an error at once (the
// open waited forever), with one the recording goes through the pipe (a
// gzip stream arrives) and the FIFO stays a FIFO.
func TestRecordFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.rlk")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sess := New(Options{})
	defer sess.Close()
	done := make(chan error, 1)
	go func() { done <- sess.RecordFile(fifo) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "nobody reads") {
			t.Fatalf("a FIFO without a reader: error %v, want one saying nobody reads it", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RecordFile on a FIFO without a reader still waits after 5 s")
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b := make([]byte, 2)
		n, _ := io.ReadFull(f, b)
		io.Copy(io.Discard, f)
		got <- b[:n]
	}()
	var err error
	for i := 0; i < 200; i++ { // until the reader has opened its end
		if err = sess.RecordFile(fifo); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.StopRecording(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; len(b) != 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("the reader got % x, want a gzip stream (1f 8b)", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("after recording %s is %v (%v), want the FIFO", fifo, fi.Mode(), err)
	}
}

// Connections refused by --listen (here one with a wrong token) are
// counted and said in the session's warnings (nothing was logged).
func TestListenRefusalsShown(t *testing.T) {
	sess := New(Options{})
	defer sess.Close()
	addr, err := sess.ListenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bad := addr[:len(addr)-32] + strings.Repeat("0", 32)
	c, err := wire.Dial(bad, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, w := range sess.Snapshot().Warnings {
			if strings.Contains(w, "1 connections refused (1 with a wrong token") {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("no warning about the refused connection: %q", sess.Snapshot().Warnings)
}

// The session's warnings (an agent warning here) travel with its
// snapshots, which the TUI's warnings list and run --headless's report
// read (they reached neither).
func TestSessionWarningsInSnapshots(t *testing.T) {
	sess := New(Options{})
	defer sess.Close()
	a, b := net.Pipe()
	sess.AddConn(a)
	w := wire.NewWriter(b)
	go func() {
		w.Hello(&msg.Hello{Source: "pyagent", PID: 7})
		w.Meta([]msg.KV{{Key: AgentWarningKey, Value: "torch.profiler window of steps 2-3 not written"}})
		w.Flush()
	}()
	want := "child pid 7: torch.profiler window of steps 2-3 not written"
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st := sess.Snapshot()
		if slices.Contains(st.Warnings, want) {
			if !slices.Contains(st.Cumulative.Warnings, want) {
				t.Errorf("cumulative snapshot warnings %q lack it", st.Cumulative.Warnings)
			}
			if st.Recent != nil && !slices.Contains(st.Recent.Warnings, want) {
				t.Errorf("window snapshot warnings %q lack it", st.Recent.Warnings)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the agent's warning never became a session warning: %q", sess.Snapshot().Warnings)
}

// A CPU-only torch.profiler window of a process whose GPU tracer (CUPTI,
// loaded by an attached agent) is connected adds no CPU operators as
// kernels: the GPU work is the tracer's. The same window from a process
// without one shows its two operators' self time as kernels (aten::linear
// 10 µs holding aten::addmm 6 µs: 4 + 6 µs).
func TestWindowBesideGPUTracer(t *testing.T) {
	for _, vendor := range []bool{false, true} {
		dir, err := os.MkdirTemp("", "rlktop-kineto-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		win := filepath.Join(dir, "window-1.json")
		os.WriteFile(win, []byte(`{"traceEvents":[`+
			`{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":7,"tid":1,"ts":10,"dur":10},`+
			`{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":7,"tid":1,"ts":12,"dur":6}]}`), 0o600)
		sess := New(Options{})
		if vendor {
			c, d := net.Pipe()
			sess.AddConn(c)
			go func() {
				w := wire.NewWriter(d)
				w.Hello(&msg.Hello{Source: "cupti", PID: 7})
				w.Flush()
			}()
			for !slices.ContainsFunc(sess.Children(), func(c livestate.Child) bool { return c.Hello.Source == "cupti" }) {
				time.Sleep(5 * time.Millisecond)
			}
			defer d.Close()
		}
		a, b := net.Pipe()
		sess.AddConn(a)
		go func() {
			w := wire.NewWriter(b)
			w.Hello(&msg.Hello{Source: "pyagent", PID: 7})
			w.WriteFrame(wire.TypeTraceFile, 0, traceFileFrame("kineto", win, 0, 0))
			w.Flush()
		}()
		for end := time.Now().Add(10 * time.Second); sess.windowsImported() < 1 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		// The agent's end links what it sent (kernels wait for their
		// launch context until then).
		b.Close()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if !slices.ContainsFunc(sess.Children(), func(c livestate.Child) bool { return c.Hello.Source == "pyagent" && c.Connected }) {
				break
			}
		}
		var n, ns int64
		for _, k := range sess.Snapshot().Cumulative.Kernels {
			n += k.Count
			ns += k.TotalNs
		}
		want := [2]int64{2, 10_000}
		if vendor {
			want = [2]int64{0, 0}
		}
		if n != want[0] || ns != want[1] {
			t.Errorf("GPU tracer connected %v: %d kernels, %d ns; want %d, %d", vendor, n, ns, want[0], want[1])
		}
		sess.Close()
	}
}
