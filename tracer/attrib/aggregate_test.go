package attrib

import (
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/internal/interval"
	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

const (
	kGemm    = "ampere_sgemm_128x64_nn"
	kSoftmax = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)"
	kCopy    = "Memcpy HtoD (Pinned -> Device)"
)

// handTrace builds the small trace whose numbers are counted by hand in
// TestAggregateHandCounts:
//
//	device 0: gemm [0,10) [100,120) [200,230) under aten::mm / range forward / step 1
//	          softmax [5,15) [300,305) under the math SDPA op / ranges forward>attn / step 1
//	          memcpy [400,450), no context
//	device 1: gemm [0,10) under range backward / step 2
func handTrace() *tracer.Trace {
	t := tracer.NewTrace("test", "hand.json")
	s := t.Strings
	gemm, sm, cp := s.Intern(kGemm), s.Intern(kSoftmax), s.Intern(kCopy)
	t.Contexts = append(t.Contexts,
		tracer.Context{Ops: []tracer.StrID{s.Intern("aten::mm")}, Ranges: []tracer.StrID{s.Intern("forward")}, Step: 1},
		tracer.Context{Ops: []tracer.StrID{s.Intern("aten::_scaled_dot_product_attention_math"), s.Intern("aten::_softmax")}, Ranges: []tracer.StrID{s.Intern("forward"), s.Intern("attn")}, Step: 1},
		tracer.Context{Ranges: []tracer.StrID{s.Intern("backward")}, Step: 2},
	)
	k := func(name tracer.StrID, start, dur int64, dev int32, ctx tracer.CtxID) tracer.Event {
		return tracer.Event{Kind: tracer.KindKernel, Name: name, Start: start, Dur: dur, Device: dev, Ctx: ctx, TID: -1}
	}
	t.Events = []tracer.Event{
		{Kind: tracer.KindStep, Name: s.Intern("ProfilerStep#1"), Start: 0, Dur: 350, Value: 1, Device: -1},
		k(gemm, 0, 10, 0, 1),
		k(sm, 5, 10, 0, 2),
		k(gemm, 100, 20, 0, 1),
		k(gemm, 200, 30, 0, 1),
		k(sm, 300, 5, 0, 2),
		{Kind: tracer.KindMemcpy, Name: cp, Start: 400, Dur: 50, Device: 0, Value: 4096},
		{Kind: tracer.KindStep, Name: s.Intern("ProfilerStep#2"), Start: 350, Dur: 150, Value: 2, Device: -1},
		k(gemm, 0, 10, 1, 3),
		{Kind: tracer.KindCPUOp, Name: s.Intern("aten::mm"), Start: 0, Dur: 1000, Device: -1}, // ignored
	}
	t.Devices = []tracer.Device{{ID: 0, Name: "GPU0"}, {ID: 1, Name: "GPU1"}}
	return t
}

func TestAggregateHandCounts(t *testing.T) {
	a := NewAggregator(nil)
	a.AddTrace(handTrace())
	s := a.Snapshot()

	wantTotals := Totals{
		KernelCount: 6, KernelTotalNs: 10 + 20 + 30 + 10 + 10 + 5,
		TransferCount: 1, TransferNs: 50, GPUTotalNs: 135,
		// dev0 union: [0,15)+[100,120)+[200,230)+[300,305)+[400,450) = 15+20+30+5+50; dev1: 10
		GPUBusyNs: 130,
		// kernels only: dev0 [0,15)+[100,120)+[200,230)+[300,305) = 70; dev1 10
		KernelBusyNs: 80,
		SpanNs:       450,
	}
	if s.Totals != wantTotals {
		t.Errorf("totals\n got %+v\nwant %+v", s.Totals, wantTotals)
	}
	if len(s.Kernels) != 2 || len(s.Transfers) != 1 {
		t.Fatalf("rows: %d kernels, %d transfers", len(s.Kernels), len(s.Transfers))
	}
	g := s.Kernels[0] // gemm: 10,20,30,10
	if g.Name != kGemm || g.Category != "gemm" || g.Count != 4 || g.TotalNs != 70 || g.MeanNs != 17 ||
		g.MinNs != 10 || g.MaxNs != 30 || g.P50Ns != 10 || g.P99Ns != 30 || g.Share != 70.0/85 || g.Stage != "forward" {
		t.Errorf("gemm row %+v", g)
	}
	if !slices.Equal(g.Ops, []string{"aten::mm"}) || !slices.Equal(g.Ranges, []string{"forward"}) {
		t.Errorf("gemm context %q %q", g.Ops, g.Ranges)
	}
	sm := s.Kernels[1] // softmax under math SDPA: 10, 5
	if sm.Category != "attention" || sm.Count != 2 || sm.TotalNs != 15 || sm.MeanNs != 7 || sm.MinNs != 5 ||
		sm.MaxNs != 10 || sm.P50Ns != 5 || sm.P99Ns != 10 || sm.Share != 15.0/85 || sm.Stage != "attn" ||
		sm.DisplayName != "(anonymous namespace)::softmax_warp_forward" {
		t.Errorf("softmax row %+v", sm)
	}
	tr := s.Transfers[0]
	if tr.Name != kCopy || tr.Category != "memcpy" || tr.Count != 1 || tr.TotalNs != 50 || tr.Share != 1 || tr.Kind != tracer.KindMemcpy {
		t.Errorf("memcpy row %+v", tr)
	}
	wantCats := []GroupRow{{"gemm", 4, 70, 70.0 / 135, Work{}}, {"memcpy", 1, 50, 50.0 / 135, Work{}}, {"attention", 2, 15, 15.0 / 135, Work{}}}
	if !slices.Equal(s.Categories, wantCats) {
		t.Errorf("categories\n got %+v\nwant %+v", s.Categories, wantCats)
	}
	wantStages := []GroupRow{{"forward", 3, 60, 60.0 / 135, Work{}}, {StageNone, 1, 50, 50.0 / 135, Work{}}, {"attn", 2, 15, 15.0 / 135, Work{}}, {"backward", 1, 10, 10.0 / 135, Work{}}}
	if !slices.Equal(s.Stages, wantStages) {
		t.Errorf("stages\n got %+v\nwant %+v", s.Stages, wantStages)
	}
	wantSteps := []StepRow{{Step: 1, StartNs: 0, DurNs: 350, KernelNs: 75, Count: 5}, {Step: 2, StartNs: 350, DurNs: 150, KernelNs: 10, Count: 1}}
	if !slices.Equal(s.Steps, wantSteps) {
		t.Errorf("steps\n got %+v\nwant %+v", s.Steps, wantSteps)
	}
	if s.Source != "hand.json" || s.Format != "test" || len(s.Devices) != 2 || s.SummaryOnly {
		t.Errorf("meta: %q %q %d %v", s.Source, s.Format, len(s.Devices), s.SummaryOnly)
	}
}

