package tracefile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

func noGPUWarning(ws []string) string {
	for _, w := range ws {
		if strings.Contains(w, noGPUWarn) {
			return w
		}
	}
	return ""
}

// HTA's CPU-only Kineto trace says itself that it is a CPU run: its
// deviceProperties is [] and its distributedInfo backend "gloo" (read
// with python3's json module), so it gets no warning about GPU work
// (the two warnings, one asking to report the
// file, came on every report of a gloo DDP job's rank files). The same
// trace edited to list a GPU, or to list none with the nccl backend, is
// not known to be a CPU run: the warning names the kineto importer and
// what it kept by kind. A count over the JSON (python3 json): 11 X events
// of cat user_annotation, one of them ProfilerStep#…, so range 10 + step 1;
// 4 cpu_op; 2 "i" instants; 1 X of cat "Trace" (unknown); 18 in all.
func TestNoGPUWarningCPUOnlyKineto(t *testing.T) {
	tr := openShared(t, "kineto/hta_cpu_only.json.gz")
	for _, w := range tr.Warnings {
		if strings.Contains(w, "GPU") {
			t.Errorf("a CPU run that says so warned: %q", w)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(must(os.ReadFile(filepath.Join(testutil.SharedTraces(t), "kineto", "hta_cpu_only.json.gz")))))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	const props, gloo = `"deviceProperties":[],`, `"backend":"gloo"`
	if !bytes.Contains(raw, []byte(props)) || !bytes.Contains(raw, []byte(gloo)) {
		t.Fatalf("hta_cpu_only no longer holds %s and %s", props, gloo)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name     string
		old, new string
		warn     bool
	}{
		{"gpu_listed", props, `"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-40GB"}],`, true},
		{"no_props_gloo", props, ``, false},
		{"no_props_nccl", props + `"distributedInfo":{` + gloo, `"distributedInfo":{"backend":"nccl"`, true},
	} {
		edited := bytes.Replace(raw, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(edited, raw) {
			t.Fatalf("%s: %q not found", c.name, c.old)
		}
		p := filepath.Join(dir, c.name+".json")
		os.WriteFile(p, edited, 0o644)
		tr, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := noGPUWarning(tr.Warnings)
		switch {
		case c.warn && !strings.Contains(w, "by the kineto importer; it found 18 events (range 10, cpu_op 4, instant 2, unknown 1, step 1)"):
			t.Errorf("%s: warning %q", c.name, w)
		case !c.warn && w != "":
			t.Errorf("%s: warned %q", c.name, w)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// rocprofv3 writes one CSV per domain: the marker file alone has no GPU
// work and says so; merged with the run's kernel file it does not.
func TestNoGPUWarningDroppedByMerge(t *testing.T) {
	m := openShared(t, "rocprof/marker_api_trace_2024.csv")
	if noGPUWarning(m.Warnings) == "" {
		t.Fatalf("marker file alone: warnings %q", m.Warnings)
	}
	k := openShared(t, "rocprof/kernel_trace_2024.csv")
	if w := noGPUWarning(Merge(m, k).Warnings); w != "" {
		t.Errorf("merged with kernels, still %q", w)
	}
}

// TestNoGPUWarningHostTables: the shared host-only tables say what they
// are and where the run's GPU work is, with what was read (data lines
// counted by hand: 17 HIP API rows, 131 NVTX ranges, 3 roctx ranges and 2
// markers), not that the file may be a variant rlktop misreads.
func TestNoGPUWarningHostTables(t *testing.T) {
	for _, c := range []struct{ file, found, what string }{
		{"rocprof/hip_api_stats_2024.csv", "17 summary rows, no events (runtime 17)", "table of host API calls"},
		{"nsys/pipit_nbody_nvtx_stats.csv", "131 events (range 131)", "table of NVTX ranges"},
		{"rocprof/marker_api_trace_2024.csv", "5 events (range 3, instant 2)", "table of roctx markers"},
	} {
		w := noGPUWarning(openShared(t, c.file).Warnings)
		if !strings.Contains(w, "it found "+c.found+". It is a "+c.what) || strings.Contains(w, "variant") {
			t.Errorf("%s: warning %q, want it found %s, a %s", c.file, w, c.found, c.what)
		}
	}
}
