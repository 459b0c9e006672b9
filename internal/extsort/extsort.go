// Package extsort sorts fixed-size records that may not fit in memory: an
// external merge sort (Knuth, TAOCP vol. 3, §5.4) over sorted runs written
// to one unlinked temporary file. The importers use it where one long trace
// window would otherwise hold every operator interval at once (tracer's
// long-window linker, tracefile's nesting check).
//
// Memory is one run's records (New's runRecs) while adding, and a read
// buffer per run (32 KiB) while merging; a sort that fits one run never
// touches disk. The temporary file is unlinked when created (Linux), so a
// killed process leaves nothing behind.
//
// Why not a library: the maintained Go external sorts (lanrat/extsort)
// encode each record through an interface and merge through channels and
// goroutines; here records are fixed-size binary (16–40 bytes), the merge is
// one goroutine, and the sort must be stable.
package extsort

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"os"
	"slices"
)

// Codec describes a record type T: Size bytes each, Put writes x into
// b[:Size], Get reads it back, Cmp orders records. With Stable, records
// that Cmp ties keep the order of Add; without it their order is
// unspecified (faster: pdqsort instead of a stable sort within a run).
type Codec[T any] struct {
	Size   int
	Put    func(b []byte, x T)
	Get    func(b []byte) T
	Cmp    func(a, b T) int
	Stable bool
}

// DefaultRunRecs is the number of records a Sorter holds before it writes
// a run, unless New is given another.
const DefaultRunRecs = 1 << 17

// readBuf is the read buffer of each run while merging, bytes.
const readBuf = 32 << 10

// Sorter collects records and returns them sorted. Not safe for concurrent
// use. The zero value is not usable: see New.
type Sorter[T any] struct {
	c    Codec[T]
	run  int // records held before a run is written
	buf  []T
	f    *os.File
	off  int64
	runs []run
	n    int
	err  error
	wb   *bufio.Writer
	rec  []byte
}

type run struct{ off, n int64 }

// New returns an empty Sorter of records described by c that holds
// runRecs records in memory before it writes them as a run (0 or less:
// DefaultRunRecs). The output does not depend on runRecs (beyond the
// order of ties without Stable): tests pass a few to take small inputs
// through the runs on disk and their merge.
func New[T any](c Codec[T], runRecs int) *Sorter[T] {
	if runRecs <= 0 {
		runRecs = DefaultRunRecs
	}
	return &Sorter[T]{c: c, run: runRecs, rec: make([]byte, c.Size)}
}

// Len returns the number of records added.
func (s *Sorter[T]) Len() int { return s.n }

// Spilled reports whether runs were written to disk.
func (s *Sorter[T]) Spilled() bool { return len(s.runs) > 0 }

// Add adds x. An error writing a run to the temporary file is returned by
// Add and by Each.
func (s *Sorter[T]) Add(x T) error {
	if s.err != nil {
		return s.err
	}
	s.n++
	s.buf = append(s.buf, x)
	if len(s.buf) >= s.run {
		s.err = s.spill()
	}
	return s.err
}

// sortBuf sorts the buffered records.
func (s *Sorter[T]) sortBuf() {
	if s.c.Stable {
		slices.SortStableFunc(s.buf, s.c.Cmp)
	} else {
		slices.SortFunc(s.buf, s.c.Cmp)
	}
}

// spill sorts the buffered records and writes them as a run.
func (s *Sorter[T]) spill() error {
	s.sortBuf()
	if s.f == nil {
		f, err := os.CreateTemp("", "rlktop-sort-*")
		if err != nil {
			return fmt.Errorf("external sort: %w (set TMPDIR to a writable directory with room)", err)
		}
		os.Remove(f.Name()) // unlinked: the open file keeps it
		s.f = f
		s.wb = bufio.NewWriterSize(f, 64<<10)
	}
	for _, x := range s.buf {
		s.c.Put(s.rec, x)
		if _, err := s.wb.Write(s.rec); err != nil {
			return fmt.Errorf("external sort: writing a run: %w", err)
		}
	}
	if err := s.wb.Flush(); err != nil {
		return fmt.Errorf("external sort: writing a run: %w", err)
	}
	s.runs = append(s.runs, run{s.off, int64(len(s.buf))})
	s.off += int64(len(s.buf)) * int64(s.c.Size)
	s.buf = s.buf[:0]
	return nil
}