// Live use: events one by one give the same snapshot as the whole trace;
// Reset empties the numbers.
func TestAggregateIncrementalAndReset(t *testing.T) {
	tr := handTrace()
	whole := NewAggregator(nil)
	whole.AddTrace(tr)
	want := whole.Snapshot()

	live := NewAggregator(nil)
	live.SetSource("hand.json", "test")
	for i := range tr.Events {
		live.Add(&tr.Events[i], tr.Strings, tr.Contexts)
		if i == 3 {
			live.Snapshot() // a mid-way snapshot must not disturb the result
		}
	}
	got := live.Snapshot()
	if got.Totals != want.Totals || !slices.EqualFunc(got.Kernels, want.Kernels, rowEq) || !slices.Equal(got.Categories, want.Categories) ||
		!slices.Equal(got.Stages, want.Stages) || !slices.Equal(got.Steps, want.Steps) {
		t.Errorf("incremental differs:\n got %+v\nwant %+v", got, want)
	}

	live.Reset()
	e := tr.Events[1] // one gemm [0,10) on device 0
	live.Add(&e, tr.Strings, tr.Contexts)
	s := live.Snapshot()
	if s.Totals.KernelCount != 1 || s.Totals.GPUBusyNs != 10 || len(s.Kernels) != 1 || s.Kernels[0].P99Ns != 10 || len(s.Transfers) != 0 {
		t.Errorf("after reset: %+v", s)
	}
}

func rowEq(a, b KernelRow) bool {
	return a.Name == b.Name && a.Category == b.Category && a.Count == b.Count && a.TotalNs == b.TotalNs &&
		a.P50Ns == b.P50Ns && a.P99Ns == b.P99Ns && a.MinNs == b.MinNs && a.MaxNs == b.MaxNs && a.Share == b.Share
}

// Bad live input (negative duration, unknown name or context ids, odd
// device) never panics and never yields negative times.
func TestAggregateOddEvents(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	a := NewAggregator(nil)
	for _, e := range []tracer.Event{
		{Kind: tracer.KindKernel, Name: 999, Ctx: 77, Start: 10, Dur: -5, Device: -1},
		{Kind: tracer.KindMemset, Name: 3, Start: 5, Dur: 10, Device: 1 << 20},
		{Kind: tracer.Kind(200), Name: 1, Start: 5, Dur: 10},
	} {
		a.Add(&e, tr.Strings, tr.Contexts)
	}
	s := a.Snapshot()
	if s.Totals.KernelCount != 1 || s.Totals.KernelTotalNs != 0 || s.Totals.GPUBusyNs != 10 || s.Kernels[0].Category != CategoryOther || s.Transfers[0].Category != "memset" {
		t.Errorf("%+v %+v %+v", s.Totals, s.Kernels, s.Transfers)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	v := make([]int64, 100)
	for i := range v {
		v[i] = int64(i + 1)
	}
	// Nearest rank: ceil(p/100*n).
	for _, c := range []struct {
		vals      []int64
		p         int
		want      int64
		rationale string
	}{
		{v, 50, 50, "ceil(50)=50"},
		{v, 99, 99, "ceil(99)=99"},
		{v[:7], 50, 4, "ceil(3.5)=4"},
		{v[:7], 99, 7, "ceil(6.93)=7"},
		{v[:1], 99, 1, "n=1"},
		{v[:3], 50, 2, "ceil(1.5)=2"},
		{nil, 50, 0, "empty"},
	} {
		if got := percentile(c.vals, c.p); got != c.want {
			t.Errorf("p%d of %d values: got %d want %d (%s)", c.p, len(c.vals), got, c.want, c.rationale)
		}
	}
}

// Busy time against a brute-force union over a small time axis, with
// enough intervals to go through the incremental merge.
func TestBusyUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const axis = 1 << 18
	covered := make([]bool, axis)
	b := newBusyAcc()
	for i := 0; i < 200_000; i++ {
		s := rng.Int64N(axis - 64)
		e := s + rng.Int64N(8)
		if i%3 == 0 { // some in order, some random
			s = int64(i) % (axis - 64)
			e = s + 3
		}
		for x := s; x < e; x++ {
			covered[x] = true
		}
		b.add(s, e)
		if i == 100_000 {
			b.flush()
		}
	}
	var want int64
	for _, c := range covered {
		if c {
			want++
		}
	}
	if got := b.total(); got != want {
		t.Errorf("busy %d, brute force %d", got, want)
	}
	all := b.union()
	for i := 1; i < len(all); i++ {
		if all[i].Start <= all[i-1].End {
			t.Fatalf("union not disjoint or not sorted at %d", i)
		}
	}
}

