package tracefile

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
)

// No real rocpd database is in shared/traces. These fixtures are built from
// the documented schema (ROCm/rocprofiler-sdk
// source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql and rocpd_views.sql,
// schema_version 3): GUID-suffixed tables, with or without the bare-name
// views, holding only the columns rlktop reads plus guid. Every expected
// value below is counted by hand from the INSERTs in rocpdRun.

// rocpdRun is one profiled run's rows for one GUID suffix. newer uses the
// later schema: categories in rocpd_info_category with perfetto-style
// lowercase names, and rocpd_string ids 10-15 holding unrelated strings (so
// that reading categories through rocpd_string would go wrong).
func rocpdRun(sfx, guid, pid string, newer bool) []string {
	tbl := func(n string) string { return "`" + n + "_" + sfx + "`" }
	q := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "GUID", "'"+guid+"'"), "4242", pid)
	}
	strTable := `CREATE TABLE ` + tbl("rocpd_string") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, string TEXT NOT NULL)`
	cats := []string{
		strTable,
		q(`INSERT INTO ` + tbl("rocpd_string") + ` VALUES (10,GUID,'HIP_RUNTIME_API'),(11,GUID,'MARKER_CORE_RANGE_API'),(12,GUID,'KERNEL_DISPATCH'),(13,GUID,'MEMORY_COPY'),(14,GUID,'MARKER_CORE_API')`),
	}
	if newer {
		cats = []string{
			strTable,
			q(`INSERT INTO ` + tbl("rocpd_string") + ` VALUES (10,GUID,'marker'),(11,GUID,'hip'),(12,GUID,'MARKER_CORE_API'),(13,GUID,'x'),(14,GUID,'HIP_RUNTIME_API')`),
			`CREATE TABLE ` + tbl("rocpd_info_category") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, name TEXT NOT NULL, extdata JSONB DEFAULT '{}' NOT NULL)`,
			q(`INSERT INTO ` + tbl("rocpd_info_category") + ` (id, guid, name) VALUES (10,GUID,'hip_api'),(11,GUID,'marker_api'),(12,GUID,'kernel_dispatch'),(13,GUID,'memory_copy'),(14,GUID,'marker_api')`),
		}
	}
	return append(cats, []string{
		`CREATE TABLE ` + tbl("rocpd_metadata") + ` (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, value TEXT NOT NULL)`,
		`INSERT INTO ` + tbl("rocpd_metadata") + ` (tag, value) VALUES ('schema_version','3'),('uuid','` + sfx + `')`,
		q(`INSERT INTO ` + tbl("rocpd_string") + ` VALUES (1,GUID,'hipLaunchKernel'),(2,GUID,'roctxRangePushA'),(3,GUID,'MEMORY_COPY_HOST_TO_DEVICE'),(15,GUID,'roctxMarkA')`),
		`CREATE TABLE ` + tbl("rocpd_info_agent") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, pid INTEGER, type TEXT,
			absolute_index INTEGER, logical_index INTEGER, type_index INTEGER, name TEXT, product_name TEXT)`,
		q(`INSERT INTO ` + tbl("rocpd_info_agent") + ` VALUES (1,GUID,1,4242,'CPU',0,0,0,'AMD EPYC 9654','AMD EPYC 9654'),
			(2,GUID,1,4242,'GPU',1,1,0,'gfx942','AMD Instinct MI300X')`),
		`CREATE TABLE ` + tbl("rocpd_info_kernel_symbol") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, code_object_id INTEGER, kernel_name TEXT, display_name TEXT)`,
		q(`INSERT INTO ` + tbl("rocpd_info_kernel_symbol") + ` VALUES (1,GUID,1,'_Z8attn_fwdPf.kd','attn_fwd'),(2,GUID,1,'Cijk_Alik_Bljk_HHS_BH','Cijk_Alik_Bljk_HHS_BH')`),
		`CREATE TABLE ` + tbl("rocpd_track") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, pid INTEGER, tid INTEGER,
			agent_id INTEGER, queue_id INTEGER, stream_id INTEGER, name_id INTEGER)`,
		q(`INSERT INTO ` + tbl("rocpd_track") + ` VALUES (1,GUID,1,4242,4243,NULL,NULL,NULL,NULL),(2,GUID,1,4242,4243,2,1,3,NULL)`),
		`CREATE TABLE ` + tbl("rocpd_timestamp") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, value BIGINT NOT NULL, phase INTEGER, track_id INTEGER)`,
		q(`INSERT INTO ` + tbl("rocpd_timestamp") + ` (id, guid, value) VALUES (1,GUID,100),(2,GUID,1000),(3,GUID,200),(4,GUID,250),(5,GUID,300),(6,GUID,320),
			(7,GUID,400),(8,GUID,900),(9,GUID,950),(10,GUID,1150),(11,GUID,1200),(12,GUID,1300),(13,GUID,500)`),
		`CREATE TABLE ` + tbl("rocpd_event") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, category_id INTEGER, stack_id INTEGER, parent_stack_id INTEGER,
			correlation_id INTEGER, call_stack JSONB DEFAULT '{}' NOT NULL, line_info JSONB DEFAULT '{}' NOT NULL, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_event") + ` (id, guid, category_id, correlation_id, extdata) VALUES (1,GUID,10,7,'{}'),(2,GUID,12,7,'{}'),
			(3,GUID,11,0,'{"message":"forward"}'),(4,GUID,10,8,'{}'),(5,GUID,12,8,'{}'),(6,GUID,13,9,'{}'),(7,GUID,14,0,'{"message":"checkpoint"}')`),
		`CREATE TABLE ` + tbl("rocpd_region") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, track_id INTEGER NOT NULL, name_id INTEGER NOT NULL,
			start_id INTEGER NOT NULL, end_id INTEGER NOT NULL, event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_region") + ` (id, guid, track_id, name_id, start_id, end_id, event_id) VALUES
			(1,GUID,1,2,1,2,3),(2,GUID,1,1,3,4,1),(3,GUID,1,1,5,6,4)`),
		`CREATE TABLE ` + tbl("rocpd_sample") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, track_id INTEGER NOT NULL, name_id INTEGER NOT NULL,
			timestamp_id INTEGER NOT NULL, event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_sample") + ` (id, guid, track_id, name_id, timestamp_id, event_id) VALUES (1,GUID,1,15,13,7)`),
		`CREATE TABLE ` + tbl("rocpd_kernel_dispatch") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, track_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,
			dispatch_id INTEGER NOT NULL, start_id INTEGER NOT NULL, end_id INTEGER NOT NULL, workgroup_size_x INTEGER NOT NULL, grid_size_x INTEGER NOT NULL,
			region_name_id INTEGER, event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_kernel_dispatch") + ` (id, guid, track_id, kernel_id, dispatch_id, start_id, end_id, workgroup_size_x, grid_size_x, event_id) VALUES
			(1,GUID,2,1,1,7,8,256,65536,2),(2,GUID,2,2,2,9,10,256,1024,5)`),
		`CREATE TABLE ` + tbl("rocpd_memory_copy") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, track_id INTEGER NOT NULL, start_id INTEGER NOT NULL,
			end_id INTEGER NOT NULL, name_id INTEGER NOT NULL, dst_agent_id INTEGER, src_agent_id INTEGER, size INTEGER NOT NULL, event_id INTEGER,
			extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_memory_copy") + ` (id, guid, track_id, start_id, end_id, name_id, dst_agent_id, src_agent_id, size, event_id) VALUES
			(1,GUID,2,11,12,3,2,1,1048576,6)`),
	}...)
}

var rocpdBase = []string{"rocpd_metadata", "rocpd_string", "rocpd_info_agent", "rocpd_info_kernel_symbol", "rocpd_track", "rocpd_timestamp",
	"rocpd_event", "rocpd_region", "rocpd_sample", "rocpd_kernel_dispatch", "rocpd_memory_copy"}

// buildRocpdFixture writes a database with one run per suffix; views adds
// rocprofv3's bare-name views over the first run's tables.
func buildRocpdFixture(tb testing.TB, views bool, suffixes ...string) string {
	return buildRocpdFixtureSchema(tb, views, false, suffixes...)
}

func buildRocpdFixtureSchema(tb testing.TB, views, newer bool, suffixes ...string) string {
	db, p := newDB(tb, "run.db")
	for i, sfx := range suffixes {
		execAll(tb, db, rocpdRun(sfx, "guid-"+string(rune('a'+i)), strconv.Itoa(4242+1010*i), newer)...)
	}
	if views {
		base := rocpdBase
		if newer {
			base = append(base[:len(base):len(base)], "rocpd_info_category")
		}
		for _, b := range base {
			execAll(tb, db, "CREATE VIEW `"+b+"` AS SELECT * FROM `"+b+"_"+suffixes[0]+"`")
		}
	}
	db.Close()
	return p
}

func checkRocpdRun(t *testing.T, tr *tracer.Trace, runs int64) {
	t.Helper()
	if tr.Format != "rocpd-sqlite" || tr.Meta["schema_version"] != "3" {
		t.Errorf("format %q meta %v", tr.Format, tr.Meta)
	}
	got := norm(totalsOf(tr))
	want := norm(refTotals{
		Kernels:  refGroup{Count: 2 * runs, NS: (500 + 200) * runs, ByName: map[string][2]int64{"attn_fwd": {runs, 500 * runs}, "Cijk_Alik_Bljk_HHS_BH": {runs, 200 * runs}}},
		Memcpy:   refGroup{Count: runs, NS: 100 * runs, Bytes: 1048576 * runs},
		Ranges:   refGroup{Count: runs, NS: 900 * runs, ByName: map[string][2]int64{"forward": {runs, 900 * runs}}},
		Instants: runs,
		Runtime:  2 * runs,
	})
	if !reflectDeep(got, want) {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Kind {
		case tracer.KindKernel:
			// Launched by hipLaunchKernel at 200 (corr 7) and 300 (corr 8),
			// both inside the roctx range "forward" [100, 1000).
			if r := rangesOf(tr, e); !slices.Equal(r, []string{"forward"}) || e.Device != 0 || e.Stream != 3 || (e.PID != 4242 && e.PID != 5252) || e.TID != 4243 {
				t.Errorf("kernel %q: ranges %v, %+v", tr.Name(e), r, *e)
			}
		case tracer.KindMemcpy:
			if e.Device != 0 || tr.Name(e) != "MEMORY_COPY_HOST_TO_DEVICE" || e.Corr&(1<<48-1) != 9 {
				t.Errorf("memcpy %+v", *e)
			}
		case tracer.KindInstant:
			if tr.Name(e) != "checkpoint" || e.Start != 500 {
				t.Errorf("instant %q %+v", tr.Name(e), *e)
			}
		}
	}
	if len(tr.Devices) != 1 || tr.Devices[0].Name != "AMD Instinct MI300X" || tr.Devices[0].ComputeCap != "gfx942" {
		t.Errorf("devices %+v", tr.Devices)
	}
}

func TestRocpdViews(t *testing.T) {
	p := buildRocpdFixture(t, true, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e")
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRocpdRun(t, tr, 1)
}

// Two runs (pids 4242 and 5252, the same correlation ids) merged into one
// file, no bare-name views: the reader unions the GUID-suffixed tables,
// joins within each guid, and gives each run its own correlation-id space.
func TestRocpdMergedNoViews(t *testing.T) {
	p := buildRocpdFixture(t, false, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e", "0000ffee_ddcc_bbaa_9988_776655443322")
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRocpdRun(t, tr, 2)
}

func TestRocpdGzip(t *testing.T) {
	p := buildRocpdFixture(t, true, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	tr, err := Read(&z, "run.db.gz", int64(z.Len()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRocpdRun(t, tr, 1)
}

// The later rocpd schema: categories through rocpd_info_category.
func TestRocpdCategoryTable(t *testing.T) {
	for _, views := range []bool{true, false} {
		p := buildRocpdFixtureSchema(t, views, true, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e")
		tr, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkRocpdRun(t, tr, 1)
	}
}

// rocpdRunReleased is rocpdRun's run in the layout released rocprofv3
// writes (ROCm 6.4–7.2, schema 3.0.x; column lists copied from a real
// rocprofv3 database, HGLiu1998/batched_gemm ck_bmm/37ca13315e70/28_results.db
// at c44b83a9): start/end and pid/tid in the data tables themselves, no
// rocpd_timestamp, rocpd_sample with a timestamp column and its name on the
// track, categories in rocpd_string. The internal correlation id is in
// rocpd_event.stack_id and correlation_id holds the external id, here 1 on
// every event, so a reader that linked on correlation_id would pair every
// kernel with every call. Same times, names and ids as rocpdRun, so
// checkRocpdRun's hand counts hold.
func rocpdRunReleased(sfx, guid, pid string) []string {
	tbl := func(n string) string { return "`" + n + "_" + sfx + "`" }
	q := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "GUID", "'"+guid+"'"), "4242", pid)
	}
	return []string{
		`CREATE TABLE ` + tbl("rocpd_metadata") + ` (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, value TEXT NOT NULL)`,
		`INSERT INTO ` + tbl("rocpd_metadata") + ` (tag, value) VALUES ('schema_version','3'),('uuid','_` + sfx + `'),('guid','` + guid + `')`,
		`CREATE TABLE ` + tbl("rocpd_string") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, string TEXT NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_string") + ` VALUES (1,GUID,'hipLaunchKernel'),(2,GUID,'roctxRangePushA'),(3,GUID,'MEMORY_COPY_HOST_TO_DEVICE'),
			(10,GUID,'HIP_RUNTIME_API_EXT'),(11,GUID,'MARKER_CORE_RANGE_API'),(12,GUID,'KERNEL_DISPATCH'),(13,GUID,'MEMORY_COPY'),(14,GUID,'MARKER_CORE_API'),(15,GUID,'roctxMarkA')`),
		`CREATE TABLE ` + tbl("rocpd_info_process") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, ppid INTEGER, pid INTEGER, init BIGINT, fini BIGINT,
			start BIGINT, end BIGINT, command TEXT, environment JSONB DEFAULT '{}' NOT NULL, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_info_process") + ` (id, guid, nid, ppid, pid) VALUES (4242,GUID,1,1,4242)`),
		`CREATE TABLE ` + tbl("rocpd_info_thread") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, ppid INTEGER, pid INTEGER, tid INTEGER, name TEXT,
			start BIGINT, end BIGINT, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_info_thread") + ` (id, guid, nid, ppid, pid, tid) VALUES (4243,GUID,1,1,4242,4243)`),
		`CREATE TABLE ` + tbl("rocpd_info_agent") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, pid INTEGER, type TEXT, absolute_index INTEGER,
			logical_index INTEGER, type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, vendor_name TEXT, product_name TEXT, user_name TEXT, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_info_agent") + ` (id, guid, nid, pid, type, absolute_index, logical_index, type_index, name, product_name) VALUES
			(1,GUID,1,4242,'CPU',0,0,0,'AMD EPYC 9654','AMD EPYC 9654'),(2,GUID,1,4242,'GPU',1,1,0,'gfx942','AMD Instinct MI300X')`),
		`CREATE TABLE ` + tbl("rocpd_info_kernel_symbol") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, pid INTEGER, code_object_id INTEGER,
			kernel_name TEXT, display_name TEXT, kernel_object INTEGER, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_info_kernel_symbol") + ` (id, guid, code_object_id, kernel_name, display_name) VALUES
			(1,GUID,1,'_Z8attn_fwdPf.kd','attn_fwd'),(2,GUID,1,'Cijk_Alik_Bljk_HHS_BH','Cijk_Alik_Bljk_HHS_BH')`),
		`CREATE TABLE ` + tbl("rocpd_track") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER, pid INTEGER, tid INTEGER, name_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_track") + ` (id, guid, nid, pid, tid, name_id) VALUES (1,GUID,1,4242,4243,14)`),
		`CREATE TABLE ` + tbl("rocpd_event") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, category_id INTEGER, stack_id INTEGER, parent_stack_id INTEGER,
			correlation_id INTEGER, call_stack JSONB DEFAULT '{}' NOT NULL, line_info JSONB DEFAULT '{}' NOT NULL, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_event") + ` (id, guid, category_id, stack_id, parent_stack_id, correlation_id, extdata) VALUES
			(1,GUID,10,7,7,1,'{}'),(2,GUID,12,7,7,1,'{}'),(3,GUID,11,5,5,1,'{"message":"forward"}'),(4,GUID,10,8,8,1,'{}'),(5,GUID,12,8,8,1,'{}'),
			(6,GUID,13,9,9,1,'{}'),(7,GUID,14,6,6,1,'{"message":"checkpoint"}')`),
		`CREATE TABLE ` + tbl("rocpd_region") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL,
			start BIGINT NOT NULL, end BIGINT NOT NULL, name_id INTEGER NOT NULL, event_id INTEGER, extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_region") + ` (id, guid, nid, pid, tid, start, end, name_id, event_id) VALUES
			(5,GUID,1,4242,4243,100,1000,2,3),(7,GUID,1,4242,4243,200,250,1,1),(8,GUID,1,4242,4243,300,320,1,4)`),
		`CREATE TABLE ` + tbl("rocpd_sample") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, track_id INTEGER NOT NULL, timestamp BIGINT NOT NULL, event_id INTEGER,
			extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_sample") + ` (id, guid, track_id, timestamp, event_id) VALUES (6,GUID,1,500,7)`),
		`CREATE TABLE ` + tbl("rocpd_kernel_dispatch") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER,
			agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL, queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL,
			start BIGINT NOT NULL, end BIGINT NOT NULL, private_segment_size INTEGER, group_segment_size INTEGER,
			workgroup_size_x INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL,
			grid_size_x INTEGER NOT NULL, grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL, region_name_id INTEGER, event_id INTEGER,
			extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_kernel_dispatch") + ` (id, guid, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end,
			workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id) VALUES
			(1,GUID,1,4242,4243,2,1,1,1,3,400,900,256,1,1,65536,1,1,2),(2,GUID,1,4242,4243,2,2,2,1,3,950,1150,256,1,1,1024,1,1,5)`),
		`CREATE TABLE ` + tbl("rocpd_memory_copy") + ` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER,
			start BIGINT NOT NULL, end BIGINT NOT NULL, name_id INTEGER NOT NULL, dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER,
			src_address INTEGER, size INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER, region_name_id INTEGER, event_id INTEGER,
			extdata JSONB DEFAULT '{}' NOT NULL)`,
		q(`INSERT INTO ` + tbl("rocpd_memory_copy") + ` (id, guid, nid, pid, tid, start, end, name_id, dst_agent_id, src_agent_id, size, stream_id, event_id) VALUES
			(1,GUID,1,4242,4243,1200,1300,3,2,1,1048576,3,6)`),
	}
}

var rocpdReleasedBase = []string{"rocpd_metadata", "rocpd_string", "rocpd_info_process", "rocpd_info_thread", "rocpd_info_agent",
	"rocpd_info_kernel_symbol", "rocpd_track", "rocpd_event", "rocpd_region", "rocpd_sample", "rocpd_kernel_dispatch", "rocpd_memory_copy"}

func buildRocpdReleased(tb testing.TB, views bool, suffixes ...string) string {
	db, p := newDB(tb, "released.db")
	for i, sfx := range suffixes {
		execAll(tb, db, rocpdRunReleased(sfx, "guid-"+string(rune('a'+i)), strconv.Itoa(4242+1010*i))...)
	}
	if views {
		for _, b := range rocpdReleasedBase {
			execAll(tb, db, "CREATE VIEW `"+b+"` AS SELECT * FROM `"+b+"_"+suffixes[0]+"`")
		}
	}
	db.Close()
	return p
}

// The released rocprofv3 layout reads as the development one does: same
// kernels, copy, range, instant and calls, kernels linked to their
// hipLaunchKernel by stack_id (so inside "forward"), with and without the
// bare-name views, one run and two merged.
func TestRocpdReleasedSchema(t *testing.T) {
	for _, c := range []struct {
		views bool
		sfx   []string
	}{
		{true, []string{"00003fdc_92cb_72cb_9169_c7e541b1fcdf"}},
		{false, []string{"00003fdc_92cb_72cb_9169_c7e541b1fcdf", "00003fdd_0000_7000_8000_0123456789ab"}},
	} {
		tr, err := Open(buildRocpdReleased(t, c.views, c.sfx...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkRocpdRun(t, tr, int64(len(c.sfx)))
		// Each kernel shares its correlation id with exactly one call:
		// stack_id 7 and 8, never the external id 1.
		calls := map[uint64]int{}
		for i := range tr.Events {
			if e := &tr.Events[i]; e.Kind == tracer.KindRuntime {
				calls[e.Corr]++
			}
		}
		for i := range tr.Events {
			if e := &tr.Events[i]; e.Kind == tracer.KindKernel {
				if c := e.Corr & (1<<48 - 1); (c != 7 && c != 8) || calls[e.Corr] != 1 {
					t.Errorf("kernel %q corr %d (%d calls share it)", tr.Name(e), c, calls[e.Corr])
				}
			}
		}
		for _, w := range tr.Warnings {
			t.Errorf("unexpected warning %q", w)
		}
	}
}

// A rocpd database with calls but no GPU rows, and one whose dispatch
// table has neither layout's time columns: the warning names the importer,
// counts the rows of each table (regions by category) and says which
// columns the unreadable table has. Counts by hand from the INSERTs.
func TestRocpdNoGPUWarning(t *testing.T) {
	sfx := "00003fdc_92cb_72cb_9169_c7e541b1fcdf"
	stmts := rocpdRunReleased(sfx, "g", "4242")
	var keep []string
	for _, s := range stmts {
		if !strings.Contains(s, "rocpd_kernel_dispatch") && !strings.Contains(s, "rocpd_memory_copy") {
			keep = append(keep, s)
		}
	}
	db, p := newDB(t, "calls.db")
	execAll(t, db, keep...)
	execAll(t, db, "CREATE TABLE `rocpd_kernel_dispatch_"+sfx+"` (id INTEGER PRIMARY KEY, guid TEXT NOT NULL, kernel_id INTEGER, begin_ns BIGINT, finish_ns BIGINT)",
		"INSERT INTO `rocpd_kernel_dispatch_"+sfx+"` VALUES (1,'g',1,400,900),(2,'g',2,950,1150)")
	db.Close()
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w string
	for _, x := range tr.Warnings {
		if strings.Contains(x, noGPUWarn) {
			w = x
		}
	}
	for _, want := range []string{
		"by the rocpd-sqlite importer",
		"rocpd_kernel_dispatch 2 rows",
		"rocpd_memory_copy absent",
		"rocpd_region 3 rows (HIP_RUNTIME_API_EXT 2, MARKER_CORE_RANGE_API 1)",
		"rocpd_sample 1 rows",
		"rocpd_kernel_dispatch has neither start/end nor start_id/end_id with rocpd_timestamp (columns: begin_ns, finish_ns, guid, id, kernel_id)",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q:\n%s", want, w)
		}
	}
}

// The schema rocm-systems calls 4.1.0 (projects/rocprofiler-sdk/source/
// share/rocprofiler-sdk-rocpd/versions/4.1.0/rocpd_tables.sql) mixes the
// two: start/end in the data tables and rocpd_sample.timestamp, but pid,
// tid, agent, queue and stream on rocpd_track and categories in
// rocpd_info_category. Built from the development fixture by resolving its
// rocpd_timestamp ids into columns and dropping that table, so the same
// hand counts hold.
func TestRocpdSchema41(t *testing.T) {
	sfx := "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e"
	db, p := newDB(t, "v41.db")
	execAll(t, db, rocpdRun(sfx, "guid-a", "4242", true)...)
	tb := func(n string) string { return "`" + n + "_" + sfx + "`" }
	ts := tb("rocpd_timestamp")
	execAll(t, db,
		`CREATE TABLE r41 AS SELECT X.id, X.guid, X.track_id, X.name_id, S.value AS start, E.value AS "end", X.event_id, X.extdata FROM `+tb("rocpd_region")+
			` X JOIN `+ts+` S ON S.id = X.start_id JOIN `+ts+` E ON E.id = X.end_id`,
		`CREATE TABLE k41 AS SELECT X.id, X.guid, X.track_id, X.kernel_id, X.dispatch_id, S.value AS start, E.value AS "end", X.workgroup_size_x, X.grid_size_x, X.region_name_id, X.event_id, X.extdata FROM `+
			tb("rocpd_kernel_dispatch")+` X JOIN `+ts+` S ON S.id = X.start_id JOIN `+ts+` E ON E.id = X.end_id`,
		`CREATE TABLE m41 AS SELECT X.id, X.guid, X.track_id, S.value AS start, E.value AS "end", X.name_id, X.dst_agent_id, X.src_agent_id, X.size, X.event_id, X.extdata FROM `+
			tb("rocpd_memory_copy")+` X JOIN `+ts+` S ON S.id = X.start_id JOIN `+ts+` E ON E.id = X.end_id`,
		`CREATE TABLE s41 AS SELECT X.id, X.guid, X.track_id, X.name_id, S.value AS timestamp, X.event_id, X.extdata FROM `+tb("rocpd_sample")+` X JOIN `+ts+` S ON S.id = X.timestamp_id`,
		`DROP TABLE `+tb("rocpd_region"), `DROP TABLE `+tb("rocpd_kernel_dispatch"), `DROP TABLE `+tb("rocpd_memory_copy"), `DROP TABLE `+tb("rocpd_sample"), `DROP TABLE `+ts,
		`ALTER TABLE r41 RENAME TO `+tb("rocpd_region"), `ALTER TABLE k41 RENAME TO `+tb("rocpd_kernel_dispatch"),
		`ALTER TABLE m41 RENAME TO `+tb("rocpd_memory_copy"), `ALTER TABLE s41 RENAME TO `+tb("rocpd_sample"))
	db.Close()
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRocpdRun(t, tr, 1)
}