// Each calls fn with every record added, in Cmp order, until fn
// returns false. It may be called once; then the Sorter is empty and its
// file closed (Close is then a no-op). The error is one of writing or
// reading the temporary file.
func (s *Sorter[T]) Each(fn func(x T) bool) error {
	defer s.Close()
	if s.err != nil {
		return s.err
	}
	if len(s.runs) == 0 {
		s.sortBuf()
		for _, x := range s.buf {
			if !fn(x) {
				break
			}
		}
		return nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf = nil
	h := &mergeHeap[T]{cmp: s.c.Cmp}
	for i, r := range s.runs {
		c := &cursor[T]{r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.n*int64(s.c.Size)), readBuf), left: r.n, run: i, b: make([]byte, s.c.Size)}
		ok, err := c.next(s.c)
		if err != nil {
			return err
		}
		if ok {
			h.cs = append(h.cs, c)
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		c := h.cs[0]
		if !fn(c.x) {
			return nil
		}
		ok, err := c.next(s.c)
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// Close drops the records and the temporary file.
func (s *Sorter[T]) Close() {
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.wb, s.buf, s.runs, s.off = nil, nil, nil, nil, 0
}

// cursor reads one run.
type cursor[T any] struct {
	r    *bufio.Reader
	left int64
	run  int
	b    []byte
	x    T
}

func (c *cursor[T]) next(codec Codec[T]) (bool, error) {
	if c.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(c.r, c.b); err != nil {
		return false, fmt.Errorf("external sort: reading run %d back: %w", c.run, err)
	}
	c.left--
	c.x = codec.Get(c.b)
	return true, nil
}

// mergeHeap orders the runs' cursors by their current record; ties go to
// the earlier run (runs hold records in Add order), keeping a Stable sort
// stable.
type mergeHeap[T any] struct {
	cs  []*cursor[T]
	cmp func(a, b T) int
}

func (h *mergeHeap[T]) Len() int { return len(h.cs) }
func (h *mergeHeap[T]) Less(i, j int) bool {
	if c := h.cmp(h.cs[i].x, h.cs[j].x); c != 0 {
		return c < 0
	}
	return h.cs[i].run < h.cs[j].run
}
func (h *mergeHeap[T]) Swap(i, j int) { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *mergeHeap[T]) Push(x any)    { h.cs = append(h.cs, x.(*cursor[T])) }
func (h *mergeHeap[T]) Pop() any {
	x := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return x
}

// Spool is an append-only file of records read back by index: the sorted
// output of a Sorter kept for random access (one unlinked temporary file).
// Not safe for concurrent use.
type Spool[T any] struct {
	c   Codec[T]
	f   *os.File
	wb  *bufio.Writer
	n   int64
	rb  []byte
	rec []byte
}

// NewSpool returns an empty Spool of records described by c (Cmp unused),
// or the error creating its temporary file.
func NewSpool[T any](c Codec[T]) (*Spool[T], error) {
	f, err := os.CreateTemp("", "rlktop-spool-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w (set TMPDIR to a writable directory with room)", err)
	}
	os.Remove(f.Name())
	return &Spool[T]{c: c, f: f, wb: bufio.NewWriterSize(f, 64<<10), rec: make([]byte, c.Size)}, nil
}

// Len returns the number of records appended.
func (s *Spool[T]) Len() int64 { return s.n }

// Append adds x at index Len().
func (s *Spool[T]) Append(x T) error {
	s.c.Put(s.rec, x)
	if _, err := s.wb.Write(s.rec); err != nil {
		return fmt.Errorf("spool: writing: %w", err)
	}
	s.n++
	return nil
}

// Read returns dst[:0] filled with records i, i+1, … up to n of them (fewer
// at the end), or the error reading them.
func (s *Spool[T]) Read(i int64, n int, dst []T) ([]T, error) {
	dst = dst[:0]
	if err := s.wb.Flush(); err != nil {
		return dst, fmt.Errorf("spool: writing: %w", err)
	}
	n = int(min(int64(n), s.n-i))
	if n <= 0 {
		return dst, nil
	}
	size := s.c.Size
	if cap(s.rb) < n*size {
		s.rb = make([]byte, n*size)
	}
	b := s.rb[:n*size]
	if _, err := s.f.ReadAt(b, i*int64(size)); err != nil {
		return dst, fmt.Errorf("spool: reading records %d–%d back: %w", i, i+int64(n), err)
	}
	for k := 0; k < n; k++ {
		dst = append(dst, s.c.Get(b[k*size:(k+1)*size]))
	}
	return dst, nil
}

// Close drops the file.
func (s *Spool[T]) Close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
