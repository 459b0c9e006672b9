package loop

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
