package rocprof

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// Chunks are built here with the byte offsets of rocprofiler-sdk 0.5.0's
// records written out as numbers (the layout TestABILayout checks against
// the compiled header), not with the decoder's constants.

type chunkB struct{ b []byte }

func (c *chunkB) entry(tag uint32, p []byte) {
	c.b = binary.LittleEndian.AppendUint32(c.b, tag)
	c.b = binary.LittleEndian.AppendUint32(c.b, uint32(len(p)))
	c.b = append(c.b, p...)
	for len(c.b)%8 != 0 {
		c.b = append(c.b, 0)
	}
}

func put(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

func dispatchRec(size int, corr, tid, start, end, agent, queue, kid uint64) []byte {
	b := make([]byte, size)
	put(b, 0, uint64(size))
	binary.LittleEndian.PutUint32(b[8:], 11) // KERNEL_DISPATCH
	binary.LittleEndian.PutUint32(b[12:], 2) // COMPLETE
	put(b, 16, corr)
	put(b, 32, tid)
	put(b, 40, start)
	put(b, 48, end)
	if size >= 96 {
		put(b, 56, 128)
		put(b, 64, agent)
		put(b, 72, queue)
		put(b, 80, kid)
		put(b, 88, corr+1000)
	}
	return b
}

func copyRec(op uint32, corr, tid, start, end, dst, src, bytes uint64) []byte {
	b := make([]byte, 80)
	put(b, 0, 80)
	binary.LittleEndian.PutUint32(b[8:], 10)
	binary.LittleEndian.PutUint32(b[12:], op)
	put(b, 16, corr)
	put(b, 32, tid)
	put(b, 40, start)
	put(b, 48, end)
	put(b, 56, dst)
	put(b, 64, src)
	put(b, 72, bytes)
	return b
}

func apiRec(op uint32, corr, start, end, tid uint64) []byte {
	b := make([]byte, 56)
	put(b, 0, 56)
	binary.LittleEndian.PutUint32(b[8:], 5)
	binary.LittleEndian.PutUint32(b[12:], op)
	put(b, 16, corr)
	put(b, 32, start)
	put(b, 40, end)
	put(b, 48, tid)
	return b
}

func symbol(kid uint64, name string) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, kid), name...)
}

func marker(op, phase uint32, tid, ts, rid uint64, msg string) []byte {
	b := make([]byte, 40)
	binary.LittleEndian.PutUint32(b[0:], op)
	binary.LittleEndian.PutUint32(b[4:], phase)
	put(b, 8, tid)
	put(b, 16, ts)
	put(b, 32, rid)
	return append(b, msg...)
}

