package columnar

import (
	"bytes"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// readOp is an ops-file row as a reader sees it: the columns of the
// package doc by name, declared here and not taken from Op, so that a
// column renamed or retyped in Op fails the read-back.
type readOp struct {
	Source      int32  `parquet:"source"`
	File        string `parquet:"file"`
	Rank        int32  `parquet:"rank"`
	Device      int32  `parquet:"device"`
	Stream      int32  `parquet:"stream"`
	Kind        string `parquet:"kind"`
	Name        string `parquet:"name"`
	DisplayName string `parquet:"display_name"`
	Category    string `parquet:"category"`
	Stage       string `parquet:"stage"`
	Step        int64  `parquet:"step"`
	StartNs     int64  `parquet:"start_ns"`
	EndNs       int64  `parquet:"end_ns"`
	DurNs       int64  `parquet:"dur_ns"`
	Correlation int64  `parquet:"correlation"`
	Bytes       int64  `parquet:"bytes"`
}

type readStep struct {
	Source  int32  `parquet:"source"`
	File    string `parquet:"file"`
	Rank    int32  `parquet:"rank"`
	Step    int64  `parquet:"step"`
	StartNs int64  `parquet:"start_ns"`
	EndNs   int64  `parquet:"end_ns"`
	DurNs   int64  `parquet:"dur_ns"`
	GPUNs   int64  `parquet:"gpu_ns"`
	GPUOps  int64  `parquet:"gpu_ops"`
}

// twoSources are two small linked traces written by hand: rank 0 with a
// kernel and a memcpy in step 1 under the range "forward", a CPU operator
// (no row) and a memset in no step; rank 1 with a collective in step 1.
func twoSources() []*tracer.Trace {
	a := tracer.NewTrace("kineto", "/x/rank0.json")
	a.Rank = 0
	fwd := a.Strings.Intern("forward")
	a.Contexts = append(a.Contexts, tracer.Context{Ranges: []tracer.StrID{fwd}, Step: 1})
	a.Events = []tracer.Event{
		{Kind: tracer.KindStep, Name: a.Strings.Intern("ProfilerStep#1"), Start: 0, Dur: 1000, Value: 1, Device: -1},
		{Kind: tracer.KindCPUOp, Name: a.Strings.Intern("aten::mm"), Start: 10, Dur: 50, TID: 7, Device: -1},
		{Kind: tracer.KindKernel, Name: a.Strings.Intern("_Z4gemmv"), Start: 100, Dur: 300, Device: 0, Stream: 7, Corr: 11, Ctx: 1},
		{Kind: tracer.KindMemcpy, Name: a.Strings.Intern("Memcpy HtoD"), Start: 450, Dur: 50, Device: 0, Stream: 8, Corr: 12, Value: 4096, Ctx: 1},
		{Kind: tracer.KindMemset, Name: a.Strings.Intern("Memset"), Start: 2000, Dur: 5, Device: 0, Stream: 8, Value: 64},
	}
	b := tracer.NewTrace("kineto", "/x/rank1.json")
	b.Rank = 1
	b.Contexts = append(b.Contexts, tracer.Context{Step: 1})
	b.Events = []tracer.Event{
		{Kind: tracer.KindStep, Name: b.Strings.Intern("ProfilerStep#1"), Start: 5000, Dur: 800, Value: 1, Device: -1},
		{Kind: tracer.KindKernel, Name: b.Strings.Intern("ncclKernel_AllReduce_RING_LL_Sum_float"), Start: 5100, Dur: 600, Device: 1, Stream: 3, Corr: 2, Ctx: 1},
	}
	return []*tracer.Trace{a, b}
}

// The ops and steps files read back with parquet-go hold the rows the
// hand-built traces call for: every column's value written out here
// (categories as rules.toml names them: gemm, memcpy, memset, collective
// for nccl names; _Z4gemmv demangled is gemm(), shown without its empty
// parameter list), the CPU operator left
// out, and the schema's columns in the package doc's order.
func TestWriteReadBack(t *testing.T) {
	src := twoSources()
	rules := attrib.DefaultRules()
	var ops bytes.Buffer
	n, err := WriteOps(&ops, src, rules)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parquet.Read[readOp](bytes.NewReader(ops.Bytes()), int64(ops.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := []readOp{
		{0, "/x/rank0.json", 0, 0, 7, "kernel", "_Z4gemmv", "gemm", "gemm", "forward", 1, 100, 400, 300, 11, 0},
		{0, "/x/rank0.json", 0, 0, 8, "memcpy", "Memcpy HtoD", "Memcpy HtoD", "memcpy", "forward", 1, 450, 500, 50, 12, 4096},
		{0, "/x/rank0.json", 0, 0, 8, "memset", "Memset", "Memset", "memset", "", -1, 2000, 2005, 5, 0, 64},
		{1, "/x/rank1.json", 1, 1, 3, "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", "ncclKernel_AllReduce_RING_LL_Sum_float", "collective", "", 1, 5100, 5700, 600, 2, 0},
	}
	if n != int64(len(want)) {
		t.Errorf("WriteOps returned %d rows, want %d", n, len(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("ops read back:\n%+v\nwant\n%+v", got, want)
	}

	f, err := parquet.OpenFile(bytes.NewReader(ops.Bytes()), int64(ops.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range f.Schema().Fields() {
		cols = append(cols, c.Name())
	}
	if wantCols := []string{"source", "file", "rank", "device", "stream", "kind", "name", "display_name", "category", "stage", "step", "start_ns", "end_ns", "dur_ns", "correlation", "bytes"}; !slices.Equal(cols, wantCols) {
		t.Errorf("ops columns %v, want %v", cols, wantCols)
	}

	var steps bytes.Buffer
	if _, err := WriteSteps(&steps, src, rules); err != nil {
		t.Fatal(err)
	}
	gotSteps, err := parquet.Read[readStep](bytes.NewReader(steps.Bytes()), int64(steps.Len()))
	if err != nil {
		t.Fatal(err)
	}
	// Step 1 of rank 0 holds the kernel and the memcpy (300 + 50 ns); the
	// memset is in no step. Step 1 of rank 1 holds the collective.
	wantSteps := []readStep{
		{0, "/x/rank0.json", 0, 1, 0, 1000, 1000, 350, 2},
		{1, "/x/rank1.json", 1, 1, 5000, 5800, 800, 600, 1},
	}
	if !slices.Equal(gotSteps, wantSteps) {
		t.Errorf("steps read back:\n%+v\nwant\n%+v", gotSteps, wantSteps)
	}
}
