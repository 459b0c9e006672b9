package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/load"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// reportBothWays runs `report --format json FILE` with the whole-trace path
// and with the streaming path forced (--stream-min-bytes -1 and 1), and
// fails unless the outputs are byte for byte equal. It returns the
// streamed windows (the refusal when the file cannot be streamed; report
// then read it whole, and the windows are those handed before it).
func reportBothWays(t *testing.T, paths ...string) (windows int, refused error) {
	n, err := reportBothWaysParts(t, paths...)
	return n.windows, err
}

// streamStats counts what a streamed report was handed: windows, and the
// parts they came in.
type streamStats struct{ windows, parts int }

// streamCounts reports paths window by window whatever their size, with
// shapes ignored and lo's sizes, and returns what the stream was handed
// and why it was refused (nil: streamed); a file the stream did not take
// for another reason (not Kineto, damaged) counts as refused too.
func streamCounts(t *testing.T, paths []string, lo load.Options) (streamStats, error) {
	t.Helper()
	var refused error
	lo.NoShapes, lo.StreamMinBytes, lo.ReadWhole = true, 1, func(e error) { refused = e }
	r, err := load.Report(paths, lo)
	if err != nil {
		t.Fatalf("%v: %v", paths, err)
	}
	if !r.Streamed && refused == nil {
		refused = fmt.Errorf("read whole: %w", tracefile.ErrNotStreamable)
	}
	return streamStats{r.Windows, r.Parts}, refused
}

// reportBothWaysParts is reportBothWays, returning the windows and the
// parts they came in. The streamed report is made twice, with windows held
// whole up to the default size and with every window read in parts
// (load.Options.PartWindow -1), the latter twice (what a long window sorts
// on disk in memory, then in many runs); all must equal the whole-trace
// one, and the counts are the second's.
func reportBothWaysParts(t *testing.T, paths ...string) (n streamStats, refused error) {
	t.Helper()
	whole := reportJSON(t, append([]string{"--stream-min-bytes", "-1"}, paths...)...)
	streamed := reportJSON(t, append([]string{"--stream-min-bytes", "1"}, paths...)...)
	sameReport(t, paths, whole, streamed, "windows held whole")
	// A window read in parts is refused when it recorded shapes (its
	// work needs the whole window): the parts are compared without them.
	whole = reportJSON(t, append([]string{"--no-shapes", "--stream-min-bytes", "-1"}, paths...)...)
	noShapes := append([]string{"--no-shapes", "--stream-min-bytes", "1"}, paths...)
	held, errHeld := streamCounts(t, paths, load.Options{})
	parts := load.Options{PartWindow: -1}
	streamed = reportJSONWith(t, parts, noShapes...)
	sameReport(t, paths, whole, streamed, "windows read in parts")
	// And with what a long window keeps on disk (intervals, nesting
	// records, op intervals for busy time) sorted in many small runs.
	spilled := parts
	spilled.Spill = tracer.SpillSizes{RunRecs: 997, Block: 61}
	streamed = reportJSONWith(t, spilled, noShapes...)
	sameReport(t, paths, whole, streamed, "windows read in parts, sorted on disk")
	n, err := streamCounts(t, paths, parts)
	if (err == nil) != (errHeld == nil) || (err == nil && held.windows != n.windows) {
		t.Errorf("%v: held whole %d windows (refused: %v), in parts %d windows (refused: %v)", paths, held.windows, errHeld, n.windows, err)
	}
	return n, err
}

// sameReport fails unless whole and streamed are byte for byte equal.
func sameReport(t *testing.T, paths []string, whole, streamed []byte, how string) {
	t.Helper()
	if !bytes.Equal(whole, streamed) {
		a, b := string(whole), string(streamed)
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("%v (%s): streamed report differs from the whole-trace one at byte %d:\nwhole:    …%s…\nstreamed: …%s…", paths, how, i,
			a[max(0, i-200):min(len(a), i+200)], b[max(0, i-200):min(len(b), i+200)])
	}
}

// TestReportStreamEqualsWhole: every real Kineto trace, reported window by
// window (report's large-input path), gives the report the whole-trace
// path gives (validated against HTA and python oracles elsewhere): the
// independent check of the streaming path.
func TestReportStreamEqualsWhole(t *testing.T) {
	_, paths := sharedKineto(t)
	for _, p := range paths {
		w, err := reportBothWays(t, p)
		t.Logf("%s: %d windows, refused: %v", filepath.Base(p), w, err)
	}
}

