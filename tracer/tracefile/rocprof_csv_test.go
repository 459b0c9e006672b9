package tracefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

func openShared(t *testing.T, rel string) *tracer.Trace {
	t.Helper()
	dir := testutil.SharedTraces(t)
	tr, err := Open(filepath.Join(dir, rel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func kernelSums(tr *tracer.Trace) map[string][2]int64 {
	m := map[string][2]int64{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind == tracer.KindKernel {
			c := m[tr.Name(e)]
			m[tr.Name(e)] = [2]int64{c[0] + 1, c[1] + e.Dur}
		}
	}
	return m
}

func checkSums(t *testing.T, got, want map[string][2]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d kernel names, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q: got [count ns] %v, want %v", k, got[k], w)
		}
	}
}

// Hand counts below: End_Timestamp - Start_Timestamp of each row, added by
// hand from the files (the Python reference agrees; see
// TestSharedTracesMatchReference).

func TestRocprofV3Kernel2025(t *testing.T) {
	tr := openShared(t, "rocprof/kernel_trace_2025.csv")
	if tr.Format != "rocprofv3-csv" || tr.Meta["layout"] != "kernel_trace" {
		t.Fatalf("format %q layout %q", tr.Format, tr.Meta["layout"])
	}
	checkSums(t, kernelSums(tr), map[string][2]int64{
		"void addition_kernel<float>(float*, float const*, float const*, int, int)": {3, 12800 + 11400 + 9840},
		"divide_kernel(float*, float const*, float const*, int, int)":               {2, 11200 + 12440},
		"multiply_kernel(float*, float const*, float const*, int, int)":             {2, 11160 + 9920},
		"subtract_kernel(float*, float const*, float const*, int, int)":             {2, 8240 + 9160},
	})
	// Row 2 (file line 3): "Agent 4", queue 1, stream 1, thread 834304, corr 4.
	e := tr.Events[1]
	if e.Device != 4 || e.Stream != 1 || e.TID != 834304 || e.Corr != 4 || e.Start != 1550151853064037 {
		t.Errorf("row 2 decoded as %+v", e)
	}
	if len(tr.Devices) != 1 || tr.Devices[0].ID != 4 || tr.Devices[0].Vendor != "amd" {
		t.Errorf("devices %+v", tr.Devices)
	}
}

func TestRocprofV3Kernel2024(t *testing.T) {
	tr := openShared(t, "rocprof/kernel_trace_2024.csv")
	// 2024 layout: integer Agent_Id, no Stream_Id (queue used as stream).
	var n, ns int64
	for _, e := range tr.Events {
		n++
		ns += e.Dur
		if e.Device != 1 || e.Kind != tracer.KindKernel {
			t.Errorf("event %+v", e)
		}
	}
	// 48744+100895+103265+130526+133341+139119+139563
	if n != 7 || ns != 795453 {
		t.Errorf("%d kernels, %d ns; want 7, 795453", n, ns)
	}
	if e := tr.Events[1]; e.Stream != 2 || e.Corr != 1484 {
		t.Errorf("row 2: stream %d corr %d, want queue 2, corr 1484", e.Stream, e.Corr)
	}
}

func TestRocprofV3KernelTruncatedNoFinalNewline(t *testing.T) {
	tr := openShared(t, "rocprof/kernel_trace_truncated.csv")
	checkSums(t, kernelSums(tr), map[string][2]int64{
		"addition_kernel": {2, 12200 + 9880},
		"subtract_kernel": {1, 9920},
		"divide_kernel":   {1, 12040}, // the last row, no newline after it
	})
}

func TestRocprofV3MemcpyMarkerStats(t *testing.T) {
	mc := openShared(t, "rocprof/memory_copy_trace_2024.csv")
	if len(mc.Events) != 2 || mc.Events[0].Kind != tracer.KindMemcpy ||
		mc.Events[0].Dur != 563880 || mc.Events[1].Dur != 581800 ||
		mc.Name(&mc.Events[0]) != "MEMORY_COPY_HOST_TO_DEVICE" || mc.Events[0].Device != 1 || mc.Events[1].Device != 1 {
		t.Errorf("memcpy events %+v", mc.Events)
	}

	mk := openShared(t, "rocprof/marker_api_trace_2024.csv")
	want := map[string]struct {
		kind tracer.Kind
		dur  int64
		tid  int32
	}{
		"before hipLaunchKernel": {tracer.KindInstant, 0, 717},
		"after hipLaunchKernel":  {tracer.KindInstant, 0, 717},
		"hipMemcpy":              {tracer.KindRange, 1342308, 717},
		"hipLaunchKernel":        {tracer.KindRange, 1806657, 717},
		"hipLaunchKernel range":  {tracer.KindRange, 1813674, 0},
	}
	if len(mk.Events) != len(want) {
		t.Fatalf("%d marker events, want %d", len(mk.Events), len(want))
	}
	for i := range mk.Events {
		e := &mk.Events[i]
		w, ok := want[mk.Name(e)]
		if !ok || e.Kind != w.kind || e.Dur != w.dur || e.TID != w.tid || e.PID != 717 {
			t.Errorf("marker %q: %+v, want %+v", mk.Name(e), *e, w)
		}
	}

	st := openShared(t, "rocprof/hip_api_stats_2024.csv")
	if !st.SummaryOnly || len(st.Summary) != 17 || len(st.Events) != 0 {
		t.Fatalf("stats: summaryOnly %v, %d rows, %d events", st.SummaryOnly, len(st.Summary), len(st.Events))
	}
	first, last := st.Summary[0], st.Summary[16]
	// AverageNs 65624351.500000 rounds half-to-even to 65624352.
	if first.Name != "hipStreamCreateWithFlags" || first.Count != 4 || first.TotalNs != 262497406 ||
		first.MeanNs != 65624352 || first.MinNs != 3991286 || first.MaxNs != 249121840 || first.Kind != tracer.KindRuntime {
		t.Errorf("first row %+v", first)
	}
	if last.Name != "hipSetDevice" || last.Count != 1 || last.TotalNs != 660 {
		t.Errorf("last row (no final newline) %+v", last)
	}
	if st.Summary[11].Name != "__hipRegisterFatBinary" || st.Summary[11].Kind != tracer.KindRuntime {
		t.Errorf("row 12 %+v", st.Summary[11])
	}
}

func TestRocprofV1V2Timestamps(t *testing.T) {
	v1 := openShared(t, "rocprof/MI200_timestamps_rocprofv1style.csv")
	v2 := openShared(t, "rocprof/MI300X_timestamps_rocprofv2style.csv")
	if v1.Format != "rocprof-csv" || v2.Format != "rocprof-csv" {
		t.Fatalf("formats %q %q", v1.Format, v2.Format)
	}
	checkSums(t, kernelSums(v1), map[string][2]int64{
		"vecCopy(double*, double*, double*, int, int) [clone .kd]": {3, 20640 + 15520 + 16480},
	})
	checkSums(t, kernelSums(v2), map[string][2]int64{
		"vecCopy(double*, double*, double*, int, int) (.kd)": {3, 16119 + 13560 + 13480},
	})
	if e := v1.Events[0]; e.Device != 2 || e.PID != 4159385 || e.TID != 4159385 {
		t.Errorf("v1 row 1 %+v", e)
	}
	if e := v2.Events[0]; e.Device != 60633 || e.PID != 967084 || e.Stream != 1 {
		t.Errorf("v2 row 1 %+v", e)
	}
	b1, b2 := RocprofBaseName(v1.Name(&v1.Events[0])), RocprofBaseName(v2.Name(&v2.Events[0]))
	if b1 != "vecCopy(double*, double*, double*, int, int)" || b1 != b2 {
		t.Errorf("base names %q %q", b1, b2)
	}
}

func readString(t *testing.T, s string) (*tracer.Trace, error) {
	t.Helper()
	return Read(strings.NewReader(s), "mem.csv", int64(len(s)), Options{})
}

func TestRocprofCSVBadInput(t *testing.T) {
	hdr := `"Kind","Agent_Id","Queue_Id","Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n"
	cases := []struct {
		name, in, field string
		line            int
		msg             string
	}{
		{"non-integer start", hdr + `"KERNEL_DISPATCH",1,1,"k",1,12x,20` + "\n", "Start_Timestamp", 2, "expected an integer"},
		{"bad agent", hdr + `"KERNEL_DISPATCH","Agent four",1,"k",1,10,20` + "\n", "Agent_Id", 2, "agent id"},
		{"short row", hdr + `"KERNEL_DISPATCH",1,1,"k",1,10` + "\n", "", 2, "missing"},
		{"empty name", hdr + `"KERNEL_DISPATCH",1,1,"k",1,10,20` + "\n" + `"KERNEL_DISPATCH",1,1,"",1,10,20`, "Kernel_Name", 3, "empty kernel name"},
		{"bad stats number", `"Name","Calls","TotalDurationNs","AverageNs"` + "\n" + `"hipFree",2,1.5.5,3` + "\n", "TotalDurationNs", 2, "expected a number"},
	}
	// One bad row is skipped with a warning naming line and column; the
	// rest are kept (one bad row lost the file).
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := readString(t, c.in)
			if err != nil {
				t.Fatalf("got %v, want the bad row skipped", err)
			}
			rows := strings.Count(strings.TrimSpace(c.in), "\n") // data rows
			if n := len(tr.Events) + len(tr.Summary); n != rows-1 {
				t.Errorf("%d rows kept, want %d", n, rows-1)
			}
			want := fmt.Sprintf("mem.csv:%d: ", c.line)
			if c.field != "" {
				want += fmt.Sprintf("field %q: ", c.field)
			}
			if len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], want) || !strings.Contains(tr.Warnings[0], c.msg) || !strings.HasSuffix(tr.Warnings[0], "; row skipped") {
				t.Errorf("warnings %q, want %q… %q", tr.Warnings, want, c.msg)
			}
		})
	}
	// end < start: kept, zero duration, with a warning.
	tr, err := readString(t, hdr+`"KERNEL_DISPATCH",1,1,"k",1,30,20`+"\n")
	if err != nil || tr.Events[0].Dur != 0 || len(tr.Warnings) != 1 {
		t.Errorf("end<start: %v %+v %v", err, tr, err)
	}
}

// TestRocprofSniffLeavesOthersAlone: the rocprof sniffers accept their
// layouts and nothing else — in particular not rocprof v1's Chrome-trace
// JSON (string ts/dur, an empty first event), which the Kineto importer
// reads, nor nsys stats CSV.
func TestRocprofSniffLeavesOthersAlone(t *testing.T) {
	v1json := []byte(`{"traceEvents":[{}` + "\n" + `,{"name":"vecCopy","ph":"X","ts":"1412702536508","dur":"20","pid":2,"tid":0}]}`)
	nsysCSV := []byte("Start (ns),End (ns),Duration (ns),Name,PID,TID\n1,2,1,main,3,3\n")
	for _, h := range [][]byte{v1json, nsysCSV, []byte("SQLite format 3\x00"), []byte(`{"rocprofiler-sdk-tool":[]}`)} {
		if sniffRocprofV3CSV(h) || sniffRocprofV1CSV(h) {
			t.Errorf("rocprof CSV sniffers accepted %q", h)
		}
	}
	dir := testutil.SharedTraces(t)
	for _, f := range []string{"kernel_trace_2024.csv", "kernel_trace_2025.csv", "kernel_trace_truncated.csv", "marker_api_trace_2024.csv", "memory_copy_trace_2024.csv", "hip_api_stats_2024.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, "rocprof", f))
		if err != nil {
			t.Fatal(err)
		}
		if !sniffRocprofV3CSV(b) || sniffRocprofV1CSV(b) {
			t.Errorf("%s: v3 sniff %v, v1 sniff %v", f, sniffRocprofV3CSV(b), sniffRocprofV1CSV(b))
		}
	}
}

func TestRoundDecimal(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "2.5": 2, "3.5": 4, "-2.5": -2, "7.980e-04": 0, "2.920e+03": 2920, "65624351.500000": 65624352, "0.00000000e+00": 0} {
		if got, ok := roundDecimal(in); !ok || got != want {
			t.Errorf("roundDecimal(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "1e99999999", "0x10", "1/2", "NaN", "Inf"} {
		if _, ok := roundDecimal(in); ok {
			t.Errorf("roundDecimal(%q) accepted", in)
		}
	}
}

// rocprof v1 results.csv (--timestamp on): KernelName, gpu-id, queue-id,
// BeginNs/EndNs. No real one is in shared/traces; this is hand-written in
// the documented column layout, values from the MI200 sample above.
func TestRocprofV1ResultsCSV(t *testing.T) {
	in := `Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,wave_size,sig,obj,DispatchNs,BeginNs,EndNs,CompleteNs` + "\n" +
		`0,"vecCopy(double*, double*, double*, int, int) [clone .kd]",2,0,0,4159385,4159385,1048576,256,0,0,8,0,16,64,0x0,0x7f7aee850ec0,1412702536482286,1412702536508356,1412702536528996,1412702536542951` + "\n"
	tr, err := readString(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if e := tr.Events[0]; tr.Format != "rocprof-csv" || len(tr.Events) != 1 || e.Dur != 20640 || e.Device != 2 || e.PID != 4159385 || e.Start != 1412702536508356 {
		t.Errorf("format %q events %+v", tr.Format, tr.Events)
	}
}
