package attrib

// Kernel duration percentiles: exact nearest-rank selection by radix
// (selectRanks), and the log-linear histogram a row falls back to past
// Aggregator.SetPercentileCap.

import (
	"math/bits"
	"slices"
)

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted values: the value at rank ceil(p/100 * n).
func percentile(sorted []int64, p int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// durPercentiles sets r.p50 and r.p99 to the nearest-rank percentiles of
// r.durs (exact), recomputing only when durations arrived since the last
// call.
func (r *rowAcc) durPercentiles() {
	if n := r.nFull + len(r.durs); n != r.pctN {
		r.p50, r.p99 = selectRanks(r.durChunks(), r.max, pctRank(50, n), pctRank(99, n))
		r.pctN = n
	}
}

// medianStepNs is the median wall time (DurNs) of steps, ns: MedianNs of
// their durations.
func medianStepNs(steps []StepRow) int64 {
	d := make([]int64, len(steps))
	for i := range steps {
		d[i] = steps[i].DurNs
	}
	return MedianNs(d)
}

// MedianNs is the median of durations d, ns (not modified): the lower
// median for an even count, the value of rank ⌈n/2⌉ ascending; 0 when d is
// empty; negative values count as 0. Linear in len(d) (selectRanks, not a
// sort): views ask it of a live run's every snapshot, hundreds of
// thousands of steps after hours.
func MedianNs(d []int64) int64 {
	if len(d) == 0 {
		return 0
	}
	var mx int64
	neg := false
	for _, v := range d {
		mx = max(mx, v)
		neg = neg || v < 0
	}
	if neg { // selectRanks takes non-negative values
		d = slices.Clone(d)
		for i, v := range d {
			d[i] = max(v, 0)
		}
	}
	k := (len(d) + 1) / 2
	v, _ := selectRanks([][]int64{d}, mx, k, k)
	return v
}

// pctRank is the 1-based nearest rank of the p-th percentile of n values:
// ceil(p/100 * n), at least 1.
func pctRank(p, n int) int { return max((p*n+99)/100, 1) }

// selectRanks returns the values of 1-based ranks k1 and k2 of the values
// in chunks (non-negative durations, not modified; mx is their maximum or
// any larger value) by radix selection: one counting pass over v on the top 11 bits
// of [0, mx], one pass copying the values of the two buckets holding the
// ranks (usually a few per mille of v), then the same on those candidates
// down the bits. About 15 instructions per value, a fifth of a radix sort.
func selectRanks(chunks [][]int64, mx int64, k1, k2 int) (int64, int64) {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	if n <= 1024 { // a sort beats the 2048-bucket passes
		v := make([]int64, 0, n)
		for _, c := range chunks {
			v = append(v, c...)
		}
		slices.Sort(v)
		return v[k1-1], v[k2-1]
	}
	shift := max(bits.Len64(uint64(mx))-selectBits, 0)
	var count [1 << selectBits]int32
	for _, c := range chunks {
		countDigits(&count, c, shift)
	}
	b1, s1 := rankBucket(&count, k1)
	b2, s2 := rankBucket(&count, k2)
	lo1, lo2, w := int64(b1)<<shift, int64(b2)<<shift, uint64(1)<<shift
	nc := int(count[b1])
	if b2 != b1 {
		nc += int(count[b2])
	}
	cand := make([]int64, nc)
	for off := 0; len(chunks) > 0; chunks = chunks[1:] {
		off += gather2(cand[off:], chunks[0], lo1, lo2, w)
	}
	c1, c2 := cand, cand
	if b2 != b1 {
		// cand holds both buckets' values; split them.
		c1 = make([]int64, 0, count[b1])
		c2 = make([]int64, 0, count[b2])
		for _, x := range cand {
			if uint64(x-lo1) < w {
				c1 = append(c1, x)
			} else {
				c2 = append(c2, x)
			}
		}
	}
	if shift == 0 { // a bucket's values are equal
		return c1[0], c2[0]
	}
	next := max(shift-selectBits, 0)
	return selectRank(c1, k1-s1, next), selectRank(c2, k2-s2, next)
}

const selectBits = 11

// gather2 copies the values x of v in [lo1, lo1+w) or [lo2, lo2+w) to
// dst, which must have room for them, and returns how many. A leaf function, so that
// the loop keeps everything in registers.
//
//go:noinline
func gather2(dst, v []int64, lo1, lo2 int64, w uint64) int {
	n := 0
	for _, x := range v {
		if uint64(x-lo1) < w || uint64(x-lo2) < w {
			dst[n] = x
			n++
		}
	}
	return n
}

// countDigits counts v's values by bits [shift, shift+selectBits).
//
//go:noinline
func countDigits(count *[1 << selectBits]int32, v []int64, shift int) {
	sh := uint(shift) & 63 // no shift-range checks in the loop
	for _, x := range v {
		count[(x>>sh)&(1<<selectBits-1)]++
	}
}

// rankBucket returns the bucket holding 1-based rank k and the number of
// values in the buckets before it.
func rankBucket(count *[1 << selectBits]int32, k int) (bkt, before int) {
	for i, c := range count {
		if before+int(c) >= k {
			return i, before
		}
		before += int(c)
	}
	return len(count) - 1, before
}

// selectRank returns the value of 1-based rank k of v, whose values agree
// in every bit above shift+selectBits.
func selectRank(v []int64, k, shift int) int64 {
	const mask = 1<<selectBits - 1
	var count [1 << selectBits]int32
	for {
		if len(v) <= 64 {
			var c [64]int64
			w := c[:copy(c[:], v)]
			slices.Sort(w)
			return w[k-1]
		}
		clear(count[:])
		for _, x := range v {
			count[(x>>shift)&mask]++
		}
		bkt, seen := rankBucket(&count, k)
		if shift == 0 { // the bucket's values are equal
			for _, x := range v {
				if int(x&mask) == bkt {
					return x
				}
			}
		}
		if int(count[bkt]) != len(v) {
			next := make([]int64, 0, count[bkt])
			for _, x := range v {
				if int((x>>shift)&mask) == bkt {
					next = append(next, x)
				}
			}
			v, k = next, k-seen
		}
		// Bits at and above shift are now equal in v; overlapping the
		// next digit with them keeps the order.
		shift = max(shift-selectBits, 0)
	}
}

// Log-linear histogram of durations: values below 128 ns exactly, larger
// ones by their top 7 bits (64 buckets per power of two), so a bucket's
// middle is within 1/64 of any value in it.
const histBuckets = 128 + 57*64

func histBucket(d int64) int {
	if d < 128 {
		if d < 0 {
			return 0
		}
		return int(d)
	}
	e := bits.Len64(uint64(d)) - 7 // >= 1
	m := int(d >> e)               // 64..127
	return 128 + (e-1)*64 + (m - 64)
}

// histValue is the middle of bucket i, ns.
func histValue(i int) int64 {
	if i < 128 {
		return int64(i)
	}
	e := (i-128)/64 + 1
	m := int64((i-128)%64 + 64)
	return m<<e + (int64(1)<<e)/2
}

func (r *rowAcc) toHist() {
	r.hist = make([]int64, histBuckets)
	for _, c := range r.durChunks() {
		for _, d := range c {
			r.hist[histBucket(d)]++
		}
	}
	r.durs, r.full, r.nFull, r.pctN = nil, nil, 0, 0
}

// histPercentile is the nearest-rank p-th percentile of a histogram.
func histPercentile(h []int64, p int) int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := (int64(p)*n + 99) / 100
	var seen int64
	for i, c := range h {
		seen += c
		if seen >= rank {
			return histValue(i)
		}
	}
	return histValue(len(h) - 1)
}