// TestReportStreamCopies: files of several windows (copies of each real
// trace one after the other, as tracefile.ReplicateKineto writes them and
// as a run's consecutive torch.profiler windows are) stream one window per
// copy — not a fallback to the whole-trace path — and give the whole-trace
// report byte for byte.
func TestReportStreamCopies(t *testing.T) {
	_, paths := sharedKineto(t)
	tmp := t.TempDir()
	n := 0
	for _, p := range paths {
		base := filepath.Base(p)
		if strings.HasPrefix(base, "hta_cpu_only") {
			continue // no GPU work: never streamed (TestReportStreamEqualsWhole)
		}
		raw := readTraceBytes(t, p)
		copies := 3
		if len(raw) > 10<<20 {
			copies = 2 // keep the test's files under 60 MB
		}
		out := filepath.Join(tmp, base+".x.json")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tracefile.ReplicateKineto(f, raw, copies); err != nil {
			t.Fatal(err)
		}
		f.Close()
		w, err := reportBothWays(t, out)
		if err != nil || w != copies {
			t.Errorf("%s × %d: %d windows streamed (want %d), refused: %v", base, copies, w, copies, err)
		}
		os.Remove(out)
		n++
	}
	if n < 10 {
		t.Fatalf("only %d traces replicated", n)
	}
}

// sharedKineto returns the folder of the shared Kineto traces and their
// paths; fewer than 10 fails the test.
func sharedKineto(t *testing.T) (dir string, paths []string) {
	t.Helper()
	dir = filepath.Join(testutil.SharedTraces(t), "kineto")
	paths, _ = filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(paths) < 10 {
		t.Fatalf("expected the shared Kineto traces in %s, found %d", dir, len(paths))
	}
	return dir, paths
}

// readTraceBytes returns the uncompressed bytes of a .json or .json.gz.
func readTraceBytes(t *testing.T, p string) []byte { return testutil.ReadTrace(t, p) }

