package tracefile

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// A rocprof v1 results.json as bin/sqlitedb.py writes it with the
// --timestamp kernel table (dform.gen_kernel_json_trace: KernelName,
// gpu-id, queue-id, pid = 6 + gpu-id) besides HIP calls, a COPY fill, roctx
// ranges and a mark (EndNs = BeginNs + 1), a HIP marker packet, the
// DataFlow flows and an otherData with a duplicate key (real files repeat
// rocminfo keys). ts is relative to the first record and truncated to µs,
// BeginNs absolute. Expected values are the literals below.
const v1Fixture = `{ "traceEvents":[{}
,{"args":{"name":"Markers and Ranges"},"ph":"M","pid":0,"name":"process_name","sort_index":0}
,{"args":{"name":"CPU HIP API"},"ph":"M","pid":2,"name":"process_name","sort_index":1}
,{"args":{"name":"COPY"},"ph":"M","pid":1,"name":"process_name","sort_index":2}
,{"args":{"name":"GPU0"},"ph":"M","pid":6,"name":"process_name","sort_index":3}
,{"args":{"name":"GPU1"},"ph":"M","pid":7,"name":"process_name","sort_index":4}
,{"ph":"X","name":"train","pid":"0","tid":"500","ts":"0","dur":"100",
  "args":{
    "BeginNs":"1000000",
    "EndNs":"1100000",
    "pid":"0",
    "tid":"500",
    "Name":"train"
  }
}
,{"ph":"X","name":"epoch start","pid":"0","tid":"500","ts":"10","dur":"0",
  "args":{"BeginNs":"1010000","EndNs":"1010001","pid":"0","tid":"500","Name":"epoch start"}
}
,{"ph":"X","name":"hipLaunchKernel","pid":"2","tid":"500","ts":"20","dur":"5",
  "args":{"BeginNs":"1020000","EndNs":"1025500","pid":"77","tid":"500","Name":"hipLaunchKernel","args":"( function_address(0x1) numBlocks({1024, 1, 1}))","Data":"","DurationNs":"5500"}
}
,{"ph":"X","name":"Cijk_Ailk_Bljk_SB","pid":"7","tid":"500","ts":"30","dur":"2",
  "args":{"KernelName":"Cijk_Ailk_Bljk_SB","gpu-id":"1","queue-id":"3","queue-index":"0","pid":"77","tid":"500","grd":"1024","wgr":"256",
    "DispatchNs":"1029000","BeginNs":"1030000","EndNs":"1032345","CompleteNs":"1032500","DurationNs":"2345"}
}
,{"ph":"X","name":"hipMemset","pid":"2","tid":"500","ts":"40","dur":"3",
  "args":{"BeginNs":"1040000","EndNs":"1043000","pid":"77","tid":"500","Name":"hipMemset","args":"( dst(0x2) value(0) sizeBytes(64))","Data":"","DurationNs":"3000"}
}
,{"ph":"X","name":"FillBuffer","pid":"1","tid":"0","ts":"41","dur":"1",
  "args":{"BeginNs":"1041000","EndNs":"1041800","dev-id":"0","queue-id":"0","Name":"FillBuffer","pid":"1","tid":"0","proc-id":"77","Data":"","DurationNs":"800"}
}
,{"ph":"X","name":"Unknown command type","pid":"6","tid":"0","ts":"50","dur":"1",
  "args":{"BeginNs":"1050000","EndNs":"1050000","dev-id":"0","queue-id":"0","Name":"Unknown command type","pid":"6","tid":"0","proc-id":"77","Data":"","DurationNs":"0"}
}
,{"ts":20,"ph":"s","cat":"DataFlow","id":0,"pid":2,"tid":500,"name":"dep"}
,{"ts":30,"ph":"t","cat":"DataFlow","id":0,"pid":7,"tid":500,"name":"dep"}
,{"ts":41,"ph":"s","cat":"DataFlow","id":1,"pid":2,"tid":500,"name":"dep"}
,{"ts":41,"ph":"t","cat":"DataFlow","id":1,"pid":1,"tid":0,"name":"dep"}
],
"otherData": {
    "CMD": "rocminfo",
    "Agent1.Name": "gfx942",
    "Agent1.Name": "gfx942"
  }
}`

