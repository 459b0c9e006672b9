package wire

import (
	"fmt"
	"math"

	"github.com/rlktop/rlktop/tracer"
)

// TypePySamples (minor 2) carries Python stack samples: the new entries of
// the sender's frame and stack tables, then the samples (see PyBatch and
// FORMAT.md). A receiver whose Sink is not a PySink skips them.
const TypePySamples Type = 12

func init() { typeNames[TypePySamples] = "pysamples" }

// PyFrameDef defines frame ID of a sender's frame table: Func and File
// are string ids of the stream (defined before the frame that uses them).
type PyFrameDef struct {
	ID    uint32
	Frame tracer.PyFrame
}

// PyStackDef defines stack ID of a sender's stack table: frame Frame (an
// id of its frame table) called from stack Parent (0: outermost).
type PyStackDef struct {
	ID, Parent, Frame uint32
}

// PyBatch is one PySamples payload as sent: table entries first, in the
// sender's ids; samples whose Stack is a sender's stack id and whose
// Stage/StepStage are the stream's string ids.
type PyBatch struct {
	PID int32
	// PeriodNs is the sampler's nominal interval, ns.
	PeriodNs int64
	// Dropped counts the samples the sender dropped so far (cumulative).
	Dropped uint64
	Frames  []PyFrameDef
	Stacks  []PyStackDef
	Samples []tracer.PySample
}

// AppendPySamples appends b's payload encoding:
//
//	varint pid, uvarint period_ns, uvarint dropped,
//	uvarint n, n × (uvarint id, uvarint func, uvarint file, uvarint first_line, uvarint line),
//	uvarint n, n × (uvarint id, uvarint parent, uvarint frame),
//	uvarint n, n × (varint ts delta from the previous sample's (the first from 0), varint tid,
//	               uvarint stack, varint step, uvarint stage, uvarint step_stage, u8 state, uvarint weight_ns)
//
// The state byte's bits 0–6 are the tracer.PyState, bit 7 is set on the
// step thread's samples. Samples' PID is b.PID (not sent per sample).
func AppendPySamples(p []byte, b *PyBatch) []byte {
	p = appendVarint(p, int64(b.PID))
	p = appendUvarint(p, uint64(max(b.PeriodNs, 0)))
	p = appendUvarint(p, b.Dropped)
	p = appendUvarint(p, uint64(len(b.Frames)))
	for _, f := range b.Frames {
		p = appendUvarint(p, uint64(f.ID))
		p = appendUvarint(p, uint64(f.Frame.Func))
		p = appendUvarint(p, uint64(f.Frame.File))
		p = appendUvarint(p, uint64(max(f.Frame.FirstLine, 0)))
		p = appendUvarint(p, uint64(max(f.Frame.Line, 0)))
	}
	p = appendUvarint(p, uint64(len(b.Stacks)))
	for _, s := range b.Stacks {
		p = appendUvarint(p, uint64(s.ID))
		p = appendUvarint(p, uint64(s.Parent))
		p = appendUvarint(p, uint64(s.Frame))
	}
	p = appendUvarint(p, uint64(len(b.Samples)))
	var ts int64
	for i := range b.Samples {
		s := &b.Samples[i]
		p = appendVarint(p, s.TS-ts)
		ts = s.TS
		p = appendVarint(p, int64(s.TID))
		p = appendUvarint(p, uint64(s.Stack))
		p = appendVarint(p, s.Step)
		p = appendUvarint(p, uint64(s.Stage))
		p = appendUvarint(p, uint64(s.StepStage))
		st := byte(s.State)
		if s.StepThread {
			st |= pyStepThread
		}
		p = append(p, st)
		p = appendUvarint(p, uint64(max(s.WeightNs, 0)))
	}
	return p
}

// pyStepThread is the bit of a sample's state byte set on the step
// thread's samples.
const pyStepThread = 0x80

// maxPyID bounds the frame and stack ids a sender may define (as string
// ids), so that a receiver's maps stay bounded.
const maxPyID = MaxStringID

