package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// snap is a hand-written snapshot (the numbers of attrib's hand trace:
// see TestAggregateHandCounts there).
func snap() *attrib.Snapshot {
	return &attrib.Snapshot{
		Source: "hand.json", Format: "kineto", Rank: -1,
		Devices: []tracer.Device{{ID: 0, Name: "NVIDIA A100-SXM4-40GB", Vendor: "nvidia"}},
		Totals:  attrib.Totals{KernelCount: 6, KernelTotalNs: 85, TransferCount: 1, TransferNs: 50, GPUTotalNs: 135, GPUBusyNs: 130, KernelBusyNs: 80, SpanNs: 450},
		Kernels: []attrib.KernelRow{
			{Name: "ampere_sgemm_128x64_nn", DisplayName: "ampere_sgemm_128x64_nn", Kind: tracer.KindKernel, Category: "gemm", Count: 4, TotalNs: 70, MeanNs: 17, MinNs: 10, MaxNs: 30, P50Ns: 10, P99Ns: 30, Share: 70.0 / 85, Stage: "forward"},
			{Name: "void f<int>(int|x)", DisplayName: "f", Kind: tracer.KindKernel, Category: "attention", Count: 2, TotalNs: 15, MeanNs: 7, MinNs: 5, MaxNs: 10, P50Ns: 5, P99Ns: 10, Share: 15.0 / 85},
		},
		Transfers:  []attrib.KernelRow{{Name: "Memcpy HtoD (Pinned -> Device)", DisplayName: "Memcpy HtoD (Pinned -> Device)", Kind: tracer.KindMemcpy, Category: "memcpy", Count: 1, TotalNs: 50, MeanNs: 50, MinNs: 50, MaxNs: 50, P50Ns: 50, P99Ns: 50, Share: 1}},
		Categories: []attrib.GroupRow{{Key: "gemm", Count: 4, TotalNs: 70, Share: 70.0 / 135}, {Key: "memcpy", Count: 1, TotalNs: 50, Share: 50.0 / 135}, {Key: "attention", Count: 2, TotalNs: 15, Share: 15.0 / 135}},
		Stages:     []attrib.GroupRow{{Key: "forward", Count: 3, TotalNs: 60, Share: 60.0 / 135}, {Key: "(none)", Count: 1, TotalNs: 50, Share: 50.0 / 135}},
		Steps:      []attrib.StepRow{{Step: 1, StartNs: 1000, DurNs: 350, KernelNs: 75, Count: 5}, {Step: 2, StartNs: 1350, DurNs: 150, KernelNs: 10, Count: 1}},
	}
}

func render(t *testing.T, s *attrib.Snapshot, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, s, o); err != nil {
		t.Fatalf("Write %+v: %v", o, err)
	}
	return b.String()
}

