package tracefile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/extsort"
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
		one, err := Open(filepath.Join(dir, name), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []tracer.Event
		var ctxs []tracer.Context
		windows := 0
		st, err := OpenStream(p, Options{}, func(w *Capture) error {
			if w.Index != windows {
				t.Errorf("%s: window %d handed out as %d", name, windows, w.Index)
			}
			// Each window's contexts are its own: as many as one copy
			// has, not the windows' so far.
			if len(w.Contexts) != len(one.Contexts) {
				t.Errorf("%s: window %d has %d contexts, one copy has %d", name, w.Index, len(w.Contexts), len(one.Contexts))
			}
			windows++
			got = append(got, w.Events...)
			for _, e := range w.Events { // each window's contexts are its own
				ctxs = append(ctxs, w.Contexts[e.Ctx])
			}
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
			ca, cb := ctxs[i], whole.Contexts[b.Ctx]
			a.Ctx, b.Ctx = 0, 0
			a.Call, b.Call = 0, 0 // per window, as contexts
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
		_, err := OpenStream(c.path, Options{}, func(*Capture) error { return nil })
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

// TestOpenStreamParts: a window past PartWindow events is read in parts
// (linked as it is read, never held): the parts hold Open's steps and GPU
// ops in file order, each op with Open's launch context (by content), and
// the trace Open's warnings (the nesting check too), step rule and steps.
// PartWindow -1 reads every window in parts (one-window copies, where GPU
// ops come before their launch and ops without a launch wait in the
// queue, and copies of several windows); 4096 switches part way through a
// window. It fails when the parts path is off (a whole window has its CPU
// operators; parts have none).
func TestOpenStreamParts(t *testing.T) {
	testOpenStreamParts(t, tracer.SpillSizes{})
}

// TestOpenStreamPartsSpilled is TestOpenStreamParts with the long
// window's intervals spilled to disk (runs of 97 intervals, blocks of 13)
// and its nesting records sorted on disk: the same events, contexts and
// warnings as Open's.
func TestOpenStreamPartsSpilled(t *testing.T) {
	testOpenStreamParts(t, tracer.SpillSizes{RunRecs: 97, Block: 13})
}

// heldCPU counts the CPU operators of w: a capture held whole has its
// window's, a part of a window read in parts has none.
func heldCPU(w *Capture) int {
	n := 0
	for _, e := range w.Events {
		if e.Kind == tracer.KindCPUOp {
			n++
		}
	}
	return n
}

// testOpenStreamParts is TestOpenStreamParts with spill's sizes.
func testOpenStreamParts(t *testing.T, spill tracer.SpillSizes) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	for _, c := range []struct {
		name     string
		one      bool
		at       int
		windows  int
		warnings bool // the trace has a nesting (or other) warning to compare
	}{
		{"hta_sampled_rank0.json.gz", true, -1, 1, false},
		{"hta_sampled_rank0.json.gz", true, 4096, 1, false},
		{"hta_diff_test_v100.json.gz", true, -1, 1, false},
		{"tracelens_h100_qwen15_sdpa_flash.json.gz", true, -1, 1, false},
		{"tracelens_mi300_qwen15_aotriton.json.gz", false, -1, 3, false},
		{"hta_ns_resolution_v100.json.gz", true, -1, 1, false},
		{"hta_triton_example.json.gz", true, -1, 1, false},
	} {
		raw := readAllMaybeGzip(t, filepath.Join(dir, c.name))
		var buf bytes.Buffer
		replicate := ReplicateKineto
		if c.one {
			replicate = ReplicateKinetoOneWindow
		}
		if _, err := replicate(&buf, raw, 3); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "x.json")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		whole, err := Open(p, Options{NoShapes: true})
		if err != nil {
			t.Fatal(err)
		}
		var want []tracer.Event
		for _, e := range whole.Events {
			switch e.Kind {
			case tracer.KindStep, tracer.KindKernel, tracer.KindMemcpy, tracer.KindMemset:
				want = append(want, e)
			}
		}
		var got []tracer.Event
		var ctxs []tracer.Context
		windows, parts, part, cpu, lastCtxs := 0, 0, 0, 0, 0
		st, err := OpenStream(p, Options{NoShapes: true, PartWindow: c.at, Spill: spill}, func(w *Capture) error {
			if w.Index != windows || w.Part != part {
				t.Errorf("%s: window %d part %d handed out as %d part %d", c.name, windows, part, w.Index, w.Part)
			}
			for _, e := range w.Events {
				if e.Kind == tracer.KindStep && w.Part > 0 {
					t.Errorf("%s: a step in part %d", c.name, w.Part)
				}
				switch e.Kind {
				case tracer.KindStep, tracer.KindKernel, tracer.KindMemcpy, tracer.KindMemset:
					got = append(got, e)
					ctxs = append(ctxs, w.Contexts[e.Ctx]) // each part's contexts are its own
				case tracer.KindCPUOp:
					cpu++
				}
			}
			lastCtxs = len(w.Contexts)
			parts++
			part++
			if w.Last {
				windows++
				part = 0
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if windows != c.windows || cpu > 0 {
			t.Errorf("%s (PartWindow %d): %d windows in %d parts with %d CPU operators, want %d windows read in parts", c.name, c.at, windows, parts, cpu, c.windows)
		}
		t.Logf("%s (PartWindow %d): %d windows in %d parts", c.name, c.at, windows, parts)
		// Each part's contexts are its own: the last of several holds
		// fewer than the whole trace has.
		if parts > windows && lastCtxs >= len(whole.Contexts) {
			t.Errorf("%s: the last part has %d contexts, the whole trace %d", c.name, lastCtxs, len(whole.Contexts))
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d steps and GPU ops streamed, Open has %d", c.name, len(got), len(want))
		}
		for i := range got {
			a, b := got[i], want[i]
			ca, cb := ctxs[i], whole.Contexts[b.Ctx]
			a.Ctx, b.Ctx = 0, 0
			a.Call, b.Call = 0, 0 // per window, as contexts
			if a != b || ca.Step != cb.Step || ca.StageFrom != cb.StageFrom || !slices.Equal(ca.Ops, cb.Ops) || !slices.Equal(ca.Ranges, cb.Ranges) {
				t.Fatalf("%s: event %d differs:\nstream %+v %+v\nopen   %+v %+v", c.name, i, a, ca, b, cb)
			}
		}
		var steps []tracer.Event
		for _, e := range want {
			if e.Kind == tracer.KindStep {
				steps = append(steps, e)
			}
		}
		if !slices.Equal(st.Events, steps) || st.StepRule != whole.StepRule || !slices.Equal(st.Warnings, whole.Warnings) {
			t.Errorf("%s: stream trace: %d steps, rule %q, warnings %q; Open: %d steps, rule %q, warnings %q",
				c.name, len(st.Events), st.StepRule, st.Warnings, len(steps), whole.StepRule, whole.Warnings)
		}
	}
}

// TestOpenStreamPartsNesting: the nesting check of a window read in parts
// counts what Open's counts, with the same first example. A hand trace:
// on pid 1 tid 1, "a" [0, 100) µs holds "b" [10, 30); "c" [20, 120) starts
// inside "b" and ends after it (1, the first example: "b" and "c", not
// pushed); the runtime call [40, 60) nests in "a"; "d" [90, 150) ends after
// "a" (2).
func TestOpenStreamPartsNesting(t *testing.T) {
	const trace = `{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 20, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 10, "dur": 20},
  {"ph": "X", "cat": "python_function", "name": "d", "pid": 1, "tid": 1, "ts": 90, "dur": 60},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 40, "dur": 20, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 70, "dur": 10, "args": {"correlation": 1, "device": 0, "stream": 7}}
]}`
	p := filepath.Join(t.TempDir(), "nest.json")
	if err := os.WriteFile(p, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := Open(p, Options{NoShapes: true})
	if err != nil {
		t.Fatal(err)
	}
	parts, cpu := 0, 0
	st, err := OpenStream(p, Options{NoShapes: true, PartWindow: -1}, func(w *Capture) error { parts++; cpu += heldCPU(w); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := `2 events partly overlap an enclosing event on the same thread instead of nesting (first: "b" [10000, 30000) ns and "c" [20000, 120000) ns on pid 1 tid 1)`
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], want) || !slices.Equal(st.Warnings, whole.Warnings) || parts != 1 || cpu > 0 {
		t.Errorf("parts %d with %d CPU operators (want 1 part of a window read in parts: none), warnings:\nstream %q\nopen   %q\nwant %q", parts, cpu, st.Warnings, whole.Warnings, want)
	}
}

// TestOpenStreamPartsRefusesLateCPU: an operator after the launches of a
// window read in parts could hold a launch already linked: refused.
func TestOpenStreamPartsRefusesLateCPU(t *testing.T) {
	const trace = `{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 40, "dur": 20, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 70, "dur": 10, "args": {"correlation": 1, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 1, "ts": 30, "dur": 40}
]}`
	p := filepath.Join(t.TempDir(), "late.json")
	if err := os.WriteFile(p, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenStream(p, Options{NoShapes: true, PartWindow: -1}, func(w *Capture) error { return nil })
	if !errors.Is(err, ErrNotStreamable) || !strings.Contains(err.Error(), "comes after launches or GPU ops") {
		t.Errorf("got %v, want a refusal of the late operator", err)
	}
	// Held whole (DefaultPartWindow): linked with the operator.
	if _, err := OpenStream(p, Options{NoShapes: true}, func(w *Capture) error { return nil }); err != nil {
		t.Errorf("held whole: %v", err)
	}
}

// TestOpenStreamPartsNestingWide: the nesting records of many threads and
// long durations, held in memory or sorted on disk, give Open's count and
// first example. 300 threads each hold "outer" [1, 100) µs and
// "inner" [10, 20) µs; thread 280 (written first) also holds "long"
// [1000, 6,001,000) µs (6 s) and "late" [2000, 7,000,000) µs, which
// partly overlaps it; thread 7 holds "over" [50, 150) µs, partly over
// "outer", written last: 2 events, the first example thread 280's.
func TestOpenStreamPartsNestingWide(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schemaVersion": 1, "traceEvents": [`)
	ev := func(name string, tid, ts, dur int) {
		fmt.Fprintf(&b, `{"ph": "X", "cat": "cpu_op", "name": %q, "pid": 1, "tid": %d, "ts": %d, "dur": %d},`+"\n", name, tid, ts, dur)
	}
	for tid := 1000; tid < 1300; tid++ {
		ev("outer", tid, 1, 99)
		ev("inner", tid, 10, 10)
	}
	ev("long", 1280, 1000, 6_000_000)
	ev("late", 1280, 2000, 6_998_000)
	ev("over", 1007, 50, 100)
	b.WriteString(`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1000, "ts": 12, "dur": 2, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": 10, "args": {"correlation": 1, "device": 0, "stream": 7}}]}`)
	p := filepath.Join(t.TempDir(), "wide.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := Open(p, Options{NoShapes: true})
	if err != nil {
		t.Fatal(err)
	}
	// The records in memory, then sorted on disk in runs of 50.
	for _, runRecs := range []int{extsort.DefaultRunRecs, 50} {
		cpu := 0
		st, err := OpenStream(p, Options{NoShapes: true, PartWindow: -1, Spill: tracer.SpillSizes{RunRecs: runRecs}}, func(w *Capture) error { cpu += heldCPU(w); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if cpu > 0 {
			t.Errorf("runs of %d: %d CPU operators handed out: the window was held whole, not read in parts", runRecs, cpu)
		}
		want := `2 events partly overlap an enclosing event on the same thread instead of nesting (first: "long" [1000000, 6001000000) ns and "late" [2000000, 7000000000) ns on pid 1 tid 1280)`
		if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], want) || !slices.Equal(st.Warnings, whole.Warnings) {
			t.Errorf("runs of %d: warnings:\nstream %q\nopen   %q\nwant %q", runRecs, st.Warnings, whole.Warnings, want)
		}
	}
}

// TestOpenStreamPartsNoTempDir: a long window whose intervals must go to
// disk, with no writable temporary directory, is refused as not
// streamable (the caller reads the file whole) with a message naming
// TMPDIR, not linked without them.
func TestOpenStreamPartsNoTempDir(t *testing.T) {
	raw := readAllMaybeGzip(t, filepath.Join(testutil.SharedTraces(t), "kineto", "hta_diff_test_v100.json.gz"))
	var buf bytes.Buffer
	if _, err := ReplicateKinetoOneWindow(&buf, raw, 2); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	_, err := OpenStream(p, Options{NoShapes: true, PartWindow: -1, Spill: tracer.SpillSizes{RunRecs: 100}}, func(w *Capture) error { return nil })
	if !errors.Is(err, ErrNotStreamable) || !strings.Contains(err.Error(), "TMPDIR") {
		t.Errorf("got %v, want a refusal naming TMPDIR", err)
	}
	t.Log(err)
}
