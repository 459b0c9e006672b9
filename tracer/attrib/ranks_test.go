package attrib

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// twoRanks is a hand-made pair of GPU traces on unrelated clocks (rank 1's
// starts 1 s later): rank 1 computes longer before each all-reduce, so it
// arrives last and rank 0 waits. Every expected number below is counted by
// hand from these intervals (ns).
func twoRanks() []*tracer.Trace {
	mk := func(path string, rank int, off int64, steps [][2]int64, ks []struct {
		name       string
		start, end int64
		ctx        tracer.CtxID
	}) *tracer.Trace {
		t := tracer.NewTrace("kineto", path)
		t.Rank, t.World = rank, 2
		t.Contexts = []tracer.Context{{Step: -1}, {Step: 1}, {Step: 2}}
		for i, s := range steps {
			t.Events = append(t.Events, tracer.Event{Kind: tracer.KindStep, Start: off + s[0], Dur: s[1] - s[0], Value: int64(i + 1), Device: -1})
		}
		for _, k := range ks {
			t.Events = append(t.Events, tracer.Event{Kind: tracer.KindKernel, Name: t.Strings.Intern(k.name), Start: off + k.start, Dur: k.end - k.start, Ctx: k.ctx})
		}
		return t
	}
	type k = struct {
		name       string
		start, end int64
		ctx        tracer.CtxID
	}
	a := mk("/x/a.json", 0, 0, [][2]int64{{0, 100}, {100, 200}}, []k{
		{"gemm_k", 10, 40, 1}, {"ncclKernel_AllReduce", 30, 90, 1},
		{"gemm_k", 95, 120, 2}, {"ncclKernel_AllReduce", 130, 190, 2},
		{"ncclKernel_Broadcast", 192, 195, 0}, // only on rank 0: unmatched
	})
	b := mk("/x/b.json", 1, 1_000_000_000, [][2]int64{{0, 120}, {120, 210}}, []k{
		{"gemm_k", 5, 70, 1}, {"ncclKernel_AllReduce", 70, 90, 1},
		{"gemm_k", 125, 180, 2}, {"ncclKernel_AllReduce", 180, 200, 2},
	})
	return []*tracer.Trace{a, b}
}

// TestRanksStages: a source's stages are its annotation ranges by name,
// summed (a nested range of the same name counts again), communication
// ranges left out, largest first: hand counts.
func TestRanksStages(t *testing.T) {
	tr := twoRanks()
	a := tr[0]
	for _, r := range []struct {
		name       string
		start, dur int64
	}{{"forward", 0, 40}, {"forward", 5, 10}, {"straggle", 100, 70}, {"nccl:all_reduce", 130, 60}, {"backward", 50, 30}} {
		a.Events = append(a.Events, tracer.Event{Kind: tracer.KindRange, Name: a.Strings.Intern(r.name), Start: r.start, Dur: r.dur, Device: -1})
	}
	src := Ranks(tr, nil).Source(0)
	want := []StageWall{{"straggle", 70, 1}, {"forward", 50, 2}, {"backward", 30, 1}}
	if !reflect.DeepEqual(src.Stages, want) {
		t.Errorf("stages %+v, want %+v", src.Stages, want)
	}
	// Ranges start in step 1 (forward, backward) and step 2 (straggle).
	if src.StageSteps != 2 {
		t.Errorf("stage steps %d, want 2", src.StageSteps)
	}
	// Ranges in one step of two (a Python run's traced steps): 1.
	b := tr[1]
	b.Events = append(b.Events, tracer.Event{Kind: tracer.KindRange, Name: b.Strings.Intern("fwd"), Start: 1_000_000_130, Dur: 20, Device: -1})
	if s := Ranks(tr, nil).Source(1); s.Steps != 2 || s.StageSteps != 1 {
		t.Errorf("rank 1: %d steps, %d with stages; want 2, 1", s.Steps, s.StageSteps)
	}
}