// TestReportStreamRefusesOverlap: a second window whose kernel overlaps
// the first window's in time (on device 0: [20, 80) and [50, 90) µs, so
// busy is the union, 70 µs, not 60 + 40) cannot be streamed exactly: the
// stream refuses and report reads the file whole, with the same output.
// Without CaptureLinker's check the streamed busy time would be 100 µs.
func TestReportStreamRefusesOverlap(t *testing.T) {
	const trace = `{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm_a", "pid": 0, "tid": 7, "ts": 20, "dur": 60, "args": {"correlation": 1, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 200, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 210, "dur": 5, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "add_b", "pid": 0, "tid": 8, "ts": 50, "dur": 40, "args": {"correlation": 2, "device": 0, "stream": 8}}
]}`
	p := filepath.Join(t.TempDir(), "overlap.json")
	if err := os.WriteFile(p, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := reportBothWays(t, p)
	if err == nil || !strings.Contains(err.Error(), "not after the end of the earlier windows") || w != 1 {
		t.Fatalf("want a refusal at window 1, got %d windows, %v", w, err)
	}
	var doc struct {
		Totals struct {
			KernelBusyNs int64 `json:"busy_ns"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(reportJSON(t, p), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Totals.KernelBusyNs != 70_000 {
		t.Errorf("busy %d ns, want the union [20, 90) µs = 70000", doc.Totals.KernelBusyNs)
	}
}

// TestReportStreamOneWindow: copies written as one long window (every
// copy's CPU events, then every copy's launches and GPU ops:
// ReplicateKinetoOneWindow, the shape of one long torch.profiler capture)
// stream as a single window read in parts (linked while read, never held)
// and give the whole-trace report byte for byte, at several sizes and
// shapes: H100 (ops before their launch, 509 ops per copy whose launch was
// before the capture), V100 (the same, 614 per copy), A100 (an op 29,496
// events before its launch), sampled rank 0. A fallback to the whole path
// (a refusal) or a window held whole (one part) fails it.
func TestReportStreamOneWindow(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	tmp := t.TempDir()
	for _, c := range []struct {
		name   string
		copies int
	}{
		{"tracelens_h100_qwen15_sdpa_flash.json.gz", 3},
		{"tracelens_h100_qwen15_sdpa_flash.json.gz", 6},
		{"hta_diff_test_v100.json.gz", 2},
		{"hta_diff_control_a100.json.gz", 2},
		{"hta_sampled_rank0.json.gz", 5},
	} {
		p := filepath.Join(dir, c.name)
		out := filepath.Join(tmp, fmt.Sprintf("%s.one%d.json", c.name, c.copies))
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tracefile.ReplicateKinetoOneWindow(f, readTraceBytes(t, p), c.copies); err != nil {
			t.Fatal(err)
		}
		f.Close()
		n, err := reportBothWaysParts(t, out)
		if err != nil || n.windows != 1 || n.parts < 2 {
			t.Fatalf("%s × %d: %d windows in %d parts (want 1 window in parts), refused: %v", c.name, c.copies, n.windows, n.parts, err)
		}
		t.Logf("%s × %d: 1 window in %d parts", c.name, c.copies, n.parts)
		// N copies' kernels: the count is N times one copy's.
		var one, all struct {
			Totals struct {
				Kernels int64 `json:"kernel_count"`
			} `json:"totals"`
		}
		if err := json.Unmarshal(reportJSON(t, p), &one); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(reportJSON(t, out), &all); err != nil {
			t.Fatal(err)
		}
		if one.Totals.Kernels == 0 || all.Totals.Kernels != int64(c.copies)*one.Totals.Kernels {
			t.Errorf("%s: kernels: %d in one copy, %d in %d", c.name, one.Totals.Kernels, all.Totals.Kernels, c.copies)
		}
		os.Remove(out)
	}
}

// TestReportStreamSources: several traces (ranks) streamed one after the
// other give the whole-trace report of them together byte for byte: per
// source rows, step rows and spreads, and collectives matched across
// sources (the A100 trace given twice: one job's clock and world), also
// when each file is several windows (2 copies of each). A100 rank 3 and
// V100 rank 1 share steps 1009-1014 but are not one job (worlds 8 and 2,
// 8.5 days apart): spreads, no matching (attrib.RankSummary.NotOneJob).
func TestReportStreamSources(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	a := filepath.Join(dir, "hta_diff_control_a100.json.gz")
	v := filepath.Join(dir, "hta_diff_test_v100.json.gz")
	s := filepath.Join(dir, "hta_sampled_rank0.json.gz")
	tmp := t.TempDir()
	copies := func(p string) string {
		out := filepath.Join(tmp, filepath.Base(p)+".x2.json")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tracefile.ReplicateKineto(f, readTraceBytes(t, p), 2); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return out
	}
	for _, c := range []struct {
		paths   []string
		windows int
		matched bool // the sources share steps and collectives
	}{
		{[]string{a, a}, 2, true},
		{[]string{a, v}, 2, false},
		{[]string{s, a, v}, 3, false},
		{[]string{copies(a), copies(a)}, 4, true},
		{[]string{copies(a), copies(v)}, 4, false},
	} {
		w, err := reportBothWays(t, c.paths...)
		if err != nil || w != c.windows {
			t.Errorf("%v: %d windows (want %d), refused: %v", c.paths, w, c.windows, err)
		}
		// The comparison covers matching: the whole-trace report of the
		// one-job pairs has matched collectives and step spreads.
		var doc struct {
			Collectives int `json:"collectives_matched"`
			Spreads     []struct {
				Step int64 `json:"step"`
			} `json:"step_spreads"`
		}
		if err := json.Unmarshal(reportJSON(t, c.paths...), &doc); err != nil {
			t.Fatal(err)
		}
		if !c.matched && doc.Collectives != 0 {
			t.Errorf("%v: %d collectives matched across runs that are not one job", c.paths, doc.Collectives)
		}
		if c.matched && (doc.Collectives == 0 || len(doc.Spreads) == 0) {
			t.Errorf("%v: %d collectives matched, %d step spreads: nothing across sources to compare", c.paths, doc.Collectives, len(doc.Spreads))
		}
		t.Logf("%d sources: %d collectives matched, %d step spreads", len(c.paths), doc.Collectives, len(doc.Spreads))
	}
}

// TestReportDuplicateSteps: a Kineto file whose one thread holds step 1
// twice (two windows, hand-written) is reported the same whole and window
// by window, and both say that step 1 repeats and what its row then shows
// (repeated steps were merged silently).
func TestReportDuplicateSteps(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	for w := range 2 {
		o := w * 1000
		if w > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":%d,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":5,"args":{"correlation":%d}},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":20,"args":{"correlation":%d,"device":0,"stream":7}}`, o, o+10, w+1, o+20, w+1)
	}
	b.WriteString("]}\n")
	p := filepath.Join(t.TempDir(), "dup.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := reportBothWays(t, p); err != nil || w != 2 {
		t.Errorf("%d windows streamed (want 2), refused: %v", w, err)
	}
	var doc struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(reportJSON(t, p), &doc); err != nil {
		t.Fatal(err)
	}
	want := "step 1 appears more than once on one thread (pid 1 tid 1, at 0 ns and 1000000 ns): such a step is one row"
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), want) {
		t.Errorf("warnings %q lack %q", doc.Warnings, want)
	}
}

