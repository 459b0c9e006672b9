package tracefile

import (
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// One rocprofv3 run as three CSV files (2025 layouts, hand-written from the
// documented columns): kernels, the HIP calls that launched them, and a
// roctx range. Only merged do the kernels find their launch and its range.
func TestMergeRocprofv3Run(t *testing.T) {
	kern := `"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n" +
		`"KERNEL_DISPATCH","Agent 4",1,1,834304,1,10,"attn_fwd",1,1000,1500` + "\n" +
		`"KERNEL_DISPATCH","Agent 4",1,1,834304,2,11,"Cijk_Ailk_Bljk",2,1600,1800` + "\n"
	hip := `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n" +
		`"HIP_RUNTIME_API","hipLaunchKernel",834304,834304,1,100,120` + "\n" +
		`"HIP_RUNTIME_API","hipLaunchKernel",834304,834304,2,400,420` + "\n"
	marker := `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n" +
		`"MARKER_CORE_API","forward",834304,834304,3,50,300` + "\n" +
		`"MARKER_CORE_API","ProfilerStep#2",834304,834304,4,0,1000` + "\n"
	var parts []*tracer.Trace
	for i, s := range []string{kern, hip, marker} {
		tr, err := Read(strings.NewReader(s), []string{"k.csv", "h.csv", "m.csv"}[i], 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, tr)
	}
	// Alone, the kernel file has no context.
	for _, e := range parts[0].Events {
		if e.Ctx != 0 {
			t.Errorf("unmerged kernel has context %d", e.Ctx)
		}
	}
	m := Merge(parts...)
	if m.Format != "rocprofv3-csv" || m.Path != "k.csv,h.csv,m.csv" || len(m.Events) != 6 || m.SummaryOnly {
		t.Fatalf("merged: format %q path %q, %d events", m.Format, m.Path, len(m.Events))
	}
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind != tracer.KindKernel {
			continue
		}
		c := m.Contexts[e.Ctx]
		var ranges []string
		for _, r := range c.Ranges {
			ranges = append(ranges, m.Strings.Get(r))
		}
		// attn_fwd launched at 100, inside "forward" [50, 300) and step 2;
		// Cijk launched at 400: step 2 only.
		want := map[string][]string{"attn_fwd": {"forward"}, "Cijk_Ailk_Bljk": nil}[m.Name(e)]
		if !slices.Equal(ranges, want) || c.Step != 2 {
			t.Errorf("%s: ranges %v step %d, want %v step 2", m.Name(e), ranges, c.Step, want)
		}
	}
	if parts[0].Strings.Len() != 3 || parts[0].Events[0].Ctx != 0 {
		t.Error("Merge modified its input")
	}
}

func TestMergeSummaries(t *testing.T) {
	st := `"Name","Calls","TotalDurationNs"` + "\n" + `"hipFree",2,30` + "\n"
	a, _ := Read(strings.NewReader(st), "a.csv", 0, Options{})
	b, _ := Read(strings.NewReader(st), "b.csv", 0, Options{})
	if m := Merge(a, b); !m.SummaryOnly || len(m.Summary) != 2 {
		t.Errorf("two summaries: %+v", m)
	}
	k, _ := Read(strings.NewReader("\"Kind\",\"Agent_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\"KERNEL_DISPATCH\",1,\"k\",1,2\n"), "k.csv", 0, Options{})
	if m := Merge(a, k); m.SummaryOnly {
		t.Error("summary + events merged as summary-only")
	}
	if m := Merge(); len(m.Events) != 0 || m.Strings.Len() != 1 {
		t.Errorf("empty merge %+v", m)
	}
}
