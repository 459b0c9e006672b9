package tracer

import (
	"cmp"
	"encoding/binary"
	"sort"

	"github.com/rlktop/rlktop/internal/extsort"
)

// Spill mode: a long window's operator and range intervals are not held.
// Linker.Add hands them to an external sort (internal/extsort; one run of
// 2^17 intervals in memory); the first Resolve seals them: the sorted
// intervals go, thread after thread, to one temporary file in blocks of
// SpillSizes.Block, and each block keeps in memory its first start and the
// intervals of earlier blocks that contain that start (its checkpoint: the
// open set there, a few deep). A sweep that restarts at t reads one block
// from the file; a forward sweep reads the blocks in turn. Memory is the
// checkpoints (a block's open set: the operator stack at its start) and
// one block per thread, not the intervals: OpenStream of 100 one-window
// copies of hta_diff_control_a100 (2.83 GB) held 106 MB of intervals at
// its peak before, none after (live heap 247 → 42 MiB, heap profile). The
// answers are those of the in-memory sweep (the same intervals in the same
// order: the external sort is stable, as SortStableFunc is).

// SpillSizes are the sizes of what a long window keeps on disk (spill
// mode, and what its readers sort on disk); a zero field takes its
// default. The answers are the same at any sizes: tests pass small ones to
// take small traces through the runs and blocks on disk.
type SpillSizes struct {
	// RunRecs is the number of records an external sort holds before it
	// writes a run (extsort.New; 0: extsort.DefaultRunRecs).
	RunRecs int
	// Block is the number of intervals per block of a spilled thread
	// (0: DefaultSpillBlock).
	Block int
}

// DefaultSpillBlock is the number of intervals per block of a spilled
// thread (24 bytes each in memory while loaded).
const DefaultSpillBlock = 1 << 13

func (s SpillSizes) block() int {
	if s.Block <= 0 {
		return DefaultSpillBlock
	}
	return s.Block
}

// spillSpan is one interval on its way through the external sort: its
// thread's index in Linker.spillKeys.
type spillSpan struct {
	th uint32
	sp span
}

var spillCodec = extsort.Codec[spillSpan]{
	Size: 4 + spanSize,
	Put: func(b []byte, x spillSpan) {
		binary.LittleEndian.PutUint32(b, x.th)
		putSpan(b[4:], x.sp)
	},
	Get: func(b []byte) spillSpan {
		return spillSpan{binary.LittleEndian.Uint32(b), getSpan(b[4:])}
	},
	Stable: true, // equal intervals keep Add order, as SortStableFunc in memory
	Cmp: func(a, b spillSpan) int {
		if a.th != b.th {
			return cmp.Compare(a.th, b.th)
		}
		return cmpSpan(a.sp, b.sp)
	},
}

const spanSize = 8 + 8 + 4 + 4

func putSpan(b []byte, x span) {
	binary.LittleEndian.PutUint64(b, uint64(x.s))
	binary.LittleEndian.PutUint64(b[8:], uint64(x.e))
	binary.LittleEndian.PutUint32(b[16:], uint32(x.name))
	binary.LittleEndian.PutUint32(b[20:], x.tag)
}

func getSpan(b []byte) span {
	return span{int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:])), StrID(binary.LittleEndian.Uint32(b[16:])), binary.LittleEndian.Uint32(b[20:])}
}

var spanCodec = extsort.Codec[span]{Size: spanSize, Put: putSpan, Get: getSpan, Cmp: cmpSpan}

// SpillIntervals makes the operator and range intervals added from now on
// go through an external sort to a temporary file (spill mode, above)
// instead of memory, until DropIntervals, with sizes' runs and blocks.
// Every interval must be added before the first Resolve: later ones are
// ignored (the caller checks that none come; CaptureLinker's long window
// does).
func (l *Linker) SpillIntervals(sizes SpillSizes) {
	l.spill = extsort.New(spillCodec, sizes.RunRecs)
	l.spillBlock = sizes.block()
	l.spillKeys, l.spillErr = l.spillKeys[:0], nil
}

// SpillErr returns the error of writing or reading spilled intervals, if
// any (answers after it may lack intervals).
func (l *Linker) SpillErr() error { return l.spillErr }

func (l *Linker) spillAdd(th *linkThread, sp span) {
	if th.idx < 0 || int(th.idx) >= len(l.spillKeys) || l.spillKeys[th.idx] != th {
		th.idx = int32(len(l.spillKeys))
		l.spillKeys = append(l.spillKeys, th)
	}
	th.maxDur = max(th.maxDur, sp.e-sp.s)
	if err := l.spill.Add(spillSpan{uint32(th.idx), sp}); err != nil && l.spillErr == nil {
		l.spillErr = err
	}
}

