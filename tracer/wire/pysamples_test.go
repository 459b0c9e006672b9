package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// pySink is a Sink keeping what a Decoder hands it, Python samples
// included (stacks interned into its own table).
type pySink struct {
	strs    *tracer.Strings
	stacks  *tracer.PyStacks
	samples []tracer.PySample
	undef   int
	batches []PyBatch
}

func newPySink() *pySink { return &pySink{strs: tracer.NewStrings(), stacks: tracer.NewPyStacks()} }

func (s *pySink) Hello(*msg.Hello, bool) error          { return nil }
func (s *pySink) Intern(b []byte) (tracer.StrID, error) { return s.strs.InternBytes(b), nil }
func (s *pySink) Events([]tracer.Event, int) error      { return nil }
func (s *pySink) Counters([]tracer.Counter, int) error  { return nil }
func (s *pySink) Drops(msg.Drops) error                 { return nil }
func (s *pySink) Control(*msg.Control) error            { return nil }
func (s *pySink) Meta([]msg.KV) error                   { return nil }
func (s *pySink) TraceFile(TraceFile) error             { return nil }
func (s *pySink) Bye(msg.Bye) error                     { return nil }
func (s *pySink) InternPyStack(p uint32, f tracer.PyFrame) (uint32, error) {
	return s.stacks.Intern(p, f), nil
}
func (s *pySink) PySamples(b *PyBatch, u int) error {
	s.samples = append(s.samples, b.Samples...)
	s.undef += u
	s.batches = append(s.batches, PyBatch{PID: b.PID, PeriodNs: b.PeriodNs, Dropped: b.Dropped})
	return nil
}

// path is stack id's frames' functions, outermost first, as "f;g;h".
func (s *pySink) path(id uint32) string {
	var fr []string
	s.stacks.Walk(id, func(f tracer.PyFrame) bool { fr = append(fr, s.strs.Get(f.Func)); return true })
	for i, j := 0, len(fr)-1; i < j; i, j = i+1, j-1 {
		fr[i], fr[j] = fr[j], fr[i]
	}
	return strings.Join(fr, ";")
}

