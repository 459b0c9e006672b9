package loop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
)

func TestLineSplitter(t *testing.T) {
	var ls lineSplitter
	var got []string
	emit := func(b []byte) { got = append(got, string(b)) }
	// A progress bar (\r overwrites), \r\n split across two feeds, a long
	// line cut at MaxLineBytes.
	ls.feed([]byte(" 10%\r 50%\r100%\r"), emit)
	ls.feed([]byte("\nnext\r"), emit)
	ls.feed([]byte("\n"+strings.Repeat("x", MaxLineBytes+3)+"\ntail"), emit)
	want := []string{"100%", "next", strings.Repeat("x", MaxLineBytes), "xxx"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lines = %q, want %q", got, want)
	}
	if string(ls.cur) != "tail" {
		t.Fatalf("partial = %q", ls.cur)
	}
}

func TestOutputRingSeqAndDrop(t *testing.T) {
	o := newOutputLog()
	o.reset(nil, nil)
	for i := 1; i <= OutputLines+5; i++ {
		o.feed(livestate.Stdout, fmt.Appendf(nil, "l%d\n", i))
	}
	o.feed(livestate.Stderr, []byte("err\npart"))
	lines, partial := o.since(0)
	if len(lines) != OutputLines {
		t.Fatalf("%d lines, want %d", len(lines), OutputLines)
	}
	// Seq 1..1006 were written; the ring holds the newest 1000: 7..1006.
	if lines[0].Seq != 7 || lines[0].Text != "l7" || lines[len(lines)-1].Seq != OutputLines+6 || lines[len(lines)-1].Text != "err" || lines[len(lines)-1].Stream != livestate.Stderr {
		t.Fatalf("first %+v last %+v", lines[0], lines[len(lines)-1])
	}
	if len(partial) != 1 || partial[0].Text != "part" || partial[0].Stream != livestate.Stderr {
		t.Fatalf("partial = %+v", partial)
	}
	lines, _ = o.since(OutputLines + 5)
	if len(lines) != 1 || lines[0].Text != "err" {
		t.Fatalf("since: %+v", lines)
	}
	if tail := o.stderrTail(); fmt.Sprint(tail) != "[err part]" {
		t.Fatalf("tail = %q", tail)
	}
}

// blockingWriter blocks every Write until released, like a terminal of a
// stopped rlktop.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// A child that writes 2 MB to stderr and stdout while rlktop's side does
// not read (the copy writer blocks) finishes anyway: its output goes to
// files, not to a 64 KiB pipe.
func TestSupervisorChildNeverWaitsForReader(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	// 500 lines of 4,000 x's on each stream: 2,000,500 bytes each.
	script := `s=$(printf '%4000s' '' | tr ' ' x); i=0; while [ $i -lt 500 ]; do i=$((i+1)); printf '%s\n' "$s" >&2; printf '%s\n' "$s"; done; echo done >&2`
	s := NewSupervisor(Spec{Argv: []string{"/bin/sh", "-c", script}, Env: os.Environ(), StderrCopy: w})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	dir := s.Status().OutputDir
	if dir == "" {
		t.Fatal("no OutputDir while running")
	}
	// The child must exit while the writer is still blocked; its exit
	// status is known (wait returns) only after the tailer is released, so
	// watch the process itself.
	pid := s.Status().PID
	deadline := time.Now().Add(30 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			close(w.release)
			t.Fatal("the child did not finish while rlktop's reader was blocked")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(w.release)
	st := s.Wait(context.Background())
	if st.ExitCode != 0 {
		t.Fatalf("status %+v", st)
	}
	if got := w.buf.Len(); got != 500*4001+5 {
		t.Fatalf("StderrCopy got %d bytes, want %d", got, 500*4001+5)
	}
	if st.StderrTail[len(st.StderrTail)-1] != "done" {
		t.Fatalf("tail ends %q", st.StderrTail[len(st.StderrTail)-1])
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("output directory %s still there after exit (%v)", dir, err)
	}
	lines, _ := s.Output(0)
	// 501 stderr + 500 stdout lines were read; the ring keeps the newest
	// 1000 (Seq 2..1001). Between the streams the order is the tailer's.
	var lastErr string
	for _, l := range lines {
		if l.Stream == livestate.Stderr {
			lastErr = l.Text
		}
	}
	if len(lines) != OutputLines || lines[0].Seq != 2 || lines[len(lines)-1].Seq != 1001 || lastErr != "done" {
		t.Fatalf("ring: %d lines, Seq %d..%d, last stderr line %.10q", len(lines), lines[0].Seq, lines[len(lines)-1].Seq, lastErr)
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Field 3 is the state; "Z" is a zombie (exited, not yet reaped).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
