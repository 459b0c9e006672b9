package extsort

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

type rec struct {
	key int64
	seq uint32
}

var codec = Codec[rec]{
	Size: 12,
	Put: func(b []byte, x rec) {
		binary.LittleEndian.PutUint64(b, uint64(x.key))
		binary.LittleEndian.PutUint32(b[8:], x.seq)
	},
	Get: func(b []byte) rec {
		return rec{int64(binary.LittleEndian.Uint64(b)), binary.LittleEndian.Uint32(b[8:])}
	},
	Cmp:    func(a, b rec) int { return cmp.Compare(a.key, b.key) }, // seq left out: stability shows
	Stable: true,
}

// TestSorterStable: records sorted through runs on disk come out as the
// standard library's stable sort orders them (equal keys in Add order),
// for one run in memory and for many runs.
func TestSorterStable(t *testing.T) {
	for _, runRecs := range []int{1 << 20, 1000, 7, 1} {
		r := rand.New(rand.NewPCG(1, 2))
		var in []rec
		s := New(codec, runRecs)
		for i := range 10_000 {
			x := rec{r.Int64N(500) - 250, uint32(i)}
			in = append(in, x)
			if err := s.Add(x); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := s.Spilled(), runRecs < len(in); got != want {
			t.Errorf("runRecs %d: spilled %v, want %v", runRecs, got, want)
		}
		want := slices.Clone(in)
		slices.SortStableFunc(want, codec.Cmp)
		var got []rec
		if err := s.Each(func(x rec) bool { got = append(got, x); return true }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("runRecs %d: %d records out, differ from the stable sort (first out %v, want %v)", runRecs, len(got), got[:3], want[:3])
		}
		// Not stable: the same keys in order, every record once.
		u := New(Codec[rec]{Size: codec.Size, Put: codec.Put, Get: codec.Get, Cmp: codec.Cmp}, runRecs)
		for _, x := range in {
			u.Add(x)
		}
		var ugot []rec
		if err := u.Each(func(x rec) bool { ugot = append(ugot, x); return true }); err != nil {
			t.Fatal(err)
		}
		bySeq := func(a, b rec) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq)) }
		if !slices.IsSortedFunc(ugot, codec.Cmp) || !slices.Equal(slices.SortedFunc(slices.Values(ugot), bySeq), slices.SortedFunc(slices.Values(in), bySeq)) {
			t.Fatalf("runRecs %d: the unstable sort lost or misordered records", runRecs)
		}
	}
}

// TestSorterStop: Each stops when fn says so.
func TestSorterStop(t *testing.T) {
	s := New(codec, 10)
	for i := range 100 {
		s.Add(rec{int64(100 - i), uint32(i)})
	}
	n := 0
	if err := s.Each(func(x rec) bool { n++; return x.key < 5 }); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("fn called %d times, want 5 (keys 1..5)", n)
	}
}

// TestSpool: records read back by index are those appended there.
func TestSpool(t *testing.T) {
	s, err := NewSpool(codec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 1000 {
		s.Append(rec{int64(i * 3), uint32(i)})
	}
	got, err := s.Read(990, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0] != (rec{2970, 990}) || got[9] != (rec{2997, 999}) {
		t.Errorf("Read(990, 20) = %d records %v…, want 10 from {2970 990}", len(got), got[:min(len(got), 2)])
	}
	s.Append(rec{-1, 1000})
	if got, _ = s.Read(1000, 5, got); len(got) != 1 || got[0].key != -1 {
		t.Errorf("Read after Append = %v, want [{-1 1000}]", got)
	}
}
