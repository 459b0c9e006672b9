package attrib

// Busy time: the union of GPU op intervals per device (busyAcc), merged on
// the fly, with sealing for live sessions (Aggregator.SetBusySeal).

import (
	"cmp"
	"math"
	"slices"
)

// busyAcc is one device's busy time: the union of [start,end) intervals.
// Input in start order (the common case: one stream, or streams reported
// as they run) is merged on the fly into a running interval cur in O(1);
// each interval it closes (a gap follows) is appended to the closed list,
// sorted and disjoint, with a plain store. Full blocks' lengths are summed
// into closedNs when they fill, so the union's length is closedNs + the
// tail block's (at most 4096 intervals) + len(cur) + sealedNs. The closed list is kept in blocks of up to 4096 intervals
// (64 KiB) that are never copied to grow and are recycled once sealed. An
// interval starting before cur is placed directly when it lands after the
// last closed one, else parked in late and merged (sort + one linear
// merge) when late grows large or at total. With sealing, steady state
// allocates nothing.
type busyAcc struct {
	cur ival // running interval; {MaxInt64, MinInt64} before the first
	// Whether anything was added, and the smallest start added, ns.
	started bool
	lo      int64
	// Closed intervals: blocks[0][head:], blocks[1], …, tail[:tn], where
	// tail is the last block; blocks are allocated at full length so that
	// a push is a plain store (no slice header written, no write barrier).
	blocks   [][]ival
	tail     []ival
	tn       int
	head     int
	closedNs int64 // summed length of the kept intervals of full blocks, ns
	late     []ival
	free     [][]ival // recycled blocks (cap blockIvals)
	// Sealing (Aggregator.SetBusySeal): union before sealedEnd is only
	// remembered as its length sealedNs.
	lag       int64
	sealedNs  int64
	sealedEnd int64
	sealed    bool
}

type ival struct{ s, e int64 }

const blockIvals = 4096

// reset empties the union, keeping blocks for reuse and lag.
func (b *busyAcc) reset() {
	b.recycle()
	b.cur, b.started, b.lo = ival{math.MaxInt64, math.MinInt64}, false, 0
	b.closedNs = 0
	b.late = b.late[:0]
	b.sealedNs, b.sealedEnd, b.sealed = 0, 0, false
}

// recycle drops every block, keeping full-size ones for reuse.
func (b *busyAcc) recycle() {
	for _, blk := range b.blocks {
		if len(blk) == blockIvals {
			b.free = append(b.free, blk)
		}
	}
	clear(b.blocks)
	b.blocks, b.tail, b.tn, b.head = b.blocks[:0], nil, 0, 0
}

// closedList returns the kept closed intervals in one new slice.
func (b *busyAcc) closedList() []ival {
	out := make([]ival, 0, b.closedCount())
	for i, blk := range b.blocks {
		if i == len(b.blocks)-1 {
			blk = blk[:b.tn]
		}
		if i == 0 {
			blk = blk[b.head:]
		}
		out = append(out, blk...)
	}
	return out
}

// clone returns a deep copy of b.
func (b *busyAcc) clone() busyAcc {
	c := *b
	c.blocks, c.tail, c.tn, c.head, c.free = nil, nil, 0, 0, nil
	c.closedNs = 0
	if b.anyClosed() {
		c.tail = b.closedList()
		c.blocks, c.tn = [][]ival{c.tail}, len(c.tail)
	}
	c.late = slices.Clone(b.late)
	return c
}

// add adds [s,e) to the union.
func (b *busyAcc) add(s, e int64) {
	if s >= b.cur.s {
		if s <= b.cur.e {
			if e > b.cur.e {
				b.cur.e = e
			}
			return
		}
		b.next(s, e)
		return
	}
	b.addLate(s, e)
}

