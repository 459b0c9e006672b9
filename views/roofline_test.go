package views_test

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
)

func bf16Work(f, b float64, ns int64) attrib.Work {
	w := attrib.Work{Flops: f, Bytes: b, Ns: ns}
	w.FlopsByDType[tracer.DTypeBF16] = f
	return w
}

// TestRoofline: two categories against the H100 SXM roof (ridge 295 FLOP/B
// at bf16): gemm at 1000 FLOP/B, 500 TFLOP/s is drawn right of the ridge
// (where the roof is flat, '_') and below the roof; elementwise at 0.25
// FLOP/B, 0.5 TFLOP/s left of it (where the roof slopes, '/'); the legend
// gives each its bound. Without a peak no roof is drawn and the note says
// why.
func TestRoofline(t *testing.T) {
	p := attrib.DefaultPeaks().Lookup("NVIDIA H100 80GB HBM3")
	s := &attrib.Snapshot{Peak: p, Categories: []attrib.GroupRow{
		{Key: "gemm", TotalNs: 2e6, Work: bf16Work(1e12, 1e9, 2e6)},
		{Key: "elementwise", TotalNs: 1e6, Work: bf16Work(5e8, 2e9, 1e6)},
	}}
	s.Work = bf16Work(1e12+5e8, 3e9, 3e6)
	for _, w := range []int{80, 160} {
		v := views.NewRoofline(styles())
		v.SetSnapshot(s)
		v.SetSize(w, 24)
		if !v.Available() {
			t.Fatal("not available with work")
		}
		out := render(t, v.View(), w, 24)
		lines := strings.Split(out, "\n")
		find := func(c byte) (row, col int) {
			for i, l := range lines[:17] {
				if j := strings.IndexByte(l, c); j >= 0 && strings.Contains(l, "│") {
					return i, len([]rune(l[:j]))
				}
			}
			t.Fatalf("width %d: mark %c not drawn:\n%s", w, c, out)
			return 0, 0
		}
		ar, ac := find('a') // gemm
		br, bc := find('b') // elementwise
		if ac <= bc || ar >= br {
			t.Errorf("width %d: gemm at (%d,%d) should be right of and above elementwise at (%d,%d)", w, ar, ac, br, bc)
		}
		// The roof in gemm's column is flat and above it; in
		// elementwise's it slopes (or the mark sits on it).
		roofAt := func(col int) (int, rune) {
			for i, l := range lines[:17] {
				r := []rune(l)
				if col < len(r) && (r[col] == '_' || r[col] == '/') {
					return i, r[col]
				}
			}
			return -1, 0
		}
		if r, ch := roofAt(ac); ch != '_' || r > ar {
			t.Errorf("width %d: roof over gemm %q at row %d, mark at row %d", w, ch, r, ar)
		}
		if r, ch := roofAt(bc); ch != 0 && ch != '/' {
			t.Errorf("width %d: roof over elementwise %q at row %d", w, ch, r)
		}
		// The x axis's last label is whole, not cut at the chart's edge.
		for _, l := range lines {
			if _, x, ok := strings.Cut(l, "└"); ok {
				x = strings.TrimSpace(x)
				whole := false
				for _, lab := range []string{" 0.1", " 1", " 10", " 100", " 1k", " 10k", " 100k"} {
					whole = whole || strings.HasSuffix(" "+x, lab)
				}
				if !whole {
					t.Errorf("width %d: x axis %q ends in a cut label", w, x)
				}
			}
		}
		if !strings.Contains(out, "compute") || !strings.Contains(out, "memory") || !strings.Contains(out, "roof 3.35 TB/s, 989 TFLOP/s (bf16)") {
			t.Errorf("width %d: legend or note missing:\n%s", w, out)
		}
	}
	s.Peak, s.PeakNote = nil, `device "Tesla T4" is not in the device table`
	v := views.NewRoofline(styles())
	v.SetSnapshot(s)
	v.SetSize(80, 24)
	out := render(t, v.View(), 80, 24)
	if strings.ContainsAny(strings.Join(strings.Split(out, "\n")[:17], ""), "_/") || !strings.Contains(out, "no roof: device \"Tesla T4\"") {
		t.Errorf("no peak:\n%s", out)
	}
	v.SetSnapshot(&attrib.Snapshot{})
	if v.Available() {
		t.Error("available without work")
	}
}

// k toggles the marks per kernel in the Roofline view, so its help does
// not offer k (and j) for moving as the other lists do; the arrows move.
func TestRooflineKeysHelp(t *testing.T) {
	v := views.NewRoofline(styles())
	var keys []string
	for _, col := range v.FullHelp() {
		for _, b := range col {
			keys = append(keys, b.Help().Key)
		}
	}
	help := strings.Join(keys, " | ")
	if strings.Contains(help, "k/j") || !strings.Contains(help, "↑/↓") || !strings.Contains(help, "k") {
		t.Errorf("roofline help %q: want the arrows to move and k only for kernels/categories", help)
	}
}
