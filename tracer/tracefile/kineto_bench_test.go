package tracefile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// benchKinetoFile builds (once, cached in the temp dir) a trace of copies
// copies of the shared A100 trace (28 MB uncompressed each) and returns its
// path and size.
func benchKinetoFile(b *testing.B, copies int) (string, int64) {
	return benchKinetoFileShape(b, copies, false)
}

// benchKinetoFileShape is benchKinetoFile; oneWindow writes the copies as
// one long window (ReplicateKinetoOneWindow).
func benchKinetoFileShape(b *testing.B, copies int, oneWindow bool) (string, int64) {
	b.Helper()
	src := filepath.Join(testutil.SharedTraces(b), "kineto", "hta_diff_control_a100.json.gz")
	out := filepath.Join(os.TempDir(), fmt.Sprintf("rlktop-kineto-bench-a100x%d.json", copies))
	replicate := ReplicateKineto
	if oneWindow {
		out = filepath.Join(os.TempDir(), fmt.Sprintf("rlktop-kineto-bench-a100x%d-one.json", copies))
		replicate = ReplicateKinetoOneWindow
	}
	if st, err := os.Stat(out); err == nil && st.Size() > 0 {
		return out, st.Size()
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.CreateTemp(os.TempDir(), "rlktop-kineto-bench-*.tmp")
	if err != nil {
		b.Fatal(err)
	}
	n, err := replicate(f, plain, copies)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		b.Fatal(err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		b.Fatal(err)
	}
	return out, n
}

// kernelTotals is the "attribute" half of the benchmark: per-kernel count
// and total ns, summed kernel ns and busy ns, straight from the events.
func kernelTotals(tr *tracer.Trace) (count, total, busy int64, names int) {
	type agg struct{ n, ns int64 }
	per := make(map[tracer.StrID]*agg)
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind != tracer.KindKernel {
			continue
		}
		a := per[e.Name]
		if a == nil {
			a = &agg{}
			per[e.Name] = a
		}
		a.n++
		a.ns += e.Dur
		count++
		total += e.Dur
	}
	return count, total, busyNs(tr), len(per)
}

