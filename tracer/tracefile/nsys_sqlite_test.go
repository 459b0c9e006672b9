package tracefile

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/steps"
)

func rangesOf(tr *tracer.Trace, e *tracer.Event) []string {
	var out []string
	for _, id := range tr.Contexts[e.Ctx].Ranges {
		out = append(out, tr.Strings.Get(id))
	}
	return out
}

// The shared nsys 2022.2 export (schema 2.9.1): facts read off the file
// with python3's sqlite3 (see scripts/ref_rocprof_nsys.py for the totals).
func TestNsysSQLiteSchema2(t *testing.T) {
	tr := openShared(t, "nsys/pipit_saxpy_mpi_nsys2022.sqlite")
	if tr.Format != "nsys-sqlite" || tr.Meta["schema_version"] != "2.9.1" || tr.Meta["nsys_metadata_table"] != "EXPORT_META_DATA" {
		t.Errorf("format %q schema %q table %q", tr.Format, tr.Meta["schema_version"], tr.Meta["nsys_metadata_table"])
	}
	if len(tr.Devices) != 1 {
		t.Fatalf("devices %+v", tr.Devices)
	}
	if d := tr.Devices[0]; d.Name != "NVIDIA A100-SXM4-40GB" || d.SMs != 108 || d.ComputeCap != "8.0" || d.TotalMemory != 42297524224 || d.ID != 0 {
		t.Errorf("device %+v", d)
	}
	// 95 runtime rows, 57 distinct (globalTid, correlationId): 38 merged.
	if tr.Meta["nsys_runtime_duplicates_merged"] != "38" {
		t.Errorf("merged duplicates %q, want 38", tr.Meta["nsys_runtime_duplicates_merged"])
	}
	n := 0
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Kind {
		case tracer.KindKernel:
			n++
			// pid from globalPid 302119223558144 >> 24 & 0xFFFFFF.
			if tr.Name(e) != "saxpy(double *, double *, double *, double, int)" || e.PID != 1230493 || e.Stream != 7 || e.Device != 0 {
				t.Errorf("kernel %q %+v", tr.Name(e), *e)
			}
			// Each saxpy launch (cudaLaunchKernel) sits inside an NVTX
			// "saxpy" push/pop range on the main thread.
			if r := rangesOf(tr, e); !slices.Equal(r, []string{"saxpy"}) {
				t.Errorf("kernel at %d: ranges %v, want [saxpy]", e.Start, r)
			}
		case tracer.KindRuntime:
			if e.PID != 1230493 || e.TID != 1230493 {
				t.Errorf("runtime pid/tid %d/%d", e.PID, e.TID)
			}
			// The eventClass 0 record ("…_v7000") is the one kept.
			if e.Corr == 140 && tr.Name(e) != "cudaLaunchKernel_v7000" {
				t.Errorf("corr 140 kept %q", tr.Name(e))
			}
		case tracer.KindDriver:
			if tr.Name(e) != "cuModuleGetLoadingMode" {
				t.Errorf("driver call %q", tr.Name(e))
			}
		}
	}
	if n != 5 {
		t.Errorf("%d kernels, want 5", n)
	}
}

