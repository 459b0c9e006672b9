package tracefile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

func TestNsysStatsNVTXTrace(t *testing.T) {
	tr := openShared(t, "nsys/pipit_nbody_nvtx_stats.csv")
	if tr.Format != "nsys-stats-csv" || tr.Meta["layout"] != "trace" || tr.SummaryOnly {
		t.Fatalf("format %q layout %q summaryOnly %v", tr.Format, tr.Meta["layout"], tr.SummaryOnly)
	}
	if len(tr.Events) != 131 { // 132 lines less the header
		t.Fatalf("%d events, want 131", len(tr.Events))
	}
	// First data row: main, 982845927 → 1987944256 = 1005098329 ns.
	e := tr.Events[0]
	if tr.Name(&e) != "main" || e.Kind != tracer.KindRange || e.Start != 982845927 || e.Dur != 1005098329 || e.PID != 3086332 || e.TID != 3086332 {
		t.Errorf("first range %q %+v", tr.Name(&e), e)
	}
	// An NVTX trace holds no GPU work: the one warning says so and counts
	// the 131 ranges (131 data lines); any other warning would be a row
	// whose Duration (ns) differs from End-Start.
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], noGPUWarn+" by the nsys-stats-csv importer; it found 131 events (range 131)") {
		t.Errorf("warnings %v, want only the no-GPU-work one", tr.Warnings)
	}
}

// nsys stats summaries. No real one is in shared/traces; these are
// hand-written in the column layouts nsys documents for cuda_gpu_kern_sum
// (2023+) and gpukernsum (2021), with the "Processing …" preamble nsys
// prints; expected values are the literals.
func TestNsysStatsSummaries(t *testing.T) {
	newer := "\nProcessing [report1.sqlite] with [/opt/nvidia/nsight-systems/2024.4.1/host-linux-x64/reports/cuda_gpu_kern_sum.py]... \n\n" +
		`Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name` + "\n" +
		`61.5,19250432,16,1203152.0,1201664.5,1188352,1230848,12023.4,"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)"` + "\n" +
		`38.5,12050000,1000,12050.0,12032.0,11904,13376,120.1,cudaMemcpyAsync` + "\n"
	tr, err := Read(strings.NewReader(newer), "kern_sum.csv", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.SummaryOnly || len(tr.Summary) != 2 || tr.Format != "nsys-stats-csv" {
		t.Fatalf("summary %+v", tr)
	}
	r := tr.Summary[0]
	if r.Kind != tracer.KindKernel || r.Count != 16 || r.TotalNs != 19250432 || r.MeanNs != 1203152 || r.P50Ns != 1201664 || r.MinNs != 1188352 || r.MaxNs != 1230848 {
		t.Errorf("row 1 %+v", r) // Med 1201664.5 rounds half-to-even to 1201664
	}
	if tr.Summary[1].Kind != tracer.KindRuntime {
		t.Errorf("cudaMemcpyAsync kind %v", tr.Summary[1].Kind)
	}

	older := `Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name` + "\n" +
		`100.0,88573480,5,17714696.0,17702488,17733416,12000.5,"saxpy(double *, double *, double *, double, int)"`
	tr, err = Read(strings.NewReader(older), "gpukernsum.csv", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := tr.Summary[0]; r.Count != 5 || r.TotalNs != 88573480 || r.MeanNs != 17714696 || r.Name != "saxpy(double *, double *, double *, double, int)" {
		t.Errorf("older layout %+v", r)
	}

	nvtx := `Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range` + "\n" +
		`100.0,1005098329,1,1005098329.0,1005098329.0,1005098329,1005098329,0.0,PushPop,main` + "\n"
	tr, err = Read(strings.NewReader(nvtx), "nvtx_sum.csv", 0, Options{})
	if err != nil || tr.Summary[0].Kind != tracer.KindRange || tr.Summary[0].Name != "main" {
		t.Errorf("nvtx sum: %v %+v", err, tr)
	}
}

// A bad row is skipped with a warning naming line and column; the good
// rows around it are kept (one bad row lost the file).
func TestNsysStatsBadInput(t *testing.T) {
	hdr := "Start (ns),End (ns),Duration (ns),Name,PID,TID\n"
	good := "20,30,10,main,1,1\n"
	sum := "Time (%),Total Time (ns),Instances,Name\n"
	for _, c := range []struct{ in, field, msg string }{
		{hdr + good + "10,5,0,main,1,1\n" + good, "End (ns)", "ends before it starts"},
		{hdr + good + "10,x,0,main,1,1\n" + good, "End (ns)", "expected an integer"},
		{sum + "1,2,3,a\n" + "1,2,many,k\n" + "1,2,3,b\n", "Instances", "expected an integer"},
	} {
		tr, err := Read(strings.NewReader(c.in), "s.csv", 0, Options{})
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if n := len(tr.Events) + len(tr.Summary); n != 2 {
			t.Errorf("%q: %d rows kept, want the 2 good ones", c.in, n)
		}
		want := fmt.Sprintf("s.csv:3: field %q: ", c.field)
		if len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], want) || !strings.Contains(tr.Warnings[0], c.msg) || !strings.HasSuffix(tr.Warnings[0], "; row skipped") {
			t.Errorf("%q: warnings %q, want %q… %q", c.in, tr.Warnings, want, c.msg)
		}
	}
}

