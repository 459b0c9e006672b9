package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestRocprofJSONRecordBudget: a rocprofv3 JSON of n empty hip_api
// records `{}` (the issue-16 trial's shape: 4.7 MB held 1.5 M records,
// 634 MB at a report's peak) stops at the record budget with the records
// before it kept as events and an *Error naming the file, the limit, the
// flag and the variable. 600,000 records are 1.8 MB, whose 1 per 16 bytes
// is under the MinJSONRecords floor, so the floor applies; unlike the CSV
// budget it applies to a plain file. RLKTOP_MAX_CSV_ROWS and SetMaxCSVRows
// raise or lower it (0: none), the records of a process cut by the limit
// are kept, and the real-layout fixture (10 buffer records, counted by
// hand: 3 kernel_dispatch, 1 memory_copy, 4 hip_api, 2 marker_api) reads
// in full by default and under a limit of exactly 10, not 9.
func TestRocprofJSONRecordBudget(t *testing.T) {
	t.Cleanup(ResetLimits)
	// procs[i] empty hip_api records in process i.
	doc := func(procs ...int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"rocprofiler-sdk-tool": [`)
		for i, n := range procs {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"buffer_records": {"hip_api": [`)
			b.WriteString(strings.Repeat("{},", n-1) + "{}")
			b.WriteString(`]}}`)
		}
		b.WriteString("]}")
		return b.Bytes()
	}
	runtime := func(tr *tracer.Trace) int {
		n := 0
		if tr != nil {
			for i := range tr.Events {
				if tr.Events[i].Kind == tracer.KindRuntime {
					n++
				}
			}
		}
		return n
	}
	read := func(b []byte) (*tracer.Trace, error) {
		return Read(bytes.NewReader(b), "rp.json", int64(len(b)), Options{})
	}

	big := doc(600_000)
	if int64(len(big))/JSONBytesPerRecord > MinJSONRecords {
		t.Fatalf("%d bytes: the test needs the floor to apply", len(big))
	}
	tr, err := read(big)
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "rp.json" || !strings.Contains(err.Error(), fmt.Sprintf("more than %d buffer records", MinJSONRecords)) ||
		!strings.Contains(err.Error(), MaxCSVRowsEnv) || !strings.Contains(err.Error(), "--"+MaxCSVRowsFlag) {
		t.Fatalf("err = %v, want an *Error naming the file, the %d-record limit, --%s and %s", err, MinJSONRecords, MaxCSVRowsFlag, MaxCSVRowsEnv)
	}
	if n := runtime(tr); n != MinJSONRecords {
		t.Errorf("kept %d events, want the %d records before the limit", n, MinJSONRecords)
	}

	small := doc(3000)
	t.Setenv(MaxCSVRowsEnv, "1000")
	if tr, err := read(small); err == nil || !strings.Contains(err.Error(), MaxCSVRowsEnv+"=1000") || runtime(tr) != 1000 {
		t.Errorf("%s=1000: %d events, err %v", MaxCSVRowsEnv, runtime(tr), err)
	}
	t.Setenv(MaxCSVRowsEnv, "0")
	if tr, err := read(big); err != nil || runtime(tr) != 600_000 {
		t.Errorf("%s=0: %d events, err %v", MaxCSVRowsEnv, runtime(tr), err)
	}
	SetMaxCSVRows(1000)
	if tr, err := read(small); err == nil || !strings.Contains(err.Error(), "--max-csv-rows=1000") || runtime(tr) != 1000 {
		t.Errorf("--max-csv-rows 1000: %d events, err %v", runtime(tr), err)
	}
	// The flag wins over the variable, and the process the limit cuts
	// keeps its records before it: 2 + 2 of 2 + 5.
	t.Setenv(MaxCSVRowsEnv, "1")
	SetMaxCSVRows(4)
	if tr, err := read(doc(2, 5)); err == nil || !strings.Contains(err.Error(), "rocprofiler-sdk-tool[1].buffer_records.hip_api[2]") || runtime(tr) != 4 {
		t.Errorf("--max-csv-rows 4 over 2+5 records: %d events, err %v", runtime(tr), err)
	}

	fixture, err := os.ReadFile("testdata/rocprofv3_tool.json")
	if err != nil {
		t.Fatal(err)
	}
	ResetLimits()
	t.Setenv(MaxCSVRowsEnv, "")
	if _, err := read(fixture); err != nil {
		t.Errorf("fixture under the default budget: %v", err)
	}
	SetMaxCSVRows(10)
	if _, err := read(fixture); err != nil {
		t.Errorf("fixture (10 records) under --max-csv-rows 10: %v", err)
	}
	SetMaxCSVRows(9)
	if _, err := read(fixture); err == nil || !strings.Contains(err.Error(), "more than 9 buffer records") {
		t.Errorf("fixture (10 records) under --max-csv-rows 9: err %v, want the limit", err)
	}

	// Gzipped files get 1 per JSONGzBytesPerRecord bytes, plain ones 1 per
	// JSONBytesPerRecord: 16 MiB as stored gives 8 Mi and 1 Mi records.
	ResetLimits()
	if n, _ := rocprofJSONBudget(16<<20, true); n != 8<<20 {
		t.Errorf("gzipped 16 MiB: budget %d, want %d", n, 8<<20)
	}
	if n, _ := rocprofJSONBudget(16<<20, false); n != 1<<20 {
		t.Errorf("plain 16 MiB: budget %d, want %d", n, 1<<20)
	}
}
