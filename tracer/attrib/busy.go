package attrib

// Busy time: the union of GPU op intervals per device (busyAcc), merged on
// the fly, with sealing for live sessions (Aggregator.SetBusySeal).

import (
	"math"
	"slices"

	"github.com/rlktop/rlktop/internal/interval"
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
	cur interval.Span // running interval; {MaxInt64, MinInt64} before the first
	// Whether anything was added, and the smallest start added, ns.
	started bool
	lo      int64
	// Closed intervals: blocks[0][head:], blocks[1], …, tail[:tn], where
	// tail is the last block; blocks are allocated at full length so that
	// a push is a plain store (no slice header written, no write barrier).
	blocks   [][]interval.Span
	tail     []interval.Span
	tn       int
	head     int
	closedNs int64 // summed length of the kept intervals of full blocks, ns
	late     []interval.Span
	free     [][]interval.Span // recycled blocks (cap blockIvals)
	// Sealing (Aggregator.SetBusySeal): union before sealedEnd is only
	// remembered as its length sealedNs.
	lag       int64
	sealedNs  int64
	sealedEnd int64
	sealed    bool
}

const blockIvals = 4096

// reset empties the union, keeping blocks for reuse and lag.
func (b *busyAcc) reset() {
	b.recycle()
	b.cur, b.started, b.lo = interval.Span{Start: math.MaxInt64, End: math.MinInt64}, false, 0
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
func (b *busyAcc) closedList() []interval.Span {
	out := make([]interval.Span, 0, b.closedCount())
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
		c.blocks, c.tn = [][]interval.Span{c.tail}, len(c.tail)
	}
	c.late = slices.Clone(b.late)
	return c
}

// add adds [s,e) to the union.
func (b *busyAcc) add(s, e int64) {
	if s >= b.cur.Start {
		if s <= b.cur.End {
			if e > b.cur.End {
				b.cur.End = e
			}
			return
		}
		b.next(s, e)
		return
	}
	b.addLate(s, e)
}

// next closes cur and starts [s,e) (s > cur.End). Sealing is checked when
// the last block is full, i.End. at most every 4096 gaps.
func (b *busyAcc) next(s, e int64) {
	if b.tn == len(b.tail) && b.lag > 0 && b.anyClosed() {
		if len(b.late) > 0 {
			// Parked intervals may overlap closed ones about to be
			// sealed: merge them first (flush seals too). The merge may
			// have stretched cur up to [s,e).
			b.flush()
			if s <= b.cur.End {
				b.cur.End = max(b.cur.End, e)
				return
			}
		}
		b.sealBefore(s - b.lag)
		b.sealKept()
	}
	b.pushClosed(b.cur)
	b.cur = interval.Span{Start: s, End: e}
}

// pushClosed appends v after the last closed interval.
func (b *busyAcc) pushClosed(v interval.Span) {
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
		t = addSat(t, subSat(v.End, v.Start))
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
		b.tail = make([]interval.Span, min(max(64, 2*len(b.tail)), blockIvals))
	}
	b.blocks = append(b.blocks, b.tail)
	b.tn = 0
}

// lastClosedEnd returns the end of the last closed interval, or false.
func (b *busyAcc) lastClosedEnd() (int64, bool) {
	if !b.anyClosed() {
		return 0, false
	}
	return b.tail[b.tn-1].End, true
}

// addLate handles an interval starting before cur, or the first.
func (b *busyAcc) addLate(s, e int64) {
	if !b.started {
		b.started, b.lo, b.cur = true, s, interval.Span{Start: s, End: e}
		return
	}
	b.lo = min(b.lo, s)
	if b.sealed && s < b.sealedEnd {
		s = b.sealedEnd
		if e <= s {
			return
		}
		if s >= b.cur.Start {
			b.add(s, e)
			return
		}
	}
	if le, ok := b.lastClosedEnd(); !ok || s > le {
		// Between the last closed interval and cur.
		if e >= b.cur.Start {
			b.cur.Start, b.cur.End = s, max(b.cur.End, e)
		} else {
			b.pushClosed(interval.Span{Start: s, End: e})
		}
		return
	}
	b.late = append(b.late, interval.Span{Start: s, End: e})
	if len(b.late) >= 1<<16 && len(b.late) > b.closedCount()/4 {
		b.flush()
	}
}

// seal folds closed intervals that end more than lag before cur's start
// into sealedNs, recycling emptied blocks, and the oldest beyond
// busyKeptMax (sealKept).
func (b *busyAcc) seal() {
	b.sealBefore(b.cur.Start - b.lag)
	b.sealKept()
}

// busyKeptMax bounds the closed intervals a sealing union keeps (each
// 16 bytes: 16 MiB a device). The lag alone would keep every gap of the
// last 60 s (Session's default): at 100k kernels a second with a gap
// after each, 96 MB a device from a session's first minute. Past the bound the
// older half is sealed whatever its age, so the history kept is at least
// busyKeptMax/2 gaps (5 s at 100k kernels a second; the whole lag at
// 8.7k gaps a second or fewer); an op arriving later than that counts
// from the sealed part's end, as one later than the lag does.
const busyKeptMax = 1 << 20

// sealKept seals the oldest closed intervals until busyKeptMax/2 are
// kept, once more than busyKeptMax are.
func (b *busyAcc) sealKept() {
	n := b.closedCount()
	if n <= busyKeptMax {
		return
	}
	// The first interval kept: closed intervals are sorted and disjoint,
	// so sealing before its start seals exactly those before it.
	drop := n - busyKeptMax/2
	for i, blk := range b.blocks {
		lo := 0
		if i == 0 {
			lo = b.head
		}
		if i == len(b.blocks)-1 {
			blk = blk[:b.tn]
		}
		if k := len(blk) - lo; drop >= k {
			drop -= k
			continue
		}
		b.sealBefore(blk[lo+drop].Start)
		return
	}
}

// sealBefore seals the closed intervals that end before horizon.
func (b *busyAcc) sealBefore(horizon int64) {
	for b.anyClosed() {
		blk := b.blocks[0]
		v := blk[b.head]
		if v.End >= horizon {
			return
		}
		b.sealedNs = addSat(b.sealedNs, subSat(v.End, v.Start))
		if len(b.blocks) > 1 { // a full block: counted in closedNs
			b.closedNs = subSat(b.closedNs, subSat(v.End, v.Start))
		}
		b.sealedEnd, b.sealed = v.End, true
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

// flush merges late into the closed list and cur (a rare path: it
// allocates the merged list).
func (b *busyAcc) flush() {
	if len(b.late) == 0 {
		return
	}
	interval.Sort(b.late)
	late := interval.Merge(b.late)
	old := append(b.closedList(), b.cur)
	m := make([]interval.Span, 0, len(old)+len(late))
	push := func(v interval.Span) {
		if n := len(m); n > 0 && v.Start <= m[n-1].End {
			m[n-1].End = max(m[n-1].End, v.End)
			return
		}
		m = append(m, v)
	}
	i, j := 0, 0
	for i < len(old) && j < len(late) {
		if old[i].Start <= late[j].Start {
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
	return addSat(addSat(addSat(b.sealedNs, b.closedNs), b.tailSum()), subSat(b.cur.End, b.cur.Start))
}

// union returns the union's kept intervals (sealed part excluded), for
// tests.
func (b *busyAcc) union() []interval.Span {
	if !b.started {
		return nil
	}
	b.flush()
	return append(b.closedList(), b.cur)
}
