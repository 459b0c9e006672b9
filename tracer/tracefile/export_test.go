package tracefile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

var updateExport = flag.Bool("update", false, "rewrite golden files under testdata/")

// smallTrace builds, by hand, a trace with one of everything the exporter
// writes: a step holding a range holding an operator that launches two
// kernels (runtime) and one (driver), a memcpy, a memset, a GPU range, an
// instant, a sync on the device, device and host counters, one device with
// properties, rank and world size. Times are epoch ns with sub-µs digits.
func smallTrace() *tracer.Trace {
	t := tracer.NewTrace("hand", "small")
	s := t.Strings.Intern
	const base = int64(1712195495519689047) // ns
	const pid, tid = 4242, 4243
	cpu := func(k tracer.Kind, name string, start, dur int64, corr uint64) tracer.Event {
		return tracer.Event{Kind: k, Name: s(name), Start: base + start, Dur: dur, Corr: corr, PID: pid, TID: tid, Device: -1}
	}
	gpu := func(k tracer.Kind, name string, start, dur int64, corr uint64, stream int32, val int64) tracer.Event {
		return tracer.Event{Kind: k, Name: s(name), Start: base + start, Dur: dur, Corr: corr, PID: pid, TID: -1, Device: 0, Stream: stream, Value: val}
	}
	step := cpu(tracer.KindStep, "step 7", 0, 900_000, 0)
	step.Value = 7
	inst := cpu(tracer.KindInstant, "checkpoint", 850_000, 0, 0)
	t.Events = []tracer.Event{
		step,
		cpu(tracer.KindRange, "forward", 1_000, 500_000, 0),
		cpu(tracer.KindCPUOp, "aten::mm", 2_000, 100_000, 0),
		cpu(tracer.KindRuntime, "cudaLaunchKernel", 3_000, 4_321, 11),
		cpu(tracer.KindRuntime, "cudaLaunchKernel", 10_000, 3_999, 12),
		cpu(tracer.KindDriver, "cuLaunchKernel", 200_000, 5_001, 13),
		cpu(tracer.KindRuntime, "cudaMemcpyAsync", 300_000, 2_000, 14),
		cpu(tracer.KindRuntime, "cudaMemsetAsync", 310_000, 1_000, 15),
		gpu(tracer.KindKernel, "sm90_xmma_gemm_\"bf16\"", 20_000, 123_456, 11, 7, 0),
		gpu(tracer.KindKernel, "sm90_xmma_gemm_\"bf16\"", 150_000, 100_001, 12, 7, 0),
		gpu(tracer.KindKernel, "triton_poi_fused_add_0", 260_000, 1_760, 13, 13, 0),
		gpu(tracer.KindMemcpy, "Memcpy HtoD (Pageable -> Device)", 305_000, 2_500, 14, 13, 4096),
		gpu(tracer.KindMemset, "Memset (Device)", 312_000, 999, 15, 7, 8),
		gpu(tracer.KindGPURange, "forward", 20_000, 400_000, 0, 7, 0),
		{Kind: tracer.KindSync, Name: s("Event Sync"), Start: base + 600_000, Dur: 20, Corr: 0, PID: pid, TID: tid, Device: 0, Stream: -1},
		inst,
	}
	t.Counters = []tracer.Counter{
		{TS: base, Name: s("gpu.util_pct"), Device: 0, Value: 37.5},
		{TS: base + 500_000, Name: s("gpu.util_pct"), Device: 0, Value: 100},
		{TS: base + 500_000, Name: s("proc.rss_bytes"), Device: -1, Value: 123456789},
		{TS: base + 600_000, Name: s("gpu.util_pct"), Device: 0, Value: math.NaN()},
		{TS: base + 610_000, Name: s("check.logits.rows"), Device: -1, Value: 0},
		{TS: base + 620_000, Name: s("rss"), Device: -1, Value: 7},
	}
	t.Devices = []tracer.Device{{
		ID: 0, Name: "NVIDIA H100 80GB HBM3", Vendor: "nvidia", TotalMemory: 85018279936, SMs: 132, ComputeCap: "9.0",
		Props: map[string]string{"warpSize": "32", "maxThreadsPerBlock": "1024", "uuid": "GPU-0000"},
	}}
	t.Rank, t.World = 3, 8
	t.Meta["run.cmd"] = "python train.py --lr 1e-3"
	t.Link()
	return t
}