// The JSON contract: key names and integer types.
func TestJSONContract(t *testing.T) {
	out := render(t, snap(), Options{Format: "json"})
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	isInt := func(v any) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil && !strings.ContainsAny(string(n), ".eE")
	}
	isNum := func(v any) bool { _, ok := v.(json.Number); return ok }
	isStr := func(v any) bool { _, ok := v.(string); return ok }
	want := map[string][]string{
		"totals":     {"kernel_count", "kernel_total_ns", "busy_ns"},
		"kernels":    {"name", "display_name", "category", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "p50_ns", "p99_ns", "share"},
		"categories": {"category", "count", "total_ns", "share"},
		"stages":     {"stage", "count", "total_ns", "share"},
	}
	check := func(where string, obj map[string]any, keys []string) {
		for _, k := range keys {
			v, ok := obj[k]
			switch {
			case !ok:
				t.Errorf("%s: key %q missing", where, k)
			case k == "share":
				if !isNum(v) {
					t.Errorf("%s.%s = %v, want a number", where, k, v)
				}
			case k == "name" || k == "display_name" || k == "category" || k == "stage":
				if !isStr(v) {
					t.Errorf("%s.%s = %v, want a string", where, k, v)
				}
			default:
				if !isInt(v) {
					t.Errorf("%s.%s = %v, want an integer", where, k, v)
				}
			}
		}
	}
	totals, _ := doc["totals"].(map[string]any)
	check("totals", totals, want["totals"])
	for _, sec := range []string{"kernels", "categories", "stages"} {
		arr, ok := doc[sec].([]any)
		if !ok || len(arr) == 0 {
			t.Fatalf("%s: not a non-empty array: %v", sec, doc[sec])
		}
		for i, x := range arr {
			obj, _ := x.(map[string]any)
			check(sec+"["+string(rune('0'+i))+"]", obj, want[sec])
		}
	}
	// Values, against the hand-written snapshot.
	var d Doc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Totals.KernelCount != 6 || d.Totals.KernelTotalNs != 85 || d.Totals.KernelBusyNs != 80 || d.Totals.GPUBusyNs != 130 {
		t.Errorf("totals %+v", d.Totals)
	}
	k := d.Kernels[0]
	if k.Name != "ampere_sgemm_128x64_nn" || k.Count != 4 || k.TotalNs != 70 || k.MeanNs != 17 || k.P50Ns != 10 || k.P99Ns != 30 || k.Share != 70.0/85 {
		t.Errorf("kernel %+v", k)
	}
	if d.Kernels[1].Name != "void f<int>(int|x)" { // exactly as in the trace, not HTML-escaped
		t.Errorf("name %q", d.Kernels[1].Name)
	}
	if len(d.Transfers) != 1 || d.Transfers[0].Kind != "memcpy" || d.Categories[1].Category != "memcpy" || d.Stages[1].Stage != "(none)" {
		t.Errorf("transfers/categories/stages: %+v %+v %+v", d.Transfers, d.Categories, d.Stages)
	}
	if d.Format != "kineto" || d.Source != "hand.json" || d.SummaryOnly || len(d.Steps) != 2 {
		t.Errorf("meta %+v", d)
	}
	if !strings.Contains(out, `"void f<int>(int|x)"`) {
		t.Error("JSON escapes < > in names")
	}
}

func TestJSONTop(t *testing.T) {
	var d Doc
	if err := json.Unmarshal([]byte(render(t, snap(), Options{Format: "json", Top: 1})), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Kernels) != 1 || len(d.Categories) != 3 {
		t.Errorf("top 1: %d kernels, %d categories", len(d.Kernels), len(d.Categories))
	}
	if err := json.Unmarshal([]byte(render(t, snap(), Options{Format: "json", Top: -1})), &d); err != nil || len(d.Kernels) != 2 {
		t.Errorf("default top for json must be all rows: %d (%v)", len(d.Kernels), err)
	}
}