// pyStream writes a stream with two PySamples frames: the second reuses
// the first's stacks and adds one; sender ids chosen unlike the
// receiver's (frames 7, 9, 11; stacks 3, 5, 8) so that a decoder that
// did not map them would fail.
func pyStream(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Hello(&msg.Hello{Source: "pyagent", PID: 42, Rank: -1, ClockOffsetNs: 1000}); err != nil {
		t.Fatal(err)
	}
	w.Define(20, "main")
	w.Define(21, "train.py")
	w.Define(22, "play_move")
	w.Define(23, "game.py")
	w.Define(24, "env_step")
	w.Define(25, "mm")
	b := &PyBatch{PID: 42, PeriodNs: 10_000_000, Dropped: 3,
		Frames: []PyFrameDef{{ID: 7, Frame: tracer.PyFrame{Func: 20, File: 21, FirstLine: 1, Line: 10}}, {ID: 9, Frame: tracer.PyFrame{Func: 22, File: 23, FirstLine: 88, Line: 90}}},
		Stacks: []PyStackDef{{ID: 3, Parent: 0, Frame: 7}, {ID: 5, Parent: 3, Frame: 9}},
		Samples: []tracer.PySample{
			{TS: 5000, TID: 7, Stack: 5, Step: 1, Stage: 24, StepStage: 24, State: tracer.PyRunning, StepThread: true, WeightNs: 10_000_000},
			{TS: 4000, TID: 8, Stack: 3, Step: 1, Stage: 0, StepStage: 24, State: tracer.PyLoader, WeightNs: 9_000_000},
		}}
	if err := w.PySamples(b); err != nil {
		t.Fatal(err)
	}
	b2 := &PyBatch{PID: 42, PeriodNs: 10_000_000, Dropped: 4,
		Frames: []PyFrameDef{{ID: 11, Frame: tracer.PyFrame{Func: 25, File: 23, FirstLine: 120, Line: 121}}},
		Stacks: []PyStackDef{{ID: 8, Parent: 5, Frame: 11}},
		Samples: []tracer.PySample{
			{TS: 6000, TID: 7, Stack: 8, Step: 2, Stage: 24, StepStage: 24, State: tracer.PyTorch, StepThread: true, WeightNs: 11_000_000},
			{TS: 7000, TID: 7, Stack: 99, Step: 2, State: tracer.PySleep},
		}}
	if err := w.PySamples(b2); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPySamplesRoundTrip: what a Writer wrote comes out of a Decoder
// mapped to the receiver's ids (stacks by their frames' names, stages by
// name), times shifted by the hello's clock offset, flags and states as
// written; a stack the sender never defined counts as undefined.
func TestPySamplesRoundTrip(t *testing.T) {
	s := newPySink()
	d := NewDecoder(bytes.NewReader(pyStream(t)))
	for {
		err := d.Next(s)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(s.samples) != 4 || s.undef != 1 {
		t.Fatalf("%d samples, %d undefined: want 4, 1", len(s.samples), s.undef)
	}
	want := []struct {
		path, stage, stepStage string
		ts                     int64
		state                  tracer.PyState
		step                   bool
		weight                 int32
	}{
		{"main;play_move", "env_step", "env_step", 6000, tracer.PyRunning, true, 10_000_000},
		{"main", "", "env_step", 5000, tracer.PyLoader, false, 9_000_000},
		{"main;play_move;mm", "env_step", "env_step", 7000, tracer.PyTorch, true, 11_000_000},
		{"", "", "", 8000, tracer.PySleep, false, 0},
	}
	for i, w := range want {
		g := s.samples[i]
		if p := s.path(g.Stack); p != w.path || s.strs.Get(g.Stage) != w.stage || s.strs.Get(g.StepStage) != w.stepStage ||
			g.TS != w.ts || g.State != w.state || g.StepThread != w.step || g.WeightNs != w.weight || g.PID != 42 {
			t.Errorf("sample %d: %+v (stack %q, stage %q/%q), want %+v", i, g, p, s.strs.Get(g.Stage), s.strs.Get(g.StepStage), w)
		}
	}
	f := s.stacks.Frame(s.stacks.Node(s.samples[0].Stack).Frame)
	if s.strs.Get(f.File) != "game.py" || f.FirstLine != 88 || f.Line != 90 {
		t.Errorf("leaf frame %+v", f)
	}
	if len(s.batches) != 2 || s.batches[1].Dropped != 4 || s.batches[0].PeriodNs != 10_000_000 {
		t.Errorf("batches %+v", s.batches)
	}
}

// TestPySamplesErrors: a table entry naming an undefined parent or frame,
// an unknown state and a count the payload cannot hold are positioned
// errors (*FormatError wrapping ErrCorrupt, naming the field); a sink that
// keeps no samples skips the frame.
func TestPySamplesErrors(t *testing.T) {
	enc := func(b *PyBatch) []byte {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Define(1, "f")
		if err := w.PySamples(b); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	fr := []PyFrameDef{{ID: 1, Frame: tracer.PyFrame{Func: 1, File: 1}}}
	cases := []struct {
		name  string
		data  []byte
		field string
	}{
		{"undefined parent", enc(&PyBatch{Frames: fr, Stacks: []PyStackDef{{ID: 2, Parent: 1, Frame: 1}}}), "stack.parent"},
		{"undefined frame", enc(&PyBatch{Frames: fr, Stacks: []PyStackDef{{ID: 2, Frame: 5}}}), "stack.frame"},
		{"undefined string", enc(&PyBatch{Frames: []PyFrameDef{{ID: 1, Frame: tracer.PyFrame{Func: 9, File: 1}}}}), "frame"},
		{"unknown state", enc(&PyBatch{Samples: []tracer.PySample{{State: 9}}}), "sample.state"},
		{"stack 0 defined", enc(&PyBatch{Frames: fr, Stacks: []PyStackDef{{ID: 0, Frame: 1}}}), "stack.id"},
	}
	// A count the payload cannot hold: 1,000 samples in a few bytes.
	var p []byte
	p = appendVarint(p, 1)
	p = appendUvarint(p, 1)
	p = appendUvarint(p, 0)
	p = appendUvarint(p, 0)
	p = appendUvarint(p, 0)
	p = appendUvarint(p, 1000)
	var buf bytes.Buffer
	NewWriter(&buf).WriteFrame(TypePySamples, 0, p)
	cases = append(cases, struct {
		name  string
		data  []byte
		field string
	}{"count", buf.Bytes(), "samples"})
	for _, c := range cases {
		d := NewDecoder(bytes.NewReader(c.data))
		var err error
		for err == nil {
			err = d.Next(newPySink())
		}
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) || fe.Field != c.field || fe.Frame != TypePySamples || fe.Offset < PreambleSize || fe.Offset >= int64(len(c.data)) {
			t.Errorf("%s: %v (%+v), want a FormatError on field %s of the pysamples frame", c.name, err, fe, c.field)
		}
	}
	// A sink that keeps no samples reads the stream through.
	d := NewDecoder(bytes.NewReader(pyStream(t)))
	for {
		err := d.Next(plainSink{})
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("plain sink: %v", err)
		}
	}
}

type plainSink struct{}

func (plainSink) Hello(*msg.Hello, bool) error         { return nil }
func (plainSink) Intern([]byte) (tracer.StrID, error)  { return 1, nil }
func (plainSink) Events([]tracer.Event, int) error     { return nil }
func (plainSink) Counters([]tracer.Counter, int) error { return nil }
func (plainSink) Drops(msg.Drops) error                { return nil }
func (plainSink) Control(*msg.Control) error           { return nil }
func (plainSink) Meta([]msg.KV) error                  { return nil }
func (plainSink) TraceFile(TraceFile) error            { return nil }
func (plainSink) Bye(msg.Bye) error                    { return nil }

// FuzzPySamples: arbitrary payloads decode without panicking, hold no
// more samples than 8 bytes each allow, and fail only with a FormatError
// of the pysamples frame wrapping ErrCorrupt whose payload position is
// inside the payload; whole streams go through a Decoder into a PySink.
func FuzzPySamples(f *testing.F) {
	s := pyStream(f)
	f.Add(s)
	r := NewReader(bytes.NewReader(s))
	for {
		fr, err := r.Next()
		if err != nil {
			break
		}
		if fr.Type == TypePySamples {
			f.Add(fr.Payload)
		}
	}
	f.Add([]byte{0, 0, 0, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := Frame{Type: TypePySamples, Payload: data, Offset: 100}
		var b PyBatch
		err := fr.PySamples(&b)
		if len(b.Samples) > len(data)/8 || len(b.Stacks) > len(data)/3 || len(b.Frames) > len(data)/5 {
			t.Fatalf("%d samples, %d stacks, %d frames from %d bytes", len(b.Samples), len(b.Stacks), len(b.Frames), len(data))
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) || fe.Offset != 100 || fe.Frame != TypePySamples || fe.Field == "" {
				t.Fatalf("error %v (%#v)", err, fe)
			}
		}
		d := NewDecoder(bytes.NewReader(data))
		sink := newPySink()
		for range 1000 {
			if err := d.Next(sink); err != nil {
				break
			}
		}
	})
}

