package tracefile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// rocprofKernelCSV is a rocprofv3 kernel_trace.csv of n rows, row i
// lasting 10 ns.
func rocprofKernelCSV(n int) string {
	var b strings.Builder
	b.WriteString(`"Kind","Agent_Id","Queue_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `"KERNEL_DISPATCH",1,1,"k%d",%d,%d,%d`+"\n", i%7, i+1, 100*i, 100*i+10)
	}
	return b.String()
}

// The case: a 1,000-row CSV cut in its last line keeps the 999
// rows before (all were lost): the short last row, cut between
// fields or inside a quoted one (read leniently, as rocprof quotes), is
// skipped with a warning naming line 1001.
func TestCSVCutInLastLineKeepsRows(t *testing.T) {
	full := rocprofKernelCSV(1000)
	last := strings.LastIndex(strings.TrimSuffix(full, "\n"), "\n") + 1
	for _, c := range []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"between fields", full[:len(full)-len(",99910\n")], false},
		{"inside a quoted field", full[:last+len(`"KERNEL_DIS`)], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(c.in), "kernel_trace.csv", 0, Options{})
			if (err != nil) != c.wantErr || tr == nil {
				t.Fatalf("err %v (want error: %v), trace %v", err, c.wantErr, tr != nil)
			}
			if len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], "kernel_trace.csv:1001: ") {
				t.Errorf("warnings %q", tr.Warnings)
			}
			if len(tr.Events) != 999 {
				t.Errorf("%d rows kept, want 999", len(tr.Events))
			}
			var ns int64
			for _, e := range tr.Events {
				ns += e.Dur
			}
			if ns != 999*10 {
				t.Errorf("kernel time %d ns, want 9990", ns)
			}
		})
	}
}

// Past ten bad rows, one warning counts the rest; the count is in Meta.
func TestCSVBadRowsCounted(t *testing.T) {
	lines := strings.SplitAfter(rocprofKernelCSV(100), "\n")
	for i := 1; i <= 25; i++ { // 25 rows with a start that is no integer
		f := strings.Split(lines[4*i], ",")
		f[5] = "12x"
		lines[4*i] = strings.Join(f, ",")
	}
	tr, err := Read(strings.NewReader(strings.Join(lines, "")), "k.csv", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 75 || tr.Meta["skipped_bad_rows"] != "25" || len(tr.Warnings) < csvBadShown+1 ||
		tr.Warnings[csvBadShown] != "k.csv: 15 more rows with a bad value skipped (25 in all)" {
		t.Errorf("%d events, meta %q, warnings %q", len(tr.Events), tr.Meta["skipped_bad_rows"], tr.Warnings)
	}
	if !strings.HasPrefix(tr.Warnings[0], `k.csv:5: field "Start_Timestamp": expected an integer, found "12x"`) {
		t.Errorf("first warning %q", tr.Warnings[0])
	}
}

// Implausible times are dropped deliberately, each with a warning: a
// negative start (18 days of span) and a duration over 30
// days (two 5e15 µs kernels overflowed the int64 kernel time).
func TestImplausibleTimesSkipped(t *testing.T) {
	csv := rocprofKernelCSV(3)
	csv = strings.Replace(csv, `"k1",2,100,110`, `"k1",2,-1555200000000000,110`, 1)
	tr, err := Read(strings.NewReader(csv), "neg.csv", 0, Options{})
	if err != nil || len(tr.Events) != 2 || len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], `neg.csv:3: field "Start_Timestamp": negative timestamp -1555200000000000 ns`) {
		t.Errorf("negative start: %v, %d events, %q", err, len(tr.Events), tr.Warnings)
	}
	js := `[{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":1,"dur":5e15},` +
		`{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":2,"dur":5e15},` +
		`{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":3,"dur":500}]`
	tr, err = Read(strings.NewReader(js), "over.json", 0, Options{})
	if err != nil || len(tr.Events) != 1 || tr.Events[0].Dur != 500_000 || len(tr.Warnings) < 2 || !strings.Contains(tr.Warnings[0], "duration 5000000000000000000 ns in event 0 (\"a\") is over 30 days") {
		t.Errorf("5e15 µs kernels: %v, %d events, %q", err, len(tr.Events), tr.Warnings)
	}
}

// A CSV whose header lacks a needed column says so, showing the header it
// found and the columns each CSV format needs ("not a trace
// rlktop can read" only).
func TestCSVMissingColumnMessage(t *testing.T) {
	in := strings.Replace(rocprofKernelCSV(3), `"End_Timestamp"`, `"Finish"`, 1)
	_, err := Read(strings.NewReader(in), "kernel_trace.csv", 0, Options{})
	if err == nil || !strings.Contains(err.Error(), `kernel_trace.csv:1: a CSV file whose header matches no format rlktop reads: "\"Kind\",`) ||
		!strings.Contains(err.Error(), "Kernel_Name, Start_Timestamp, End_Timestamp") {
		t.Errorf("err = %v", err)
	}
	// (The unknown-format hint lists the CSV formats rlktop reads; the
	// error must not call the JSON file a CSV with a bad header.)
	if _, err := Read(strings.NewReader(`{"foo": 1, "bar": 2}`), "x.json", 0, Options{}); err == nil || strings.Contains(err.Error(), "a CSV file whose header") {
		t.Errorf("JSON called CSV: %v", err)
	}
}

// TestCSVUnterminatedQuote: a quote opened on line 3 and never closed
// costs line 3 only, named by its line: the rows after it are read (the
// CSV reader swallowed them into the quoted field: k3 and k4 lost, and
// the warning named a row of 5 fields), and a bad value on line 5, among
// the swallowed lines, is named by its own line.
func TestCSVUnterminatedQuote(t *testing.T) {
	in := "Kind,Agent_Id,Queue_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp\n" +
		"KERNEL_DISPATCH,1,1,1,k1,1,1000,1500\n" +
		"KERNEL_DISPATCH,1,1,1,\"k2,2,2000,2500\n" +
		"KERNEL_DISPATCH,1,1,1,k3,3,3000,3500\n" +
		"KERNEL_DISPATCH,1,1,1,k5,5,x,5500\n" +
		"KERNEL_DISPATCH,1,1,1,k4,4,4000,4500\n"
	tr, err := Read(strings.NewReader(in), "kernel_trace.csv", int64(len(in)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range tr.Events {
		if e.Kind == tracer.KindKernel {
			names = append(names, tr.Strings.Get(e.Name))
		}
	}
	if strings.Join(names, " ") != "k1 k3 k4" {
		t.Errorf("kernels %q, want k1 k3 k4", names)
	}
	var quote, bad bool
	for _, w := range tr.Warnings {
		quote = quote || strings.HasPrefix(w, "kernel_trace.csv:3: a quote opened in column \"Kernel_Name\" is not closed")
		bad = bad || strings.HasPrefix(w, "kernel_trace.csv:5: ")
	}
	if !quote || !bad {
		t.Errorf("warnings %q: want line 3's open quote and line 5's bad value named", tr.Warnings)
	}
}