// BenchmarkKinetoImport imports + attributes a ≥250 MB Kineto trace made
// by replicating a real one (9 copies of hta_diff_control_a100, 253 MB; 1
// copy under -short). MB/s is uncompressed JSON per wall second; MB/cpu-s
// per second of process CPU time (run with -cpu 1 for one core).
//
//	go test ./tracer/tracefile -run XXX -bench KinetoImport -benchtime 3x -cpu 1
func BenchmarkKinetoImport(b *testing.B) {
	copies := 9
	if testing.Short() {
		copies = 1
	}
	path, size := benchKinetoFile(b, copies)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := kProcessCPU()
	var events int
	for i := 0; i < b.N; i++ {
		tr, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		c, _, _, _ := kernelTotals(tr)
		if c != int64(8568*copies) {
			b.Fatalf("kernel count %d, want %d", c, 8568*copies)
		}
		events = len(tr.Events)
	}
	b.ReportMetric(float64(events), "events/op")
	// CPU time (user+system, all threads) per byte: the per-core figure,
	// which a busy machine distorts much less than wall time.
	if cpu := kProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// The replicated trace keeps every kernel: copies × the reference count and
// total (from testdata/kineto_expected.json, computed by
// scripts/ref_kineto.py), and per-copy busy time adds up because copies do
// not overlap in time.
func TestKinetoReplicate(t *testing.T) {
	src := filepath.Join(testutil.SharedTraces(t), "kineto", "kineto_sync_after_fix.json")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ReplicateKineto(&buf, raw, 3); err != nil {
		t.Fatal(err)
	}
	tr, err := Read(bytes.NewReader(buf.Bytes()), "x3.json", int64(buf.Len()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, total, busy, names := kernelTotals(tr)
	// Reference for one copy: 1 kernel of 20 ns.
	if c != 3 || total != 60 || busy != 60 || names != 1 {
		t.Errorf("x3: count %d total %d busy %d names %d", c, total, busy, names)
	}
	linked := 0
	for i := range tr.Events {
		if tr.Events[i].Kind == tracer.KindKernel && tr.Events[i].Ctx != 0 {
			linked++
		}
	}
	if linked != 3 {
		t.Errorf("%d of 3 kernels linked to their launch (ids not shifted?)", linked)
	}
}

// BenchmarkKinetoStream is BenchmarkKinetoImport's file read window by
// window (OpenStream: steps, linking, no event kept past its window), the
// kernels counted in the callback; peak memory is one copy's window.
//
//	go test ./tracer/tracefile -run XXX -bench 'Kineto(Import|Stream)' -benchtime 3x -cpu 1
func BenchmarkKinetoStream(b *testing.B) { benchKinetoStream(b, false) }

// BenchmarkKinetoStreamOneWindow: OpenStream of the same copies written as
// one long window, read in parts (linked while read, never held).
func BenchmarkKinetoStreamOneWindow(b *testing.B) { benchKinetoStream(b, true) }

func benchKinetoStream(b *testing.B, oneWindow bool) {
	copies := 9
	if testing.Short() {
		copies = 1
	}
	path, size := benchKinetoFileShape(b, copies, oneWindow)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := kProcessCPU()
	for i := 0; i < b.N; i++ {
		var c int64
		_, err := OpenStream(path, Options{}, func(w *Capture) error {
			for j := range w.Events {
				if w.Events[j].Kind == tracer.KindKernel {
					c++
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if c != int64(8568*copies) {
			b.Fatalf("kernel count %d, want %d", c, 8568*copies)
		}
	}
	if cpu := kProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// TestKinetoReplicateSteps: copy k's ProfilerStep#N ranges become
// ProfilerStep#(N + k × 6) for a trace of steps 1009–1014, so 3 copies hold
// steps 1009–1026, each named as often as its original (counted with
// encoding/json from the bytes, not by rlktop's reader), and Open cuts 18
// steps (before: 6, each holding three copies' GPU work).
func TestKinetoReplicateSteps(t *testing.T) {
	raw := gunzipFile(t, filepath.Join(testutil.SharedTraces(t), "kineto", "hta_diff_test_v100.json.gz"))
	count := func(b []byte) map[string]int {
		var doc struct {
			TraceEvents []struct {
				Name string `json:"name"`
			} `json:"traceEvents"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, e := range doc.TraceEvents {
			if strings.HasPrefix(e.Name, "ProfilerStep#") {
				n[e.Name]++
			}
		}
		return n
	}
	one := count(raw)
	if len(one) != 6 || one["ProfilerStep#1009"] == 0 || one["ProfilerStep#1014"] == 0 {
		t.Fatalf("the source's steps: %v (want ProfilerStep#1009–1014)", one)
	}
	var buf bytes.Buffer
	if _, err := ReplicateKineto(&buf, raw, 3); err != nil {
		t.Fatal(err)
	}
	got := count(buf.Bytes())
	want := map[string]int{}
	for name, c := range one {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, "ProfilerStep#"))
		for k := range 3 {
			want[fmt.Sprintf("ProfilerStep#%d", n+6*k)] = c
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("replicated step names %v, want %v", got, want)
	}
	tr, err := Read(bytes.NewReader(buf.Bytes()), "x3.json", int64(buf.Len()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := map[int64]bool{}
	for i := range tr.Events {
		if tr.Events[i].Kind == tracer.KindStep {
			steps[tr.Events[i].Value] = true
		}
	}
	if len(steps) != 18 || !steps[1009] || !steps[1026] {
		t.Errorf("Open cut %d steps (want 18: 1009–1026)", len(steps))
	}
}

// BenchmarkKinetoParallel reads BenchmarkKinetoImport's trace from memory
// in one pass and with the array parsed by one and by two goroutines
// beside the reading one (workers=2, 3; 3 is the default on two cores:
// parWorkers): MB/s is JSON per wall second,
// MB/cpu-s per second of process CPU time.
//
//	go test ./tracer/tracefile -run XXX -bench KinetoParallel -benchtime 3x
func BenchmarkKinetoParallel(b *testing.B) {
	copies := 9
	if testing.Short() {
		copies = 1
	}
	path, _ := benchKinetoFile(b, copies)
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			cpu0 := kProcessCPU()
			for b.Loop() {
				tr, err := Read(bytes.NewReader(raw), path, int64(len(raw)), Options{workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				if c, _, _, _ := kernelTotals(tr); c != int64(8568*copies) {
					b.Fatalf("kernel count %d, want %d", c, 8568*copies)
				}
			}
			if cpu := kProcessCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(len(raw))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
			}
		})
	}
}
