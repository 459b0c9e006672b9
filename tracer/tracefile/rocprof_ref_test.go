package tracefile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// refTotals mirrors one file's entry in testdata/rocprof_nsys_ref.json,
// written by scripts/ref_rocprof_nsys.py (Python stdlib csv/sqlite3/json,
// independent of the Go importers).
type refTotals struct {
	Kernels  refGroup            `json:"kernels"`
	Memcpy   refGroup            `json:"memcpy"`
	Memset   refGroup            `json:"memset"`
	Ranges   refGroup            `json:"ranges"`
	Instants int64               `json:"instants"`
	Runtime  int64               `json:"runtime"`
	Summary  map[string][2]int64 `json:"summary"`
}

type refGroup struct {
	Count  int64               `json:"count"`
	NS     int64               `json:"ns"`
	Bytes  int64               `json:"bytes,omitempty"`
	ByName map[string][2]int64 `json:"by_name,omitempty"`
}

func loadRef(t *testing.T) map[string]refTotals {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rocprof_nsys_ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]refTotals
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// totalsOf computes the same figures from an imported trace.
func totalsOf(tr *tracer.Trace) refTotals {
	var r refTotals
	r.Kernels.ByName = map[string][2]int64{}
	r.Ranges.ByName = map[string][2]int64{}
	r.Summary = map[string][2]int64{}
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Kind {
		case tracer.KindKernel:
			r.Kernels.Count++
			r.Kernels.NS += e.Dur
			c := r.Kernels.ByName[tr.Name(e)]
			r.Kernels.ByName[tr.Name(e)] = [2]int64{c[0] + 1, c[1] + e.Dur}
		case tracer.KindMemcpy:
			r.Memcpy.Count++
			r.Memcpy.NS += e.Dur
			r.Memcpy.Bytes += e.Value
		case tracer.KindMemset:
			r.Memset.Count++
			r.Memset.NS += e.Dur
			r.Memset.Bytes += e.Value
		case tracer.KindRange:
			r.Ranges.Count++
			r.Ranges.NS += e.Dur
			c := r.Ranges.ByName[tr.Name(e)]
			r.Ranges.ByName[tr.Name(e)] = [2]int64{c[0] + 1, c[1] + e.Dur}
		case tracer.KindInstant:
			r.Instants++
		case tracer.KindRuntime, tracer.KindDriver:
			r.Runtime++
		}
	}
	for _, s := range tr.Summary {
		r.Summary[s.Name] = [2]int64{s.Count, s.TotalNs}
	}
	return r
}

func norm(r refTotals) refTotals {
	if len(r.Kernels.ByName) == 0 {
		r.Kernels.ByName = nil
	}
	if len(r.Ranges.ByName) == 0 {
		r.Ranges.ByName = nil
	}
	if len(r.Summary) == 0 {
		r.Summary = nil
	}
	r.Memcpy.ByName, r.Memset.ByName = nil, nil
	return r
}

// TestSharedTracesMatchReference opens every file under shared
// traces/rocprof and traces/nsys through Open (content detection) and
// compares its totals with the Python reference.
func TestSharedTracesMatchReference(t *testing.T) {
	dir := testutil.SharedTraces(t)
	ref := loadRef(t)
	var keys []string
	for k := range ref {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := 0
	for _, sub := range []string{"rocprof", "nsys"} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range ents {
			key := sub + "/" + ent.Name()
			want, ok := ref[key]
			if !ok {
				t.Errorf("%s has no reference entry; rerun scripts/ref_rocprof_nsys.py", key)
				continue
			}
			seen++
			t.Run(key, func(t *testing.T) {
				tr, err := Open(filepath.Join(dir, key), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if want, ok := sharedFormats[key]; !ok || tr.Format != want {
					t.Errorf("detected as %q, want %q", tr.Format, want)
				}
				got := norm(totalsOf(tr))
				want := norm(want)
				if !reflect.DeepEqual(got, want) {
					gb, _ := json.MarshalIndent(got, "", " ")
					wb, _ := json.MarshalIndent(want, "", " ")
					t.Errorf("format %s: totals differ\n got: %s\nwant: %s", tr.Format, gb, wb)
				}
			})
		}
	}
	if seen != len(keys) {
		t.Errorf("reference lists %d files, found %d", len(keys), seen)
	}
}

// sharedFormats is what content detection must decide for each shared file.
var sharedFormats = map[string]string{
	"nsys/pipit_nbody_nvtx_stats.csv":              "nsys-stats-csv",
	"nsys/pipit_saxpy_mpi_nsys2022.sqlite":         "nsys-sqlite",
	"rocprof/MI200_timestamps_rocprofv1style.csv":  "rocprof-csv",
	"rocprof/MI300X_timestamps_rocprofv2style.csv": "rocprof-csv",
	"rocprof/hip_api_stats_2024.csv":               "rocprofv3-csv",
	"rocprof/kernel_trace_2024.csv":                "rocprofv3-csv",
	"rocprof/kernel_trace_2025.csv":                "rocprofv3-csv",
	"rocprof/kernel_trace_truncated.csv":           "rocprofv3-csv",
	"rocprof/marker_api_trace_2024.csv":            "rocprofv3-csv",
	"rocprof/memory_copy_trace_2024.csv":           "rocprofv3-csv",
}

// BenchmarkImportNsysSQLite: the 1.6 MB nsys 2022 export through Open.
func BenchmarkImportNsysSQLite(b *testing.B) {
	p := filepath.Join(testutil.SharedTraces(b), "nsys", "pipit_saxpy_mpi_nsys2022.sqlite")
	for b.Loop() {
		if _, err := Open(p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportRocprofCSV: a 100,000-row rocprofv3 kernel_trace.csv
// (2025 layout) built from the shared file's rows, through Read.
func BenchmarkImportRocprofCSV(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(testutil.SharedTraces(b), "rocprof", "kernel_trace_2025.csv"))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	var buf strings.Builder
	buf.WriteString(lines[0] + "\n")
	for i := 0; i < 100000; i++ {
		buf.WriteString(lines[1+i%(len(lines)-1)] + "\n")
	}
	in := buf.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Read(strings.NewReader(in), "bench.csv", int64(len(in)), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
