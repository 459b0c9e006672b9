package tracefile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// rawStream is what one traced process sends: a hello with a clock offset,
// then a kernel launched inside a range inside a step (tracer clock ns).
func rawStream(flags uint8) []byte {
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.Flags = flags
	w.Hello(&msg.Hello{Source: "gotrace", PID: 9, Rank: 2, World: 4, Host: "h", ClockOffsetNs: 1000,
		Devices: []tracer.Device{{ID: 0, Name: "Go CPU", Vendor: "cpu"}}})
	k, r, st := w.Name("attn_fused_fwd"), w.Name("forward"), w.Name("step")
	w.Events([]tracer.Event{
		{Kind: tracer.KindKernel, Name: k, Start: 20, Dur: 5, PID: 9, TID: 1},
		{Kind: tracer.KindRange, Name: r, Start: 10, Dur: 30, PID: 9, TID: 1, Device: -1},
		{Kind: tracer.KindStep, Name: st, Start: 0, Dur: 50, Value: 3, PID: 9, TID: 1, Device: -1},
	})
	w.Drops(msg.Drops{Events: 7, Batches: 1})
	w.Control(&msg.Control{Op: msg.ControlAck, Seq: 1, Flags: []msg.KV{{Key: "attention", Value: "fused"}}, Step: 3})
	w.Meta([]msg.KV{{Key: "cwd", Value: "/w"}})
	w.Bye(msg.Bye{Reason: "exit", ExitCode: 0})
	return buf.Bytes()
}

func TestRecordingRawAndRelayed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags uint8
		shift int64
	}{{"raw", 0, 1000}, {"relayed", wire.FlagRelayed, 0}} {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(rawStream(tc.flags))
		zw.Close()
		tr, err := Read(bytes.NewReader(gz.Bytes()), tc.name, 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Format != "rlktop" || len(tr.Events) != 3 || tr.Rank != 2 || tr.World != 4 || tr.Dropped != 7 || len(tr.Devices) != 1 {
			t.Fatalf("%s: %+v", tc.name, tr)
		}
		k := tr.Events[0]
		if tr.Name(&k) != "attn_fused_fwd" || k.Start != 20+tc.shift {
			t.Fatalf("%s: kernel %s at %d, want %d", tc.name, tr.Name(&k), k.Start, 20+tc.shift)
		}
		c := tr.Contexts[k.Ctx]
		if len(c.Ranges) != 1 || tr.Strings.Get(c.Ranges[0]) != "forward" || c.Step != 3 {
			t.Fatalf("%s: context %+v", tc.name, c)
		}
		if tr.Meta["flags"] != "attention=fused" || tr.Meta["cwd"] != "/w" || tr.Meta["exit_code"] != "0" || tr.Meta["source"] != "gotrace" {
			t.Fatalf("%s: meta %v", tc.name, tr.Meta)
		}
	}
}

func TestRecordingErrors(t *testing.T) {
	// Version 2: a clear error naming the version.
	b := rawStream(0)
	b[4] = 2
	_, err := Read(bytes.NewReader(b), "v2.rlk", 0, Options{})
	if err == nil || !strings.Contains(err.Error(), "version 2.") || !strings.Contains(err.Error(), "v2.rlk") {
		t.Fatalf("v2: %v", err)
	}
	// Preamble only: no frames.
	_, err = Read(bytes.NewReader(b[:wire.PreambleSize+3]), "short.rlk", 0, Options{})
	if err == nil {
		t.Fatal("no error for a stream without frames")
	}
	// Damaged payload after the first frame: the frames before are kept,
	// with the error (TestRecordingDamageIsAnError).
	b = rawStream(0)
	b[len(b)-3] ^= 0xff
	tr, err := Read(bytes.NewReader(b), "bad.rlk", 0, Options{})
	if err == nil || tr == nil || len(tr.Events) != 3 {
		t.Fatalf("damaged tail: %v %v", err, tr)
	}
}

func FuzzRecording(f *testing.F) {
	f.Add(rawStream(0))
	f.Add(rawStream(wire.FlagRelayed))
	f.Fuzz(func(t *testing.T, data []byte) {
		Read(bytes.NewReader(data), "fuzz", 0, Options{})
	})
}

// BenchmarkReadRecording imports a gzip recording of 1 M built-in-loop-like
// events (kernels in ranges in steps on one thread), linking included.
func BenchmarkReadRecording(b *testing.B) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	w := wire.NewWriter(zw)
	w.Flags = wire.FlagRelayed
	w.Hello(&msg.Hello{Source: "gotrace", PID: 1})
	var names []tracer.StrID
	for i := range 40 {
		names = append(names, w.Name("kernel_"+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	rng, st := w.Name("forward"), w.Name("step")
	const perStep = 1000
	var batch []tracer.Event
	t := int64(1_700_000_000_000_000_000)
	n := 0
	for step := 0; n < 1<<20; step++ {
		s0 := t
		for i := range perStep {
			t += 3000
			batch = append(batch, tracer.Event{Kind: tracer.KindKernel, Name: names[i%len(names)], Start: t, Dur: 2000, PID: 1, TID: 1})
		}
		t += 1000
		batch = append(batch,
			tracer.Event{Kind: tracer.KindRange, Name: rng, Start: s0, Dur: t - s0, PID: 1, TID: 1, Device: -1},
			tracer.Event{Kind: tracer.KindStep, Name: st, Start: s0, Dur: t - s0, Value: int64(step), PID: 1, TID: 1, Device: -1})
		n += len(batch)
		w.Events(batch)
		zw.Flush()
		batch = batch[:0]
	}
	zw.Close()
	data := gz.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		tr, err := Read(bytes.NewReader(data), "bench", 0, Options{})
		if err != nil || len(tr.Events) != n {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// TestRecordingDropsTotal: in a recording (relayed hellos) Drops frames hold
// the recorder's running total, so the last one counts; in a raw stream of
// two senders each sender's last count adds up.
func TestRecordingDropsTotal(t *testing.T) {
	for _, tc := range []struct {
		flags uint8
		want  uint64
	}{{wire.FlagRelayed, 8}, {0, 5 + 8}} {
		var buf bytes.Buffer
		w := wire.NewWriter(&buf)
		w.Flags = tc.flags
		w.Hello(&msg.Hello{Source: "a", PID: 1})
		w.Drops(msg.Drops{Events: 2})
		w.Drops(msg.Drops{Events: 5})
		w.Hello(&msg.Hello{Source: "b", PID: 2})
		w.Drops(msg.Drops{Events: 8})
		tr, err := Read(bytes.NewReader(buf.Bytes()), "d", 0, Options{})
		if err != nil || tr.Dropped != tc.want {
			t.Fatalf("flags %d: dropped %d, want %d (%v)", tc.flags, tr.Dropped, tc.want, err)
		}
	}
}
