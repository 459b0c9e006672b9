package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// rankSnap is snap() read from two rank files: per-source rows (numbers
// of attrib's TestRanksHandCounted), steps per source.
func rankSnap() *attrib.Snapshot {
	s := snap()
	s.Source = "/x/a.json, /x/b.json"
	s.Totals.SpanNs = 195
	s.Steps = []attrib.StepRow{
		{Step: 1, StartNs: 0, DurNs: 100, KernelNs: 90, Count: 2, Source: 0},
		{Step: 2, StartNs: 100, DurNs: 100, KernelNs: 85, Count: 2, Source: 0},
		{Step: 1, StartNs: 1_000_000_000, DurNs: 120, KernelNs: 85, Count: 2, Source: 1},
		{Step: 2, StartNs: 1_000_000_120, DurNs: 90, KernelNs: 75, Count: 2, Source: 1},
	}
	s.Ranks = &attrib.RankSummary{
		ByRank: true,
		Sources: []attrib.SourceRow{
			{Index: 0, Rank: 0, RankFrom: attrib.RankFromTrace, World: 2, Path: "/x/a.json", Name: "a.json", Format: "kineto",
				StartNs: 10, EndNs: 195, SpanNs: 185, KernelCount: 5, KernelNs: 178, BusyNs: 168, IdleNs: 17, ComputeNs: 55,
				CommNs: 123, CommOverlapNs: 10, CommExposedNs: 113, Steps: 2, StepMedianNs: 100, CollWaitNs: 80},
			{Index: 1, Rank: 1, RankFrom: attrib.RankFromTrace, World: 2, Path: "/x/b.json", Name: "b.json", Format: "kineto",
				StartNs: 1_000_000_005, EndNs: 1_000_000_200, SpanNs: 195, KernelCount: 4, KernelNs: 160, BusyNs: 160, IdleNs: 35, ComputeNs: 120,
				CommNs: 40, CommExposedNs: 40, Steps: 2, StepMedianNs: 90, LastArrivals: 2},
		},
		Steps: []attrib.StepSpread{
			{Step: 1, SlowSource: 1, FastSource: 0, SlowNs: 120, FastNs: 100, SpreadNs: 20, LateSource: 1, Collectives: 1, WaitNs: 40},
			{Step: 2, SlowSource: 0, FastSource: 1, SlowNs: 100, FastNs: 90, SpreadNs: 10, LateSource: 1, Collectives: 1, WaitNs: 40},
		},
		Collectives: 2, CollectivesUnmatched: 1,
	}
	return s
}

// TestRankGolden pins the per-source views of rankSnap (files
// testdata/ranks.<by>.<format>; -update rewrites them).
func TestRankGolden(t *testing.T) {
	for _, c := range []struct{ by, format string }{
		{ByRank, "table"}, {ByRank, "md"}, {ByRank, "csv"}, {ByFile, "table"}, {ByStep, "table"}, {ByStep, "csv"}, {ByKernel, "json"},
	} {
		name := "ranks." + c.by + "." + c.format
		var b bytes.Buffer
		if err := Write(&b, rankSnap(), Options{By: c.by, Format: c.format, Top: -1}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, b.String(), want)
		}
	}
}

// The facts a reader of the rank view needs, independent of layout.
func TestRankView(t *testing.T) {
	out := render(t, rankSnap(), Options{By: ByRank})
	for _, want := range []string{
		"sources: 2, ranks 0, 1",
		"rank 0: a.json, span 185 ns, 2 steps",
		"rank 1: b.json, span 195 ns, 2 steps",
		// rank 0 waited 80 ns in all; rank 1 none.
		"rank 1 arrived last at 2 of 2 collectives matched across 2 sources; the others waited 80 ns for it in all",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	var d Doc
	if err := json.Unmarshal([]byte(render(t, rankSnap(), Options{Format: "json"})), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Sources) != 2 || d.Sources[0].CommExposedNs != 113 || d.Sources[1].LastArrivals != 2 ||
		len(d.StepSpreads) != 2 || d.StepSpreads[0].SlowRank != 1 || d.StepSpreads[0].LateRank != 1 ||
		d.CollectivesMatched != 2 || d.CollectivesUnmatched != 1 {
		t.Errorf("json sources %+v spreads %+v", d.Sources, d.StepSpreads)
	}
	if len(d.Steps) != 4 || d.Steps[2].Source == nil || *d.Steps[2].Source != 1 {
		t.Errorf("json steps %+v: want 4 with their source", d.Steps)
	}
	// One source: no "source" on steps.
	var one Doc
	if err := json.Unmarshal([]byte(render(t, snap(), Options{Format: "json"})), &one); err != nil {
		t.Fatal(err)
	}
	if one.Steps[0].Source != nil || one.Sources != nil {
		t.Errorf("one source: steps %+v sources %+v", one.Steps, one.Sources)
	}
}

// TestRankWhy: under --by rank's verdict, the stage the late rank spends
// longer in per step (hand-made: rank 1 30 ns in "load" over 2 steps, 15
// a step; rank 0 none) in text, and in Markdown on the verdict's line; no
// line when no stage stands out.
func TestRankWhy(t *testing.T) {
	s := rankSnap()
	s.Ranks.Sources[1].Stages = []attrib.StageWall{{Name: "load", Ns: 30, Count: 2}}
	s.Ranks.Sources[1].StageSteps = 2
	var b strings.Builder
	if err := Write(&b, s, Options{By: ByRank, Format: "table"}); err != nil {
		t.Fatal(err)
	}
	want := "\nrank 1 spends 15 ns per step in stage \"load\", the others 0 ns (median): that is where it falls behind\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	if err := Write(&b, s, Options{By: ByRank, Format: "md"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "for it in all rank 1 spends 15 ns per step in stage") {
		t.Errorf("md lacks the why on the verdict's line:\n%s", b.String())
	}
	s.Ranks.Sources[1].Stages = nil
	b.Reset()
	if err := Write(&b, s, Options{By: ByRank, Format: "table"}); err != nil || strings.Contains(b.String(), "per step in stage") {
		t.Errorf("no stage: %v\n%s", err, b.String())
	}
}
