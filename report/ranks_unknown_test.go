package report

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestRanksCollectivesUnknown: sources merged from JSON reports
// (attrib.MergeSources) cannot match collectives, so --by rank prints
// waited and last as "-" (csv: empty), not "0 ns" and "0".
func TestRanksCollectivesUnknown(t *testing.T) {
	s := snap()
	s.Ranks = attrib.MergeSources([]attrib.SourceRow{
		{Rank: 0, RankFrom: attrib.RankFromTrace, Name: "r0.json", SpanNs: 1000, Steps: 1},
		{Rank: 1, RankFrom: attrib.RankFromTrace, Name: "r1.json", SpanNs: 1000, Steps: 1},
	}, []map[int64]int64{{1: 500}, {1: 700}})
	if !s.Ranks.CollectivesUnknown {
		t.Fatal("MergeSources: CollectivesUnknown not set")
	}
	var b strings.Builder
	if err := Write(&b, s, Options{By: ByRank, Format: "table"}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && f[1] == "r0.json" {
			found = true
			if f[len(f)-2] != "-" || f[len(f)-1] != "-" {
				t.Errorf("rank 0 row %q: want waited and last '-'", l)
			}
		}
	}
	if !found {
		t.Errorf("no rank 0 row:\n%s", b.String())
	}
	// The "-" are explained under the step table ("all '-'
	// with no note saying why").
	if !strings.Contains(b.String(), "last to collectives, waited: not known for merged JSON reports") ||
		strings.Contains(b.String(), "holds the others up") {
		t.Errorf("no note on the unknown collectives:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, s, Options{By: ByRank, Format: "csv"}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "r0.json") && !strings.HasSuffix(l, ",,") {
			t.Errorf("csv rank 0 row %q: want empty coll_wait_ns and last_arrivals", l)
		}
	}
}