// next closes cur and starts [s,e) (s > cur.e). Sealing is checked when
// the last block is full, i.e. at most every 4096 gaps.
func (b *busyAcc) next(s, e int64) {
	if b.tn == len(b.tail) && b.lag > 0 && b.anyClosed() {
		if len(b.late) > 0 {
			// Parked intervals may overlap closed ones about to be
			// sealed: merge them first (flush seals too). The merge may
			// have stretched cur up to [s,e).
			b.flush()
			if s <= b.cur.e {
				b.cur.e = max(b.cur.e, e)
				return
			}
		}
		b.sealBefore(s - b.lag)
	}
	b.pushClosed(b.cur)
	b.cur = ival{s, e}
}

// pushClosed appends v after the last closed interval.
func (b *busyAcc) pushClosed(v ival) {
	if b.tn == len(b.tail) {
		b.newBlock()
	}
	b.tail[b.tn] = v
	b.tn++
}

// anyClosed reports whether any closed interval is kept.
func (b *busyAcc) anyClosed() bool {
	return b.tn > 0 && (len(b.blocks) > 1 || b.tn > b.head)
}

// closedCount returns the number of kept closed intervals.
func (b *busyAcc) closedCount() int {
	if len(b.blocks) == 0 {
		return 0
	}
	n := b.tn - b.head
	for _, blk := range b.blocks[:len(b.blocks)-1] {
		n += len(blk)
	}
	return n
}

// tailSum is the summed length of the tail block's kept intervals, ns.
func (b *busyAcc) tailSum() int64 {
	var t int64
	lo := 0
	if len(b.blocks) == 1 {
		lo = b.head
	}
	for _, v := range b.tail[lo:b.tn] {
		t = addSat(t, subSat(v.e, v.s))
	}
	return t
}

// newBlock appends an empty block: recycled, or new (64 intervals first,
// doubling up to blockIvals, so that a device with few gaps stays small).
func (b *busyAcc) newBlock() {
	if len(b.blocks) > 0 {
		b.closedNs = addSat(b.closedNs, b.tailSum()) // the tail becomes a full block
	}
	if n := len(b.free); n > 0 {
		b.tail = b.free[n-1]
		b.free[n-1] = nil
		b.free = b.free[:n-1]
	} else {
		b.tail = make([]ival, min(max(64, 2*len(b.tail)), blockIvals))
	}
	b.blocks = append(b.blocks, b.tail)
	b.tn = 0
}

// lastClosedEnd returns the end of the last closed interval, or false.
func (b *busyAcc) lastClosedEnd() (int64, bool) {
	if !b.anyClosed() {
		return 0, false
	}
	return b.tail[b.tn-1].e, true
}

// addLate handles an interval starting before cur, or the first.
func (b *busyAcc) addLate(s, e int64) {
	if !b.started {
		b.started, b.lo, b.cur = true, s, ival{s, e}
		return
	}
	b.lo = min(b.lo, s)
	if b.sealed && s < b.sealedEnd {
		s = b.sealedEnd
		if e <= s {
			return
		}
		if s >= b.cur.s {
			b.add(s, e)
			return
		}
	}
	if le, ok := b.lastClosedEnd(); !ok || s > le {
		// Between the last closed interval and cur.
		if e >= b.cur.s {
			b.cur.s, b.cur.e = s, max(b.cur.e, e)
		} else {
			b.pushClosed(ival{s, e})
		}
		return
	}
	b.late = append(b.late, ival{s, e})
	if len(b.late) >= 1<<16 && len(b.late) > b.closedCount()/4 {
		b.flush()
	}
}

// seal folds closed intervals that end more than lag before cur's start
// into sealedNs, recycling emptied blocks.
func (b *busyAcc) seal() { b.sealBefore(b.cur.s - b.lag) }

