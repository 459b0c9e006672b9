package loop

import "math"

// ProbeDelta is the element-by-element comparison of two probe outputs.
type ProbeDelta struct {
	Len     int     // elements compared (the shorter length)
	MaxAbs  float64 // max |a−b| over pairs where neither is NaN
	MaxULP  int64   // max ULPDistance over the same pairs
	NaN     int     // pairs where either side is NaN
	Bitwise bool    // same length and every element has the same bits
}

// CompareProbes compares probe outputs a and b element by element.
func CompareProbes(a, b []float32) ProbeDelta {
	n := min(len(a), len(b))
	d := ProbeDelta{Len: n, Bitwise: len(a) == len(b)}
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if math.Float32bits(x) != math.Float32bits(y) {
			d.Bitwise = false
		}
		if x != x || y != y {
			d.NaN++
			continue
		}
		d.MaxAbs = max(d.MaxAbs, math.Abs(float64(x)-float64(y)))
		d.MaxULP = max(d.MaxULP, ULPDistance(x, y))
	}
	return d
}

// ULPDistance is the number of float32 steps between x and y: the
// difference of their positions on the ordered line of float32 values
// (+0 and −0 share position 0, so their distance is 0; the smallest
// positive and negative subnormals are 2 apart). Infinities are the
// positions just past the largest finite values. NaN inputs give
// math.MaxInt64.
func ULPDistance(x, y float32) int64 {
	if x != x || y != y {
		return math.MaxInt64
	}
	pos := func(f float32) int64 {
		b := int64(math.Float32bits(f))
		if b&(1<<31) != 0 {
			return -(b &^ (1 << 31))
		}
		return b
	}
	d := pos(x) - pos(y)
	if d < 0 {
		d = -d
	}
	return d
}

// CountNaN returns how many elements of v are NaN.
func CountNaN(v []float32) int {
	n := 0
	for _, x := range v {
		if x != x {
			n++
		}
	}
	return n
}
