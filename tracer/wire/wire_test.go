package wire

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// randomEvents returns n events with every field exercised: negative ids,
// device -1, large and zero Corr/Value, the kinds, and names < nNames.
func randomEvents(rng *rand.Rand, n, nNames int) []tracer.Event {
	evs := make([]tracer.Event, n)
	t := int64(1_712_195_495_519_689_047)
	for i := range evs {
		t += rng.Int64N(20_000) - 2_000 // not monotonic
		e := tracer.Event{
			Start:  t,
			Dur:    rng.Int64N(1 << uint(rng.IntN(40))),
			Name:   tracer.StrID(rng.IntN(nNames)),
			PID:    int32(rng.IntN(3)) + 4000,
			TID:    int32(rng.IntN(4)) - 1,
			Device: int32(rng.IntN(3)) - 1,
			Stream: int32(rng.IntN(8)),
			Kind:   tracer.Kind(rng.IntN(14)),
		}
		switch rng.IntN(4) {
		case 0:
			e.Corr = uint64(i + 1)
		case 1:
			e.Corr = math.MaxUint64 - uint64(rng.IntN(10))
		}
		switch rng.IntN(3) {
		case 0:
			e.Value = rng.Int64()
		case 1:
			e.Value = -rng.Int64N(1000)
		}
		if rng.IntN(50) == 0 {
			e.PID, e.TID, e.Device, e.Stream = math.MinInt32, math.MaxInt32, math.MinInt32, math.MaxInt32
		}
		evs[i] = e
	}
	return evs
}

func readAll(t *testing.T, b []byte) []Frame {
	t.Helper()
	r := NewReader(bytes.NewReader(b))
	var fs []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return fs
		}
		if err != nil {
			t.Fatalf("frame %d: %v", len(fs), err)
		}
		f.Payload = bytes.Clone(f.Payload)
		fs = append(fs, f)
	}
}