// PySamples decodes a PySamples frame into b (its slices reused). Ids
// are the sender's. Errors are *FormatError wrapping ErrCorrupt naming the
// field: a count the payload cannot hold, an id over 2²⁴−1, a line over
// 2³¹−1, a state or a weight out of range, a truncated field.
func (f *Frame) PySamples(b *PyBatch) error {
	if err := f.want(TypePySamples); err != nil {
		return err
	}
	d := dec{f: f, p: f.Payload}
	b.PID = d.int32("pid")
	b.PeriodNs = int64(d.uvarint("period_ns"))
	if b.PeriodNs < 0 {
		d.fail("period_ns", "out of range")
	}
	b.Dropped = d.uvarint("dropped")
	b.Frames, b.Stacks, b.Samples = b.Frames[:0], b.Stacks[:0], b.Samples[:0]
	id := func(field string) uint32 {
		v := d.uvarint(field)
		if d.err == nil && v > maxPyID {
			d.fail(field, fmt.Sprintf("id %d exceeds the limit %d", v, maxPyID))
		}
		return uint32(v)
	}
	line := func(field string) int32 {
		v := d.uvarint(field)
		if d.err == nil && v > math.MaxInt32 {
			d.fail(field, fmt.Sprintf("line %d does not fit in 31 bits", v))
		}
		return int32(v)
	}
	n := d.count("frames", 5)
	for range n {
		var fd PyFrameDef
		fd.ID = id("frame.id")
		fd.Frame.Func = tracer.StrID(id("frame.func"))
		fd.Frame.File = tracer.StrID(id("frame.file"))
		fd.Frame.FirstLine = line("frame.first_line")
		fd.Frame.Line = line("frame.line")
		if d.err != nil {
			return d.err
		}
		b.Frames = append(b.Frames, fd)
	}
	n = d.count("stacks", 3)
	for range n {
		s := PyStackDef{ID: id("stack.id"), Parent: id("stack.parent"), Frame: id("stack.frame")}
		if d.err != nil {
			return d.err
		}
		b.Stacks = append(b.Stacks, s)
	}
	n = d.count("samples", 8)
	var ts int64
	for range n {
		var s tracer.PySample
		ts += d.varint("sample.ts")
		s.TS, s.PID = ts, b.PID
		s.TID = d.int32("sample.tid")
		s.Stack = id("sample.stack")
		s.Step = d.varint("sample.step")
		s.Stage = tracer.StrID(id("sample.stage"))
		s.StepStage = tracer.StrID(id("sample.step_stage"))
		st := d.byte("sample.state")
		s.StepThread = st&pyStepThread != 0
		st &^= pyStepThread
		if d.err == nil && st >= tracer.PyStates {
			d.fail("sample.state", fmt.Sprintf("unknown state %d", st))
		}
		s.State = tracer.PyState(st)
		w := d.uvarint("sample.weight_ns")
		if d.err == nil && w > math.MaxInt32 {
			d.fail("sample.weight_ns", fmt.Sprintf("weight %d ns does not fit in 31 bits", w))
		}
		s.WeightNs = int32(w)
		if d.err != nil {
			return d.err
		}
		b.Samples = append(b.Samples, s)
	}
	return d.err
}

// PySink is implemented by a Sink that keeps Python stack samples
// (PySamples frames); the Decoder skips those frames for other sinks.
type PySink interface {
	// InternPyStack returns the receiver's id for the stack f called from
	// parent (a receiver id from an earlier call, 0 for outermost); f's
	// Func and File are the receiver's string ids.
	InternPyStack(parent uint32, f tracer.PyFrame) (uint32, error)
	// PySamples receives a frame's samples with Stack, Stage and
	// StepStage mapped to the receiver's ids and TS in host
	// CLOCK_REALTIME ns; undefined counts samples naming a stack, stage or
	// string the sender never defined (mapped to 0). b's slices are
	// reused after the call: copy what you keep. b.Frames and b.Stacks are
	// empty (already interned).
	PySamples(b *PyBatch, undefined int) error
}