// In-order input (the common case) goes through the running-interval
// path with no late buffer; long intervals overlap many later ones.
// Checked against a brute-force union.
func TestBusyUnionInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const axis = 1 << 21
	covered := make([]bool, axis+4096)
	b := newBusyAcc()
	var s int64
	for s < axis {
		s += rng.Int64N(12) // starts never decrease
		e := s + rng.Int64N(6)
		if rng.IntN(5000) == 0 {
			e = s + 3000 // a long kernel overlapping many later ones
		}
		for x := s; x < e; x++ {
			covered[x] = true
		}
		b.add(s, e)
		if len(b.late) != 0 {
			t.Fatalf("in-order interval [%d,%d) parked as late", s, e)
		}
	}
	var want int64
	for _, c := range covered {
		if c {
			want++
		}
	}
	if got := b.total(); got != want {
		t.Errorf("busy %d, brute force %d", got, want)
	}
	if n := b.closedCount(); n < 2 || len(b.blocks) < 2 {
		t.Errorf("expected several closed intervals in several blocks, got %d in %d", n, len(b.blocks))
	}
}

// With sealing, in-order input still gives the exact union while the kept
// intervals stay bounded.
func TestBusySeal(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	exact, sealed := newBusyAcc(), newBusyAcc()
	sealed.lag = 1000
	var s int64
	maxKept := 0
	for i := 0; i < 400_000; i++ {
		s += 1 + rng.Int64N(10)
		e := s + rng.Int64N(6)
		exact.add(s, e)
		sealed.add(s, e)
		maxKept = max(maxKept, sealed.closedCount())
	}
	if got, want := sealed.total(), exact.total(); got != want {
		t.Errorf("sealed %d, exact %d", got, want)
	}
	if maxKept > 3<<16 || !sealed.sealed {
		t.Errorf("kept up to %d intervals (sealed=%v)", maxKept, sealed.sealed)
	}
	// A very late op inside the sealed past is ignored; one straddling the
	// boundary counts from the boundary.
	before := sealed.total()
	sealed.add(0, 5)
	sealed.add(sealed.sealedEnd-10, sealed.sealedEnd+1_000_000_000)
	if got := sealed.total(); got <= before {
		t.Errorf("straddling op not counted: %d → %d", before, got)
	}
}

// A sealing union with a lag longer than its input keeps at most
// busyKeptMax closed intervals and at least half that, and stays exact
// for in-order input: 3 M disjoint ops of 10 ns, 20 ns apart, under a
// 60 s lag (the whole input spans 60 ms). An op later than the history
// kept counts from the sealed part's end; one inside it is exact.
func TestBusySealKeptBound(t *testing.T) {
	b := newBusyAcc()
	b.lag = 60e9
	const n = 3_000_000
	maxKept := 0
	for i := range int64(n) {
		b.add(20*i, 20*i+10)
		maxKept = max(maxKept, b.closedCount())
	}
	if got, want := b.total(), int64(10*n); got != want {
		t.Errorf("total %d ns, want %d", got, want)
	}
	if maxKept > busyKeptMax+blockIvals || b.closedCount() < busyKeptMax/2 || !b.sealed {
		t.Errorf("kept up to %d closed intervals, %d now (bound %d, sealed %v)", maxKept, b.closedCount(), busyKeptMax, b.sealed)
	}
	// Inside the kept history, in a gap: exact.
	inGap := int64(20*(n-1000) + 12)
	b.add(inGap, inGap+5)
	if got, want := b.total(), int64(10*n+5); got != want {
		t.Errorf("op in a kept gap: total %d, want %d", got, want)
	}
	// Before the kept history (the first ops, sealed by count, not age):
	// counted from the sealed end only, here not at all.
	b.add(12, 17)
	if got, want := b.total(), int64(10*n+5); got != want {
		t.Errorf("op before the kept history: total %d, want %d", got, want)
	}
}

// Percentiles stay exact across snapshots taken while events arrive.
func TestPercentilesAcrossSnapshots(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	name := tr.Strings.Intern("k")
	a := NewAggregator(nil)
	rng := rand.New(rand.NewPCG(3, 4))
	var all []int64
	for i := 0; i < 5000; i++ {
		d := rng.Int64N(1000)
		all = append(all, d)
		e := tracer.Event{Kind: tracer.KindKernel, Name: name, Start: int64(i) * 1000, Dur: d}
		a.Add(&e, tr.Strings, tr.Contexts)
		if i%777 == 0 {
			a.Snapshot()
		}
	}
	slices.Sort(all)
	s := a.Snapshot()
	k := s.Kernels[0]
	if k.P50Ns != all[2500-1] || k.P99Ns != all[4950-1] || k.MinNs != all[0] || k.MaxNs != all[4999] {
		t.Errorf("p50 %d/%d p99 %d/%d", k.P50Ns, all[2499], k.P99Ns, all[4949])
	}
}

// Past the percentile cap a row's percentiles come from the histogram,
// within 1/64 of the exact nearest-rank values; counts and totals stay exact.
func TestPercentileCap(t *testing.T) {
	tr := tracer.NewTrace("test", "")
	name := tr.Strings.Intern("k")
	a := NewAggregator(nil)
	a.SetPercentileCap(1000)
	rng := rand.New(rand.NewPCG(5, 5))
	var all []int64
	var total int64
	for i := 0; i < 50_000; i++ {
		d := 1000 + rng.Int64N(1_000_000)
		if i%10 == 0 {
			d = rng.Int64N(100) // exact small buckets too
		}
		all, total = append(all, d), total+d
		e := tracer.Event{Kind: tracer.KindKernel, Name: name, Start: int64(i) * 2_000_000, Dur: d}
		a.Add(&e, tr.Strings, tr.Contexts)
	}
	slices.Sort(all)
	k := a.Snapshot().Kernels[0]
	if !k.PercentilesApprox || k.Count != 50_000 || k.TotalNs != total || k.MinNs != all[0] || k.MaxNs != all[len(all)-1] {
		t.Errorf("row %+v", k)
	}
	for _, c := range []struct{ got, want int64 }{{k.P50Ns, all[25_000-1]}, {k.P99Ns, all[49_500-1]}} {
		if d := math.Abs(float64(c.got-c.want)) / float64(c.want); d > 1.0/64 {
			t.Errorf("approx %d vs exact %d: rel err %.4f", c.got, c.want, d)
		}
	}
	for _, d := range []int64{0, 1, 127, 128, 129, 1000, 1 << 40, math.MaxInt64} {
		if v := histValue(histBucket(d)); d >= 128 && math.Abs(float64(v-d))/float64(d) > 1.0/64 || d < 128 && v != d {
			t.Errorf("bucket of %d → %d", d, v)
		}
	}
}