func TestRocprofV1JSON(t *testing.T) {
	tr, err := Read(strings.NewReader(v1Fixture), "results.json", int64(len(v1Fixture)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != "rocprof-v1-json" {
		t.Fatalf("format %q", tr.Format)
	}
	byName := map[string]*tracer.Event{}
	for i := range tr.Events {
		byName[tr.Name(&tr.Events[i])] = &tr.Events[i]
	}
	if len(tr.Events) != 6 {
		t.Errorf("%d events, want 6 (the marker packet skipped)", len(tr.Events))
	}
	k, call := byName["Cijk_Ailk_Bljk_SB"], byName["hipLaunchKernel"]
	if k == nil || k.Kind != tracer.KindKernel || k.Start != 1030000 || k.Dur != 2345 || k.Device != 1 || k.Stream != 3 || k.PID != 77 || k.TID != -1 {
		t.Errorf("kernel %+v", k)
	}
	if call == nil || call.Kind != tracer.KindRuntime || call.Start != 1020000 || call.Dur != 5500 || call.PID != 77 || call.TID != 500 {
		t.Errorf("launch %+v", call)
	}
	if k != nil && call != nil && (k.Corr == 0 || k.Corr != call.Corr) {
		t.Errorf("kernel corr %d, launch corr %d: flow 0 should join them", k.Corr, call.Corr)
	}
	f, ms := byName["FillBuffer"], byName["hipMemset"]
	if f == nil || f.Kind != tracer.KindMemset || f.Start != 1041000 || f.Dur != 800 || f.Device != 0 || f.PID != 77 || ms == nil || f.Corr == 0 || f.Corr != ms.Corr || f.Corr == k.Corr {
		t.Errorf("fill %+v, hipMemset %+v", f, ms)
	}
	if r := byName["train"]; r == nil || r.Kind != tracer.KindRange || r.Start != 1000000 || r.Dur != 100000 || r.TID != 500 {
		t.Errorf("range %+v", r)
	}
	if m := byName["epoch start"]; m == nil || m.Kind != tracer.KindInstant || m.Start != 1010000 || m.Dur != 0 {
		t.Errorf("mark %+v", m)
	}
	if tr.Meta["skipped_events"] != "Unknown command type:1" {
		t.Errorf("skipped %q", tr.Meta["skipped_events"])
	}
	for _, w := range tr.Warnings {
		t.Errorf("unexpected warning %q", w)
	}
}

// Only HIP calls: the warning names the importer and counts the complete
// events by section (2 CPU HIP API events in the input).
func TestRocprofV1JSONNoGPU(t *testing.T) {
	var keep []string
	for _, l := range strings.Split(v1Fixture, "\n,") {
		if strings.Contains(l, `"pid":"2"`) || strings.Contains(l, `"ph":"M"`) || strings.HasPrefix(l, "{ \"traceEvents\"") {
			keep = append(keep, l)
		}
	}
	in := strings.Join(keep, "\n,") + "\n]}"
	tr, err := Read(strings.NewReader(in), "calls.json", int64(len(in)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], noGPUWarn+" by the rocprof-v1-json importer; it found complete events by section: CPU HIP API 2.") {
		t.Errorf("warnings %q", tr.Warnings)
	}
}

// A truncated file is an error that says so.
func TestRocprofV1JSONTruncated(t *testing.T) {
	in := v1Fixture[:len(v1Fixture)/2]
	_, err := Read(strings.NewReader(in), "cut.json", int64(len(in)), Options{})
	if err == nil || !strings.Contains(err.Error(), "JSON ends early") {
		t.Errorf("err %v", err)
	}
}

// Read must not panic on any input the rocprof v1 sniffer accepts.
func FuzzRocprofV1JSON(f *testing.F) {
	f.Add(v1Fixture)
	f.Add(`{"traceEvents":[{"ph":"X","pid":"6","tid":"x","ts":"1e400","args":{"BeginNs":"9"}},{"ph":"t","id":-1,"pid":6,"tid":0,"ts":1}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		if !sniffRocprofV1JSON([]byte(in)) {
			return
		}
		Read(strings.NewReader(in), "fuzz.json", int64(len(in)), Options{})
	})
}

// rocprof v1's results.db, the tables tblextr.py writes with the column
// lists of a real one (shashankparsi/HIP_Programming results.db), KERN as
// the --timestamp runs write it (amd/HPCTrainingExamples), KernelName in
// the writer's double quotes. Expected values are the literals.
func TestRocprofV1DB(t *testing.T) {
	db, p := newDB(t, "results.db")
	execAll(t, db,
		`CREATE TABLE HIP ("BeginNs" INTEGER, "EndNs" INTEGER, "pid" INTEGER, "tid" INTEGER, "Name" TEXT, "args" TEXT, "Index" INTEGER, "Data" TEXT, "__section" INTEGER, "__lane" INTEGER, "DurationNs" INTEGER)`,
		`CREATE TABLE OPS ("BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, "queue-id" INTEGER, "Name" TEXT, "pid" INTEGER, "tid" INTEGER, "roctx-range" TEXT, "stream-id" INTEGER, "Index" INTEGER, "Data" TEXT, "__section" INTEGER, "__lane" INTEGER, "DurationNs" INTEGER)`,
		`CREATE TABLE COPY ("BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, "queue-id" INTEGER, "Name" TEXT, "pid" INTEGER, "tid" INTEGER, "roctx-range" TEXT, "stream-id" INTEGER, "Index" INTEGER, "Data" TEXT, "__section" INTEGER, "__lane" INTEGER, "DurationNs" INTEGER)`,
		`CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT, "gpu-id" INTEGER, "queue-id" INTEGER, "queue-index" INTEGER, "pid" INTEGER, "tid" INTEGER, "DispatchNs" INTEGER, "BeginNs" INTEGER, "EndNs" INTEGER, "CompleteNs" INTEGER, "DurationNs" INTEGER)`,
		`CREATE TABLE rocTX ("BeginNs" INTEGER, "EndNs" INTEGER, "pid" INTEGER, "tid" INTEGER, "Name" TEXT, "Index" INTEGER, "__section" INTEGER, "__lane" INTEGER)`,
		`INSERT INTO HIP VALUES (1000,1500,77,500,'hipLaunchKernel','',8,'',2,500,500),(2000,2600,77,500,'hipMemset','',9,'',2,500,600)`,
		`INSERT INTO OPS VALUES (1700,4700,1,0,'vector_add(float*)',77,500,'',2,8,'',7,2,3000),(5000,5000,1,0,'Unknown command type',77,0,'',0,10,'',6,0,0)`,
		`INSERT INTO COPY VALUES (2100,2180,1,0,'FillBuffer',77,500,'',2,9,'',1,0,80)`,
		`INSERT INTO KERN VALUES (0,'"void k<double>(double*) [clone .kd]"',8,3,0,77,500,900,1000,1250,1300,250)`,
		`INSERT INTO rocTX VALUES (100,9000,77,500,'forward',0,0,500),(150,151,77,500,'mark',1,0,500)`)
	db.Close()
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != "rocprof-v1-sqlite" || tr.Meta["skipped_events"] != "Unknown command type:1" {
		t.Fatalf("format %q, skipped %q", tr.Format, tr.Meta["skipped_events"])
	}
	by := map[string]*tracer.Event{}
	for i := range tr.Events {
		by[tr.Name(&tr.Events[i])] = &tr.Events[i]
	}
	if len(tr.Events) != 7 {
		t.Errorf("%d events, want 7", len(tr.Events))
	}
	op, call := by["vector_add(float*)"], by["hipLaunchKernel"]
	if op == nil || op.Kind != tracer.KindKernel || op.Start != 1700 || op.Dur != 3000 || op.Device != 1 || op.Stream != 2 || op.PID != 77 || op.TID != -1 ||
		call == nil || call.Kind != tracer.KindRuntime || op.Corr == 0 || op.Corr != call.Corr {
		t.Errorf("op %+v call %+v", op, call)
	}
	f, ms := by["FillBuffer"], by["hipMemset"]
	if f == nil || f.Kind != tracer.KindMemset || f.Dur != 80 || ms == nil || f.Corr != ms.Corr || f.Corr == op.Corr {
		t.Errorf("fill %+v hipMemset %+v", f, ms)
	}
	if k := by["void k<double>(double*) [clone .kd]"]; k == nil || k.Kind != tracer.KindKernel || k.Start != 1000 || k.Dur != 250 || k.Device != 8 || k.Stream != 3 || k.Corr != 0 {
		t.Errorf("KERN row %+v", k)
	}
	if r, m := by["forward"], by["mark"]; r == nil || r.Kind != tracer.KindRange || r.Dur != 8900 || m == nil || m.Kind != tracer.KindInstant || m.Start != 150 {
		t.Errorf("range %+v mark %+v", r, m)
	}
	for _, w := range tr.Warnings {
		t.Errorf("unexpected warning %q", w)
	}
}

// A SQLite file that is neither format: the error names its tables.
func TestSQLiteUnknownNamesTables(t *testing.T) {
	db, p := newDB(t, "other.db")
	execAll(t, db, `CREATE TABLE measurements (x INTEGER)`, `CREATE TABLE runs (id INTEGER)`)
	db.Close()
	_, err := Open(p, Options{})
	if err == nil || !strings.Contains(err.Error(), "SQLite database with 2 tables and views (measurements, runs), but neither") {
		t.Errorf("err %v", err)
	}
}

// rocmProfileData's .rpd shares the "rocpd_" prefix but not the schema
// (ROCm/rocmProfileData: rocpd_op, rocpd_api, rocpd_api_ops): it is
// named, not misread.
func TestSQLiteRPDNamed(t *testing.T) {
	db, p := newDB(t, "trace.rpd")
	execAll(t, db, `CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY, string TEXT)`,
		`CREATE TABLE rocpd_op (id INTEGER PRIMARY KEY, gpuId INTEGER, queueId INTEGER, sequenceId INTEGER, completionSignal TEXT, start INTEGER, end INTEGER, description_id INTEGER, opType_id INTEGER)`,
		`CREATE TABLE rocpd_api (id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, start INTEGER, end INTEGER, apiName_id INTEGER, args_id INTEGER)`)
	db.Close()
	_, err := Open(p, Options{})
	if err == nil || !strings.Contains(err.Error(), "a rocmProfileData (.rpd) database") {
		t.Errorf("err %v", err)
	}
}