// pyMap maps one stream's frame and stack ids to the receiver's.
type pyMap struct {
	frames map[uint32]tracer.PyFrame // sender frame id → frame with receiver string ids
	stacks map[uint32]uint32         // sender stack id → receiver stack id
	batch  PyBatch
}

// pySamples decodes a PySamples frame and hands it to sink mapped; a
// table entry naming an undefined parent or frame is an error.
func (d *Decoder) pySamples(f *Frame, sink PySink) error {
	m := d.py
	if m == nil {
		m = &pyMap{frames: map[uint32]tracer.PyFrame{}, stacks: map[uint32]uint32{0: 0}}
		d.py = m
	}
	b := &m.batch
	if err := f.PySamples(b); err != nil {
		return err
	}
	str := func(id tracer.StrID) (tracer.StrID, bool) { return d.names.Map(id) }
	for _, fd := range b.Frames {
		fn, ok1 := str(fd.Frame.Func)
		file, ok2 := str(fd.Frame.File)
		if !ok1 || !ok2 {
			return f.errField("frame", 0, fmt.Sprintf("frame %d names a string the stream never defined", fd.ID))
		}
		m.frames[fd.ID] = tracer.PyFrame{Func: fn, File: file, FirstLine: fd.Frame.FirstLine, Line: fd.Frame.Line}
	}
	for _, s := range b.Stacks {
		if s.ID == 0 {
			return f.errField("stack.id", 0, "stack id 0 is the empty stack and cannot be defined")
		}
		parent, ok := m.stacks[s.Parent]
		if !ok {
			return f.errField("stack.parent", 0, fmt.Sprintf("stack %d names parent %d, which is not defined", s.ID, s.Parent))
		}
		fr, ok := m.frames[s.Frame]
		if !ok {
			return f.errField("stack.frame", 0, fmt.Sprintf("stack %d names frame %d, which is not defined", s.ID, s.Frame))
		}
		rid, err := sink.InternPyStack(parent, fr)
		if err != nil {
			return err
		}
		m.stacks[s.ID] = rid
	}
	u := 0
	for i := range b.Samples {
		s := &b.Samples[i]
		rs, ok := m.stacks[s.Stack]
		if !ok {
			u++
		}
		s.Stack = rs
		var ok1, ok2 bool
		s.Stage, ok1 = str(s.Stage)
		s.StepStage, ok2 = str(s.StepStage)
		if !ok1 || !ok2 {
			u++
		}
		s.TS += d.offset
	}
	b.Frames, b.Stacks = b.Frames[:0], b.Stacks[:0]
	return sink.PySamples(b, u)
}

// PySamples writes PySamples frames of b (ids as the caller chose them:
// a relay writes its own tables' ids, having defined the strings they use
// with Define first); the pending string definitions go first. Table
// entries past what one frame holds go first in frames of their own; the
// samples follow in frames of at most 2^18.
func (w *Writer) PySamples(b *PyBatch) error {
	if err := w.flushStrings(); err != nil {
		return err
	}
	// ≤ 25 bytes a frame entry, 15 a stack, 59 a sample: each part stays
	// under MaxPayload.
	const maxDefs, maxSamples = 1 << 19, 1 << 18
	part := PyBatch{PID: b.PID, PeriodNs: b.PeriodNs, Dropped: b.Dropped}
	frames, stacks, samples := b.Frames, b.Stacks, b.Samples
	for {
		nf := min(len(frames), maxDefs)
		ns := min(len(stacks), maxDefs-nf)
		part.Frames, frames = frames[:nf], frames[nf:]
		part.Stacks, stacks = stacks[:ns], stacks[ns:]
		part.Samples = nil
		if len(frames) == 0 && len(stacks) == 0 {
			n := min(len(samples), maxSamples)
			part.Samples, samples = samples[:n], samples[n:]
		}
		w.scratch = AppendPySamples(w.scratch[:0], &part)
		if err := w.frame(TypePySamples, 0, w.scratch); err != nil {
			return err
		}
		if len(frames) == 0 && len(stacks) == 0 && len(samples) == 0 {
			return nil
		}
	}
}
