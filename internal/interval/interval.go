// Package interval is the one implementation of half-open time intervals
// [Start, End) in int64 ns: their union, its length, the overlap of two
// unions, and a running union of intervals that arrive in start order.
// Busy time, communication overlap, collective waits and a rank's traced
// span are all lengths of unions; every length here saturates at
// math.MaxInt64 instead of wrapping, as the aggregator's sums do.
package interval

import (
	"cmp"
	"math"
	"slices"
)

// Span is the half-open interval [Start, End), ns. A span with End <=
// Start is empty.
type Span struct{ Start, End int64 }

// Len is the span's length, End-Start saturated (ns); negative when empty
// and reversed.
func (s Span) Len() int64 { return SubSat(s.End, s.Start) }

// Union sorts v by start and merges, in place, the spans that overlap or
// touch (a span starting where another ends joins it), dropping empty
// ones. It returns v's prefix holding the union: sorted, disjoint, with
// gaps between consecutive spans.
func Union(v []Span) []Span {
	Sort(v)
	return Merge(v)
}

// Merge is Union of v already sorted by start (not checked).
func Merge(v []Span) []Span {
	w := 0
	for _, x := range v {
		if x.End <= x.Start {
			continue
		}
		if w > 0 && x.Start <= v[w-1].End {
			v[w-1].End = max(v[w-1].End, x.End)
			continue
		}
		v[w] = x
		w++
	}
	return v[:w]
}

// Len is the summed length of v's spans, saturated (ns): of a union, its
// covered time.
func Len(v []Span) int64 {
	var n int64
	for _, x := range v {
		n = AddSat(n, x.Len())
	}
	return n
}

// Overlap is the length of the intersection of two unions (each sorted
// and disjoint, as Union returns them), saturated (ns).
func Overlap(a, b []Span) int64 {
	var n int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s, e := max(a[i].Start, b[j].Start), min(a[i].End, b[j].End)
		if e > s {
			n = AddSat(n, e-s)
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return n
}

// Sort sorts v by start (ties in any order, which a union does not see):
// an LSD radix sort on 11-bit digits of Start-min, as many passes as the
// starts' range needs, for 256 spans or more, slices.SortFunc below that.
// The radix sort allocates one copy of v.
func Sort(v []Span) {
	if len(v) < 256 {
		slices.SortFunc(v, func(x, y Span) int { return cmp.Compare(x.Start, y.Start) })
		return
	}
	lo, hi := v[0].Start, v[0].Start
	for _, x := range v {
		lo, hi = min(lo, x.Start), max(hi, x.Start)
	}
	span := uint64(hi - lo) // the starts' range (exact mod 2^64, as are x.Start-lo)
	const bits = 11
	const mask = 1<<bits - 1
	tmp := make([]Span, len(v))
	src, dst := v, tmp
	var count [1 << bits]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += bits {
		clear(count[:])
		for _, x := range src {
			count[(uint64(x.Start-lo)>>shift)&mask]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range src {
			k := (uint64(x.Start-lo) >> shift) & mask
			dst[count[k]] = x
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
}

// Running is the length of the union of spans added in start order,
// in constant memory: the running span and the summed length of those
// closed. The zero value is empty. A span added out of order is counted
// as if it started at the running span's start when it overlaps it, and
// as a new span otherwise, so the caller keeps the order.
type Running struct {
	on  bool
	cur Span
	sum int64
}

// Add adds [s, e) (ns); an empty span adds nothing.
func (u *Running) Add(s, e int64) {
	switch {
	case e <= s:
	case !u.on:
		u.on, u.cur = true, Span{s, e}
	case s <= u.cur.End:
		u.cur.End = max(u.cur.End, e)
	default:
		u.sum = AddSat(u.sum, u.cur.Len())
		u.cur = Span{s, e}
	}
}

// Len is the union's length so far, saturated (ns).
func (u *Running) Len() int64 {
	if !u.on {
		return 0
	}
	return AddSat(u.sum, u.cur.Len())
}

// AddSat returns x+y, saturated at math.MaxInt64 or math.MinInt64
// instead of wrapping: a sum of ns that reaches math.MaxInt64 (about 292
// years) stays there.
func AddSat(x, y int64) int64 {
	s := x + y
	if (s > x) != (y > 0) {
		if y > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// SubSat returns x-y saturated like AddSat (a span or interval length, ns).
func SubSat(x, y int64) int64 {
	if y == math.MinInt64 {
		if x >= 0 {
			return math.MaxInt64
		}
		return x - y
	}
	return AddSat(x, -y)
}
