package tracefile

import (
	"bytes"
	"io"

	"errors"
	"github.com/klauspost/compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// OpenAll keeps input order and per-file errors on 1 and 2 workers: each
// result is the file Open reads alone (same path, format, event count and
// kernel nanoseconds), a missing file in the middle gets its own *Error
// and leaves the others read.
func TestOpenAllOrderAndErrors(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	paths := []string{
		filepath.Join(dir, "hta_ns_resolution_v100.json.gz"),
		filepath.Join(dir, "hta_triton_example.json.gz"),
		filepath.Join(t.TempDir(), "missing.json"),
		filepath.Join(dir, "kineto_sync_after_fix.json"),
		filepath.Join(dir, "hta_sampled_rank0.json.gz"),
	}
	type sum struct {
		events   int
		kernelNs int64
	}
	summarize := func(tr *tracer.Trace) sum {
		var s sum
		s.events = len(tr.Events)
		for _, e := range tr.Events {
			if e.Kind == tracer.KindKernel {
				s.kernelNs += e.Dur
			}
		}
		return s
	}
	want := make([]sum, len(paths))
	for i, p := range paths {
		if i == 2 {
			continue
		}
		tr, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = summarize(tr)
	}
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		traces, errs := OpenAll(paths, Options{})
		runtime.GOMAXPROCS(old)
		if len(traces) != len(paths) || len(errs) != len(paths) {
			t.Fatalf("GOMAXPROCS=%d: %d traces, %d errors for %d paths", procs, len(traces), len(errs), len(paths))
		}
		for i, p := range paths {
			if i == 2 {
				var fe *Error
				if traces[i] != nil || !errors.As(errs[i], &fe) || fe.Path != p || !errors.Is(errs[i], os.ErrNotExist) {
					t.Errorf("GOMAXPROCS=%d: missing file: trace %v, error %v; want nil and a *Error naming %s", procs, traces[i], errs[i], p)
				}
				continue
			}
			if errs[i] != nil {
				t.Errorf("GOMAXPROCS=%d: %s: %v", procs, p, errs[i])
				continue
			}
			if traces[i].Path != p {
				t.Errorf("GOMAXPROCS=%d: traces[%d] is %s, want %s", procs, i, traces[i].Path, p)
			}
			if got := summarize(traces[i]); got != want[i] {
				t.Errorf("GOMAXPROCS=%d: %s: %+v, want %+v (Open alone)", procs, p, got, want[i])
			}
		}
	}
}

// OpenAll's progress sums the files: never concurrent, never decreasing,
// and its size is the files' summed size on disk (two 9.6 MB files of six
// copies of hta_sampled_rank0, each past the 8 MiB step).
func TestOpenAllProgress(t *testing.T) {
	src := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_sampled_rank0.json.gz")
	raw := gunzipFile(t, src)
	dir := t.TempDir()
	var paths []string
	var total int64
	for _, name := range []string{"a.json", "b.json"} {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		n, err := ReplicateKineto(f, raw, 6)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		paths, total = append(paths, p), total+n
	}
	if total < 2*(8<<20) {
		t.Fatalf("fixture too small to report progress: %d bytes", total)
	}
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	var inside, calls int
	var last int64
	_, errs := OpenAll(paths, Options{Progress: func(n, size int64) {
		inside++
		if inside > 1 {
			t.Error("progress called concurrently")
		}
		if n < last || n > size || size != total {
			t.Errorf("progress(%d, %d) after %d; want a non-decreasing sum <= %d", n, size, last, total)
		}
		calls, last = calls+1, n
		inside--
	}})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if calls < 2 {
		t.Errorf("progress called %d times over two files of %d bytes; want >= 2", calls, total)
	}
}

// gunzipFile returns the uncompressed bytes of a .gz file.
func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}