func TestRanksHandCounted(t *testing.T) {
	r := Ranks(twoRanks(), nil)
	if !r.ByRank || len(r.Sources) != 2 {
		t.Fatalf("ByRank %v, %d sources", r.ByRank, len(r.Sources))
	}
	want := []SourceRow{
		{Index: 0, Rank: 0, RankFrom: RankFromTrace, World: 2, Path: "/x/a.json", Name: "a.json", Format: "kineto",
			StartNs: 10, EndNs: 195, SpanNs: 185, KernelCount: 5, KernelNs: 30 + 60 + 25 + 60 + 3,
			BusyNs: 80 + 25 + 60 + 3, IdleNs: 185 - 168, ComputeNs: 30 + 25,
			CommNs: 60 + 60 + 3, CommOverlapNs: 10, CommExposedNs: 113,
			Steps: 2, StepMedianNs: 100, CollWaitNs: 40 + 40, LastArrivals: 0},
		{Index: 1, Rank: 1, RankFrom: RankFromTrace, World: 2, Path: "/x/b.json", Name: "b.json", Format: "kineto",
			StartNs: 1_000_000_005, EndNs: 1_000_000_200, SpanNs: 195, KernelCount: 4, KernelNs: 65 + 20 + 55 + 20,
			BusyNs: 85 + 75, IdleNs: 35, ComputeNs: 120,
			CommNs: 40, CommOverlapNs: 0, CommExposedNs: 40,
			Steps: 2, StepMedianNs: 90, CollWaitNs: 0, LastArrivals: 2},
	}
	for i, w := range want {
		if !reflect.DeepEqual(r.Sources[i], w) {
			t.Errorf("source %d:\n got %+v\nwant %+v", i, r.Sources[i], w)
		}
	}
	if r.Collectives != 2 || r.CollectivesUnmatched != 1 {
		t.Errorf("collectives %d matched, %d unmatched; want 2, 1", r.Collectives, r.CollectivesUnmatched)
	}
	wantSteps := []StepSpread{
		{Step: 1, SlowSource: 1, FastSource: 0, SlowNs: 120, FastNs: 100, SpreadNs: 20, LateSource: 1, Collectives: 1, WaitNs: 40},
		{Step: 2, SlowSource: 0, FastSource: 1, SlowNs: 100, FastNs: 90, SpreadNs: 10, LateSource: 1, Collectives: 1, WaitNs: 40},
	}
	if len(r.Steps) != len(wantSteps) {
		t.Fatalf("steps %+v", r.Steps)
	}
	for i, w := range wantSteps {
		if r.Steps[i] != w {
			t.Errorf("step spread %d: got %+v want %+v", i, r.Steps[i], w)
		}
	}
	if l := r.Label(1); l != "rank 1" {
		t.Errorf("label %q", l)
	}
}

// Sources without a rank, or claiming the same one, are numbered in input
// order and labelled as files.
func TestRanksFallBackToOrder(t *testing.T) {
	for _, ranks := range [][2]int{{-1, -1}, {3, 3}, {0, -1}} {
		ts := twoRanks()
		ts[0].Rank, ts[1].Rank = ranks[0], ranks[1]
		// Reverse the input order: the numbering follows it.
		ts[0], ts[1] = ts[1], ts[0]
		r := Ranks(ts, nil)
		if r.ByRank || r.Sources[0].Rank != 0 || r.Sources[0].Path != "/x/b.json" || r.Sources[1].RankFrom != RankFromOrder {
			t.Errorf("ranks %v: ByRank %v sources %+v", ranks, r.ByRank, r.Sources)
		}
		if l := r.Label(0); l != "file 0" {
			t.Errorf("label %q", l)
		}
	}
}