func TestAppendMicrosExact(t *testing.T) {
	cases := []int64{0, 1, 999, 1000, 1001, 1500, 123456789, -1, -1500, -1000,
		1712195495519689047, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for _, ns := range cases {
		got := string(AppendMicros(nil, ns))
		// Independent check: the decimal read as an exact rational, times
		// 1000, must equal ns.
		r, ok := new(big.Rat).SetString(got)
		if !ok {
			t.Fatalf("AppendMicros(%d) = %q: not a decimal", ns, got)
		}
		r.Mul(r, big.NewRat(1000, 1))
		if !r.IsInt() || r.Num().Cmp(big.NewInt(ns)) != 0 {
			t.Errorf("AppendMicros(%d) = %q, which is %s ns", ns, got, r.RatString())
		}
		if strings.Contains(got, ".") && strings.HasSuffix(got, "0") {
			t.Errorf("AppendMicros(%d) = %q has a trailing zero", ns, got)
		}
	}
	for ns, want := range map[int64]string{1500: "1.5", 123456789: "123456.789", -1: "-0.001", 2000: "2", 1010: "1.01"} {
		if got := string(AppendMicros(nil, ns)); got != want {
			t.Errorf("AppendMicros(%d) = %q, want %q", ns, got, want)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"plain", `q"uote\back`, "tab\tnl\n\x01\x1f", "bad\xffutf8", "ünï ✓", "line\u2028sep", ""} {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q → %s: invalid JSON: %v", s, b, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back != want {
			t.Errorf("%q → %s → %q, want %q", s, b, back, want)
		}
	}
}

func exportString(t *testing.T, tr *tracer.Trace, opts ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteChrome(&buf, tr, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExportGolden(t *testing.T) {
	got := exportString(t, smallTrace(), ExportOptions{})
	golden := filepath.Join("testdata", "export", "small.json.golden")
	if *updateExport {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run `go test ./tracer/tracefile -run TestExportGolden -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("export differs from %s; rerun with -update after checking the change:\n%s", golden, got)
	}
}

// TestExportStructure checks the small trace's export against facts
// counted by hand from smallTrace, with encoding/json as the reader.
func TestExportStructure(t *testing.T) {
	out := exportString(t, smallTrace(), ExportOptions{})
	var doc struct {
		SchemaVersion    int
		DistributedInfo  map[string]any   `json:"distributedInfo"`
		DeviceProperties []map[string]any `json:"deviceProperties"`
		TraceEvents      []map[string]any `json:"traceEvents"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.SchemaVersion != 1 {
		t.Errorf("schemaVersion %d", doc.SchemaVersion)
	}
	if fmt.Sprint(doc.DistributedInfo["rank"]) != "3" || fmt.Sprint(doc.DistributedInfo["world_size"]) != "8" {
		t.Errorf("distributedInfo %v", doc.DistributedInfo)
	}
	if len(doc.DeviceProperties) != 1 {
		t.Fatalf("deviceProperties %v", doc.DeviceProperties)
	}
	dp := doc.DeviceProperties[0]
	for k, want := range map[string]string{"id": "0", "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": "85018279936",
		"computeMajor": "9", "computeMinor": "0", "numSms": "132", "warpSize": "32", "uuid": "GPU-0000"} {
		if got := fmt.Sprint(dp[k]); got != want {
			t.Errorf("deviceProperties.%s = %s, want %s", k, got, want)
		}
	}
	count := map[string]int{}
	var kernelTS []string
	extOf := map[string]string{} // name → External id
	for _, ev := range doc.TraceEvents {
		ph, _ := ev["ph"].(string)
		cat, _ := ev["cat"].(string)
		count[ph+"/"+cat]++
		name, _ := ev["name"].(string)
		args, _ := ev["args"].(map[string]any)
		if ph == "X" && cat == "kernel" {
			kernelTS = append(kernelTS, fmt.Sprint(ev["ts"], "+", ev["dur"], "@", ev["pid"], "/", ev["tid"]))
			extOf[name+fmt.Sprint(args["correlation"])] = fmt.Sprint(args["External id"])
		}
		if ph == "X" && cat == "user_annotation" && strings.HasPrefix(name, "ProfilerStep#") && name != "ProfilerStep#7" {
			t.Errorf("step named %q", name)
		}
		if ph == "M" && name == "process_name" && fmt.Sprint(ev["pid"]) == "0" && fmt.Sprint(args["name"]) != "GPU 0" {
			t.Errorf("device process named %v", args["name"])
		}
	}
	// Hand count from smallTrace: 3 kernels, 1 memcpy, 1 memset, 4
	// runtime, 1 driver, 1 cpu_op, range+step = 2 user_annotation, 1 GPU
	// range, 1 sync, 1 instant, 5 flow starts (every launch has GPU
	// work), 5 flow ends, 5 finite counters.
	want := map[string]int{"X/kernel": 3, "X/gpu_memcpy": 1, "X/gpu_memset": 1, "X/cuda_runtime": 4, "X/cuda_driver": 1,
		"X/cpu_op": 1, "X/user_annotation": 2, "X/gpu_user_annotation": 1, "X/cuda_sync": 1, "i/cpu_instant_event": 1,
		"s/ac2g": 5, "f/ac2g": 5, "C/": 5}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s events: %d, want %d (all: %v)", k, count[k], n, count)
		}
	}
	// base = 1712195495519689047 ns; kernel 1 at base+20000 ns for
	// 123456 ns → ts 1712195495519709.047 µs, dur 123.456 µs.
	wantTS := []string{
		"1712195495519709.047+123.456@0/7",
		"1712195495519839.047+100.001@0/7",
		"1712195495519949.047+1.76@0/13",
	}
	if !slices.Equal(kernelTS, wantTS) {
		t.Errorf("kernel ts/dur:\n got %v\nwant %v", kernelTS, wantTS)
	}
	// External ids: step=1, range=2, op=3 in trace order; the first two
	// kernels launch inside aten::mm (3), the driver launch at +200000 is
	// inside forward (2) only.
	for k, w := range map[string]string{`sm90_xmma_gemm_"bf16"11`: "3", `sm90_xmma_gemm_"bf16"12`: "3", "triton_poi_fused_add_013": "2"} {
		if extOf[k] != w {
			t.Errorf("External id of %s = %s, want %s", k, extOf[k], w)
		}
	}
}

func TestExportNoFlowsNoCounters(t *testing.T) {
	out := exportString(t, smallTrace(), ExportOptions{NoFlows: true, NoCounters: true})
	if bytes.Contains(out, []byte(`"ac2g"`)) || bytes.Contains(out, []byte(`"ph":"C"`)) {
		t.Errorf("flows or counters written although disabled")
	}
}

func TestExportSummaryOnly(t *testing.T) {
	tr := tracer.NewTrace("nsys-stats", "x.csv")
	tr.SummaryOnly = true
	err := WriteChrome(&bytes.Buffer{}, tr, ExportOptions{})
	if err == nil || !strings.Contains(err.Error(), "x.csv") {
		t.Fatalf("err = %v, want an error naming the file", err)
	}
}

// TestExportPython reads the export with Python's json module (an
// independent reader) and compares per-kernel counts and totals, taken by
// Python from the JSON decimals, with the same sums computed here from the
// source events.
func TestExportPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH; the independent JSON check needs it")
	}
	tr := smallTrace()
	for _, gz := range []bool{false, true} {
		name := "small.json"
		if gz {
			name += ".gz"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := ExportFile(path, tr, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		checkWithPython(t, py, path, tr)
	}
}

type pyReport struct {
	Kernels   map[string][2]int64 `json:"kernels"`
	FirstTS   map[string]int64    `json:"first_ts"`
	Flows     [2]int              `json:"flows"`
	Unmatched []int64             `json:"unmatched_f"`
	Counters  int                 `json:"counters"`
	DeviceIDs []int               `json:"device_ids"`
}

func checkWithPython(t *testing.T, py, path string, src *tracer.Trace) {
	t.Helper()
	cmd := exec.Command(py, filepath.Join("testdata", "export", "check_export.py"), path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 check of %s: %v: %s", path, err, stderr.String())
	}
	var rep pyReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("python3 output: %v: %s", err, out)
	}
	want := map[string][2]int64{}
	first := map[string]int64{}
	for i := range src.Events {
		e := &src.Events[i]
		if e.Kind != tracer.KindKernel {
			continue
		}
		n := src.Name(e)
		c := want[n]
		c[0]++
		c[1] += e.Dur
		want[n] = c
		if _, ok := first[n]; !ok {
			first[n] = e.Start
		}
	}
	if len(rep.Kernels) != len(want) {
		t.Errorf("%s: python saw %d kernel names, source has %d", path, len(rep.Kernels), len(want))
	}
	for n, w := range want {
		if rep.Kernels[n] != w {
			t.Errorf("%s: kernel %q: python count,total_ns %v, source %v", path, n, rep.Kernels[n], w)
		}
		if rep.FirstTS[n] != first[n] {
			t.Errorf("%s: kernel %q first ts: python %d ns, source %d ns", path, n, rep.FirstTS[n], first[n])
		}
	}
	if len(rep.Unmatched) > 0 {
		t.Errorf("%s: flow ends without a start: %v", path, rep.Unmatched)
	}
}

// kernelKey is one kernel as compared across a round trip.
type kernelKey struct {
	Name           string
	Start, Dur     int64
	Device, Stream int32
}

func kernelsOf(tr *tracer.Trace) ([]kernelKey, map[string][2]int64) {
	var ks []kernelKey
	tot := map[string][2]int64{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind != tracer.KindKernel {
			continue
		}
		n := tr.Name(e)
		ks = append(ks, kernelKey{n, e.Start, e.Dur, e.Device, e.Stream})
		c := tot[n]
		c[0]++
		c[1] += e.Dur
		tot[n] = c
	}
	slices.SortFunc(ks, func(a, b kernelKey) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Dur, b.Dur)
	})
	return ks, tot
}