// TestPySamplesSplit: a batch with more table entries and samples than
// one frame holds goes out in several frames, the entries first, and
// decodes whole.
func TestPySamplesSplit(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Define(1, "f")
	const n = 600_000
	b := &PyBatch{PID: 1, Frames: []PyFrameDef{{ID: 1, Frame: tracer.PyFrame{Func: 1, File: 1}}}}
	for i := uint32(1); i <= n; i++ {
		b.Stacks = append(b.Stacks, PyStackDef{ID: i, Parent: i - 1, Frame: 1})
	}
	for i := range 300_000 {
		b.Samples = append(b.Samples, tracer.PySample{TS: int64(i), Stack: n})
	}
	if err := w.PySamples(b); err != nil {
		t.Fatal(err)
	}
	s := newPySink()
	d := NewDecoder(bytes.NewReader(buf.Bytes()))
	frames := 0
	for {
		err := d.Next(s)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames++
	}
	depth := 0
	s.stacks.Walk(s.samples[0].Stack, func(tracer.PyFrame) bool { depth++; return true })
	if len(s.samples) != 300_000 || s.undef != 0 || depth != n || frames < 4 {
		t.Errorf("%d samples, %d undefined, depth %d, %d frames", len(s.samples), s.undef, depth, frames)
	}
}