func TestAggregateSummaryOnly(t *testing.T) {
	tr := tracer.NewTrace("nsys-stats-csv", "stats.csv")
	tr.SummaryOnly = true
	tr.Summary = []tracer.SummaryRow{
		{Kind: tracer.KindKernel, Name: "ampere_sgemm_128x64_nn", Count: 10, TotalNs: 1000, MinNs: 50, MaxNs: 200, MeanNs: 100, P50Ns: 90},
		{Kind: tracer.KindKernel, Name: "attn_fwd", Count: 2, TotalNs: 3000, MinNs: 1400, MaxNs: 1600, MeanNs: 1500, P50Ns: 1500},
		{Kind: tracer.KindMemcpy, Name: "[CUDA memcpy HtoD]", Count: 3, TotalNs: 600, MinNs: 100, MaxNs: 300, MeanNs: 200},
	}
	a := NewAggregator(nil)
	a.AddTrace(tr)
	s := a.Snapshot()
	if !s.SummaryOnly || s.Totals.KernelCount != 12 || s.Totals.KernelTotalNs != 4000 || s.Totals.TransferNs != 600 || s.Totals.GPUBusyNs != 0 {
		t.Errorf("totals %+v summaryOnly=%v", s.Totals, s.SummaryOnly)
	}
	if k := s.Kernels[0]; k.Name != "attn_fwd" || k.Category != "attention" || k.P50Ns != 1500 || k.P99Ns != 0 || k.MeanNs != 1500 || k.Share != 0.75 {
		t.Errorf("row %+v", k)
	}
	if len(s.Stages) != 0 || len(s.Steps) != 0 {
		t.Errorf("summary-only has stages/steps: %v %v", s.Stages, s.Steps)
	}
	want := []GroupRow{{"attention", 2, 3000, 3000.0 / 4600, Work{}}, {"gemm", 10, 1000, 1000.0 / 4600, Work{}}, {"memcpy", 3, 600, 600.0 / 4600, Work{}}}
	if !slices.Equal(s.Categories, want) {
		t.Errorf("categories %+v", s.Categories)
	}
}

// Two traces: rows merge by name, devices stay apart for busy time.
func TestAggregateTwoTraces(t *testing.T) {
	a := NewAggregator(nil)
	a.AddTrace(handTrace())
	a.AddTrace(handTrace())
	s := a.Snapshot()
	if s.Totals.KernelCount != 12 || s.Totals.GPUBusyNs != 260 || s.Kernels[0].Count != 8 || s.Kernels[0].P50Ns != 10 {
		t.Errorf("two traces: %+v %+v", s.Totals, s.Kernels[0])
	}
	if s.Source != "hand.json, hand.json" || s.Format != "test" {
		t.Errorf("meta %q %q", s.Source, s.Format)
	}
}