// sealBefore seals the closed intervals that end before horizon.
func (b *busyAcc) sealBefore(horizon int64) {
	for b.anyClosed() {
		blk := b.blocks[0]
		v := blk[b.head]
		if v.e >= horizon {
			return
		}
		b.sealedNs = addSat(b.sealedNs, subSat(v.e, v.s))
		if len(b.blocks) > 1 { // a full block: counted in closedNs
			b.closedNs = subSat(b.closedNs, subSat(v.e, v.s))
		}
		b.sealedEnd, b.sealed = v.e, true
		b.head++
		if len(b.blocks) == 1 {
			if b.head == b.tn { // the only block is empty: reuse it
				b.head, b.tn = 0, 0
			}
		} else if b.head == len(blk) {
			if len(blk) == blockIvals {
				b.free = append(b.free, blk)
			}
			n := copy(b.blocks, b.blocks[1:])
			b.blocks[n] = nil
			b.blocks, b.head = b.blocks[:n], 0
		}
	}
}

// coalesce sorts v if needed and merges overlapping or touching intervals
// in place.
func coalesce(v []ival, unsorted bool) []ival {
	if unsorted {
		sortIvals(v)
	}
	w := 0
	for _, x := range v {
		if w > 0 && x.s <= v[w-1].e {
			v[w-1].e = max(v[w-1].e, x.e)
			continue
		}
		v[w] = x
		w++
	}
	return v[:w]
}

// sortIvals sorts v by start: an LSD radix sort on 11-bit digits of
// start-min (as many passes as the starts' range needs) for long slices,
// slices.SortFunc otherwise.
func sortIvals(v []ival) {
	if len(v) < 256 {
		slices.SortFunc(v, func(x, y ival) int { return cmp.Compare(x.s, y.s) })
		return
	}
	lo, hi := v[0].s, v[0].s
	for _, x := range v {
		lo, hi = min(lo, x.s), max(hi, x.s)
	}
	span := uint64(hi - lo) // the starts' range (exact mod 2^64, as are x.s-lo)
	const bits = 11
	const mask = 1<<bits - 1
	tmp := make([]ival, len(v))
	src, dst := v, tmp
	var count [1 << bits]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += bits {
		clear(count[:])
		for _, x := range src {
			count[(uint64(x.s-lo)>>shift)&mask]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range src {
			k := (uint64(x.s-lo) >> shift) & mask
			dst[count[k]] = x
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
}

// flush merges late into the closed list and cur (a rare path: it
// allocates the merged list).
func (b *busyAcc) flush() {
	if len(b.late) == 0 {
		return
	}
	late := coalesce(b.late, true)
	old := append(b.closedList(), b.cur)
	m := make([]ival, 0, len(old)+len(late))
	push := func(v ival) {
		if n := len(m); n > 0 && v.s <= m[n-1].e {
			m[n-1].e = max(m[n-1].e, v.e)
			return
		}
		m = append(m, v)
	}
	i, j := 0, 0
	for i < len(old) && j < len(late) {
		if old[i].s <= late[j].s {
			push(old[i])
			i++
		} else {
			push(late[j])
			j++
		}
	}
	for ; i < len(old); i++ {
		push(old[i])
	}
	for ; j < len(late); j++ {
		push(late[j])
	}
	b.late = b.late[:0]
	b.cur = m[len(m)-1]
	m = m[:len(m)-1]
	b.recycle()
	b.closedNs = 0
	if len(m) > 0 {
		b.tail, b.tn = m, len(m)
		b.blocks = append(b.blocks, m)
	}
	if b.lag > 0 {
		b.seal()
	}
}

// total returns the union's length, ns.
func (b *busyAcc) total() int64 {
	if !b.started {
		return b.sealedNs
	}
	b.flush()
	return addSat(addSat(addSat(b.sealedNs, b.closedNs), b.tailSum()), subSat(b.cur.e, b.cur.s))
}

// union returns the union's kept intervals (sealed part excluded), for
// tests.
func (b *busyAcc) union() []ival {
	if !b.started {
		return nil
	}
	b.flush()
	return append(b.closedList(), b.cur)
}
