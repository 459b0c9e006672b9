package report

import (
	"encoding/csv"
	"errors"
	"strings"
	"testing"
)

// TestSortFilter: --sort and --filter over the hand-made snapshot. By
// hand: mean descending is ampere_sgemm (17) then f (7) (transfers are
// their own table, after the kernels); cat:attention keeps f only; "sgemm|memcpy" keeps the GEMM and
// the memcpy row; the categories table is not filtered.
func TestSortFilter(t *testing.T) {
	names := func(o Options) []string {
		o.Format = "csv"
		rows, err := csv.NewReader(strings.NewReader(render(t, snap(), o))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows[1:] {
			out = append(out, r[0])
		}
		return out
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Sort: "mean"}, "ampere_sgemm_128x64_nn,void f<int>(int|x),Memcpy HtoD (Pinned -> Device)"},
		{Options{Sort: "name"}, "ampere_sgemm_128x64_nn,void f<int>(int|x),Memcpy HtoD (Pinned -> Device)"}, // display names, ascending: "ampere…" < "f"
		{Options{Sort: "p50"}, "ampere_sgemm_128x64_nn,void f<int>(int|x),Memcpy HtoD (Pinned -> Device)"},  // 10 > 5
		{Options{Filter: "cat:attention"}, "void f<int>(int|x)"},
		{Options{Filter: "SGEMM|memcpy"}, "ampere_sgemm_128x64_nn,Memcpy HtoD (Pinned -> Device)"},
	} {
		if got := strings.Join(names(c.o), ","); got != c.want {
			t.Errorf("%+v: %s, want %s", c.o, got, c.want)
		}
	}
	cats := render(t, snap(), Options{Format: "csv", By: ByCategory, Filter: "cat:attention"})
	if strings.Count(cats, "\n") != 4 {
		t.Errorf("categories filtered:\n%s", cats)
	}
	var b strings.Builder
	if err := Write(&b, snap(), Options{Sort: "p95"}); !errors.Is(err, ErrOption) {
		t.Errorf("--sort p95: %v, want ErrOption", err)
	}
}

// TestMarkdownArrow: "->" in a name stays "->" in md (it was "-&gt;").
func TestMarkdownArrow(t *testing.T) {
	md := render(t, snap(), Options{Format: "md"})
	if !strings.Contains(md, "Memcpy HtoD (Pinned -> Device)") || strings.Contains(md, "&gt;") {
		t.Errorf("md:\n%s", md)
	}
}