func benchTrace() *tracer.Trace {
	const n = 1 << 20
	tr := tracer.NewTrace("bench", "")
	s := tr.Strings
	var names []tracer.StrID
	for i := 0; i < 300; i++ {
		names = append(names, s.Intern([]string{"ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>(int)", "attn_fwd", "triton_red_fused_"}[i%4]+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	for i := 0; i < 500; i++ {
		tr.Contexts = append(tr.Contexts, tracer.Context{
			Ops:    []tracer.StrID{s.Intern("aten::op" + string(rune('a'+i%26)))},
			Ranges: []tracer.StrID{s.Intern("stage" + string(rune('a'+i%7)))},
			Step:   int64(i / 100),
		})
	}
	rng := rand.New(rand.NewPCG(5, 6))
	tr.Events = make([]tracer.Event, n)
	var ts int64
	for i := range tr.Events {
		ts += rng.Int64N(2000)
		tr.Events[i] = tracer.Event{Kind: tracer.KindKernel, Name: names[rng.IntN(len(names))], Start: ts, Dur: rng.Int64N(3000),
			Device: int32(i % 4), Ctx: tracer.CtxID(rng.IntN(len(tr.Contexts)))}
		if i%50 == 0 {
			tr.Events[i].Kind = tracer.KindMemcpy
		}
	}
	return tr
}

// BenchmarkAggregate measures a fresh aggregator's AddTrace + Snapshot on
// 1M synthetic GPU events (300 kernel names, 500 contexts, 4 devices): the
// cost `rlktop report` adds to an import.
func BenchmarkAggregate(b *testing.B) {
	tr := benchTrace()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		a := NewAggregator(nil)
		a.AddTrace(tr)
		a.Snapshot()
	}
	reportRate(b, int64(len(tr.Events))*int64(b.N), cpuTime()-cpu0)
}

// BenchmarkAggregateAdd measures the per-event path a live session takes
// (Add with warm caches), without snapshots.
func BenchmarkAggregateAdd(b *testing.B) {
	tr := benchTrace()
	a := NewAggregator(nil)
	a.AddEvents(tr.Events, tr.Strings, tr.Contexts)
	a.Reset()
	b.ResetTimer()
	cpu0 := cpuTime()
	span := tr.Events[len(tr.Events)-1].Start + 1_000_000
	for i := 0; i < b.N; i++ {
		e := tr.Events[i&(len(tr.Events)-1)]
		e.Start += int64(i/len(tr.Events)) * span // time keeps moving forward
		a.Add(&e, tr.Strings, tr.Contexts)
	}
	reportRate(b, int64(b.N), cpuTime()-cpu0)
}

// reportRate reports events per second of wall time and of process CPU
// time; the CPU figure is the one to read on a shared, loaded machine.
func reportRate(b *testing.B, events int64, cpu time.Duration) {
	b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	if cpu > 0 {
		b.ReportMetric(float64(events)/cpu.Seconds()/1e6, "Mevents/cpu-s")
	}
}

// cpuTime returns this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selectRanks against sorting: spread, clustered, constant, tiny and huge
// values, every rank of small inputs and the p50/p99 ranks of large ones.
func TestSelectRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	gens := map[string]func(int) int64{
		"spread":    func(int) int64 { return rng.Int64N(1 << 40) },
		"loop":      func(int) int64 { return 500 + rng.Int64N(50_000) },
		"clustered": func(int) int64 { return 1_000_000 + rng.Int64N(4) },
		"constant":  func(int) int64 { return 12345 },
		"zeros":     func(i int) int64 { return int64(i % 2) },
		"huge":      func(int) int64 { return math.MaxInt64 - rng.Int64N(3) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 31, 33, 65, 100, 5000, 200_000} {
			v := make([]int64, n)
			for i := range v {
				v[i] = gen(i)
			}
			orig := slices.Clone(v)
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			ranks := [][2]int{{pctRank(50, n), pctRank(99, n)}, {1, n}}
			if n <= 100 {
				for k := 1; k <= n; k++ {
					ranks = append(ranks, [2]int{k, n + 1 - k})
				}
			}
			for _, k := range ranks {
				a, b := selectRanks([][]int64{v}, sorted[n-1], k[0], k[1])
				if a != sorted[k[0]-1] || b != sorted[k[1]-1] {
					t.Fatalf("%s n=%d ranks %v: got %d %d want %d %d", name, n, k, a, b, sorted[k[0]-1], sorted[k[1]-1])
				}
				if a2, b2 := selectRanks([][]int64{v}, sorted[n-1]|1<<40, k[0], k[1]); a2 != a || b2 != b {
					t.Fatalf("%s n=%d ranks %v: with a looser maximum got %d %d want %d %d", name, n, k, a2, b2, a, b)
				}
				// The same values in uneven chunks (one empty).
				var chunks [][]int64
				for rest := v; len(rest) > 0; {
					m := min(len(rest), 1+rng.IntN(3000))
					chunks = append(chunks, rest[:m], nil)
					rest = rest[m:]
				}
				if a3, b3 := selectRanks(chunks, sorted[n-1], k[0], k[1]); a3 != a || b3 != b {
					t.Fatalf("%s n=%d ranks %v: in %d chunks got %d %d want %d %d", name, n, k, len(chunks), a3, b3, a, b)
				}
			}
			if !slices.Equal(v, orig) {
				t.Fatalf("%s n=%d: input modified", name, n)
			}
		}
	}
}

func newBusyAcc() *busyAcc {
	var b busyAcc
	b.reset()
	return &b
}

// Sealing with input that is only a little out of order (never later than
// the lag) still gives the exact union, across many blocks, flushes and a
// reset.
func TestBusySealLate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const axis = 1 << 21
	for round := range 2 {
		covered := make([]bool, axis+4096)
		b := newBusyAcc()
		b.lag = 5000
		if round == 1 {
			// Reuse after reset: recycled blocks, state cleared.
			for i := range 100_000 {
				b.add(int64(i*7), int64(i*7+3))
			}
			b.reset()
		}
		var s int64
		for s < axis {
			s += rng.Int64N(12)
			st := s
			if rng.IntN(10) == 0 {
				st = max(s-rng.Int64N(1000), 0) // late, within the lag
			}
			e := st + rng.Int64N(8)
			if st < s && rng.IntN(20) == 0 {
				e = s + rng.Int64N(2000) // late and reaching past later starts
			}
			for x := st; x < e; x++ {
				covered[x] = true
			}
			b.add(st, e)
			if rng.IntN(50_000) == 0 {
				b.flush()
			}
		}
		var want int64
		for _, c := range covered {
			if c {
				want++
			}
		}
		if got := b.total(); got != want {
			t.Errorf("round %d: busy %d, brute force %d", round, got, want)
		}
		if !b.sealed || b.closedCount() > 4*blockIvals {
			t.Errorf("round %d: sealed=%v, %d intervals kept", round, b.sealed, b.closedCount())
		}
	}
}

// BenchmarkAggregateKineto measures what attribution adds to a Kineto
// import: AddTrace + Snapshot over the shared A100 trace,
// already imported (not timed). MB/cpu-s is the trace's uncompressed JSON
// size over the aggregation's CPU time, to set beside the importer's
// MB/cpu-s (BenchmarkKinetoImport in tracer/tracefile): at X MB/cpu-s
// aggregation adds import-rate/X to the import's time.
//
//	go test ./tracer/attrib -run XXX -bench AggregateKineto -benchtime 20x -cpu 1
func BenchmarkAggregateKineto(b *testing.B) {
	path := filepath.Join(testutil.SharedTraces(b), "kineto", "hta_diff_control_a100.json.gz")
	tr, err := tracefile.Open(path, tracefile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	size := gunzippedSize(b, path)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		a := NewAggregator(nil)
		a.AddTrace(tr)
		if s := a.Snapshot(); s.Totals.KernelCount != 8568 {
			b.Fatalf("%d kernels, want 8568", s.Totals.KernelCount)
		}
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
		b.ReportMetric(cpu.Seconds()*1e9/float64(b.N)/float64(len(tr.Events)), "cpu-ns/event")
	}
}

