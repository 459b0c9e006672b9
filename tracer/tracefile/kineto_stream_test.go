package tracefile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// TestOpenStreamEqualsOpen: the windows OpenStream hands out, concatenated,
// are Open's events, each GPU op with the same launch context (compared by
// content: contexts are numbered in first-use order either way), and the
// returned trace carries Open's metadata, warnings, step rule and steps.
// On 3 copies of each shared Kineto trace with GPU work (3 windows each).
func TestOpenStreamEqualsOpen(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	for _, name := range []string{"hta_diff_test_v100.json.gz", "hta_mi250_minitoy_rocm62.json.gz", "hta_sampled_rank0.json.gz",
		"tracelens_mi300_qwen15_aotriton.json.gz", "tracelens_sglang_qwen3_decode_mi300.json.gz", "kineto_sync_before_fix.json"} {
		raw := readAllMaybeGzip(t, filepath.Join(dir, name))
		var buf bytes.Buffer
		if _, err := ReplicateKineto(&buf, raw, 3); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name+".json")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		whole, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []tracer.Event
		var ctxs []tracer.Context
		windows := 0
		st, err := OpenStream(p, Options{}, func(w *Window) error {
			if w.Index != windows {
				t.Errorf("%s: window %d handed out as %d", name, windows, w.Index)
			}
			windows++
			got = append(got, w.Events...)
			ctxs = w.Contexts
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if windows != 3 {
			t.Errorf("%s: %d windows, want 3 (one per copy)", name, windows)
		}
		if len(got) != len(whole.Events) {
			t.Fatalf("%s: %d events streamed, Open has %d", name, len(got), len(whole.Events))
		}
		for i := range got {
			a, b := got[i], whole.Events[i]
			ca, cb := ctxs[a.Ctx], whole.Contexts[b.Ctx]
			a.Ctx, b.Ctx = 0, 0
			if a != b || ca.Step != cb.Step || ca.StageFrom != cb.StageFrom || !slices.Equal(ca.Ops, cb.Ops) || !slices.Equal(ca.Ranges, cb.Ranges) {
				t.Fatalf("%s: event %d differs:\nstream %+v %+v\nopen   %+v %+v", name, i, a, ca, b, cb)
			}
		}
		var steps []tracer.Event
		for _, e := range whole.Events {
			if e.Kind == tracer.KindStep {
				steps = append(steps, e)
			}
		}
		if !slices.Equal(st.Events, steps) || st.StepRule != whole.StepRule || !slices.Equal(st.Warnings, whole.Warnings) ||
			st.Rank != whole.Rank || len(st.Devices) != len(whole.Devices) || len(st.Counters) != len(whole.Counters) {
			t.Errorf("%s: stream trace: %d steps, rule %q, rank %d, warnings %q; Open: %d steps, rule %q, rank %d, warnings %q",
				name, len(st.Events), st.StepRule, st.Rank, st.Warnings, len(steps), whole.StepRule, whole.Rank, whole.Warnings)
		}
	}
}

// TestOpenStreamRefuses: inputs that cannot be streamed exactly say why
// (ErrNotStreamable), and windows already handed out are not silent.
func TestOpenStreamRefuses(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	cases := []struct{ path, why string }{
		{filepath.Join(dir, "hta_cpu_only.json.gz"), "no GPU work"},
		{filepath.Join(testutil.SharedTraces(t), "rocprof", "kernel_trace_2025.csv"), "not Kineto"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil {
			t.Fatalf("test input missing: %v", err)
		}
		_, err := OpenStream(c.path, Options{}, func(*Window) error { return nil })
		if !errors.Is(err, ErrNotStreamable) || !bytes.Contains([]byte(err.Error()), []byte(c.why)) {
			t.Errorf("%s: got %v, want ErrNotStreamable (%s)", c.path, err, c.why)
		}
	}
}

func readAllMaybeGzip(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// TestOpenStreamLongWindow: a window past bigWindow events moves into the
// file-sized array part way (here at 4096 events) and still equals Open.
func TestOpenStreamLongWindow(t *testing.T) {
	old := bigWindow
	defer func() { bigWindow = old }()
	bigWindow = 4096
	raw := readAllMaybeGzip(t, filepath.Join(testutil.SharedTraces(t), "kineto", "hta_sampled_rank0.json.gz"))
	var buf bytes.Buffer
	if _, err := ReplicateKinetoOneWindow(&buf, raw, 3); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []tracer.Event
	var ctxs []tracer.Context
	big := false
	_, err = OpenStream(p, Options{}, func(w *Window) error {
		got = append(got, w.Events...)
		ctxs = w.Contexts
		// A join of chunks is exactly as long as the window; the
		// file-sized array is longer.
		big = big || cap(w.Events) > len(w.Events)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(whole.Events) || len(got) <= 4096 || !big {
		t.Fatalf("%d events streamed (file-sized array used: %v), Open has %d", len(got), big, len(whole.Events))
	}
	for i := range got {
		a, b := got[i], whole.Events[i]
		ca, cb := ctxs[a.Ctx], whole.Contexts[b.Ctx]
		a.Ctx, b.Ctx = 0, 0
		if a != b || ca.Step != cb.Step || !slices.Equal(ca.Ops, cb.Ops) || !slices.Equal(ca.Ranges, cb.Ranges) {
			t.Fatalf("event %d differs:\nstream %+v %+v\nopen   %+v %+v", i, a, ca, b, cb)
		}
	}
}