// seal ends spill mode's adding: the sorted intervals go to the threads,
// in memory when they fit one run, else to block files.
func (l *Linker) seal() {
	s := l.spill
	l.spill = nil
	l.cacheOK = false
	if !s.Spilled() {
		err := s.Each(func(x spillSpan) bool {
			th := l.spillKeys[x.th]
			th.ivs = append(th.ivs, x.sp)
			return true
		})
		if err != nil && l.spillErr == nil {
			l.spillErr = err
		}
		for _, th := range l.spillKeys {
			th.sortedN, th.valid = 0, false
		}
		return
	}
	sp, err := extsort.NewSpool(spanCodec)
	if err != nil {
		l.spillErr = err
		s.Close()
		return
	}
	l.spool = sp
	var d *spanDisk
	var open []span // intervals of d's earlier blocks that may be open
	err = s.Each(func(x spillSpan) bool {
		th := l.spillKeys[x.th]
		if d == nil || th.disk != d {
			d = &spanDisk{sp: sp, base: sp.Len(), block: l.spillBlock, cur: -1, err: &l.spillErr}
			th.disk, th.ivs, th.sortedN, th.valid = d, nil, 0, false
			open = open[:0]
		}
		if d.n%d.block == 0 {
			w := 0
			for _, o := range open {
				if o.contains(x.sp.s) {
					open[w] = o
					w++
				}
			}
			open = open[:w]
			d.blocks = append(d.blocks, spanBlock{first: x.sp.s, open: append([]span(nil), open...)})
		}
		open = append(open, x.sp)
		if err := sp.Append(x.sp); err != nil {
			l.spillErr = err
			return false
		}
		d.n++
		return true
	})
	if err != nil && l.spillErr == nil {
		l.spillErr = err
	}
}

// DropIntervals forgets every thread's operator and range intervals (in
// memory or spilled) and leaves spill mode; steps are kept.
func (l *Linker) DropIntervals() {
	for _, th := range l.threads {
		th.ivs, th.sortedN, th.maxDur, th.active, th.valid, th.disk, th.idx = th.ivs[:0], 0, 0, th.active[:0], false, nil, -1
		th.marks, th.marksN, th.rngs, th.rngsN = th.marks[:0], 0, th.rngs[:0], 0
		if cap(th.ivs) > 1<<16 {
			th.ivs = nil
		}
	}
	if l.spill != nil {
		l.spill.Close()
		l.spill = nil
	}
	if l.spool != nil {
		l.spool.Close()
		l.spool = nil
	}
	l.spillKeys = l.spillKeys[:0]
	l.cacheOK = false
}

// spanDisk is a spilled thread's intervals: records [base, base+n) of the
// spool, sorted as ivs would be, in blocks of block intervals.
type spanDisk struct {
	sp     *extsort.Spool[span]
	base   int64
	n      int
	block  int
	blocks []spanBlock
	cur    int    // the block in buf, -1 none
	buf    []span // block cur's intervals
	err    *error // where a read error goes (the Linker's spillErr)
}

// spanBlock: the first start (ns) of a block and the intervals of earlier
// blocks that contain it, outermost first.
type spanBlock struct {
	first int64
	open  []span
}

// restart positions a sweep at t: it appends to active the intervals of
// earlier blocks that may contain t and returns the index to go on from.
func (d *spanDisk) restart(t int64, active *[]span) int {
	// The last block starting at or before t (its checkpoint covers every
	// earlier block; later blocks start after t or at it, read forward).
	b := sort.Search(len(d.blocks), func(i int) bool { return d.blocks[i].first > t }) - 1
	if b < 0 {
		return 0
	}
	// A block after b may start at t too: b's checkpoint still holds what
	// earlier blocks have open at t (their starts are <= t).
	*active = append(*active, d.blocks[b].open...)
	return b * d.block
}

// at returns interval i (0 <= i < n), reading its block when needed; on a
// read error it returns an interval starting at +inf (the sweep stops) and
// keeps the error for Linker.SpillErr.
func (d *spanDisk) at(i int) span {
	b := i / d.block
	if b != d.cur {
		var err error
		d.buf, err = d.sp.Read(d.base+int64(b*d.block), d.block, d.buf)
		if err != nil {
			d.cur = -1
			if *d.err == nil {
				*d.err = err
			}
			return span{s: 1<<63 - 1, e: 1<<63 - 1}
		}
		d.cur = b
	}
	return d.buf[i-b*d.block]
}
