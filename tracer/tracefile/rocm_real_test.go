package tracefile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// Real ROCm profiler output from public repositories, read where a
// developer extracted it (never committed): the directory named by
// RLKTOP_REAL_ROCM_TRACES, default /tmp/rlktop-real-rocm. Each file is one
// blob of one commit; extract it with
//
//	git -C <clone> show <commit>:<path> > /tmp/rlktop-real-rocm/<name>
//
//	name                            repository                     path                                commit
//	batched_gemm_28_results.db      HGLiu1998/batched_gemm         ck_bmm/37ca13315e70/28_results.db   c44b83a9a0829ae6b319a1d28ff9ab6e9582af65
//	hipprog_results.json            shashankparsi/HIP_Programming  results.json                        4a4d63d0351bee94b43c1d1f60c019b6608d7195
//	hipprog_results.db              shashankparsi/HIP_Programming  results.db                          4a4d63d0351bee94b43c1d1f60c019b6608d7195
//	hpctraining_fd_results.db       amd/HPCTrainingExamples        rocm-blogs-codes/finite-difference/examples/results.db   83f341a8d791876f515f7cf3bc41b5f6f7ad7ac5
//	hpctraining_ss_results.db       amd/HPCTrainingExamples        rocm-blogs-codes/seismic-stencils/examples/.xr/13-12-2023_15:20:58_stencils_R_4_vec_2.x_512_512_512_100_64_64_1/results.db   83f341a8d791876f515f7cf3bc41b5f6f7ad7ac5
//	kokkos_results_99e028f3.json    dalg24/kokkos                  results.json                        99e028f3f7da01bcb65876cebabe8fbe5a2c36e8
//	kokkos_results_8361a6b7.json    dalg24/kokkos                  results.json                        8361a6b7e50ccb24afe9a05c8e77421788570b91
//	kokkos_results_7d43b67a.json    dalg24/kokkos                  results.json                        7d43b67afaf5e78d50269f83156d95597cbd3f19
//	kokkos_results_6f0a1c4a.json    dalg24/kokkos                  results.json                        6f0a1c4ac372c2cdeabfe9fb96f3898a0fe3fabd
//	kokkos_results_b12edad5.json    dalg24/kokkos                  results.json                        b12edad5b8cac53dc28db8cf4214b6e189ed9382
//	kokkos_results_d60b181a.json    dalg24/kokkos                  results.json                        d60b181a398376b312447c98072edb03437c68ee
//
// batched_gemm_28_results.db is a released rocprofv3's rocpd database
// (schema_version 3, start/end columns, MI300X); the .json files are rocprof
// v1 --hip-trace results.json (MI300X with 5 GPUs; a 2021 ROCm with roctx
// ranges); the other .db files are rocprof v1's own results.db (HIP, OPS,
// COPY tables beside the .json; the HPCTrainingExamples ones only the
// --timestamp KERN table, 1,004 and 1,024 kernels).
// Expected totals are in testdata/rocm_real_ref.json, written by
// scripts/ref_rocprof_nsys.py --real (Python json/sqlite3, independent of
// the Go importers).

func realROCmDir() string {
	if d := os.Getenv("RLKTOP_REAL_ROCM_TRACES"); d != "" {
		return d
	}
	return "/tmp/rlktop-real-rocm"
}

type realRef struct {
	refTotals
	Linked int64  `json:"linked"`
	Format string `json:"format"`
}

// linkedOps counts GPU ops that share their correlation id with an API call.
func linkedOps(tr *tracer.Trace) int64 {
	calls := map[uint64]bool{}
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind.IsLaunch() && e.Corr != 0 {
			calls[e.Corr] = true
		}
	}
	var n int64
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind.IsGPU() && e.Corr != 0 && calls[e.Corr] {
			n++
		}
	}
	return n
}

func TestRealROCmFilesMatchReference(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "rocm_real_ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]realRef
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range ref {
		names = append(names, k)
	}
	sort.Strings(names)
	dir := realROCmDir()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err != nil {
				t.Skipf("%s not extracted (see the table in rocm_real_test.go for its repository, path and commit): %v", p, err)
			}
			tr, err := Open(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != ref[name].Format {
				t.Errorf("detected as %q, want %q", tr.Format, ref[name].Format)
			}
			got, exp := norm(totalsOf(tr)), norm(ref[name].refTotals)
			if !reflect.DeepEqual(got, exp) {
				gb, _ := json.MarshalIndent(got, "", " ")
				wb, _ := json.MarshalIndent(exp, "", " ")
				t.Errorf("totals differ\n got: %s\nwant: %s", gb, wb)
			}
			if n := linkedOps(tr); n != ref[name].Linked {
				t.Errorf("%d GPU ops linked to their launch call, reference %d", n, ref[name].Linked)
			}
			for _, w := range tr.Warnings {
				t.Errorf("unexpected warning %q", w)
			}
		})
	}
}