func requireKineto(t *testing.T) {
	t.Helper()
	if !slices.Contains(Formats(), "kineto") {
		t.Skip("the Kineto importer is not registered in this build; the round trip needs it to read the export back")
	}
}

func compareRoundTrip(t *testing.T, label string, a, b *tracer.Trace) {
	t.Helper()
	ka, ta := kernelsOf(a)
	kb, tb := kernelsOf(b)
	if len(ka) == 0 {
		t.Fatalf("%s: no kernels in the source", label)
	}
	if len(ka) != len(kb) {
		t.Fatalf("%s: %d kernels before, %d after the round trip", label, len(ka), len(kb))
	}
	for n, w := range ta {
		if tb[n] != w {
			t.Errorf("%s: kernel %q count,total_ns %v after, %v before", label, n, tb[n], w)
		}
	}
	bad := 0
	for i := range ka {
		if ka[i] != kb[i] {
			if bad < 5 {
				t.Errorf("%s: kernel %d: %+v after, %+v before", label, i, kb[i], ka[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d kernels differ", label, bad, len(ka))
	}
}

// compareKinds checks that every kind keeps its event count and summed
// duration across the round trip.
func compareKinds(t *testing.T, label string, a, b *tracer.Trace) {
	t.Helper()
	type agg struct{ n, dur int64 }
	sum := func(tr *tracer.Trace) map[tracer.Kind]agg {
		m := map[tracer.Kind]agg{}
		for i := range tr.Events {
			e := &tr.Events[i]
			x := m[e.Kind]
			x.n++
			x.dur += e.Dur
			m[e.Kind] = x
		}
		return m
	}
	sa, sb := sum(a), sum(b)
	for k, v := range sa {
		if sb[k] != v {
			t.Errorf("%s: %s events: %d (%d ns) after, %d (%d ns) before", label, k, sb[k].n, sb[k].dur, v.n, v.dur)
		}
	}
	for k, v := range sb {
		if _, ok := sa[k]; !ok {
			t.Errorf("%s: %d %s events appeared", label, v.n, k)
		}
	}
}

func TestExportRoundTripSmall(t *testing.T) {
	requireKineto(t)
	src := smallTrace()
	path := filepath.Join(t.TempDir(), "small.json.gz")
	if err := ExportFile(path, src, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	compareRoundTrip(t, "small", src, back)
	compareKinds(t, "small", src, back)
	if back.Rank != 3 || back.World != 8 {
		t.Errorf("rank/world %d/%d after the round trip, want 3/8", back.Rank, back.World)
	}
	// Counters keep their names (the NaN sample is not written; a name
	// without a dot gets the series key "value"), and the run record its
	// entries: outputs and the stored peak are read by these names.
	var names []string
	for _, c := range back.Counters {
		names = append(names, back.Strings.Get(c.Name))
	}
	if want := []string{"gpu.util_pct", "gpu.util_pct", "proc.rss_bytes", "check.logits.rows", "rss.value"}; !slices.Equal(names, want) {
		t.Errorf("counters after the round trip %q, want %q", names, want)
	}
	if got := back.Meta["run.cmd"]; got != "python train.py --lr 1e-3" {
		t.Errorf("Meta run.cmd after the round trip %q", got)
	}
}

// TestExportRoundTripShared imports real Kineto traces, exports them and
// imports the export: every kernel keeps its name, exact ns start and
// duration, device and stream, and per-kernel totals are unchanged.
func TestExportRoundTripShared(t *testing.T) {
	requireKineto(t)
	dir := testutil.SharedTraces(t)
	py, _ := exec.LookPath("python3")
	files := []string{"hta_triton_example.json.gz", "hta_ns_resolution_v100.json.gz", "tracelens_h100_qwen15_sdpa_flash.json.gz", "tracelens_mi300_qwen15_aotriton.json.gz", "hta_sampled_rank0.json.gz"}
	if testing.Short() {
		files = files[:1]
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			src, err := Open(filepath.Join(dir, "kineto", f), Options{})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "out.json.gz")
			if err := ExportFile(path, src, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			back, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			compareRoundTrip(t, f, src, back)
			compareKinds(t, f, src, back)
			if back.Rank != src.Rank || back.World != src.World {
				t.Errorf("rank/world %d/%d after, %d/%d before", back.Rank, back.World, src.Rank, src.World)
			}
			if len(back.Devices) != len(src.Devices) {
				t.Errorf("%d devices after, %d before", len(back.Devices), len(src.Devices))
			}
			if py != "" {
				checkWithPython(t, py, path, src)
			}
		})
	}
}

func BenchmarkWriteChrome(b *testing.B) {
	dir := testutil.SharedTraces(b)
	if !slices.Contains(Formats(), "kineto") {
		b.Skip("Kineto importer not registered")
	}
	src, err := Open(filepath.Join(dir, "kineto", "hta_ns_resolution_v100.json.gz"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := WriteChrome(&buf, src, ExportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(src.Events)), "events/op")
	b.SetBytes(int64(buf.Len()))
}

// TestExportCPUDevicesAndPIDClash: the built-in loop's CPU device is named
// as such; GPU-kind events without a device get their own process; a CPU
// pid equal to a device id is moved so the two never share a process.
func TestExportCPUDevicesAndPIDClash(t *testing.T) {
	tr := tracer.NewTrace("rlktop", "demo")
	k := tr.Strings.Intern("matmul")
	tr.Devices = []tracer.Device{{ID: 0, Name: "Go CPU (in-process gotrace)", Vendor: "cpu"}}
	tr.Events = []tracer.Event{
		{Kind: tracer.KindKernel, Name: k, Start: 1000, Dur: 500, PID: 0, TID: 1, Device: 0, Stream: 0},
		{Kind: tracer.KindKernel, Name: k, Start: 2000, Dur: 500, PID: 0, TID: 1, Device: -1, Stream: 0},
		{Kind: tracer.KindRange, Name: tr.Strings.Intern("forward"), Start: 900, Dur: 2000, PID: 0, TID: 1, Device: -1},
	}
	out := string(exportString(t, tr, ExportOptions{}))
	for _, want := range []string{
		`"pid":0,"tid":0,"args":{"name":"device 0: Go CPU (in-process gotrace)"}`,
		fmt.Sprintf(`"pid":%d,"tid":0,"args":{"name":"host (CPU device)"}`, hostDevicePID),
		fmt.Sprintf(`"cat":"user_annotation","name":"forward","pid":%d,"tid":1`, cpuPIDOffset),
		// No launch call was traced: one is written on the op's thread at
		// its start, with a fresh correlation id (1) and the External id
		// of "forward" (1), which is open there.
		fmt.Sprintf(`"cat":"cuda_runtime","name":"rlktop launch","pid":%d,"tid":1,"ts":1,"dur":0,"args":{"External id":1,"correlation":1,`, cpuPIDOffset),
		fmt.Sprintf(`{"ph":"s","id":1,"pid":%d,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"}`, cpuPIDOffset),
		`"cat":"kernel","name":"matmul","pid":0,"tid":0,"ts":1,"dur":0.5,"args":{"External id":1,"device":0,"stream":0,"correlation":1}`,
		`{"ph":"f","id":1,"pid":0,"tid":0,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s\n%s", want, out)
		}
	}
}
