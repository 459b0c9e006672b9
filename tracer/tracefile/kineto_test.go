package tracefile

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
)

// kinetoExpected is one file's entry in testdata/kineto_expected.json,
// written by scripts/ref_kineto.py (an independent stdlib-json + decimal
// computation; see the script for how to regenerate).
type kinetoExpected struct {
	KernelCount   int64 `json:"kernel_count"`
	KernelTotalNs int64 `json:"kernel_total_ns"`
	MemcpyCount   int64 `json:"memcpy_count"`
	MemcpyTotalNs int64 `json:"memcpy_total_ns"`
	MemsetCount   int64 `json:"memset_count"`
	MemsetTotalNs int64 `json:"memset_total_ns"`
	KernelBusyNs  int64 `json:"busy_ns"`
	Kernels       []struct {
		Name    string `json:"name"`
		Count   int64  `json:"count"`
		TotalNs int64  `json:"total_ns"`
	} `json:"kernels"`
}

// busyNs is the union of kernel, memcpy and memset intervals per device,
// summed over devices, computed straight from the imported events.
func busyNs(t *tracer.Trace) int64 {
	per := map[int32][][2]int64{}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind == tracer.KindKernel || e.Kind == tracer.KindMemcpy || e.Kind == tracer.KindMemset {
			per[e.Device] = append(per[e.Device], [2]int64{e.Start, e.End()})
		}
	}
	var total int64
	for _, ivs := range per {
		slices.SortFunc(ivs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
		cs, ce := ivs[0][0], ivs[0][1]
		for _, iv := range ivs[1:] {
			if iv[0] > ce {
				total += ce - cs
				cs, ce = iv[0], iv[1]
			} else if iv[1] > ce {
				ce = iv[1]
			}
		}
		total += ce - cs
	}
	return total
}