// CombineSources keeps steps and spans per source: the old single
// aggregator merged step 1 of both files (and its span crossed the two
// clocks: 1 s here).
func TestCombineSourcesKeepsSourcesApart(t *testing.T) {
	s := CombineSources(twoRanks(), nil)
	want := []StepRow{
		{Step: 1, StartNs: 0, DurNs: 100, KernelNs: 90, Count: 2, Source: 0},
		{Step: 2, StartNs: 100, DurNs: 100, KernelNs: 85, Count: 2, Source: 0},
		{Step: 1, StartNs: 1_000_000_000, DurNs: 120, KernelNs: 85, Count: 2, Source: 1},
		{Step: 2, StartNs: 1_000_000_120, DurNs: 90, KernelNs: 75, Count: 2, Source: 1},
	}
	if len(s.Steps) != len(want) {
		t.Fatalf("steps %+v", s.Steps)
	}
	for i := range want {
		if s.Steps[i] != want[i] {
			t.Errorf("step row %d: got %+v want %+v", i, s.Steps[i], want[i])
		}
	}
	if s.Totals.SpanNs != 195 || s.Rank != -1 || s.Ranks == nil || len(s.Ranks.Sources) != 2 {
		t.Errorf("span %d (want 195, the longer source's own), rank %d, ranks %+v", s.Totals.SpanNs, s.Rank, s.Ranks)
	}
	// Busy time is per source and device: 168 + 160.
	if s.Totals.KernelBusyNs != 328 || s.Totals.KernelTotalNs != 178+160 {
		t.Errorf("busy %d kernel total %d", s.Totals.KernelBusyNs, s.Totals.KernelTotalNs)
	}
	// One source: the aggregator's own steps and span.
	one := CombineSources(twoRanks()[:1], nil)
	if one.Totals.SpanNs != 185 || len(one.Steps) != 2 || one.Rank != 0 || len(one.Ranks.Sources) != 1 || one.Ranks.Steps != nil {
		t.Errorf("one source: span %d steps %+v rank %d ranks %+v", one.Totals.SpanNs, one.Steps, one.Rank, one.Ranks)
	}
}

// gloo's CPU collectives are communication by the default rules.
func TestGlooIsCollective(t *testing.T) {
	for _, n := range []string{"gloo:all_reduce", "gloo:broadcast", "c10d::allreduce_", "c10d::broadcast_", "record_param_comms", "ncclDevKernel_AllGather_RING_LL"} {
		if c := DefaultRules().Classify(tracer.KindKernel, n, Launch{}); c != CategoryCollective {
			t.Errorf("%s: %s, want collective", n, c)
		}
	}
	for _, n := range []string{"aten::broadcast_tensors", "aten::mm"} {
		if c := DefaultRules().Classify(tracer.KindKernel, n, Launch{}); c == CategoryCollective {
			t.Errorf("%s: collective", n)
		}
	}
}

// TestRanksNotOneJob: sources naming different world sizes, or starting
// more than SharedClockNs apart, are not one job's ranks: no collective is
// matched (waits unknown, no late arrival, per step or in all) and the
// reason says which; twoRanks' sources (world 2, 1 s apart) are one job.
func TestRanksNotOneJob(t *testing.T) {
	if r := Ranks(twoRanks(), nil); r.NotOneJob != "" || r.Collectives != 2 {
		t.Fatalf("one job: %q, %d matched", r.NotOneJob, r.Collectives)
	}
	tr := twoRanks()
	tr[1].World = 8
	r := Ranks(tr, nil)
	if r.NotOneJob != "not the ranks of one job: their traces name different world sizes (2, 8)" || r.Collectives != 0 || !r.CollectivesUnknown {
		t.Errorf("worlds 2 and 8: %q, %d matched, unknown %v", r.NotOneJob, r.Collectives, r.CollectivesUnknown)
	}
	for _, sp := range r.Steps {
		if sp.LateSource != -1 || sp.Collectives != 0 {
			t.Errorf("step %+v: want no late source", sp)
		}
	}
	tr = twoRanks()
	for i := range tr[1].Events {
		tr[1].Events[i].Start += 2 * 3600 * 1e9 // 2 h later
	}
	if r := Ranks(tr, nil); r.NotOneJob != "not the ranks of one job: their work starts 2 h 00 m apart" || r.Collectives != 0 {
		t.Errorf("2 h apart: %q, %d matched", r.NotOneJob, r.Collectives)
	}
	// No straggler finding for runs that are not one job.
	s := &Snapshot{Ranks: r}
	for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: s}) {
		if f.Kind == FindStraggler {
			t.Errorf("straggler finding across unrelated runs: %+v", f)
		}
	}
}

// TestCombineSourcesNamesWarningsOnce: a warning that names its file
// already (the importers' do) is not prefixed again; one that does not
// gets the file's path.
func TestCombineSourcesNamesWarningsOnce(t *testing.T) {
	a, b := tracer.NewTrace("kineto", "r/a.json"), tracer.NewTrace("kineto", "r/b.json")
	a.Warnings = []string{"r/a.json: no GPU work"}
	b.Warnings = []string{"clock skew"}
	s := CombineSources([]*tracer.Trace{a, b}, nil)
	want := []string{"r/a.json: no GPU work", "r/b.json: clock skew"}
	if strings.Join(s.Warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", s.Warnings, want)
	}
}
