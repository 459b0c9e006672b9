package interval

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// cells marks the unit cells [t, t+1) that v covers on a grid of n cells:
// the union computed by counting, independent of any merging.
func cells(v []Span, n int) []bool {
	c := make([]bool, n)
	for _, x := range v {
		for t := max(x.Start, 0); t < min(x.End, int64(n)); t++ {
			c[t] = true
		}
	}
	return c
}

func count(c []bool) int64 {
	var n int64
	for _, b := range c {
		if b {
			n++
		}
	}
	return n
}

func randSpans(r *rand.Rand, k, grid int) []Span {
	v := make([]Span, k)
	for i := range v {
		s := r.Int64N(int64(grid))
		// Some empty and some reversed spans, which add nothing.
		v[i] = Span{s, s + r.Int64N(int64(grid)/4) - 2}
	}
	return v
}

// Union, Len, Overlap and Running against cell counts of random spans on
// a 400-cell grid (ends up to 500); 300 spans take Sort's radix path, 20 its small one.
func TestAgainstCellCount(t *testing.T) {
	const grid = 400
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		k := 20
		if trial%2 == 1 {
			k = 300
		}
		a, b := randSpans(r, k, grid), randSpans(r, k/2+1, grid)
		ca, cb := cells(a, 2*grid), cells(b, 2*grid)
		ua, ub := Union(slices.Clone(a)), Union(slices.Clone(b))
		if got, want := Len(ua), count(ca); got != want {
			t.Fatalf("trial %d: Len(Union) = %d, cells covered %d", trial, got, want)
		}
		if got := cells(ua, 2*grid); !slices.Equal(got, ca) {
			t.Fatalf("trial %d: Union covers other cells than its input", trial)
		}
		for i := 1; i < len(ua); i++ {
			if ua[i].Start <= ua[i-1].End || ua[i].End <= ua[i].Start {
				t.Fatalf("trial %d: union not sorted, disjoint and non-empty at %d: %v %v", trial, i, ua[i-1], ua[i])
			}
		}
		var both int64
		for i := range ca {
			if ca[i] && cb[i] {
				both++
			}
		}
		if got := Overlap(ua, ub); got != both {
			t.Fatalf("trial %d: Overlap = %d, cells in both %d", trial, got, both)
		}
		sorted := slices.Clone(a)
		slices.SortFunc(sorted, func(x, y Span) int { return int(x.Start - y.Start) })
		var run Running
		for _, x := range sorted {
			run.Add(x.Start, x.End)
		}
		if got := run.Len(); got != count(ca) {
			t.Fatalf("trial %d: Running.Len = %d, cells covered %d", trial, got, count(ca))
		}
		if got := Len(Merge(sorted)); got != count(ca) {
			t.Fatalf("trial %d: Len(Merge) = %d, cells covered %d", trial, got, count(ca))
		}
	}
}

// Sort orders by start like a comparison sort, for short and long
// inputs, narrow and full-range starts, duplicates.
func TestSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 100, 255, 256, 5000} {
		for _, spread := range []int64{1, 3000, 1 << 40, math.MaxInt64} {
			v := make([]Span, n)
			for i := range v {
				s := rng.Int64N(spread)
				if spread == math.MaxInt64 && rng.IntN(2) == 0 {
					s = -s - 1
				}
				v[i] = Span{Start: s, End: s + int64(i)}
			}
			want := slices.Clone(v)
			slices.SortStableFunc(want, func(x, y Span) int { return cmp.Compare(x.Start, y.Start) })
			Sort(v)
			for i := range v {
				if v[i].Start != want[i].Start {
					t.Fatalf("n=%d spread=%d: at %d start %d, want %d", n, spread, i, v[i].Start, want[i].Start)
				}
			}
		}
	}
}

// Touching spans join; lengths saturate at math.MaxInt64.
func TestTouchAndSaturate(t *testing.T) {
	u := Union([]Span{{5, 9}, {0, 5}, {9, 9}, {12, 13}})
	if want := []Span{{0, 9}, {12, 13}}; !slices.Equal(u, want) {
		t.Fatalf("Union = %v, want %v", u, want)
	}
	huge := []Span{{math.MinInt64, 0}, {1, math.MaxInt64}}
	if got := Len(Union(huge)); got != math.MaxInt64 {
		t.Fatalf("Len of two spans of 2^63 ns = %d, want saturated %d", got, int64(math.MaxInt64))
	}
	var run Running
	run.Add(math.MinInt64, 0)
	run.Add(1, math.MaxInt64)
	if got := run.Len(); got != math.MaxInt64 {
		t.Fatalf("Running.Len = %d, want saturated %d", got, int64(math.MaxInt64))
	}
	if got := AddSat(math.MinInt64, -1); got != math.MinInt64 {
		t.Fatalf("AddSat(MinInt64, -1) = %d", got)
	}
}