func TestDecode(t *testing.T) {
	var c chunkB
	c.entry(TagSymbol, symbol(16, "attn_fwd"))
	c.entry(TagSymbol, symbol(17, "Cijk_Ailk_Bljk"))
	c.entry(TagMarker, marker(1, 1, 100, 900, 0, "ProfilerStep#4")) // a step: KindStep, Value 4
	c.entry(TagMarker, marker(1, 1, 100, 1000, 0, "rollout"))       // push on thread 100
	c.entry(TagMarker, marker(1, 1, 100, 1100, 0, "forward"))       // nested push
	c.entry(TagMarker, marker(1, 1, 200, 1150, 0, "loader"))        // other thread
	c.entry(TagAPI, apiRec(7, 1, 1200, 1210, 100))                  // hipLaunchKernel
	c.entry(TagMarker, marker(2, 1, 100, 1300, 0, ""))              // pop forward
	c.entry(TagMarker, marker(0, 1, 100, 1350, 0, "checkpoint"))    // mark
	c.entry(TagMarker, marker(3, 2, 100, 1400, 77, "prefetch"))     // start (exit phase has the id)
	c.entry(TagMarker, marker(2, 1, 200, 1500, 0, ""))              // pop loader
	c.entry(TagMarker, marker(4, 1, 200, 1600, 77, ""))             // stop on another thread
	c.entry(TagMarker, marker(2, 1, 300, 1700, 0, ""))              // pop with nothing open
	c.entry(TagMarker, marker(1, 1, 400, 1800, 0, "ProfilerStep#4"))
	c.entry(TagMarker, marker(2, 1, 400, 1900, 0, ""))
	c.entry(TagDispatch, dispatchRec(184, 1, 100, 2000, 2750, 0xABC0, 0x7F00, 16))
	c.entry(TagDispatch, dispatchRec(200, 2, 100, 3000, 3300, 0xABC0, 0x7F10, 17)) // a newer, longer record
	c.entry(TagDispatch, dispatchRec(64, 3, 100, 4000, 4100, 0, 0, 0))             // too short: skipped
	c.entry(TagDispatch, dispatchRec(184, 4, 100, 5000, 5100, 0xDEF0, 0x7F00, 99)) // unknown kernel id
	c.entry(TagCopy, copyRec(2, 5, 100, 600, 900, 0xABC0, 0x1, 4096))
	c.entry(TagCopy, copyRec(3, 6, 100, 6000, 6400, 0x1, 0xDEF0, 8192))
	c.entry(TagDrops, binary.LittleEndian.AppendUint64(nil, 7))
	c.entry(99, []byte("future"))

	d := NewDecoder(4242)
	d.OpName = func(kind, op int32) string {
		if kind == 5 && op == 7 {
			return "hipLaunchKernel"
		}
		return ""
	}
	if err := d.Decode(c.b); err != nil {
		t.Fatal(err)
	}
	b := d.Take()
	name := func(e tracer.Event) string { return d.Name(e.Name) }
	type row struct {
		kind          tracer.Kind
		name          string
		start, dur    int64
		tid, dev, str int32
		corr          uint64
		value         int64
	}
	var got []row
	for _, e := range b.Events {
		if e.PID != 4242 {
			t.Errorf("pid %d", e.PID)
		}
		got = append(got, row{e.Kind, name(e), e.Start, e.Dur, e.TID, e.Device, e.Stream, e.Corr, e.Value})
	}
	want := []row{
		{tracer.KindRuntime, "hipLaunchKernel", 1200, 10, 100, -1, 0, 1, 0},
		{tracer.KindRange, "forward", 1100, 200, 100, -1, 0, 0, 0},
		{tracer.KindInstant, "checkpoint", 1350, 0, 100, -1, 0, 0, 0},
		{tracer.KindRange, "loader", 1150, 350, 200, -1, 0, 0, 0},
		{tracer.KindRange, "prefetch", 1400, 200, 100, -1, 0, 0, 0}, // started on 100, stopped on 200
		{tracer.KindStep, "ProfilerStep#4", 1800, 100, 400, -1, 0, 0, 4},
		{tracer.KindKernel, "attn_fwd", 2000, 750, 100, 0, 0, 1, 0},
		{tracer.KindKernel, "Cijk_Ailk_Bljk", 3000, 300, 100, 0, 1, 2, 0},
		{tracer.KindKernel, "<kernel_id 99>", 5000, 100, 100, 1, 0, 4, 0},
		{tracer.KindMemcpy, "MEMORY_COPY_HOST_TO_DEVICE", 600, 300, 100, 0, 0, 5, 4096},
		{tracer.KindMemcpy, "MEMORY_COPY_DEVICE_TO_HOST", 6000, 400, 100, 1, 0, 6, 8192},
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	st := d.Stats()
	if st.Short != 1 || st.Dropped != 7 || st.Unknown != 1 || st.Unpaired != 1 || st.NoName != 1 {
		t.Errorf("stats %+v", st)
	}
	if d.Open() != 2 { // "ProfilerStep#4" and "rollout" still pushed
		t.Errorf("open ranges %d, want 1", d.Open())
	}
	// Strings arrive once, in ID order.
	if len(b.NewStrings) == 0 || b.NewStrings[0] != "attn_fwd" || d.Take().NewStrings != nil {
		t.Errorf("new strings %q", b.NewStrings)
	}
}

func TestDecodeMalformed(t *testing.T) {
	var c chunkB
	c.entry(TagSymbol, symbol(1, "k"))
	bad := append(c.b, 1, 0, 0, 0, 0xff, 0xff, 0, 0) // claims 65535 bytes
	d := NewDecoder(1)
	if err := d.Decode(bad); err == nil || !strings.Contains(err.Error(), "claims") {
		t.Errorf("got %v", err)
	}
	if err := d.Decode(append(c.b, 1, 2, 3)); err == nil {
		t.Error("trailing bytes accepted")
	}
}

func FuzzDecode(f *testing.F) {
	var c chunkB
	c.entry(TagSymbol, symbol(16, "k"))
	c.entry(TagDispatch, dispatchRec(184, 1, 2, 3, 4, 5, 6, 16))
	c.entry(TagMarker, marker(1, 1, 1, 1, 0, "r"))
	c.entry(TagMarker, marker(2, 1, 1, 2, 0, ""))
	f.Add(c.b)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(1)
		_ = d.Decode(b)
		d.Take()
	})
}

// From rocprofiler-sdk 0.7.0 (1.0.0) an API record's correlation id has an
// ancestor: start/end/thread move by 8 bytes (size 64).
func TestDecodeAPIRecordV1(t *testing.T) {
	b := make([]byte, 64)
	put(b, 0, 64)
	binary.LittleEndian.PutUint32(b[8:], 5)
	binary.LittleEndian.PutUint32(b[12:], 1)
	put(b, 16, 42) // internal
	put(b, 32, 7)  // ancestor
	put(b, 40, 1000)
	put(b, 48, 1100)
	put(b, 56, 5001)
	var c chunkB
	c.entry(TagAPI, b)
	d := NewDecoder(1)
	d.SetSDKVersion(10000)
	if err := d.Decode(c.b); err != nil {
		t.Fatal(err)
	}
	ev := d.Take().Events
	if len(ev) != 1 || ev[0].Corr != 42 || ev[0].Start != 1000 || ev[0].Dur != 100 || ev[0].TID != 5001 {
		t.Errorf("v1 API record decoded as %+v", ev)
	}
	// The same bytes read as a 0.5.0 record would start at the ancestor.
	d = NewDecoder(1)
	d.Decode(c.b)
	if ev := d.Take().Events; len(ev) != 1 || ev[0].Start != 7 {
		t.Errorf("0.5.0 layout: %+v", ev)
	}
}

// BenchmarkDecode: one 1 MiB-class chunk of 5,000 kernel-dispatch records
// (184 bytes each, the 0.5.0 layout), decoded per iteration.
func BenchmarkDecode(b *testing.B) {
	var c chunkB
	c.entry(TagSymbol, symbol(1, "attn_fwd"))
	for i := 0; i < 5000; i++ {
		c.entry(TagDispatch, dispatchRec(184, uint64(i+1), 100, uint64(i*100), uint64(i*100+50), 0xA000, 0x100, 1))
	}
	b.SetBytes(int64(len(c.b)))
	d := NewDecoder(1)
	for b.Loop() {
		if err := d.Decode(c.b); err != nil {
			b.Fatal(err)
		}
		d.Take()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*5000), "ns/record")
}