func TestRoundTripEveryFrameType(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	hello := msg.Hello{
		Source: "cupti", PID: 12345, Rank: 3, World: 8, Host: "node7", Device: "NVIDIA H200 (sm_90)",
		ClockOffsetNs: -1_700_000_000_123_456_789, StartNs: 1_764_000_000_000_000_001,
		Cmdline: []string{"python3", "train.py", "--lr=3e-4", ""},
		Devices: []tracer.Device{
			{ID: 0, Name: "NVIDIA H200", Vendor: "nvidia", TotalMemory: 150_000_000_000, SMs: 132, ComputeCap: "9.0",
				Props: map[string]string{"uuid": "GPU-1", "clock_khz": "1980000"}},
			{ID: 1, Name: "x", Vendor: "amd"},
		},
	}
	if err := w.Hello(&hello); err != nil {
		t.Fatal(err)
	}
	names := []string{"", "attn_fused_fwd", "ampere_sgemm_128x64_nn", "env.step", "ünïcödé ☃", string(make([]byte, 70_000))}
	var ids []tracer.StrID
	for _, n := range names {
		ids = append(ids, w.Name(n))
	}
	if ids[0] != 0 || ids[1] != 1 || ids[5] != 5 || w.Name("attn_fused_fwd") != 1 {
		t.Fatalf("ids %v", ids)
	}
	evs := randomEvents(rng, 5000, len(names))
	if err := w.Events(evs); err != nil {
		t.Fatal(err)
	}
	cs := []tracer.Counter{
		{TS: 100, Name: ids[1], Device: 0, Value: 97.5},
		{TS: 50, Name: ids[2], Device: -1, Value: math.Inf(-1)},
		{TS: math.MaxInt64, Name: ids[3], Device: 3, Value: -0.0},
	}
	if err := w.Counters(cs); err != nil {
		t.Fatal(err)
	}
	ctl := msg.Control{Op: msg.ControlAck, Seq: 77, Key: "attention", Value: "fused",
		Flags: []msg.KV{{Key: "attention", Value: "fused"}, {Key: "qkv", Value: "separate"}}, Tracing: true, Step: 41, Err: ""}
	ctl2 := msg.Control{Op: msg.ControlSet, Seq: 78, Key: "scan", Value: "sklansky", Step: -1, Err: "x"}
	if err := w.Control(&ctl); err != nil {
		t.Fatal(err)
	}
	if err := w.Control(&ctl2); err != nil {
		t.Fatal(err)
	}
	drops := msg.Drops{Events: 1 << 40, Batches: 3}
	if err := w.Drops(drops); err != nil {
		t.Fatal(err)
	}
	meta := []msg.KV{{Key: "cwd", Value: "/home/u"}, {Key: "git", Value: "abc123+dirty"}, {Key: "", Value: ""}}
	if err := w.Meta(meta); err != nil {
		t.Fatal(err)
	}
	bye := msg.Bye{Reason: "exit", ExitCode: -9}
	if err := w.Bye(bye); err != nil {
		t.Fatal(err)
	}

	fs := readAll(t, buf.Bytes())
	want := []Type{TypeHello, TypeStrings, TypeEvents, TypeCounters, TypeControl, TypeControl, TypeDrops, TypeMeta, TypeBye}
	var got []Type
	for _, f := range fs {
		got = append(got, f.Type)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("frame types %v, want %v", got, want)
	}
	h, err := fs[0].Hello()
	if err != nil || !reflect.DeepEqual(h, hello) {
		t.Fatalf("hello %+v %v\nwant %+v", h, err, hello)
	}
	strs := map[uint32]string{}
	if err := fs[1].Strings(func(id uint32, s []byte) error { strs[id] = string(s); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, n := range names[1:] {
		if strs[uint32(i+1)] != n {
			t.Fatalf("string %d = %q, want %q", i+1, strs[uint32(i+1)], n)
		}
	}
	gotEv, err := fs[2].Events(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotEv, evs) {
		for i := range evs {
			if gotEv[i] != evs[i] {
				t.Fatalf("event %d: got %+v want %+v", i, gotEv[i], evs[i])
			}
		}
		t.Fatalf("events differ: %d vs %d", len(gotEv), len(evs))
	}
	gotCs, err := fs[3].Counters(nil)
	if err != nil || len(gotCs) != 3 {
		t.Fatal(gotCs, err)
	}
	for i := range cs {
		if gotCs[i].TS != cs[i].TS || gotCs[i].Name != cs[i].Name || gotCs[i].Device != cs[i].Device ||
			math.Float64bits(gotCs[i].Value) != math.Float64bits(cs[i].Value) {
			t.Fatalf("counter %d: %+v want %+v", i, gotCs[i], cs[i])
		}
	}
	for i, want := range []msg.Control{ctl, ctl2} {
		c, err := fs[4+i].Control()
		if err != nil || !reflect.DeepEqual(c, want) {
			t.Fatalf("control %+v %v, want %+v", c, err, want)
		}
	}
	if d, err := fs[6].Drops(); err != nil || d != drops {
		t.Fatal(d, err)
	}
	if m, err := fs[7].Meta(); err != nil || !reflect.DeepEqual(m, meta) {
		t.Fatal(m, err)
	}
	if y, err := fs[8].Bye(); err != nil || y != bye {
		t.Fatal(y, err)
	}
	if _, err := fs[8].Hello(); err == nil {
		t.Fatal("decoding a bye as hello succeeded")
	}
}

// TestEventsEncodingSize checks the packing against a hand count: a kernel
// with the same ids as the previous event costs header 1 + name 1 +
// start delta 2 (zigzag(1000)=2000 → 2 bytes) + dur 2 (500 → 2 bytes).
func TestEventsEncodingSize(t *testing.T) {
	evs := []tracer.Event{
		{Start: 0, Dur: 500, Name: 3, Kind: tracer.KindKernel, Device: -1},
		{Start: 1000, Dur: 500, Name: 3, Kind: tracer.KindKernel, Device: -1},
	}
	p := AppendEvents(nil, evs)
	// count 1; ev0: hdr 1, name 1, start 1 (0), dur 2, kind 1 = 6; ev1: 1+1+2+2 = 6.
	if len(p) != 13 {
		t.Fatalf("payload %d bytes, want 13: % x", len(p), p)
	}
}

func TestLargeBatchSplitsFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	evs := randomEvents(rng, maxEventsPerFrame+10, 1)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Events(evs); err != nil {
		t.Fatal(err)
	}
	fs := readAll(t, buf.Bytes())
	if len(fs) != 2 {
		t.Fatalf("%d frames, want 2", len(fs))
	}
	var got []tracer.Event
	for _, f := range fs {
		var err error
		if got, err = f.Events(got); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, evs) {
		t.Fatal("events differ after split")
	}
}

func TestVersionAndMagic(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Bye(msg.Bye{})
	b := buf.Bytes()
	b[4] = 2 // major 2
	_, err := NewReader(bytes.NewReader(b)).Next()
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("major 2: %v, want ErrVersion", err)
	}
	b[4], b[6] = 1, 9 // minor 9 is fine
	r := NewReader(bytes.NewReader(b))
	if _, err := r.Next(); err != nil {
		t.Fatalf("minor 9: %v", err)
	}
	if ma, mi := r.Version(); ma != 1 || mi != 9 {
		t.Fatal(ma, mi)
	}
	_, err = NewReader(bytes.NewReader([]byte(`{"traceEvents": []}`))).Next()
	if !errors.Is(err, ErrNotWire) {
		t.Fatalf("json: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(nil)).Next(); err != io.EOF {
		t.Fatalf("empty: %v", err)
	}
}

// TestTruncatedAndCorrupt cuts a stream at every offset: all whole frames
// before the cut come back, then io.EOF exactly at frame boundaries and
// ErrTruncated (io.ErrUnexpectedEOF) elsewhere.
func TestTruncatedAndCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var ends []int // stream offset after each frame
	w.Hello(&msg.Hello{Source: "gotrace", PID: 1})
	ends = append(ends, buf.Len())
	for i := range 5 {
		w.Name("k" + string(rune('a'+i)))
		w.Events(randomEvents(rng, 20, 6))
		ends = append(ends, buf.Len()) // strings + events frames: record the end of events
	}
	full := buf.Bytes()
	frameEnds := map[int]bool{}
	{ // compute every frame end by parsing headers independently
		off := PreambleSize
		for off < len(full) {
			n := int(full[off+4]) | int(full[off+5])<<8 | int(full[off+6])<<16 | int(full[off+7])<<24
			off += HeaderSize + n
			frameEnds[off] = true
		}
	}
	total := len(frameEnds)
	for cut := 0; cut <= len(full); cut++ {
		r := NewReader(bytes.NewReader(full[:cut]))
		n := 0
		var err error
		for {
			if _, err = r.Next(); err != nil {
				break
			}
			n++
		}
		whole := 0
		for e := range frameEnds {
			if e <= cut {
				whole++
			}
		}
		if n != whole {
			t.Fatalf("cut %d: %d frames, want %d", cut, n, whole)
		}
		atBoundary := cut == 0 || cut == PreambleSize || frameEnds[cut]
		if atBoundary && err != io.EOF {
			t.Fatalf("cut %d at a boundary: %v", cut, err)
		}
		if !atBoundary && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut %d: %v, want unexpected EOF", cut, err)
		}
	}
	if total != 11 {
		t.Fatalf("%d frames", total)
	}
	// Flip a payload byte: CRC catches it.
	bad := bytes.Clone(full)
	bad[PreambleSize+HeaderSize+2] ^= 0x40
	_, err := NewReader(bytes.NewReader(bad)).Next()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped byte: %v", err)
	}
	// An absurd length is rejected before reading.
	bad = bytes.Clone(full[:PreambleSize+HeaderSize])
	bad[PreambleSize+7] = 0x7f
	_, err = NewReader(bytes.NewReader(bad)).Next()
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Field != "length" {
		t.Fatalf("huge length: %v", err)
	}
}

func TestNames(t *testing.T) {
	tab := tracer.NewStrings()
	tab.Intern("already")
	n := NewNames(tab)
	n.Define(1, []byte("b"))
	n.Define(3, []byte("already"))
	n.Define(1_000_000, []byte("far"))
	evs := []tracer.Event{{Name: 0}, {Name: 1}, {Name: 2}, {Name: 3}, {Name: 1_000_000}, {Name: 999}}
	if u := n.MapEvents(evs); u != 2 {
		t.Fatalf("undefined %d, want 2 (ids 2 and 999)", u)
	}
	got := []string{}
	for _, e := range evs {
		got = append(got, tab.Get(e.Name))
	}
	if !reflect.DeepEqual(got, []string{"", "b", "", "already", "far", ""}) {
		t.Fatal(got)
	}
}