func gunzippedSize(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// A live session's aggregator (percentile cap, busy seal) allocates nothing
// per event once warm: duration chunks give way to histograms, busy blocks
// are recycled, cells and caches are reused.
func TestAddSteadyStateNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 2M events")
	}
	tr := benchTrace()
	a := NewAggregator(nil)
	a.SetPercentileCap(1024)
	a.SetBusySeal(1_000_000) // 1 ms
	span := tr.Events[len(tr.Events)-1].Start + 1_000_000
	shift := int64(0)
	feed := func(evs []tracer.Event) {
		for i := range evs {
			e := evs[i]
			e.Start += shift
			a.Add(&e, tr.Strings, tr.Contexts)
		}
	}
	feed(tr.Events) // warm up
	shift += span
	a.Snapshot()
	next := 0
	allocs := testing.AllocsPerRun(50, func() {
		feed(tr.Events[next : next+4096])
		next += 4096
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per 4096 events in steady state, want 0", allocs)
	}
}

// The aggregator against a naive recomputation from the same random
// events (sorting for percentiles, Rules.Classify per event for
// categories, a sort-and-merge union for busy time): GPU ops of three kinds
// on three devices, out of order, with zero durations, contexts with
// operators, ranges and steps, fed through Add with a Snapshot midway.
func TestAggregatorAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	strs := tracer.NewStrings()
	names := []tracer.StrID{strs.Intern(kGemm), strs.Intern("flash_fwd_kernel"), strs.Intern("ncclKernel_AllReduce_RING_LL_Sum_float"),
		strs.Intern("triton_poi_fused_add_0"), strs.Intern("Memcpy HtoD (Pinned -> Device)"), strs.Intern(kSoftmax)}
	ctxs := []tracer.Context{{Step: -1}}
	for i := range 40 {
		c := tracer.Context{Step: int64(i%5) - 1}
		if i%3 > 0 {
			c.Ops = []tracer.StrID{strs.Intern([]string{"aten::mm", "aten::scaled_dot_product_attention", "aten::add"}[i%3])}
		}
		if i%4 > 0 {
			c.Ranges = []tracer.StrID{strs.Intern("loop"), strs.Intern([]string{"forward", "sample", "q_proj"}[i%3])}
		}
		ctxs = append(ctxs, c)
	}
	kinds := []tracer.Kind{tracer.KindKernel, tracer.KindKernel, tracer.KindKernel, tracer.KindMemcpy, tracer.KindMemset, tracer.KindRange}
	evs := make([]tracer.Event, 30_000)
	var ts int64 = 1_000_000
	for i := range evs {
		ts += rng.Int64N(3000)
		st := ts
		if rng.IntN(8) == 0 {
			st -= rng.Int64N(200_000) // out of order
		}
		evs[i] = tracer.Event{Kind: kinds[rng.IntN(len(kinds))], Name: names[rng.IntN(len(names))], Start: st,
			Dur: rng.Int64N(5000) * int64(rng.IntN(4)), Device: int32(rng.IntN(3)), Ctx: tracer.CtxID(rng.IntN(len(ctxs)))}
	}

	a := NewAggregator(nil)
	for i := 0; i < len(evs); i += 1000 {
		if i == len(evs)/2 {
			a.Snapshot()
		}
		for j := i; j < i+1000; j++ {
			a.Add(&evs[j], strs, ctxs)
		}
	}
	got := a.Snapshot()

	// Naive recomputation: a row per (kind, name, category of the launch).
	type key struct {
		kind tracer.Kind
		name string
		cat  string
	}
	durs := map[key][]int64{}
	cats, stages := map[string][2]int64{}, map[string][2]int64{}
	steps := map[int64][2]int64{}
	ivs := map[int32][]interval.Span{}
	kivs := map[int32][]interval.Span{}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, e := range evs {
		if e.Kind == tracer.KindRange {
			continue
		}
		name := strs.Get(e.Name)
		c := ctxs[e.Ctx]
		cat := a.Rules().Classify(e.Kind, name, LaunchOf(strs, &c))
		k := key{e.Kind, name, cat}
		durs[k] = append(durs[k], e.Dur)
		cats[cat] = [2]int64{cats[cat][0] + 1, cats[cat][1] + e.Dur}
		stage := StageNone
		if n := len(c.Ranges); n > 0 {
			stage = strs.Get(c.Ranges[n-1])
		}
		stages[stage] = [2]int64{stages[stage][0] + 1, stages[stage][1] + e.Dur}
		if c.Step >= 0 {
			steps[c.Step] = [2]int64{steps[c.Step][0] + 1, steps[c.Step][1] + e.Dur}
		}
		ivs[e.Device] = append(ivs[e.Device], interval.Span{Start: e.Start, End: e.Start + e.Dur})
		if e.Kind == tracer.KindKernel {
			kivs[e.Device] = append(kivs[e.Device], interval.Span{Start: e.Start, End: e.Start + e.Dur})
		}
		first, last = min(first, e.Start), max(last, e.Start+e.Dur)
	}
	union := func(m map[int32][]interval.Span) (t int64) {
		for _, v := range m {
			slices.SortFunc(v, func(x, y interval.Span) int { return cmp.Compare(x.Start, y.Start) })
			cs, ce := v[0].Start, v[0].End
			for _, x := range v[1:] {
				if x.Start > ce {
					t += ce - cs
					cs, ce = x.Start, x.End
				} else {
					ce = max(ce, x.End)
				}
			}
			t += ce - cs
		}
		return t
	}
	if want := union(ivs); got.Totals.GPUBusyNs != want {
		t.Errorf("busy %d, naive %d", got.Totals.GPUBusyNs, want)
	}
	if want := union(kivs); got.Totals.KernelBusyNs != want {
		t.Errorf("kernel busy %d, naive %d", got.Totals.KernelBusyNs, want)
	}
	if got.Totals.SpanNs != last-first {
		t.Errorf("span %d, naive %d", got.Totals.SpanNs, last-first)
	}
	rows := append(slices.Clone(got.Kernels), got.Transfers...)
	if len(rows) != len(durs) {
		t.Errorf("%d rows, naive %d", len(rows), len(durs))
	}
	var kernCount, kernNs int64
	for _, r := range rows {
		v := slices.Clone(durs[key{r.Kind, r.Name, r.Category}])
		slices.Sort(v)
		var sum int64
		for _, d := range v {
			sum += d
		}
		if r.Kind == tracer.KindKernel {
			kernCount += int64(len(v))
			kernNs += sum
		}
		if r.Count != int64(len(v)) || r.TotalNs != sum || r.MinNs != v[0] || r.MaxNs != v[len(v)-1] ||
			r.P50Ns != percentile(v, 50) || r.P99Ns != percentile(v, 99) {
			t.Errorf("%v %s: got n=%d total=%d min=%d max=%d p50=%d p99=%d, naive n=%d total=%d min=%d max=%d p50=%d p99=%d",
				r.Kind, r.Name, r.Count, r.TotalNs, r.MinNs, r.MaxNs, r.P50Ns, r.P99Ns,
				len(v), sum, v[0], v[len(v)-1], percentile(v, 50), percentile(v, 99))
		}
	}
	if got.Totals.KernelCount != kernCount || got.Totals.KernelTotalNs != kernNs {
		t.Errorf("kernel totals %d/%d, naive %d/%d", got.Totals.KernelCount, got.Totals.KernelTotalNs, kernCount, kernNs)
	}
	check := func(what string, rows []GroupRow, want map[string][2]int64) {
		if len(rows) != len(want) {
			t.Errorf("%s: %d rows, naive %d (%v)", what, len(rows), len(want), want)
		}
		for _, g := range rows {
			if w := want[g.Key]; g.Count != w[0] || g.TotalNs != w[1] {
				t.Errorf("%s %q: %d/%d, naive %d/%d", what, g.Key, g.Count, g.TotalNs, w[0], w[1])
			}
		}
	}
	t.Logf("%d kernel rows, %d transfer rows, %d categories, %d stages, %d steps, busy %d of %d", len(got.Kernels), len(got.Transfers), len(got.Categories), len(got.Stages), len(got.Steps), got.Totals.GPUBusyNs, got.Totals.GPUTotalNs)
	check("category", got.Categories, cats)
	check("stage", got.Stages, stages)
	if len(got.Steps) != len(steps) {
		t.Errorf("%d steps, naive %d", len(got.Steps), len(steps))
	}
	for _, st := range got.Steps {
		if w := steps[st.Step]; st.Count != w[0] || st.KernelNs != w[1] {
			t.Errorf("step %d: %d ops %d ns, naive %d ops %d ns", st.Step, st.Count, st.KernelNs, w[0], w[1])
		}
	}
}