// TestStreamOtherFormatSaysNothing: a file of another format than Kineto
// JSON taken for the stream (a cut .gz recording's last four bytes read as
// a size of hundreds of MiB) goes to its own reader without a line saying
// it is read whole, which is about Kineto JSON only.
func TestStreamOtherFormatSaysNothing(t *testing.T) {
	f := filepath.Join(testutil.SharedTraces(t), "rocprof", "kernel_trace_2024.csv")
	var errw bytes.Buffer
	r, err := load.Report([]string{f}, load.Options{StreamMinBytes: 1, ReadWhole: readWholeSaid(&errw)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Streamed {
		t.Fatal("a rocprofv3 CSV was streamed")
	}
	if len(r.Snapshot.Kernels) == 0 {
		t.Error("the CSV read whole has no kernel rows")
	}
	if errw.Len() != 0 {
		t.Errorf("stderr: %q", errw.String())
	}
}

// TestReportStreamTakesOpModel: --op-model reaches the streamed report as
// it does the whole one. On the H100 trace (shapes recorded), a model
// that replaces the built-in one with nothing leaves no modelled FLOPs
// either way, where the built-in model counts some.
func TestReportStreamTakesOpModel(t *testing.T) {
	p := filepath.Join(testutil.SharedTraces(t), "kineto", "tracelens_h100_qwen15_sdpa_flash.json.gz")
	empty := filepath.Join(t.TempDir(), "empty.toml")
	if err := os.WriteFile(empty, []byte("replace = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flops := func(args ...string) float64 {
		t.Helper()
		var doc struct {
			Work struct {
				FLOPs float64 `json:"flops"`
			} `json:"work"`
		}
		if err := json.Unmarshal(reportJSON(t, append(args, p)...), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Work.FLOPs
	}
	if f := flops("--stream-min-bytes", "1"); f <= 0 {
		t.Fatalf("streamed with the built-in model: %v FLOPs", f)
	}
	for _, min := range []string{"1", "-1"} {
		if f := flops("--stream-min-bytes", min, "--op-model", empty); f != 0 {
			t.Errorf("--stream-min-bytes %s with an empty model: %v FLOPs, want 0", min, f)
		}
	}
}

// TestReportStreamMixedSources: sources with and without recorded shapes
// (the A100 and V100 traces carry them, ns_resolution_v100 does not)
// streamed together give the whole-trace report, table (its device
// lines: each source's devices apart, those that ran work) and JSON (the
// steps of the source without shapes count no unmodelled time, and the
// FLOP median is over the steps with work), in every view.
func TestReportStreamMixedSources(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	paths := []string{filepath.Join(dir, "hta_diff_control_a100.json.gz"), filepath.Join(dir, "hta_diff_test_v100.json.gz"), filepath.Join(dir, "hta_ns_resolution_v100.json.gz")}
	for _, args := range [][]string{{"--format", "json"}, {"--by", "kernel"}, {"--by", "step"}, {"--by", "rank"}} {
		var out [2]string
		for i, min := range []string{"1", "-1"} {
			s, err := runReport(t, append(append([]string{"--stream-min-bytes", min}, args...), paths...)...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, s)
			}
			out[i] = s
		}
		if out[0] != out[1] {
			sameReport(t, paths, []byte(out[1]), []byte(out[0]), fmt.Sprint(args))
		}
	}
}
