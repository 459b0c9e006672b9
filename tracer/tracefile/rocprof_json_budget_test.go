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
// records `{}` (a hostile shape: 4.7 MB held 1.5 M records,
// 634 MB at a report's peak) stops at the record budget with the records
// before it kept as events and an *Error naming the file, the limit, the
// flag and the variable. The default, MaxJSONRecords, counts records
// decoded whatever the file's size as stored: read with a stored size of
// 1 GiB (which the old per-stored-byte rule turned into 64 M records),
// 1,098,576 records keep 1,048,576. RLKTOP_MAX_CSV_ROWS and SetMaxCSVRows
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

	big := doc(MaxJSONRecords + 50_000)
	tr, err := Read(bytes.NewReader(big), "rp.json", 1<<30, Options{})
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "rp.json" || !strings.Contains(err.Error(), fmt.Sprintf("more than %d buffer records", MaxJSONRecords)) ||
		!strings.Contains(err.Error(), MaxCSVRowsEnv) || !strings.Contains(err.Error(), "--"+MaxCSVRowsFlag) {
		t.Fatalf("err = %v, want an *Error naming the file, the %d-record limit, --%s and %s", err, MaxJSONRecords, MaxCSVRowsFlag, MaxCSVRowsEnv)
	}
	if n := runtime(tr); n != MaxJSONRecords {
		t.Errorf("kept %d events, want the %d records before the limit", n, MaxJSONRecords)
	}

	small := doc(3000)
	t.Setenv(MaxCSVRowsEnv, "1000")
	if tr, err := read(small); err == nil || !strings.Contains(err.Error(), MaxCSVRowsEnv+"=1000") || runtime(tr) != 1000 {
		t.Errorf("%s=1000: %d events, err %v", MaxCSVRowsEnv, runtime(tr), err)
	}
	t.Setenv(MaxCSVRowsEnv, "0")
	if tr, err := read(big); err != nil || runtime(tr) != MaxJSONRecords+50_000 {
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

	// Gzipped or not, the default is the same count.
	ResetLimits()
	if n, _ := rocprofJSONBudget(); n != MaxJSONRecords {
		t.Errorf("budget %d, want %d", n, MaxJSONRecords)
	}
}
