package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/klauspost/compress/gzip"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tui"
)

// drain runs loadTraces and returns every message it sent, and what it
// reported as a partial-load error.
func drain(t *testing.T, paths ...string) ([]tea.Msg, error) {
	t.Helper()
	feed := make(chan tea.Msg, 1024)
	partial := make(chan error, len(paths))
	loadTraces(paths, attrib.DefaultRules(), feed, partial)
	var msgs []tea.Msg
	for m := range feed { // loadTraces closed it
		msgs = append(msgs, m)
	}
	select {
	case err := <-partial:
		return msgs, err
	default:
		return msgs, nil
	}
}

func TestLoadTracesSharedTrace(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz")
	msgs, perr := drain(t, path)
	if perr != nil {
		t.Fatal(perr)
	}
	if _, ok := msgs[0].(tui.ProgressMsg); !ok {
		t.Fatalf("first message %T, want ProgressMsg (the loading screen's first figure)", msgs[0])
	}
	last, ok := msgs[len(msgs)-1].(tui.SnapshotMsg)
	if !ok {
		t.Fatalf("last message %T, want SnapshotMsg", msgs[len(msgs)-1])
	}
	// While attributing the loading screen keeps the bytes read: the whole
	// file (it said "0 B read · attributing…").
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := msgs[len(msgs)-2].(tui.ProgressMsg); !ok || p.Phase != "attributing" || p.Read != st.Size() || p.Size != st.Size() {
		t.Errorf("message before the snapshot %#v, want attributing with %d of %d bytes read", msgs[len(msgs)-2], st.Size(), st.Size())
	}
	// 4,350 kernels: counted in ../shared/traces/PROVENANCE.md.
	if got := last.Snapshot.Totals.KernelCount; got != 4350 {
		t.Errorf("kernel count %d, want 4350", got)
	}
	if last.Snapshot.Source != path {
		t.Errorf("source %q", last.Snapshot.Source)
	}
}

func TestLoadTracesBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	msgs, _ := drain(t, empty)
	em, ok := msgs[len(msgs)-1].(tui.ErrMsg)
	if !ok || !em.Fatal {
		t.Fatalf("empty file: last message %#v, want a fatal ErrMsg", msgs[len(msgs)-1])
	}
	var te *tracefile.Error
	if !errors.As(em.Err, &te) || te.Path != empty {
		t.Fatalf("empty file: error %v does not name the file", em.Err)
	}

	// A real trace cut in the middle: the events before the cut are shown,
	// the error goes to the status bar and to the exit status.
	f, err := os.Open(filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, zr, 2<<20); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.json")
	if err := os.WriteFile(cut, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs, perr := drain(t, cut)
	if perr == nil {
		t.Fatal("cut trace: no partial-load error for the exit status")
	}
	var sawErr, sawSnap bool
	for _, m := range msgs {
		switch m := m.(type) {
		case tui.ErrMsg:
			sawErr = !m.Fatal
		case tui.SnapshotMsg:
			sawSnap = m.Snapshot != nil
		}
	}
	if !sawErr || !sawSnap {
		t.Fatalf("cut trace: non-fatal error %v, snapshot %v; want both", sawErr, sawSnap)
	}
}