// TestNsysSQLiteGzip: a gzipped export goes through the temporary-copy path
// and gives the same events.
func TestNsysSQLiteGzip(t *testing.T) {
	dir := testutil.SharedTraces(t)
	b, err := os.ReadFile(filepath.Join(dir, "nsys", "pipit_saxpy_mpi_nsys2022.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	p := filepath.Join(t.TempDir(), "export.sqlite.gz")
	if err := os.WriteFile(p, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := openShared(t, "nsys/pipit_saxpy_mpi_nsys2022.sqlite")
	if !reflectEqualTotals(totalsOf(a), totalsOf(want)) || len(a.Events) != len(want.Events) {
		t.Errorf("gzip import differs: %d events vs %d", len(a.Events), len(want.Events))
	}
}

func reflectEqualTotals(a, b refTotals) bool {
	x, y := norm(a), norm(b)
	return x.Kernels.Count == y.Kernels.Count && x.Kernels.NS == y.Kernels.NS && reflect.DeepEqual(x.Memcpy, y.Memcpy) &&
		x.Ranges.Count == y.Ranges.Count && x.Ranges.NS == y.Ranges.NS && x.Runtime == y.Runtime
}

func execAll(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
}

func newDB(t testing.TB, name string) (*sql.DB, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	return db, p
}

// A schema 3.x export. No real one is in shared/traces, so this fixture is
// hand-made from the export schema as NVIDIA documents it (metadata table
// META_DATA_EXPORT, names through StringIds, ENUM_NSYS_EVENT_CLASS,
// NVTX textId, a PyTorch "ProfilerStep#7" range); every expected value
// below is counted by hand from the INSERTs.
func TestNsysSQLiteSchema3Fixture(t *testing.T) {
	p := buildNsys3Fixture(t)
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != "nsys-sqlite" || tr.Meta["nsys_metadata_table"] != "META_DATA_EXPORT" || tr.Meta["EXPORT_SCHEMA_VERSION"] != "3.11.0" {
		t.Errorf("meta %v", tr.Meta)
	}
	got := norm(totalsOf(tr))
	want := norm(refTotals{
		Kernels: refGroup{Count: 2, NS: 2000 + 500, ByName: map[string][2]int64{
			"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)": {1, 2000},
			"triton_poi_fused_add_0": {1, 500},
		}},
		Memset: refGroup{Count: 1, NS: 100, Bytes: 4096},
		// "step 1" is named like a step, so it cuts the steps and
		// ProfilerStep#7 stays a plain range (steps.ApplyTrace, the rule
		// of live commands).
		Ranges: refGroup{Count: 3, NS: 7300 + 6200 + 100, ByName: map[string][2]int64{"ProfilerStep#7": {1, 7300}, "forward": {1, 6200},
			"nvtxt range": {1, 100}}},
		Instants: 1,
		Runtime:  2,
	})
	if !reflectDeep(got, want) {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
	if tr.StepRule != steps.RuleStepRanges {
		t.Errorf("step rule %q, want %q", tr.StepRule, steps.RuleStepRanges)
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		switch {
		case e.Kind == tracer.KindKernel && e.Corr == 10:
			// Launched outside "step 1": no step.
			if r := rangesOf(tr, e); !slices.Equal(r, []string{"ProfilerStep#7", "forward"}) || e.PID != 3430008 || tr.Contexts[e.Ctx].Step != -1 {
				t.Errorf("kernel 1: ranges %v pid %d step %d", r, e.PID, tr.Contexts[e.Ctx].Step)
			}
		case e.Kind == tracer.KindKernel && e.Corr == 11:
			if r := rangesOf(tr, e); !slices.Equal(r, []string{"ProfilerStep#7", "forward"}) || e.Stream != 13 || tr.Contexts[e.Ctx].Step != 1 {
				t.Errorf("kernel 2: ranges %v stream %d step %d", r, e.Stream, tr.Contexts[e.Ctx].Step)
			}
		case e.Kind == tracer.KindDriver:
			if tr.Name(e) != "cuLaunchKernel" || e.TID != 99 {
				t.Errorf("driver %q tid %d", tr.Name(e), e.TID)
			}
		}
	}
	if len(tr.Devices) != 1 || tr.Devices[0].ComputeCap != "9.0" || tr.Devices[0].SMs != 132 {
		t.Errorf("devices %+v", tr.Devices)
	}
}

func TestSQLiteBadInput(t *testing.T) {
	// An SQLite database that is neither nsys nor rocpd.
	db, p := newDB(t, "other.sqlite")
	execAll(t, db, `CREATE TABLE t (x INTEGER)`, `INSERT INTO t VALUES (1)`)
	db.Close()
	_, err := Open(p, Options{})
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrUnknownFormat) || !strings.Contains(te.Hint, "nsys export") || te.Path != p {
		t.Errorf("other SQLite: %v", err)
	}
	// A truncated database: the SQLite header and little else.
	b, err := os.ReadFile(filepath.Join(testutil.SharedTraces(t), "nsys", "pipit_saxpy_mpi_nsys2022.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{100, 4096, 70000} {
		tp := filepath.Join(t.TempDir(), "trunc.sqlite")
		os.WriteFile(tp, b[:n], 0o644)
		_, err = Open(tp, Options{})
		if !errors.As(err, &te) || te.Path != tp {
			t.Errorf("truncated at %d: %v", n, err)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func reflectDeep(a, b any) bool { return reflect.DeepEqual(a, b) }

// buildNsys3Fixture writes the hand-made schema 3.x export and returns its
// path.
func buildNsys3Fixture(tb testing.TB) string {
	db, p := newDB(tb, "nsys3.sqlite")
	const g = 305419896 << 24 // globalPid for pid 305419896&0xFFFFFF = 0x345678 = 3430008
	const gt = g + 99         // tid 99
	execAll(tb, db,
		`CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)`,
		`INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION','3.11.0'),('EXPORT_PRODUCT_VERSION','2025.1.1')`,
		`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO StringIds VALUES (1,'void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)'),
			(2,'flash_fwd_kernel'),(3,'_Z16flash_fwd_kernelv'),(4,'cudaLaunchKernel'),(5,'forward'),(6,'cuLaunchKernel'),(7,'triton_poi_fused_add_0')`,
		`CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT)`,
		`INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (0,'TRACE_PROCESS_EVENT_CUDA_RUNTIME','CUDA Runtime'),(1,'TRACE_PROCESS_EVENT_CUDA_DRIVER','CUDA Driver')`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
			streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
			gridX INTEGER, blockX INTEGER)`,
		// The second kernel's demangledName points nowhere: shortName is used.
		`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000,3000,0,1,7,10,`+itoa(g)+`,1,2,3,108,128),(5000,5500,0,1,13,11,`+itoa(g)+`,0,7,NULL,64,256)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
			correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900,1100,0,`+itoa(gt)+`,10,4,0,NULL),(4900,5100,1,`+itoa(gt)+`,11,6,0,NULL)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
			streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (6000,6100,0,1,7,12,`+itoa(g)+`,0,4096,NULL,1)`,
		`CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER,
			text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, jsonTextId INTEGER, jsonText TEXT)`,
		`INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,textId) VALUES
			(800,7000,59,NULL,`+itoa(gt)+`,5),(950,NULL,34,'mark here',`+itoa(gt)+`,NULL),(4800,5200,59,'step 1',`+itoa(gt)+`,NULL),
			(10,NULL,75,'my domain',`+itoa(gt)+`,NULL),(700,8000,59,'ProfilerStep#7',`+itoa(gt)+`,NULL),
			(7100,7200,70,'nvtxt range',`+itoa(gt)+`,NULL)`,
		`CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT)`,
		`INSERT INTO ENUM_NSYS_EVENT_TYPE (id, name) VALUES (34,'NvtxMark'),(59,'NvtxPushPopRange'),(60,'NvtxStartEndRange'),
			(70,'NvtxtPushPopRange'),(75,'NvtxDomainCreate')`,
		`CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, totalMemory INTEGER, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, cuDevice INTEGER)`,
		`INSERT INTO TARGET_INFO_GPU VALUES (0,'NVIDIA H100 80GB HBM3',85520809984,132,9,0,0)`,
	)
	db.Close()
	return p
}

// Two processes in one export reuse correlation id 10: each kernel must
// link to its own process's launch (and so to its own NVTX range).
func TestNsysSQLiteTwoProcesses(t *testing.T) {
	db, p := newDB(t, "mpi.sqlite")
	const g1, g2 = int64(1001) << 24, int64(2002) << 24
	execAll(t, db,
		`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO StringIds VALUES (1,'k'),(2,'cudaLaunchKernel')`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
			streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500,600,0,1,7,10,`+itoa(g1)+`,1,1),(500,700,1,1,7,10,`+itoa(g2)+`,1,1)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
			correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100,110,0,`+itoa(g1+5)+`,10,2,0),(300,310,0,`+itoa(g2+6)+`,10,2,0)`,
		`CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER, textId INTEGER)`,
		`INSERT INTO NVTX_EVENTS VALUES (50,200,59,'rank0 fwd',`+itoa(g1+5)+`,NULL),(250,400,59,'rank1 fwd',`+itoa(g2+6)+`,NULL)`,
	)
	db.Close()
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind != tracer.KindKernel {
			continue
		}
		want := map[int32]string{1001: "rank0 fwd", 2002: "rank1 fwd"}[e.PID]
		if r := rangesOf(tr, e); len(r) != 1 || r[0] != want {
			t.Errorf("kernel of pid %d: ranges %v, want [%s]", e.PID, r, want)
		}
		if e.Corr != 10|uint64(e.PID)<<40 {
			t.Errorf("corr %#x", e.Corr)
		}
	}
}
