package wire

import (
	"encoding/binary"
	"io"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Sink receives the frames of one stream from a Decoder, decoded, in
// stream order. The events, counters and name bytes passed to it are
// reused after the call returns: copy what you keep. An error
// returned by a method stops the decoding and is returned by Decoder.Next
// as it is.
//
// Both receivers of wire streams implement it: the live session
// (tracer/session) and the recording reader (tracer/tracefile).
type Sink interface {
	// Hello starts a sender's stream. relayed is the frame's FlagRelayed:
	// a recording's hellos, whose events are already in host time.
	Hello(h *msg.Hello, relayed bool) error
	// Intern returns the receiver's id for a name the sender defines (one
	// call per Strings entry; s aliases the frame). The decoder maps the
	// sender's id to it from then on.
	Intern(s []byte) (tracer.StrID, error)
	// Events receives a batch with names mapped to the receiver's ids and
	// Start in host CLOCK_REALTIME ns (the hello's clock offset added;
	// Ctx is 0). undefined counts events whose name id the sender never
	// defined (their Name is 0, the empty name).
	Events(evs []tracer.Event, undefined int) error
	// Counters is Events for counter samples (TS shifted, Name mapped).
	Counters(cs []tracer.Counter, undefined int) error
	Drops(d msg.Drops) error
	Control(c *msg.Control) error
	Meta(kv []msg.KV) error
	TraceFile(tf TraceFile) error
	Bye(y msg.Bye) error
}

// Reserver is implemented by a Sink that bounds what it holds: Reserve is
// called before an Events or Counters frame is decoded, with the count the
// frame declares (t is TypeEvents or TypeCounters, offset the frame's
// offset in the stream); an error stops the decoding before any allocation
// for the frame.
type Reserver interface {
	Reserve(t Type, n uint64, offset int64) error
}

// Decoder reads a wire stream and hands each frame, decoded, to a Sink:
// it checks the frames (Reader), decodes their payloads, maps the sender's
// string ids into the receiver's (Names, through Sink.Intern) and shifts
// event and counter times by the sender's clock offset (the last hello's
// ClockOffsetNs; 0 after a relayed hello). Frames of unknown types are
// skipped. Not safe for concurrent use.
type Decoder struct {
	r      *Reader
	names  *Names
	offset int64
	frames int
	evs    []tracer.Event
	cs     []tracer.Counter
	ms     []tracer.MemEvent
	py     *pyMap // PySamples tables (pysamples.go)
}

// NewDecoder returns a Decoder reading r (buffered by its Reader).
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: NewReader(r), names: NewNames(nil)}
}

// Offset returns the number of stream bytes consumed so far.
func (d *Decoder) Offset() int64 { return d.r.Offset() }

// Resync is Reader.Resync: after a Next that failed with ErrCorrupt it
// skips to the next whole frame and reports the bytes skipped, false when
// none is left.
func (d *Decoder) Resync() (int64, bool) { return d.r.Resync() }

// Repaired is Reader.Repaired: the frames Resync read with their header
// repaired.
func (d *Decoder) Repaired() int { return d.r.Repaired() }

// Frames returns how many frames were read whole (checksum and header
// good) so far, whether or not their payload then decoded.
func (d *Decoder) Frames() int { return d.frames }

// Next reads one frame and passes it to sink. It returns io.EOF at a clean
// end of stream, the Reader's errors (a *FormatError wrapping ErrTruncated,
// ErrCorrupt, ErrNotWire or ErrVersion) for a bad stream, a *FormatError
// wrapping ErrCorrupt for a payload that does not decode, and the sink's
// errors as they are.
func (d *Decoder) Next(sink Sink) error {
	f, err := d.r.Next()
	if err != nil {
		return err
	}
	d.frames++
	switch f.Type {
	case TypeHello:
		h, err := f.Hello()
		if err != nil {
			return err
		}
		relayed := f.Flags&FlagRelayed != 0
		d.offset = 0
		if !relayed {
			d.offset = h.ClockOffsetNs
		}
		return sink.Hello(&h, relayed)
	case TypeStrings:
		return f.Strings(func(id uint32, s []byte) error {
			rid, err := sink.Intern(s)
			if err != nil {
				return err
			}
			d.names.set(id, rid)
			return nil
		})
	case TypeEvents:
		if err := d.reserve(sink, &f); err != nil {
			return err
		}
		d.evs, err = f.Events(d.evs[:0])
		if err != nil {
			return err
		}
		u := d.names.MapEvents(d.evs)
		if d.offset != 0 {
			for i := range d.evs {
				d.evs[i].Start += d.offset
			}
		}
		return sink.Events(d.evs, u)
	case TypeCounters:
		if err := d.reserve(sink, &f); err != nil {
			return err
		}
		d.cs, err = f.Counters(d.cs[:0])
		if err != nil {
			return err
		}
		u := 0
		for i := range d.cs {
			id, ok := d.names.Map(d.cs[i].Name)
			if !ok {
				u++
			}
			d.cs[i].Name = id
			d.cs[i].TS += d.offset
		}
		return sink.Counters(d.cs, u)
	case TypeDrops:
		v, err := f.Drops()
		if err != nil {
			return err
		}
		return sink.Drops(v)
	case TypeControl:
		c, err := f.Control()
		if err != nil {
			return err
		}
		return sink.Control(&c)
	case TypeMeta:
		kv, err := f.Meta()
		if err != nil {
			return err
		}
		return sink.Meta(kv)
	case TypeTraceFile:
		tf, err := f.TraceFile()
		if err != nil {
			return err
		}
		return sink.TraceFile(tf)
	case TypeMemory:
		return d.memory(sink, &f) // memory.go
	case TypePySamples:
		if ps, ok := sink.(PySink); ok {
			return d.pySamples(&f, ps)
		}
		return nil
	case TypeBye:
		y, err := f.Bye()
		if err != nil {
			return err
		}
		return sink.Bye(y)
	}
	return nil
}

// reserve asks a Reserver sink for room for the count an Events or
// Counters frame declares (a count that does not decode is left to the
// payload decoder to report).
func (d *Decoder) reserve(sink Sink, f *Frame) error {
	r, ok := sink.(Reserver)
	if !ok {
		return nil
	}
	if n, k := binary.Uvarint(f.Payload); k > 0 {
		return r.Reserve(f.Type, n, f.Offset)
	}
	return nil
}