func TestKinetoSharedTraces(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	raw, err := os.ReadFile(filepath.Join("testdata", "kineto_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]kinetoExpected
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(files) != len(want) {
		t.Errorf("%d trace files in %s but %d in kineto_expected.json; regenerate it with scripts/ref_kineto.py", len(files), dir, len(want))
	}
	for _, f := range files {
		base := filepath.Base(f)
		t.Run(base, func(t *testing.T) {
			w, ok := want[base]
			if !ok {
				t.Fatalf("no expectation for %s; regenerate testdata/kineto_expected.json", base)
			}
			tr, err := Open(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != "kineto" {
				t.Fatalf("format %q", tr.Format)
			}
			// What the importer read: without the kernels made from CPU
			// operators of a trace with no GPU work (checked against
			// report/testdata/check_report.py in report's tests).
			tr.Events = slices.DeleteFunc(tr.Events, func(e tracer.Event) bool { return e.IsCPUOpKernel() })
			type agg struct{ n, ns int64 }
			got := map[string]*agg{}
			var kc, kns, mc, mns, sc, sns int64
			for i := range tr.Events {
				e := &tr.Events[i]
				switch e.Kind {
				case tracer.KindKernel:
					a := got[tr.Name(e)]
					if a == nil {
						a = &agg{}
						got[tr.Name(e)] = a
					}
					a.n++
					a.ns += e.Dur
					kc++
					kns += e.Dur
				case tracer.KindMemcpy:
					mc++
					mns += e.Dur
				case tracer.KindMemset:
					sc++
					sns += e.Dur
				}
			}
			check := func(what string, got, want int64) {
				if got != want {
					t.Errorf("%s = %d, reference %d", what, got, want)
				}
			}
			check("kernel count", kc, w.KernelCount)
			check("kernel total ns", kns, w.KernelTotalNs)
			check("memcpy count", mc, w.MemcpyCount)
			check("memcpy total ns", mns, w.MemcpyTotalNs)
			check("memset count", sc, w.MemsetCount)
			check("memset total ns", sns, w.MemsetTotalNs)
			if kc+mc+sc > 0 {
				check("busy ns", busyNs(tr), w.KernelBusyNs)
			}
			if len(got) != len(w.Kernels) {
				t.Errorf("%d distinct kernel names, reference %d", len(got), len(w.Kernels))
			}
			for _, k := range w.Kernels {
				a := got[k.Name]
				if a == nil {
					t.Errorf("kernel %.80q missing", k.Name)
					continue
				}
				if a.n != k.Count || a.ns != k.TotalNs {
					t.Errorf("kernel %.80q: count %d total %d ns, reference %d / %d ns", k.Name, a.n, a.ns, k.Count, k.TotalNs)
				}
			}
			for i := range tr.Events {
				e := &tr.Events[i]
				if e.Kind.IsGPU() && e.TID != -1 {
					t.Fatalf("GPU event %q has TID %d, want -1", tr.Name(e), e.TID)
				}
				if e.Dur < 0 {
					t.Fatalf("negative Dur in %q", tr.Name(e))
				}
			}
		})
	}
}

func findEvent(t *testing.T, tr *tracer.Trace, name string, start int64) *tracer.Event {
	t.Helper()
	for i := range tr.Events {
		e := &tr.Events[i]
		if tr.Name(e) == name && (start < 0 || e.Start == start) {
			return e
		}
	}
	t.Fatalf("no event %q at %d ns", name, start)
	return nil
}

// Values read by eye from the files (zcat | grep) and converted by hand.
func TestKinetoExactValues(t *testing.T) {
	shared := testutil.SharedTraces(t)
	tr, err := Open(filepath.Join(shared, "kineto", "hta_ns_resolution_v100.json.gz"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "ts":1712195495519689.047,"dur":63.813 — beyond float64's exact range.
	e := findEvent(t, tr, "autograd::engine::evaluate_function: DivBackward1", 1712195495519689047)
	if e.Dur != 63813 || e.Kind != tracer.KindCPUOp || e.PID != 1102 || e.TID != 1262 || e.Device != -1 {
		t.Errorf("DivBackward1: %+v", *e)
	}
	// "ts":1712195495506161.288,"dur":1.280, bytes 256, device 0, stream 7, correlation 135139.
	m := findEvent(t, tr, "Memcpy DtoD (Device -> Device)", 1712195495506161288)
	if m.Dur != 1280 || m.Kind != tracer.KindMemcpy || m.Value != 256 || m.Device != 0 || m.Stream != 7 || m.Corr != 135139 || m.TID != -1 {
		t.Errorf("memcpy: %+v", *m)
	}
	// Its launch lies inside ProfilerStep#101 (ts 1712195495502094.565, dur 35115.869).
	st := findEvent(t, tr, "ProfilerStep#101", 1712195495502094565)
	if st.Kind != tracer.KindStep || st.Value != 101 || st.Dur != 35115869 {
		t.Errorf("step: %+v", *st)
	}
	if c := tr.Contexts[m.Ctx]; m.Ctx == 0 || c.Step != 101 {
		t.Errorf("memcpy context %d = %+v, want step 101", m.Ctx, c)
	}
	if tr.Rank != 0 || tr.World != 1 || len(tr.Devices) != 8 || tr.Devices[3].Name != "Tesla V100-SXM2-32GB" ||
		tr.Devices[3].ID != 3 || tr.Devices[3].SMs != 80 || tr.Devices[3].TotalMemory != 34079637504 || tr.Devices[3].ComputeCap != "7.0" || tr.Devices[3].Vendor != "nvidia" {
		t.Errorf("header: rank %d world %d devices %+v", tr.Rank, tr.World, tr.Devices)
	}
	if tr.Meta["trace_id"] != "094DFF9CD7781F8ADDEAFBA6A8855CA7" {
		t.Errorf("meta trace_id %q", tr.Meta["trace_id"])
	}
	if _, ok := tr.Meta["displayTimeUnit"]; ok {
		t.Errorf("displayTimeUnit should be ignored")
	}

	// 2021-style categories and string tids, ts 0 dur 0.
	tr, err = Open(filepath.Join(shared, "malformed", "kineto-109_ts0_dur0_RECONSTRUCTED.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := findEvent(t, tr, "volta_sgemm_64x64_nt", 0)
	if k.Kind != tracer.KindKernel || k.Dur != 0 || k.Device != 0 || k.Stream != 7 || k.Corr != 106123 || k.TID != -1 {
		t.Errorf("kernel: %+v", *k)
	}
	r := findEvent(t, tr, "cudaLaunchKernel", 1615207264505000000)
	if r.Kind != tracer.KindRuntime || r.Dur != 6000 || r.Corr != 106123 || r.PID != 29463 || r.TID >= -1 {
		t.Errorf("runtime (tid \"3239786240\" exceeds int32, so it gets a negative id): %+v", *r)
	}

	// displayTimeUnit "ns" changes nothing: ts stays µs.
	tr, err = Open(filepath.Join(shared, "malformed", "perfetto-106_float_ts_displayTimeUnit_ns.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := findEvent(t, tr, "time.sleep", 9089707546)
	if s.Dur != 1001126100 || s.Kind != tracer.KindUnknown {
		t.Errorf("time.sleep: %+v", *s)
	}
	tr, err = Open(filepath.Join(shared, "malformed", "perfetto-426_large_ts_precision_ASSEMBLED.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := findEvent(t, tr, "Load build", 1672924881307000000); e.Dur != 32786000000 {
		t.Errorf("Load build: %+v", *e)
	}
}

func TestKinetoMalformedFixtures(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "malformed")
	open := func(name string) *tracer.Trace {
		t.Helper()
		tr, err := Open(filepath.Join(dir, name), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return tr
	}
	type iv struct {
		name       string
		start, dur int64
	}
	evs := func(tr *tracer.Trace) []iv {
		var out []iv
		for i := range tr.Events {
			e := &tr.Events[i]
			out = append(out, iv{tr.Name(e), e.Start, e.Dur})
		}
		slices.SortFunc(out, func(a, b iv) int { return strings.Compare(a.name, b.name) })
		return out
	}
	warned := func(tr *tracer.Trace, sub string) bool {
		for _, w := range tr.Warnings {
			if strings.Contains(w, sub) {
				return true
			}
		}
		return false
	}
	// No closing ']' (with and without a trailing comma): allowed.
	for _, f := range []string{"simple-partial.json", "simple-partial-trailing-comma.json"} {
		tr := open(f)
		want := []iv{{"alpha", 0, 14000}, {"beta", 1000, 12000}, {"epsilon", 7000, 0}, {"gamma", 2000, 5000}}
		if got := evs(tr); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", f, got, want)
		}
		if !warned(tr, "not closed") || !warned(tr, `have no "dur"`) {
			t.Errorf("%s: warnings %q", f, tr.Warnings)
		}
	}
	tr := open("too-many-end-events.json")
	if got := evs(tr); !slices.Equal(got, []iv{{"alpha", 0, 14000}, {"beta", 1000, 12000}}) {
		t.Errorf("too-many-end-events: %v", got)
	}
	if !warned(tr, `"gamma" at ts 5000 ns on pid 0 tid 0 has no open "B"`) || !warned(tr, "(byte 248)") {
		t.Errorf("too-many-end-events warnings: %q", tr.Warnings)
	}
	// E closes the most recent B whatever its name (LIFO), with a warning.
	tr = open("unbalanced-name.json")
	if got := evs(tr); !slices.Equal(got, []iv{{"alpha", 0, 10000}, {"beta", 1000, 8000}}) {
		t.Errorf("unbalanced-name: %v", got)
	}
	if !warned(tr, "names differ") {
		t.Errorf("unbalanced-name warnings: %q", tr.Warnings)
	}
	tr = open("invalid-x-nesting.json")
	if got := evs(tr); !slices.Equal(got, []iv{{"alpha", 0, 10000}, {"beta", 5000, 10000}}) {
		t.Errorf("invalid-x-nesting: %v", got)
	}
	if !warned(tr, "partly overlap") {
		t.Errorf("invalid-x-nesting warnings: %q", tr.Warnings)
	}
	// Counters, instants, B/E with an empty E name, P samples skipped.
	tr = open("tf_demo_mixed_phases.json")
	var vals []float64
	for _, c := range tr.Counters {
		if tr.Strings.Get(c.Name) != "counter.value" || c.Device != -1 {
			t.Errorf("counter %q", tr.Strings.Get(c.Name))
		}
		vals = append(vals, c.Value)
	}
	if !slices.Equal(vals, []float64{10, 1, 5, 1, 10}) {
		t.Errorf("counter values %v", vals)
	}
	var inst, spans int
	for i := range tr.Events {
		if tr.Events[i].Kind == tracer.KindInstant {
			inst++
		} else {
			spans++
		}
	}
	// 6 instants (I ×4 thread-level incl. the global one, ProcessWideEvent1 ×1, ThreadLevelI2);
	// 8 B/E pairs + 4 X.
	if inst != 6 || spans != 12 {
		t.Errorf("tf_demo: %d instants, %d spans", inst, spans)
	}
	if tr.Meta["skipped_events"] != "P:3" {
		t.Errorf("skipped %q", tr.Meta["skipped_events"])
	}
	if e := findEvent(t, tr, "A long name that doesnt fit but is exceedingly informative", 826000); e.Dur != 7000 {
		t.Errorf("closed by the E with an empty name at 833: %+v", *e)
	}
}

func TestParseMicrosNs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  error
	}{
		{"1712195495519689.047", 1712195495519689047, nil},
		{"0", 0, nil},
		{"-0", 0, nil},
		{"63.813", 63813, nil},
		{"1.28", 1280, nil},
		{"123.5", 123500, nil},
		{"-2.5", -2500, nil},
		{"1.5e3", 1500000, nil},
		{"1.5E+3", 1500000, nil},
		{"15e-1", 1500, nil},
		{"1e-3", 1, nil},
		{"0.0005", 0, nil},  // half → even (0)
		{"0.0015", 2, nil},  // half → even (2)
		{"0.0025", 2, nil},  // half → even (2)
		{"0.00251", 3, nil}, // above half
		{"0.0004999", 0, nil},
		{"2.0006", 2001, nil},
		{"-0.0015", -2, nil},
		{"1e-20", 0, nil},
		{"0e999999", 0, nil},
		{"9223372036854775.807", 9223372036854775807, nil},
		{"-9223372036854775.808", -9223372036854775808, nil},
		{"9223372036854775.808", 0, kErrNumOverflow},
		{"1e30", 0, kErrNumOverflow},
		{"", 0, kErrNumSyntax},
		{"-", 0, kErrNumSyntax},
		{".5", 0, kErrNumSyntax},
		{"1.", 0, kErrNumSyntax},
		{"1e", 0, kErrNumSyntax},
		{"1.2.3", 0, kErrNumSyntax},
		{"12a", 0, kErrNumSyntax},
		{"--1", 0, kErrNumSyntax},
		{" 1", 0, kErrNumSyntax},
	} {
		got, err := parseMicrosNs([]byte(c.in))
		if got != c.want || err != c.err {
			t.Errorf("parseMicrosNs(%q) = %d, %v; want %d, %v", c.in, got, err, c.want, c.err)
		}
	}
}

func readKinetoString(s string) (*tracer.Trace, error) {
	return Read(strings.NewReader(s), "in.json", int64(len(s)), Options{})
}

func TestKinetoInputForms(t *testing.T) {
	long := strings.Repeat("x", 6000)
	in := `{"deviceProperties":[{"id":0,"name":"AMD Instinct MI300X","computeMajor":9,"computeMinor":4}],
	"distributedInfo":{"rank":3,"world_size":8},"displayTimeUnit":"ms","schemaVersion":1,"with_stack":true,"metadata":{"a":1},
	"traceEvents":[
	 {"ph":"X","cat":"Kernel","name":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","pid":"2","tid":"stream 7","ts":"10.5","dur":1.5e0,"args":{"device":5,"stream":"9","correlation":"42"}},
	 {"ph":"X","cat":"RUNTIME","name":"cudaLaunchKernel","pid":"[pid 123]","tid":7,"ts":9,"dur":2,"args":{"correlation":42}},
	 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":"[pid 123]","tid":7,"ts":1,"dur":100},
	 {"ph":"X","cat":"gpu_memset","name":"Memset","pid":0,"tid":1,"ts":20,"dur":1,"args":{"Bytes":4096,"External id":77}},
	 {"ph":"X","cat":"weird","name":"` + long + `","pid":1,"tid":1,"ts":0.0001,"dur":0},
	 {"ph":"s","id":1,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"},
	 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":"[pid 123]","tid":7,"ts":8,"dur":4,},
	 {"ph":"M","name":"process_labels","pid":0,"args":{"labels":"GPU 4"}},
	 {"ph":"C","name":"bw","pid":0,"ts":3,"args":{"a":NaN,"b":-Infinity,"c":2.5}}
	]}`
	tr, err := readKinetoString(in)
	if err != nil {
		t.Fatal(err)
	}
	k := findEvent(t, tr, "café 😀 \"q\" \\ /", 10500)
	if k.Kind != tracer.KindKernel || k.Dur != 1500 || k.Device != 5 || k.Stream != 9 || k.Corr != 42 || k.PID != 2 || k.TID != -1 {
		t.Errorf("kernel %+v", *k)
	}
	r := findEvent(t, tr, "cudaLaunchKernel", 9000)
	if r.Kind != tracer.KindRuntime || r.PID > -2 {
		t.Errorf("runtime %+v", *r)
	}
	if c := tr.Contexts[k.Ctx]; c.Step != 7 || len(c.Ops) != 1 || tr.Strings.Get(c.Ops[0]) != "aten::mm" {
		t.Errorf("kernel context %+v", c)
	}
	ms := findEvent(t, tr, "Memset", 20000)
	if ms.Value != 4096 || ms.Corr != 77 || ms.Device != 4 || ms.Stream != 1 {
		t.Errorf("memset (device from process_labels GPU 4, corr from External id) %+v", *ms)
	}
	w := findEvent(t, tr, long, 0)
	if w.Kind != tracer.KindUnknown {
		t.Errorf("unknown category kind %v", w.Kind)
	}
	if len(tr.Devices) != 1 || tr.Devices[0].Vendor != "amd" || tr.Devices[0].ComputeCap != "9.4" || tr.Rank != 3 || tr.World != 8 {
		t.Errorf("header %+v rank %d world %d", tr.Devices, tr.Rank, tr.World)
	}
	if tr.Meta["schemaVersion"] != "1" || tr.Meta["with_stack"] != "true" || tr.Meta["skipped_events"] != "s:1" {
		t.Errorf("meta %v", tr.Meta)
	}
	if len(tr.Counters) != 3 || tr.Strings.Get(tr.Counters[2].Name) != "bw.c" || tr.Counters[2].Value != 2.5 || tr.Counters[2].TS != 3000 {
		t.Errorf("counters (NaN and -Infinity accepted as Python's json writes them) %+v", tr.Counters)
	}
	if len(tr.Events) != 6 {
		t.Errorf("%d events", len(tr.Events))
	}

	// traceEvents before deviceProperties; gzip by magic; object not closed.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}],"deviceProperties":[{"id":0,"name":"NVIDIA H100"}]}`))
	zw.Close()
	tr, err = Read(bytes.NewReader(gz.Bytes()), "in.json.gz", int64(gz.Len()), Options{})
	if err != nil || len(tr.Events) != 1 || len(tr.Devices) != 1 || tr.Devices[0].Vendor != "nvidia" {
		t.Fatalf("gz: %v %+v", err, tr)
	}
}

// TestKinetoBadInput: damage that stops the reader. Bad values in one
// event skip that event only: TestKinetoBadValuesSkipped.
func TestKinetoBadInput(t *testing.T) {
	good := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}`
	for _, c := range []struct {
		name, in  string
		offset    int64 // -2: don't check
		field     string
		msg       string
		wantTrace bool // partial trace returned with the error
	}{
		{"empty", "", 0, "", "empty", false},
		{"blank", "  \n ", 0, "", "empty", false},
		{"not a trace object", `{"foo":1}`, 0, "traceEvents", "no \"traceEvents\"", false},
		{"array of numbers", `[1,2]`, 1, "", "expected '{'", false},
		{"no ph", `[{"name":"a","ts":5}]`, 1, "ph", `no "ph"`, false},
		{"truncated mid event", `{"traceEvents":[` + good + `,{"ph":"X","name":"a","ts":12`, 112, "ts", "the file ends inside event 1 starting at byte 84", true},
		{"truncated in string", `[` + good + `,{"ph":"X","name":"abc`, 90, "name", "ends inside event 1", true},
		{"truncated between events (object form)", `{"traceEvents":[` + good + `,`, -2, "traceEvents", "ends inside the traceEvents array after 1 events", true},
		{"bad json", `[` + good + ` x]`, 69, "", "expected ',' or ']'", true},
		{"mismatched brackets in args", `[{"ph":"X","ts":1,"args":{"a":[1}}]`, 32, "args.a", "matching brackets", false},
		{"bad literal", `[{"ph":"X","ts":1,"x":tru}]`, 25, "", "expected a JSON value, found '}'", false},
		{"traceEvents not array", `{"traceEvents":{}}`, 15, "traceEvents", "expected an array", false},
		{"top-level string", `"hi"`, 0, "", "expected '{' or '['", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := ReadKineto(strings.NewReader(c.in), "bad.json", Options{})
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if fe.Path != "bad.json" || (c.offset != -2 && fe.Offset != c.offset) || fe.Field != c.field || !strings.Contains(fe.Error(), c.msg) {
				t.Errorf("got %q (offset %d field %q), want offset %d field %q containing %q", fe.Error(), fe.Offset, fe.Field, c.offset, c.field, c.msg)
			}
			if (tr != nil) != c.wantTrace {
				t.Errorf("trace returned = %v, want %v", tr != nil, c.wantTrace)
			}
			if tr != nil && len(tr.Events) != 1 {
				t.Errorf("partial trace holds %d events, want the 1 before the damage", len(tr.Events))
			}
		})
	}
}

// A real .json.gz cut in half: the error names the file and says truncated,
// and the events before the cut come back.
func TestKinetoTruncatedGzip(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_sampled_rank0.json.gz")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := raw[:len(raw)/2]
	tr, err := Read(bytes.NewReader(cut), path, int64(len(cut)), Options{})
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != path || fe.Offset <= 0 || !strings.Contains(fe.Error(), "gzip -t") {
		t.Fatalf("err = %v", err)
	}
	if tr == nil || len(tr.Events) == 0 {
		t.Fatalf("no partial trace")
	}
	// Truncated plain JSON, cut inside an event.
	plain, _ := gzip.NewReader(bytes.NewReader(raw))
	var buf bytes.Buffer
	buf.ReadFrom(plain)
	half := buf.Bytes()[:buf.Len()/2]
	tr, err = Read(bytes.NewReader(half), "half.json", int64(len(half)), Options{})
	if !errors.As(err, &fe) || !strings.Contains(fe.Error(), "truncated") || tr == nil || len(tr.Events) < 1000 {
		t.Fatalf("half: err %v, events %d", err, len(tr.Events))
	}
}

func TestKinetoMergeRuns(t *testing.T) {
	seed := uint64(7)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for trial := 0; trial < 200; trial++ {
		n := rnd(300)
		ev := make([]tracer.Event, n)
		x := make([]int32, n)
		for i := range ev {
			switch trial % 3 {
			case 0: // random
				ev[i].Start = int64(rnd(50))
			case 1: // two sorted runs with a few late events
				ev[i].Start = int64(i%(n/2+1)*10 + rnd(3)*rnd(2)*-25)
			default: // ascending with short steps back
				ev[i].Start = int64(i*5 - rnd(4)*rnd(2)*12)
			}
			ev[i].Dur = int64(rnd(5))
			x[i] = int32(i)
		}
		want := slices.Clone(x)
		slices.SortStableFunc(want, func(a, b int32) int {
			ea, eb := &ev[a], &ev[b]
			if c := cmp.Compare(ea.Start, eb.Start); c != 0 {
				return c
			}
			return cmp.Compare(eb.Dur, ea.Dur)
		})
		got, _ := kMergeRuns(ev, x, nil)
		for k := range got {
			if ev[got[k]].Start != ev[want[k]].Start || ev[got[k]].Dur != ev[want[k]].Dur {
				t.Fatalf("trial %d n=%d: position %d holds %+v, want %+v", trial, n, k, ev[got[k]], ev[want[k]])
			}
		}
		if len(got) != n {
			t.Fatalf("lost elements")
		}
	}
}

// Events written by encoding/json (escapes, non-ASCII, names up to 200 KB
// that straddle the scanner's window) come back with the same names and
// exact times.
func TestKinetoMatchesEncodingJSON(t *testing.T) {
	type ev struct {
		Ph   string         `json:"ph"`
		Cat  string         `json:"cat"`
		Name string         `json:"name"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Ts   json.Number    `json:"ts"`
		Dur  json.Number    `json:"dur"`
		Args map[string]any `json:"args,omitempty"`
	}
	pieces := []string{"a", "é", "😀", `"`, `\`, "/", "\n", "\t", "\u2028", "<>&", "aten::mm", " ", "\x01"}
	var evs []ev
	seed := uint64(12345)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	var wantTs, wantDur []int64
	for i := 0; i < 3000; i++ {
		var sb strings.Builder
		n := 1 + rnd(40)
		if i%500 == 7 {
			n = 200000 // ~200 KB: longer than the initial window
		}
		for sb.Len() < n {
			sb.WriteString(pieces[rnd(len(pieces))])
		}
		us := int64(1712195495000000 + i*1000 + rnd(1000))
		frac := rnd(1000)
		nd := rnd(4) // 0..3 fraction digits
		ts := fmt.Sprint(us)
		ns := us * 1000
		switch nd {
		case 1:
			ts += fmt.Sprintf(".%d", frac%10)
			ns += int64(frac%10) * 100
		case 2:
			ts += fmt.Sprintf(".%02d", frac%100)
			ns += int64(frac%100) * 10
		case 3:
			ts += fmt.Sprintf(".%03d", frac)
			ns += int64(frac)
		}
		dur := rnd(100000)
		e := ev{Ph: "X", Cat: "cpu_op", Name: sb.String(), Pid: 1, Tid: 2, Ts: json.Number(ts), Dur: json.Number(fmt.Sprintf("%d.%03d", dur/1000, dur%1000))}
		if i%3 == 0 {
			e.Args = map[string]any{"External id": i, "Input Dims": [][]int{{1, 2}, {3}}, "note": `x"}]{[`}
		}
		evs = append(evs, e)
		wantTs = append(wantTs, ns)
		wantDur = append(wantDur, int64(dur))
	}
	raw, err := json.Marshal(map[string]any{"traceEvents": evs, "schemaVersion": 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Read(bytes.NewReader(raw), "gen.json", int64(len(raw)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The operators, in order, then (no GPU work) one kernel per operator
	// with self time (tracer.Trace.CPUOpKernels) — here every one: they
	// sit on one thread, at most a few nest.
	var ops int
	for i := range tr.Events {
		if tr.Events[i].Kind == tracer.KindCPUOp {
			ops++
		}
	}
	if ops != len(evs) {
		t.Fatalf("%d operators, want %d", ops, len(evs))
	}
	for i := range evs {
		e := &tr.Events[i]
		if tr.Name(e) != evs[i].Name || e.Start != wantTs[i] || e.Dur != wantDur[i] {
			t.Fatalf("event %d: name %.40q start %d dur %d; want %.40q %d %d", i, tr.Name(e), e.Start, e.Dur, evs[i].Name, wantTs[i], wantDur[i])
		}
	}
}

// rocprof v1 writes Chrome-trace JSON whose first event is an empty object
// and whose ts/dur are strings (ROCm rocprofiler v1 docs); both must read.
func TestKinetoRocprofV1EmptyFirstEvent(t *testing.T) {
	in := `{"traceEvents":[{},{"ph":"X","name":"Cijk_Ailk_Bljk_SB_MT64x64x8","cat":"kernel","pid":2,"tid":1,"ts":"100.5","dur":"20.25"}]}`
	tr, err := Read(strings.NewReader(in), "v1.json", 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, e := range tr.Events {
		if e.Kind == tracer.KindKernel {
			n++
			// Hand conversion: 100.5 µs = 100500 ns; 20.25 µs = 20250 ns.
			if e.Start != 100500 || e.Dur != 20250 {
				t.Fatalf("kernel at %d for %d ns", e.Start, e.Dur)
			}
		}
	}
	if n != 1 || len(tr.Warnings) == 0 || !strings.Contains(tr.Warnings[0], "empty") {
		t.Fatalf("%d kernels, warnings %q", n, tr.Warnings)
	}
}
