package wire

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TraceFile announces a trace file the sender wrote (wire minor 1): the
// Python agent's torch.profiler window of steps FirstStep..LastStep. The
// receiver imports it (tracer/tracefile), merges its events into the
// sender's stream and removes the file.
type TraceFile struct {
	Format    string // "kineto": Chrome trace-event JSON as torch.profiler exports it
	Path      string // absolute path on the receiver's host
	FirstStep int64  // first step the window covers
	LastStep  int64  // last step it covers (inclusive)
}

// AppendTraceFile appends t's payload encoding: str format, str path,
// varint first_step, varint last_step.
func AppendTraceFile(b []byte, t TraceFile) []byte {
	b = appendString(b, t.Format)
	b = appendString(b, t.Path)
	b = appendVarint(b, t.FirstStep)
	return appendVarint(b, t.LastStep)
}

// ---- encoding helpers ----

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarint(b []byte, v int64) []byte {
	return appendUvarint(b, uint64(v<<1)^uint64(v>>63))
}

func appendString(b []byte, s string) []byte {
	b = appendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendKVs(b []byte, kv []msg.KV) []byte {
	b = appendUvarint(b, uint64(len(kv)))
	for _, p := range kv {
		b = appendString(b, p.Key)
		b = appendString(b, p.Value)
	}
	return b
}

// AppendHello appends h's payload encoding.
func AppendHello(b []byte, h *msg.Hello) []byte {
	b = appendString(b, h.Source)
	b = appendVarint(b, h.PID)
	b = appendVarint(b, h.Rank)
	b = appendVarint(b, h.World)
	b = appendString(b, h.Host)
	b = appendString(b, h.Device)
	b = appendVarint(b, h.ClockOffsetNs)
	b = appendVarint(b, h.StartNs)
	b = appendUvarint(b, uint64(len(h.Cmdline)))
	for _, s := range h.Cmdline {
		b = appendString(b, s)
	}
	b = appendUvarint(b, uint64(len(h.Devices)))
	for i := range h.Devices {
		d := &h.Devices[i]
		b = appendVarint(b, int64(d.ID))
		b = appendString(b, d.Name)
		b = appendString(b, d.Vendor)
		b = appendVarint(b, d.TotalMemory)
		b = appendVarint(b, int64(d.SMs))
		b = appendString(b, d.ComputeCap)
		keys := make([]string, 0, len(d.Props))
		for k := range d.Props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = appendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = appendString(b, k)
			b = appendString(b, d.Props[k])
		}
	}
	return b
}

// AppendControl appends c's payload encoding.
func AppendControl(b []byte, c *msg.Control) []byte {
	b = append(b, byte(c.Op))
	b = appendUvarint(b, c.Seq)
	b = appendString(b, c.Key)
	b = appendString(b, c.Value)
	b = appendKVs(b, c.Flags)
	var st byte
	if c.Tracing {
		st |= 1
	}
	b = append(b, st)
	b = appendVarint(b, c.Step)
	return appendString(b, c.Err)
}

// AppendDrops appends d's payload encoding.
func AppendDrops(b []byte, d msg.Drops) []byte {
	b = appendUvarint(b, d.Events)
	return appendUvarint(b, d.Batches)
}

// AppendMeta appends a Meta payload.
func AppendMeta(b []byte, kv []msg.KV) []byte { return appendKVs(b, kv) }

// AppendBye appends a Bye payload.
func AppendBye(b []byte, y msg.Bye) []byte {
	b = appendString(b, y.Reason)
	return appendVarint(b, y.ExitCode)
}

// AppendStrings appends a Strings payload defining ids[i] → strs[i].
func AppendStrings(b []byte, ids []uint32, strs []string) []byte {
	b = appendUvarint(b, uint64(len(ids)))
	for i, id := range ids {
		b = appendUvarint(b, uint64(id))
		b = appendString(b, strs[i])
	}
	return b
}

// Event header bits (first byte of each packed event).
const (
	evKind   = 1 << 0 // a kind byte follows
	evPID    = 1 << 1 // zigzag PID follows
	evTID    = 1 << 2 // zigzag TID follows
	evDevice = 1 << 3 // zigzag Device follows
	evStream = 1 << 4 // zigzag Stream follows
	evCorr   = 1 << 5 // zigzag Corr delta follows
	evValue  = 1 << 6 // zigzag Value follows
	evMask   = 0x7f
)

// AppendEvents appends an Events payload holding evs. Ctx is not sent.
//
// Layout: uvarint count, then per event: a header byte of presence bits, the
// name id (uvarint), Start as a zigzag delta from the previous event's Start
// (the first from 0), Dur (uvarint of its two's-complement bits), then in bit
// order the fields whose bit is set: Kind (1 byte), PID, TID, Device, Stream
// (zigzag varints, sent only when they differ from the previous event's; the
// initial previous values are Kind 0, PID 0, TID 0, Device -1, Stream 0),
// Corr (zigzag delta from the previous non-zero Corr; sent only when
// non-zero), Value (zigzag; sent only when non-zero).
func AppendEvents(b []byte, evs []tracer.Event) []byte {
	b = appendUvarint(b, uint64(len(evs)))
	var (
		start, corr   int64
		kind          tracer.Kind
		pid, tid, str int32
		dev           int32 = -1
	)
	for i := range evs {
		e := &evs[i]
		var h byte
		if e.Kind != kind {
			h |= evKind
		}
		if e.PID != pid {
			h |= evPID
		}
		if e.TID != tid {
			h |= evTID
		}
		if e.Device != dev {
			h |= evDevice
		}
		if e.Stream != str {
			h |= evStream
		}
		if e.Corr != 0 {
			h |= evCorr
		}
		if e.Value != 0 {
			h |= evValue
		}
		b = append(b, h)
		b = appendUvarint(b, uint64(e.Name))
		b = appendVarint(b, e.Start-start)
		start = e.Start
		b = appendUvarint(b, uint64(e.Dur))
		if h&evKind != 0 {
			b = append(b, byte(e.Kind))
			kind = e.Kind
		}
		if h&evPID != 0 {
			b = appendVarint(b, int64(e.PID))
			pid = e.PID
		}
		if h&evTID != 0 {
			b = appendVarint(b, int64(e.TID))
			tid = e.TID
		}
		if h&evDevice != 0 {
			b = appendVarint(b, int64(e.Device))
			dev = e.Device
		}
		if h&evStream != 0 {
			b = appendVarint(b, int64(e.Stream))
			str = e.Stream
		}
		if h&evCorr != 0 {
			b = appendVarint(b, int64(e.Corr)-corr)
			corr = int64(e.Corr)
		}
		if h&evValue != 0 {
			b = appendVarint(b, e.Value)
		}
	}
	return b
}

// AppendCounters appends a Counters payload: uvarint count, then per sample
// TS as a zigzag delta from the previous sample's TS (the first from 0), the
// name id (uvarint), Device (zigzag) and Value as IEEE-754 float64 bits,
// 8 bytes little-endian.
func AppendCounters(b []byte, cs []tracer.Counter) []byte {
	b = appendUvarint(b, uint64(len(cs)))
	var ts int64
	for i := range cs {
		c := &cs[i]
		b = appendVarint(b, c.TS-ts)
		ts = c.TS
		b = appendUvarint(b, uint64(c.Name))
		b = appendVarint(b, int64(c.Device))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Value))
	}
	return b
}
