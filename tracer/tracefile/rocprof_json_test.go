package tracefile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// testdata/rocprofv3_tool.json is hand-made (no real rocprofv3 JSON is in
// shared/traces) in the layout rocprofiler-sdk's rocprofv3 writes and its
// own tests read: "rocprofiler-sdk-tool" → [process], kernel names through
// kernel_symbols by kernel_id, operation names through
// strings.buffer_records, roctx messages through strings.marker_api.
// Expected values are counted by hand from that file.
func TestRocprofV3JSONFixture(t *testing.T) {
	p := filepath.Join("testdata", "rocprofv3_tool.json")
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != "rocprofv3-json" {
		t.Fatalf("format %q", tr.Format)
	}
	got := norm(totalsOf(tr))
	want := norm(refTotals{
		Kernels: refGroup{Count: 3, NS: 750 + 300 + 650, ByName: map[string][2]int64{
			"attn_fwd": {2, 750 + 650}, "Cijk_Ailk_Bljk_SB_MT64x64x16_MI16x16x4x1": {1, 300}}},
		Memcpy:   refGroup{Count: 1, NS: 300, Bytes: 4194304},
		Ranges:   refGroup{Count: 1, NS: 1700, ByName: map[string][2]int64{"rollout": {1, 1700}}},
		Instants: 1,
		Runtime:  4,
	})
	if !reflectDeep(got, want) {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Kind {
		case tracer.KindKernel:
			// Launched at 900 and 1900 inside "rollout" [800, 2500); the
			// third launch (2900) is after it.
			want := []string{"rollout"}
			if e.Corr == 13 {
				want = nil
			}
			if r := rangesOf(tr, e); !slices.Equal(r, want) || e.Device != 0 || e.Stream != 1 || e.PID != 4242 {
				t.Errorf("kernel corr %d: ranges %v, %+v", e.Corr, r, *e)
			}
		case tracer.KindMemcpy:
			if tr.Name(e) != "MEMORY_COPY_HOST_TO_DEVICE" || e.Device != 0 {
				t.Errorf("memcpy %q %+v", tr.Name(e), *e)
			}
		case tracer.KindInstant:
			if tr.Name(e) != "step boundary" || e.TID != 4243 {
				t.Errorf("instant %q", tr.Name(e))
			}
		case tracer.KindRuntime:
			if n := tr.Name(e); n != "hipLaunchKernel" && n != "hipMemcpyAsync" {
				t.Errorf("runtime %q", n)
			}
		}
	}
	if len(tr.Devices) != 1 || tr.Devices[0].Name != "AMD Radeon 8060S Graphics" || tr.Devices[0].ComputeCap != "gfx1151" {
		t.Errorf("devices %+v", tr.Devices)
	}
}

func TestRocprofV3JSONBadInput(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "rocprofv3_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, c := range []struct{ name, in, msg, field string }{
		{"truncated", s[:len(s)/2], "JSON ends early", ""},
		{"string timestamp", strings.Replace(s, `"start_timestamp": 1000`, `"start_timestamp": "1000"`, 1), "expected int64", "start_timestamp"},
		{"no dispatch_info", strings.Replace(s, `"dispatch_info"`, `"dispatch_inf0"`, 1), "no dispatch_info", "rocprofiler-sdk-tool[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in), "x.json", 0, Options{})
			var te *Error
			if !errors.As(err, &te) || !strings.Contains(te.Error(), c.msg) || !strings.Contains(te.Field, c.field) {
				t.Errorf("got %v", err)
			}
		})
	}
	// The offset of a type error points into the file at the bad value.
	bad := strings.Replace(s, `"start_timestamp": 2000`, `"start_timestamp": "2000"`, 1)
	_, err = Read(strings.NewReader(bad), "x.json", 0, Options{})
	var te *Error
	if at := int64(strings.Index(bad, `"2000"`)); !errors.As(err, &te) || te.Offset < at || te.Offset > at+8 {
		t.Errorf("offset of %v, want about %d", err, at)
	}
	// Chrome-trace JSON (rocprof v1 / Kineto) is not this format.
	for _, h := range []string{`{"traceEvents":[{}]}`, `[{"ts":"1"}]`, `{"metadata":{},"rocprofiler-sdk-tool":[]}`} {
		if sniffRocprofJSON([]byte(h)) {
			t.Errorf("sniffed %s", h)
		}
	}
}

func FuzzRocprofJSON(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "rocprofv3_tool.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"rocprofiler-sdk-tool": {"buffer_records": {"kernel_dispatch": [{"dispatch_info": {"kernel_id": 9}}]}}}`))
	f.Add([]byte(`{"rocprofiler-sdk-tool": [{"buffer_records": {"marker_api": [{"kind": -1, "operation": 99}]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !sniffRocprofJSON(b) {
			return
		}
		_, err := readRocprofJSON(strings.NewReader(string(b)), "fuzz.json", Options{})
		checkFuzzErr(t, err)
	})
}

// A counter-collection run: dispatches only under callback_records, no
// buffer_records. The warning counts what each section holds (by hand: 2
// counter records, 1 HIP call).
func TestRocprofJSONNoGPUWarning(t *testing.T) {
	in := `{"rocprofiler-sdk-tool":[{"metadata":{"pid":7},"agents":[],"strings":{"buffer_records":[]},
		"callback_records":{"counter_collection":[{"dispatch_data":{}},{"dispatch_data":{}}]},
		"buffer_records":{"hip_api":[{"kind":0,"operation":0,"thread_id":7,"correlation_id":{"internal":1},"start_timestamp":10,"end_timestamp":20}]}}]}`
	tr, err := Read(strings.NewReader(in), "counters.json", int64(len(in)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := noGPUWarn + " by the rocprofv3-json importer; it found 1 processes; buffer_records kernel_dispatch 0, memory_copy 0, hip_api 1, hsa_api 0, marker_api 0; callback_records counter_collection 2"
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], want) {
		t.Errorf("warnings %q", tr.Warnings)
	}
}