// TestStepsInOrder adds steps out of order, across snapshots and a Reset,
// and checks each snapshot lists every step once, ascending, with the
// start of its first event.
func TestStepsInOrder(t *testing.T) {
	s := tracer.NewStrings()
	name := s.Intern("step")
	a := NewAggregator(nil)
	add := func(steps ...int64) {
		for _, n := range steps {
			a.Add(&tracer.Event{Kind: tracer.KindStep, Name: name, Start: 1000 * n, Dur: 10, Value: n, Device: -1}, s, nil)
		}
	}
	want := func(steps ...int64) {
		t.Helper()
		got := a.Snapshot().Steps
		var nums []int64
		for _, r := range got {
			nums = append(nums, r.Step)
			if r.StartNs != 1000*r.Step {
				t.Fatalf("step %d starts at %d, want %d", r.Step, r.StartNs, 1000*r.Step)
			}
		}
		if !slices.Equal(nums, steps) {
			t.Fatalf("steps %v, want %v", nums, steps)
		}
	}
	add(1, 2, 3)
	want(1, 2, 3)
	add(4, 5, 3) // 3 again: the first window holds
	want(1, 2, 3, 4, 5)
	add(9, 7, 8, 0)
	want(0, 1, 2, 3, 4, 5, 7, 8, 9)
	add(6)
	want(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	a.Reset()
	want()
	add(2, 1)
	want(1, 2)
}

// TestMedianStepNs checks the lower median by hand on small counts and
// against a sort on large ones (past selectRanks' sort cut-off).
func TestMedianStepNs(t *testing.T) {
	rows := func(durs ...int64) []StepRow {
		out := make([]StepRow, len(durs))
		for i, d := range durs {
			out[i] = StepRow{Step: int64(i), DurNs: d}
		}
		return out
	}
	for _, c := range []struct {
		durs []int64
		want int64
	}{
		{nil, 0},
		{[]int64{7}, 7},
		{[]int64{9, 3}, 3},       // lower median
		{[]int64{5, 1, 9}, 5},    // middle
		{[]int64{4, 4, 1, 8}, 4}, // rank 2 of 1 4 4 8
		{[]int64{0, 0, 2}, 0},
	} {
		if got := medianStepNs(rows(c.durs...)); got != c.want {
			t.Errorf("medianStepNs(%v) = %d, want %d", c.durs, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1024, 1025, 4096, 100_001} {
		durs := make([]int64, n)
		for i := range durs {
			durs[i] = 90e6 + rng.Int64N(20e6)
		}
		sorted := slices.Sorted(slices.Values(durs))
		if got, want := medianStepNs(rows(durs...)), sorted[(n-1)/2]; got != want {
			t.Errorf("%d steps: median %d, want %d", n, got, want)
		}
	}
}

// TestRowNameIDs: a row's NameID is its name's id in the table of the
// source whose event first made it: a second source with its own table
// adds to the row and leaves its id; a name only the second has takes
// the second's id.
func TestRowNameIDs(t *testing.T) {
	s1, s2 := tracer.NewStrings(), tracer.NewStrings()
	s1.Intern("padding")
	gemm, copyK := s1.Intern("volta_sgemm_128x64_nt"), s1.Intern("copy_kernel")
	other := s2.Intern("copy_kernel") // 1 in s2, 3 in s1
	a := NewAggregator(nil)
	a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: gemm, Start: 0, Dur: 10, Device: 0}, s1, nil)
	a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: copyK, Start: 20, Dur: 10, Device: 0}, s1, nil)
	a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: other, Start: 40, Dur: 10, Device: 0}, s2, nil)
	a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: s2.Intern("only_in_two"), Start: 60, Dur: 10, Device: 0}, s2, nil)
	want := map[string]tracer.StrID{"volta_sgemm_128x64_nt": 2, "copy_kernel": 3, "only_in_two": 2}
	snap := a.Snapshot()
	if len(snap.Kernels) != 3 {
		t.Fatalf("%d rows, want 3", len(snap.Kernels))
	}
	for _, r := range snap.Kernels {
		if r.NameID != want[r.Name] {
			t.Errorf("%s: NameID %d, want %d", r.Name, r.NameID, want[r.Name])
		}
	}
}