// cuda_gpu_trace and cuda_api_trace reports, hand-written in the columns
// nsys 2024 documents (no real one is in shared/traces); expected values
// are the literals.
func TestNsysStatsGPUAndAPITraces(t *testing.T) {
	gpu := `Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name` + "\n" +
		`887857742,18830458,138,,,,,,,,,,262.144,13921.3,Pageable,Device,NVIDIA A100-SXM4-40GB (0),1,,7,[CUDA memcpy Host-to-Device]` + "\n" +
		`924922186,17704808,140,2,1,1,512,1,1,26,0.000,0.000,,,,,NVIDIA A100-SXM4-40GB (0),1,,7,"saxpy(double *, double *, double *, double, int)"` + "\n" +
		`924923000,1000,141,,,,,,,,,,0.004,4.0,,Device,NVIDIA A100-SXM4-40GB (1),1,,13,[CUDA memset]` + "\n"
	tr, err := Read(strings.NewReader(gpu), "gpu_trace.csv", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Meta["layout"] != "gpu_trace" || len(tr.Events) != 3 {
		t.Fatalf("layout %q, %d events", tr.Meta["layout"], len(tr.Events))
	}
	want := []struct {
		kind        tracer.Kind
		dur         int64
		corr        uint64
		dev, stream int32
		value       int64
	}{
		{tracer.KindMemcpy, 18830458, 138, 0, 7, 262144000},
		{tracer.KindKernel, 17704808, 140, 0, 7, 0},
		{tracer.KindMemset, 1000, 141, 1, 13, 4000},
	}
	for i, w := range want {
		e := tr.Events[i]
		if e.Kind != w.kind || e.Dur != w.dur || e.Corr != w.corr || e.Device != w.dev || e.Stream != w.stream || e.Value != w.value || e.TID != -1 {
			t.Errorf("row %d: %+v, want %+v", i+1, e, w)
		}
	}
	api := `Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name` + "\n" +
		`924890173,32953,cudaLaunchKernel,0,140,1230493,1230493,20,saxpy-mpi-cuda` + "\n"
	tr, err = Read(strings.NewReader(api), "api_trace.csv", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := tr.Events[0]; tr.Meta["layout"] != "api_trace" || e.Kind != tracer.KindRuntime || e.Corr != 140 || e.PID != 1230493 || e.TID != 1230493 || e.Dur != 32953 {
		t.Errorf("api trace %q %+v", tr.Meta["layout"], e)
	}
	bad := strings.Replace(gpu, "NVIDIA A100-SXM4-40GB (1)", "NVIDIA A100-SXM4-40GB", 1)
	tr, err = Read(strings.NewReader(bad), "gpu_trace.csv", 0, Options{})
	if err != nil || len(tr.Warnings) == 0 || !strings.HasPrefix(tr.Warnings[0], `gpu_trace.csv:4: field "Device"`) {
		t.Errorf("bad device: %v %q", err, tr.Warnings)
	}
}
