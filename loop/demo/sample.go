package demo

import (
	"math"
	"slices"
)

// Sampling: temperature softmax → top-p (nucleus, Holtzman et al. 2019) by a
// descending sort and a cumulative scan → one draw. Rows are ragged: row r
// holds n[r] logits at logits[r*stride:]; an entry of -Inf (an illegal move
// of the materialised head) gets probability 0.

// softmaxRows writes p = softmax(logits/temp) per row into p (same layout).
func softmaxRows(p, logits []float32, stride int, n []int32, temp float32) {
	inv := 1 / temp
	for r, nr := range n {
		lr := logits[r*stride : r*stride+int(nr)]
		pr := p[r*stride : r*stride+int(nr)]
		m := negInf32
		for _, v := range lr {
			m = max(m, v)
		}
		var s float32
		for i, v := range lr {
			e := expf((v - m) * inv)
			pr[i] = e
			s += e
		}
		is := 1 / s
		for i := range pr {
			pr[i] *= is
		}
	}
}

// sortRows sorts each row's probabilities in descending order, ties by
// ascending index: keys[r*stride+i] = (^bits(p))<<32 | index, which orders
// as wanted for p ≥ 0 because non-negative float32 bit patterns order like
// their values. sorted receives the probabilities in that order.
func sortRows(keys []uint64, sorted, p []float32, stride int, n []int32) {
	for r, nr := range n {
		kr := keys[r*stride : r*stride+int(nr)]
		pr := p[r*stride : r*stride+int(nr)]
		for i, v := range pr {
			kr[i] = uint64(^math.Float32bits(v))<<32 | uint64(i)
		}
		slices.Sort(kr)
		sr := sorted[r*stride : r*stride+int(nr)]
		for i, k := range kr {
			sr[i] = math.Float32frombits(^uint32(k >> 32))
		}
	}
}

// scanSerial is the inclusive prefix sum in index order: x[i] = x[0]+…+x[i].
func scanSerial(x []float32) {
	for i := 1; i < len(x); i++ {
		x[i] += x[i-1]
	}
}

// scanSklansky is the inclusive prefix sum by Sklansky's parallel-prefix
// network (1960): at level d = 1, 2, 4, … every element of the upper half
// of each 2d-block adds the last element of the lower half; log2(n) levels,
// each of which is data-parallel (one GPU thread per element).
//
// Error bound (stated and tested, TestScanULP): with u = 2^-24, x ≥ 0 and
// S_i the exact prefix sum of x[0..i], the serial result is within
// γ(i)·S_i of S_i and the Sklansky result within γ(⌈log2(i+1)⌉)·S_i
// (each is a sum tree of depth i resp. ⌈log2(i+1)⌉; Higham, Accuracy and
// Stability of Numerical Algorithms, §4.2), γ(k) = k·u/(1−k·u). Since
// u·y ≤ ulp(y) for float32 y > 0, the two differ by at most
// i + ⌈log2(i+1)⌉ + 1 ulps of S_i (worst seen in the test: about 100 ulps
// at i ≈ 6500; the top-p cut compares against p ≤ 1, so this moves the cut
// only when the cumulative mass is within that many ulps of p).
func scanSklansky(x []float32) {
	n := len(x)
	for d := 1; d < n; d <<= 1 {
		for b := 0; b+d < n; b += 2 * d {
			c := x[b+d-1]
			hi := min(b+2*d, n)
			seg := x[b+d : hi]
			for i := range seg {
				seg[i] += c
			}
		}
	}
}

// cutoff returns k, the length of the smallest sorted prefix whose
// cumulative probability reaches topP (at least 1, at most the number of
// positive entries).
func cutoff(cum, sorted []float32, topP float32) int {
	n := len(cum)
	for n > 1 && sorted[n-1] == 0 {
		n--
	}
	// cum is non-decreasing: binary search for the first cum ≥ topP.
	lo, hi := 0, n-1
	for lo < hi {
		mid := (lo + hi) / 2
		if cum[mid] >= topP {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo + 1
}

// drawMultinomial picks a sorted position i < k with probability
// sorted[i]/cum[k-1] by inverse CDF: the first i with cum[i] > u·cum[k-1].
func drawMultinomial(cum []float32, k int, u float32) int {
	t := u * cum[k-1]
	lo, hi := 0, k-1
	for lo < hi {
		mid := (lo + hi) / 2
		if cum[mid] > t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// drawGumbel picks a sorted position i < k by the Gumbel-max trick:
// argmax log(sorted[i]) − log(−log u_i), which has the same distribution
// (Gumbel 1954; Maddison et al. 2014). It takes k uniforms from r.
func drawGumbel(sorted []float32, k int, r *rng) int {
	best, bi := negInf32, 0
	for i, p := range sorted[:k] {
		g := log32(p) - log32(-log32(r.uniform()))
		if g > best {
			best, bi = g, i
		}
	}
	return bi
}
