package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// refDiff is scripts/ref_diff.py's output: exact-name kernel sums of both
// files computed with Python's json and Decimal.
type refDiff struct {
	KernelTotalANs int64 `json:"kernel_total_a_ns"`
	KernelTotalBNs int64 `json:"kernel_total_b_ns"`
	Kernels        []struct {
		Name     string `json:"name"`
		CountA   int64  `json:"count_a"`
		CountB   int64  `json:"count_b"`
		TotalANs int64  `json:"total_a_ns"`
		TotalBNs int64  `json:"total_b_ns"`
		DeltaNs  int64  `json:"delta_ns"`
	} `json:"kernels"`
	OnlyA []string `json:"only_a"`
	OnlyB []string `json:"only_b"`
}

func sharedPair(t *testing.T) (string, string) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	return filepath.Join(dir, "hta_diff_control_a100.json.gz"), filepath.Join(dir, "hta_diff_test_v100.json.gz")
}

// TestDiffSharedPair diffs the HTA A100/V100 pair and checks every kernel
// row against scripts/ref_diff.py: rows matched by name (one per category
// the name's launches fall in, summed per name) carry the reference's
// counts and totals; rows only in A or B are the reference's
// exact-name only-in-A/B kernels; display-name rows merge only-in-A names
// with only-in-B names and carry their summed counts and totals. Every
// reference name appears in exactly one row.
func TestDiffSharedPair(t *testing.T) {
	pa, pb := sharedPair(t)
	data, err := os.ReadFile("testdata/diff_hta_a100_v100.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref refDiff
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	type sums struct{ ca, cb, ta, tb int64 }
	want := map[string]sums{}
	for _, k := range ref.Kernels {
		if k.DeltaNs != k.TotalBNs-k.TotalANs {
			t.Fatalf("reference row %q: delta %d != %d-%d", k.Name, k.DeltaNs, k.TotalBNs, k.TotalANs)
		}
		want[k.Name] = sums{k.CountA, k.CountB, k.TotalANs, k.TotalBNs}
	}
	onlyA, onlyB := map[string]bool{}, map[string]bool{}
	for _, n := range ref.OnlyA {
		onlyA[n] = true
	}
	for _, n := range ref.OnlyB {
		onlyB[n] = true
	}

	d, err := diffFiles(pa, pb, attrib.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	if d.TotalsA.KernelTotalNs != ref.KernelTotalANs || d.TotalsB.KernelTotalNs != ref.KernelTotalBNs {
		t.Errorf("kernel totals A %d B %d, reference %d %d", d.TotalsA.KernelTotalNs, d.TotalsB.KernelTotalNs, ref.KernelTotalANs, ref.KernelTotalBNs)
	}
	// A name has one row per category its launches fall in:
	// the rows matched by name, or listed on one side, are summed per name.
	covered := map[string]int{}
	byName := map[string]sums{}
	how := map[string]string{}
	onlyNamesA, onlyNamesB := map[string]bool{}, map[string]bool{}
	var merged int
	for _, r := range d.Kernels {
		if r.DeltaNs != r.TotalB-r.TotalA {
			t.Errorf("%s: delta %d != %d-%d", r.Key, r.DeltaNs, r.TotalB, r.TotalA)
		}
		switch r.MatchBy {
		case "name", "only_a", "only_b":
			if _, ok := want[r.Key]; !ok {
				t.Errorf("row %q is not a kernel name of either file", r.Key)
				continue
			}
			if h, ok := how[r.Key]; ok && h != r.MatchBy {
				t.Errorf("%s: rows matched as %s and %s", r.Key, h, r.MatchBy)
			}
			how[r.Key] = r.MatchBy
			x := byName[r.Key]
			byName[r.Key] = sums{x.ca + r.CountA, x.cb + r.CountB, x.ta + r.TotalA, x.tb + r.TotalB}
			switch r.MatchBy {
			case "name":
				if onlyA[r.Key] || onlyB[r.Key] {
					t.Errorf("%s matched by name but the reference has it on one side only", r.Key)
				}
			case "only_a":
				onlyNamesA[r.Key] = true
				if !onlyA[r.Key] {
					t.Errorf("%s only in A, not in the reference's only_a", r.Key)
				}
			case "only_b":
				onlyNamesB[r.Key] = true
				if !onlyB[r.Key] {
					t.Errorf("%s only in B, not in the reference's only_b", r.Key)
				}
			}
		case "display_name":
			merged++
			var s sums
			for _, n := range r.NamesA {
				covered[n]++
				if !onlyA[n] {
					t.Errorf("display-name row %q merges %q from A, which the reference has in both files", r.Display, n)
				}
				s.ca += want[n].ca
				s.ta += want[n].ta
			}
			for _, n := range r.NamesB {
				covered[n]++
				if !onlyB[n] {
					t.Errorf("display-name row %q merges %q from B, which the reference has in both files", r.Display, n)
				}
				s.cb += want[n].cb
				s.tb += want[n].tb
			}
			if (sums{r.CountA, r.CountB, r.TotalA, r.TotalB}) != s {
				t.Errorf("display-name row %q: %+v, reference sums %+v", r.Display, sums{r.CountA, r.CountB, r.TotalA, r.TotalB}, s)
			}
		default:
			t.Errorf("row %q: match %q", r.Key, r.MatchBy)
		}
	}
	for n, s := range byName {
		covered[n]++
		if w := want[n]; s != w {
			t.Errorf("%s (%s): counts %d/%d totals %d/%d, reference %d/%d %d/%d", n, how[n], s.ca, s.cb, s.ta, s.tb, w.ca, w.cb, w.ta, w.tb)
		}
	}
	gotOnlyA, gotOnlyB := len(onlyNamesA), len(onlyNamesB)
	for n := range want {
		if covered[n] != 1 {
			t.Errorf("kernel %q appears in %d rows, want 1", n, covered[n])
		}
	}
	if len(covered) != len(want) {
		t.Errorf("%d names in rows, reference has %d", len(covered), len(want))
	}
	if d.OnlyA != gotOnlyA || d.OnlyB != gotOnlyB {
		t.Errorf("OnlyA/OnlyB %d/%d, rows %d/%d", d.OnlyA, d.OnlyB, gotOnlyA, gotOnlyB)
	}
	// 66 only-in-A and 27 only-in-B exact names in the reference; display
	// names pair 3 of each (below), leaving 63 and 24.
	if len(ref.OnlyA) != 66 || len(ref.OnlyB) != 27 || gotOnlyA != 63 || gotOnlyB != 24 || merged != 3 {
		t.Errorf("only in A %d→%d, only in B %d→%d, merged %d; want 66→63, 27→24, 3", len(ref.OnlyA), gotOnlyA, len(ref.OnlyB), gotOnlyB, merged)
	}
}

// TestDiffDisplayNameMatch checks by hand the display-name pairing on the
// shared pair: the FBGEMM embedding kernels are built for 2 (A100 job)
// and 5 (V100 job) as their last template argument, so their names
// differ while their display names do not.
func TestDiffDisplayNameMatch(t *testing.T) {
	pa, pb := sharedPair(t)
	d, err := diffFiles(pa, pb, attrib.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	const fwd = "split_embedding_codegen_forward_unweighted_kernel"
	cases := map[string]struct{ suffixA, suffixB string }{
		fwd: {"<float, float, float, long, 2ul>", "<float, float, float, long, 5ul>"},
		"split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1": {"<float, float, float, 2ul>", "<float, float, float, 5ul>"},
	}
	found := 0
	for _, r := range d.Kernels {
		c, ok := cases[r.Display]
		if !ok {
			continue
		}
		found++
		if r.MatchBy != "display_name" || len(r.NamesA) != 1 || len(r.NamesB) != 1 {
			t.Errorf("%s: match %s, names %d/%d; want display_name 1/1", r.Display, r.MatchBy, len(r.NamesA), len(r.NamesB))
			continue
		}
		if !strings.HasPrefix(r.NamesA[0], "void "+r.Display+c.suffixA+"(") || !strings.HasPrefix(r.NamesB[0], "void "+r.Display+c.suffixB+"(") {
			t.Errorf("%s: names\n A %.120s\n B %.120s", r.Display, r.NamesA[0], r.NamesB[0])
		}
		if r.Display == fwd && (r.CountA != 6 || r.CountB != 6) {
			// 6 kernel events of each name (scripts/ref_diff.py counts; the
			// name occurs 6 times in the raw A file).
			t.Errorf("%s: counts %d/%d, want 6/6", fwd, r.CountA, r.CountB)
		}
	}
	if found != 2 {
		t.Errorf("found %d of the 2 display-name rows", found)
	}
}

func TestDiffFormats(t *testing.T) {
	pa, pb := sharedPair(t)
	d, err := diffFiles(pa, pb, attrib.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteDiff(&b, d, report.Options{By: "kernel", Format: "json", Top: 0}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OnlyA   int `json:"only_a"`
		Kernels []struct {
			MatchBy string   `json:"match_by"`
			Ratio   *float64 `json:"ratio"`
			TotalA  int64    `json:"total_a_ns"`
		} `json:"kernels"`
		Categories []json.RawMessage `json:"categories"`
		Stages     []json.RawMessage `json:"stages"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OnlyA != 63 || len(doc.Kernels) != len(d.Kernels) || len(doc.Categories) == 0 || len(doc.Stages) == 0 {
		t.Errorf("json: only_a %d, %d kernels, %d categories, %d stages", doc.OnlyA, len(doc.Kernels), len(doc.Categories), len(doc.Stages))
	}
	for _, k := range doc.Kernels {
		// null when A has none of it: only in B, or a category of a name
		// that only B's launches fall in.
		if (k.MatchBy == "only_b" || k.TotalA == 0) != (k.Ratio == nil) {
			t.Errorf("json: %s row (A %d ns) with ratio %v (null only when A has none)", k.MatchBy, k.TotalA, k.Ratio)
		}
	}
	for _, f := range []string{"table", "md"} {
		b.Reset()
		if err := report.WriteDiff(&b, d, report.Options{By: "category", Format: f, Top: 3}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "gemm") || !strings.Contains(b.String(), "more rows") {
			t.Errorf("%s output:\n%s", f, b.String())
		}
	}
}