func TestCSV(t *testing.T) {
	rows, err := csv.NewReader(strings.NewReader(render(t, snap(), Options{Format: "csv"}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != "name,display_name,kind,category,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p99_ns,share" {
		t.Fatalf("csv: %q", rows)
	}
	if strings.Join(rows[1], ",") != "ampere_sgemm_128x64_nn,ampere_sgemm_128x64_nn,kernel,gemm,4,70,17,10,30,10,30,0.823529" {
		t.Errorf("row 1: %q", rows[1])
	}
	if rows[3][2] != "memcpy" || rows[3][5] != "50" {
		t.Errorf("row 3: %q", rows[3])
	}
	rows, _ = csv.NewReader(strings.NewReader(render(t, snap(), Options{Format: "csv", By: "category"}))).ReadAll()
	if strings.Join(rows[1], ",") != "gemm,4,70,0.518519" {
		t.Errorf("category csv %q", rows)
	}
	rows, _ = csv.NewReader(strings.NewReader(render(t, snap(), Options{Format: "csv", By: "step"}))).ReadAll()
	if strings.Join(rows[2], ",") != "2,1350,150,10,1" {
		t.Errorf("step csv %q", rows)
	}
}

func TestTableAndMarkdown(t *testing.T) {
	tab := render(t, snap(), Options{})
	for _, want := range []string{"source: hand.json (format kineto)", "device 0: NVIDIA A100-SXM4-40GB", "kernels: 6, kernel time 85 ns, busy 80 ns; memcpy/memset: 1, 50 ns; GPU busy with copies 130 ns",
		"ampere_sgemm_128x64_nn", "82.4%", "Memcpy HtoD (Pinned -> Device)"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	// Counts in the header lines are grouped by thousands, as the TUI's.
	big := snap()
	big.Totals.KernelCount, big.Totals.TransferCount = 18444, 6638
	if tab := render(t, big, Options{}); !strings.Contains(tab, "kernels: 18,444, kernel time") || !strings.Contains(tab, "memcpy/memset: 6,638,") {
		t.Errorf("header counts not grouped:\n%s", tab)
	}
	// Columns align: every data line of the kernel table has the same
	// width up to the last column.
	cat := render(t, snap(), Options{By: "category"})
	if !strings.Contains(cat, "gemm") || !strings.Contains(cat, "51.9%") || !strings.Contains(cat, "██████████") {
		t.Errorf("category table:\n%s", cat)
	}
	md := render(t, snap(), Options{Format: "md", By: "stage"})
	for _, want := range []string{"| stage | count | total | share |", "|---|---:|---:|---:|---|", "| forward | 3 | 60 ns | 44.4% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("md lacks %q:\n%s", want, md)
		}
	}
	mdk := render(t, snap(), Options{Format: "md", Top: 1})
	if !strings.Contains(mdk, "_1 more rows not shown_") || strings.Contains(mdk, "| f |") {
		t.Errorf("md top 1:\n%s", mdk)
	}
}

func TestSummaryOnly(t *testing.T) {
	s := snap()
	s.SummaryOnly, s.Format, s.Stages, s.Steps = true, "nsys-stats-csv", nil, nil
	for _, f := range []string{"table", "md"} {
		out := render(t, s, Options{Format: f, By: "stage"})
		if !strings.Contains(out, "stages unavailable: the nsys-stats-csv input holds only per-kernel sums") {
			t.Errorf("%s by stage:\n%s", f, out)
		}
		out = render(t, s, Options{Format: f, By: "step"})
		if !strings.Contains(out, "steps unavailable") {
			t.Errorf("%s by step:\n%s", f, out)
		}
	}
	if err := Write(&bytes.Buffer{}, s, Options{Format: "csv", By: "stage"}); err == nil {
		t.Error("csv by stage of a summary-only input: no error")
	}
	var d Doc
	if err := json.Unmarshal([]byte(render(t, s, Options{Format: "json"})), &d); err != nil {
		t.Fatal(err)
	}
	if !d.SummaryOnly || strings.Join(d.Unavailable, ",") != "stage,step" || d.Stages == nil {
		t.Errorf("json summary-only: %v %v %v", d.SummaryOnly, d.Unavailable, d.Stages)
	}
	tab := render(t, s, Options{})
	if !strings.Contains(tab, "summary-only input") || strings.Contains(tab, ", busy") {
		t.Errorf("table header:\n%s", tab)
	}
}

func TestEmptyInput(t *testing.T) {
	s := &attrib.Snapshot{Source: "cpu.json", Format: "kineto"}
	if out := render(t, s, Options{}); !strings.Contains(out, "no GPU kernels, memcpy or memset in this input") {
		t.Errorf("empty table:\n%s", out)
	}
	if out := render(t, s, Options{Format: "md", By: "category"}); !strings.Contains(out, "no GPU work in this input") {
		t.Errorf("empty md:\n%s", out)
	}
	var d Doc
	if err := json.Unmarshal([]byte(render(t, s, Options{Format: "json"})), &d); err != nil || d.Kernels == nil || len(d.Kernels) != 0 {
		t.Errorf("empty json must have empty arrays: %+v %v", d, err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Format: "xml"}, {By: "thread"}} {
		err := Write(&bytes.Buffer{}, snap(), o)
		if !errors.Is(err, ErrOption) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{{0, "0 ns"}, {999, "999 ns"}, {1000, "1.00 µs"}, {12_345, "12.3 µs"}, {999_999, "1.00 ms"} /* units.Duration: the unit after rounding (NIST SP 811 §7.9); "1000 µs" before */, {4_560_000, "4.56 ms"}, {1_234_000_000, "1.23 s"}, {-1500, "-1.50 µs"},
		{999_000_000_000, "999 s"}, {8_827_800_000_000_000, "102 d 04 h"}, {-3_600_000_000_000, "-1 h 00 m"}} {
		if got := Duration(c.ns); got != c.want {
			t.Errorf("Duration(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}
