package loop

import "github.com/rlktop/rlktop/loop/demo"

// ProbeDelta is the element-by-element comparison of two probe outputs.
type ProbeDelta = demo.ProbeDiff

// CompareProbes compares probe outputs a and b element by element
// (demo.CompareProbe).
func CompareProbes(a, b []float32) ProbeDelta { return demo.CompareProbe(a, b) }

// ULPDistance is the distance of x and y in float32 steps
// (demo.ULPDistance; NaN gives math.MaxInt64).
func ULPDistance(x, y float32) int64 { return demo.ULPDistance(x, y) }

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
