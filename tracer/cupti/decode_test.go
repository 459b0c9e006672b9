package cupti

import (
	"encoding/binary"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// fakeMem resolves "pointers" as keys of a table: records built in Go
// store a small integer where CUPTI stores a char*.
type fakeMem map[uint64]string

// bytesMem is fakeMem without the conversion, for the benchmark.
type bytesMem map[uint64][]byte

func (m bytesMem) CString(rec []byte, off int) []byte {
	return m[binary.LittleEndian.Uint64(rec[off:])]
}

func (bytesMem) APIName(int, uint32) string { return "" }

func (m fakeMem) CString(rec []byte, off int) []byte {
	if off+8 > len(rec) {
		return nil
	}
	s, ok := m[binary.LittleEndian.Uint64(rec[off:])]
	if !ok {
		return nil
	}
	return []byte(s)
}

func (fakeMem) APIName(int, uint32) string { return "" }

func marker(flags uint32, ts uint64, id, tid uint32, name uint64) []byte {
	r := make([]byte, 56)
	binary.LittleEndian.PutUint32(r[0:], KindMarker)
	binary.LittleEndian.PutUint32(r[LayoutMarker.Flags:], flags)
	binary.LittleEndian.PutUint64(r[LayoutMarker.Timestamp:], ts)
	binary.LittleEndian.PutUint32(r[LayoutMarker.ID:], id)
	binary.LittleEndian.PutUint32(r[LayoutMarker.ObjectKind:], objectThread)
	binary.LittleEndian.PutUint32(r[LayoutMarker.ThreadID:], tid)
	binary.LittleEndian.PutUint64(r[LayoutMarker.Name:], name)
	return r
}

func concat(recs ...[]byte) ([]byte, []uint32) {
	var buf []byte
	var offs []uint32
	for _, r := range recs {
		offs = append(offs, uint32(len(buf)))
		buf = append(buf, r...)
	}
	return buf, offs
}

// Ranges open in one buffer and close in a later one; nested push/pop pairs
// by id; an END with no START is counted, not invented.
func TestMarkersPairAcrossBuffers(t *testing.T) {
	d := NewDecoder(1, fakeMem{1: "step", 2: "forward"})
	b1, o1 := concat(marker(markerStart, 100, 10, 3, 1), marker(markerStart, 150, 11, 3, 2))
	b2, o2 := concat(marker(markerEnd, 400, 11, 3, 0), marker(markerEnd, 1000, 10, 3, 0), marker(markerEnd, 1100, 99, 3, 0))
	if err := d.Decode(b1, o1); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.OpenRanges != 2 {
		t.Fatalf("open ranges %d, want 2", st.OpenRanges)
	}
	if err := d.Decode(b2, o2); err != nil {
		t.Fatal(err)
	}
	b := d.Take()
	if len(b.Events) != 2 {
		t.Fatalf("%d events", len(b.Events))
	}
	// forward: 150..400; step: 100..1000 (order: as the ENDs arrive).
	f, s := b.Events[0], b.Events[1]
	if d.Strings().Get(f.Name) != "forward" || f.Start != 150 || f.Dur != 250 || f.TID != 3 || f.Kind != tracer.KindRange {
		t.Errorf("forward %+v", f)
	}
	if d.Strings().Get(s.Name) != "step" || s.Start != 100 || s.Dur != 900 {
		t.Errorf("step %+v", s)
	}
	if st := d.Stats(); st.Unpaired != 1 || st.OpenRanges != 0 {
		t.Errorf("stats %+v", st)
	}
	if b.FirstString != 1 || len(b.NewStrings) != 2 || b.NewStrings[0] != "step" || b.NewStrings[1] != "forward" {
		t.Errorf("new strings %d %q", b.FirstString, b.NewStrings)
	}
	if b2 := d.Take(); len(b2.NewStrings) != 0 || b2.FirstString != 3 {
		t.Errorf("second take strings %d %q", b2.FirstString, b2.NewStrings)
	}
}

func TestShortAndBadRecords(t *testing.T) {
	d := NewDecoder(1, fakeMem{})
	short := make([]byte, 40) // a kernel record cut before its name
	binary.LittleEndian.PutUint32(short, KindKernel)
	odd := make([]byte, 16)
	binary.LittleEndian.PutUint32(odd, 9999)
	buf, offs := concat(short, odd, []byte{1, 2, 3})
	if err := d.Decode(buf, offs); err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Records != 3 || st.Short != 2 || st.Unknown != 1 {
		t.Errorf("stats %+v", st)
	}
	if err := d.Decode(buf, []uint32{8, 4}); err == nil {
		t.Error("descending offsets: no error")
	}
	if err := d.Decode(buf, []uint32{uint32(len(buf) + 1)}); err == nil {
		t.Error("offset past the end: no error")
	}
}

// Values worked by hand: pairs (1000→51000) and (2000→52100); at 1500 the
// offset is halfway between 50000 and 50100.
func TestClock(t *testing.T) {
	var c Clock
	if c.Host(5) != 5 {
		t.Error("no pairs: identity")
	}
	c.Add(1000, 51000)
	c.Add(2000, 52100)
	for _, tc := range []struct{ in, want int64 }{{500, 50500}, {1000, 51000}, {1500, 51550}, {2000, 52100}, {3000, 53100}} {
		if got := c.Host(tc.in); got != tc.want {
			t.Errorf("Host(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	c.Add(10, 60000) // CUPTI clock went backwards: source replaced
	if c.Len() != 1 || c.Host(20) != 60010 {
		t.Errorf("after reset: len %d host(20) %d", c.Len(), c.Host(20))
	}
}

func FuzzDecode(f *testing.F) {
	b, o := concat(marker(markerStart, 1, 1, 1, 1), marker(markerEnd, 2, 1, 1, 0))
	f.Add(b, uint32(len(o[1:])), o[1])
	f.Add(make([]byte, 200), uint32(1), uint32(0))
	f.Fuzz(func(t *testing.T, buf []byte, n uint32, step uint32) {
		d := NewDecoder(1, fakeMem{1: "x"})
		var offs []uint32
		for i := uint32(0); i < n%64; i++ {
			offs = append(offs, i*(step%512))
		}
		_ = d.Decode(buf, offs)
		_ = d.Take()
	})
}

func BenchmarkDecodeKernels(b *testing.B) {
	rec := make([]byte, 200)
	binary.LittleEndian.PutUint32(rec, KindConcurrentKernel)
	binary.LittleEndian.PutUint64(rec[LayoutKernel.Name:], 1)
	var buf []byte
	var offs []uint32
	for i := 0; i < 4096; i++ {
		binary.LittleEndian.PutUint64(rec[LayoutKernel.Start:], uint64(i*1000))
		binary.LittleEndian.PutUint64(rec[LayoutKernel.End:], uint64(i*1000+500))
		offs = append(offs, uint32(len(buf)))
		buf = append(buf, rec...)
	}
	d := NewDecoder(1, bytesMem{1: []byte("_ZN5flash15flash_fwd_kernelILi128EEEvNS_6ParamsE")})
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = d.Decode(buf, offs)
		d.Take()
	}
	b.ReportMetric(float64(b.N*len(offs))/b.Elapsed().Seconds(), "records/s")
}
