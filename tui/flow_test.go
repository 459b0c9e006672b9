package tui_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// TestFlowOpenSortFilterQuit drives the real program: a source feeds
// progress and then a snapshot (as `rlktop open` does), the user sorts by
// count, filters for "gemm" and quits.
func TestFlowOpenSortFilterQuit(t *testing.T) {
	feed := make(chan tea.Msg, 4)
	feed <- tui.ProgressMsg{Phase: "reading", Read: 1 << 20, Size: 4 << 20}
	feed <- tui.SnapshotMsg{Snapshot: viewstest.Snapshot()}
	close(feed)
	st := views.DefaultStyles()
	m := tui.New(tui.Options{Styles: &st, Source: "trace.json.gz", Feed: feed})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))

	var seen bytes.Buffer // everything the program wrote
	var last []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		last = b
		return bytes.Contains(b, []byte("sort total"))
	}, teatest.WithDuration(5*time.Second))
	seen.Write(last)

	tm.Send(tea.KeyPressMsg{Code: 'c', Text: "c"})
	tm.Type("/gemm")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		last = b
		return bytes.Contains(b, []byte("filter /gemm"))
	}, teatest.WithDuration(5*time.Second))
	seen.Write(last)
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})

	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*tui.Model)
	if !ok {
		t.Fatal("final model is not *tui.Model")
	}
	if final.Err() != nil {
		t.Fatalf("unexpected error: %v", final.Err())
	}
	k := final.Kernels()
	if col, desc := k.Sort(); col != attrib.ByCount || !desc {
		t.Errorf("sort = %v desc %v, want count descending", col, desc)
	}
	if k.Filter() != "gemm" || k.Capturing() {
		t.Errorf("filter %q capturing %v, want gemm, closed", k.Filter(), k.Capturing())
	}
	// Independent expectation: fixture kernels whose name contains
	// "gemm", by count descending.
	var want []string
	for _, f := range viewstest.Kernels {
		if strings.Contains(strings.ToLower(f.Name), "gemm") {
			want = append(want, f.Name)
		}
	}
	if len(want) != 2 {
		t.Fatalf("fixture changed: %d gemm kernels", len(want))
	}
	if viewstest.Kernels[4].Count > viewstest.Kernels[1].Count { // volta vs sm90
		want[0], want[1] = want[1], want[0]
	}
	rows := k.Rows()
	if len(rows) != 2 || rows[0].Name != want[0] || rows[1].Name != want[1] {
		var got []string
		for _, r := range rows {
			got = append(got, r.Name)
		}
		t.Errorf("rows %q, want %q", got, want)
	}
	rest, err := io.ReadAll(tm.FinalOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	seen.Write(rest)
	for _, s := range []string{"volta_sgemm_64x64_nt", "sort count ▼", "filter /gemm"} {
		if !bytes.Contains(seen.Bytes(), []byte(s)) {
			t.Errorf("output lacks %q", s)
		}
	}
}