// All rows together keep at most durBudgetRows × the cap of durations:
// 400 rows of 1,000 executions each under a cap of 1,024 (budget 131,072,
// the rows would keep 400,000) move to their histograms once the budget
// is reached; counts, totals and extremes stay exact, and a row that never
// needed more room after the budget keeps exact percentiles.
func TestPercentileBudget(t *testing.T) {
	s := tracer.NewStrings()
	a := NewAggregator(nil)
	a.SetPercentileCap(1024)
	const rows, runs = 400, 1000
	names := make([]tracer.StrID, rows+1)
	for i := range names {
		names[i] = s.Intern(fmt.Sprintf("kernel_%d", i))
	}
	at := int64(0)
	// The last name runs 10 times, first: its 10 durations fit its first
	// chunk, taken before the budget filled.
	for k := range int64(10) {
		a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: names[rows], Start: at, Dur: 100 + k, Device: 0}, s, nil)
		at += 1000
	}
	for j := range int64(runs) {
		for i := range rows {
			a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: names[i], Start: at, Dur: 1 + j, Device: 0}, s, nil)
			at += 1000
		}
	}
	room := 0
	for _, r := range a.rows {
		if r.hist == nil {
			room += r.nFull + cap(r.durs)
		}
	}
	if room != a.durKept {
		t.Errorf("durKept %d, rows hold room for %d", a.durKept, room)
	}
	if limit := durBudgetRows*1024 + rows*512; room > limit {
		t.Errorf("rows keep room for %d durations, want at most %d", room, limit)
	}
	snap := a.Snapshot()
	approx := 0
	for _, k := range snap.Kernels {
		if k.Name == "kernel_400" {
			if k.PercentilesApprox || k.P50Ns != 104 || k.Count != 10 {
				t.Errorf("small row %+v: want 10 exact, p50 104", k)
			}
			continue
		}
		if k.Count != runs || k.TotalNs != runs*(runs+1)/2 || k.MinNs != 1 || k.MaxNs != runs {
			t.Errorf("%s: count %d total %d min %d max %d", k.Name, k.Count, k.TotalNs, k.MinNs, k.MaxNs)
		}
		if k.PercentilesApprox {
			approx++
		}
	}
	if approx == 0 {
		t.Error("no row moved to its histogram")
	}
}

// With a step cap the newest steps are listed, at most twice the cap
// between culls, the others counted in StepsForgotten; work launched in a
// forgotten step (a kernel of step 3 arriving after step 949, between
// culls) counts in the totals and in no step. By hand: 950 steps of 1
// kernel of 10 ns each under a cap of 100.
func TestStepCap(t *testing.T) {
	s := tracer.NewStrings()
	k := s.Intern("k")
	const steps = 950
	ctxs := []tracer.Context{{Step: -1}}
	for n := range int64(steps) {
		ctxs = append(ctxs, tracer.Context{Step: n})
	}
	a := NewAggregator(nil)
	a.SetStepCap(100)
	for n := range int64(steps) {
		a.Add(&tracer.Event{Kind: tracer.KindStep, Name: k, Start: 1000 * n, Dur: 100, Value: n, Device: -1}, s, ctxs)
		a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: k, Start: 1000*n + 10, Dur: 10, Device: 0, Ctx: tracer.CtxID(n + 1)}, s, ctxs)
		if snap := a.Snapshot(); len(snap.Steps) > 200 || int64(len(snap.Steps))+snap.StepsForgotten != n+1 {
			t.Fatalf("after step %d: %d listed + %d forgotten", n, len(snap.Steps), snap.StepsForgotten)
		}
	}
	a.Add(&tracer.Event{Kind: tracer.KindKernel, Name: k, Start: 3010, Dur: 10, Device: 0, Ctx: 4}, s, ctxs)
	snap := a.Snapshot()
	if snap.Totals.KernelCount != steps+1 || snap.Totals.KernelTotalNs != 10*(steps+1) {
		t.Errorf("totals %d kernels, %d ns; want %d, %d", snap.Totals.KernelCount, snap.Totals.KernelTotalNs, steps+1, 10*(steps+1))
	}
	last := snap.Steps[len(snap.Steps)-1]
	if last.Step != steps-1 || last.KernelNs != 10 || last.Count != 1 || last.StartNs != 1000*(steps-1) {
		t.Errorf("newest step %+v", last)
	}
	for _, st := range snap.Steps {
		if st.Step <= 3 || st.Count != 1 {
			t.Errorf("step %+v listed (want steps past the forgotten, one kernel each)", st)
		}
	}
	a.Reset()
	a.Add(&tracer.Event{Kind: tracer.KindStep, Name: k, Start: 0, Dur: 100, Value: 0, Device: -1}, s, ctxs)
	if snap := a.Snapshot(); len(snap.Steps) != 1 || snap.StepsForgotten != 0 {
		t.Errorf("after Reset: %d steps, %d forgotten; want step 0 listed", len(snap.Steps), snap.StepsForgotten)
	}
}
