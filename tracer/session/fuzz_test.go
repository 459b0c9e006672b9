package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/wire"
)

// FuzzTraceFileFrame hands the session TraceFile frames of any payload
// (any path: a FIFO, a link, a device, a directory, a window in or out of
// a private rlktop-kineto-* folder): each is decoded or refused, and an
// import ends within 5 s without a panic (a FIFO hung it for ever).
func FuzzTraceFileFrame(f *testing.F) {
	priv, err := os.MkdirTemp("", "rlktop-kineto-")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(priv) })
	fifo := filepath.Join(priv, "window-1.json")
	syscall.Mkfifo(fifo, 0o600)
	os.Symlink("/dev/zero", filepath.Join(priv, "window-2.json"))
	os.Mkdir(filepath.Join(priv, "window-3.json"), 0o700)
	os.WriteFile(filepath.Join(priv, "window-4.json"), []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]}`), 0o600)
	for _, p := range []string{fifo, filepath.Join(priv, "window-2.json"), filepath.Join(priv, "window-3.json"), filepath.Join(priv, "window-4.json"),
		"/dev/zero", "relative/window-1.json", "/tmp/rlktop-kineto-/window-.json", ""} {
		f.Add(traceFileFrame("kineto", p, 1, 2))
	}
	f.Add([]byte{0xff, 0xff, 0xff})
	s := New(Options{})
	f.Cleanup(func() { s.Close() })
	c := &conn{s: s, pid: 1}
	f.Fuzz(func(t *testing.T, payload []byte) {
		fr := wire.Frame{Type: wire.TypeTraceFile, Payload: payload}
		tf, err := fr.TraceFile()
		if err != nil {
			return
		}
		done := make(chan struct{})
		s.wg.Add(1)
		go func() {
			s.importTraceFile(c, tf)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("importing %q still runs after 5 s", tf.Path)
		}
	})
}
