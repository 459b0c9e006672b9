package wire

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer"
)

// TypeMemory (minor 2) carries allocations and frees (tracer.MemEvent):
// the Python agent's torch.profiler windows' [memory] events in a
// recording, and the allocation records of tracers. A reader that does
// not know it skips it.
const TypeMemory Type = 11

func init() { typeNames[TypeMemory] = "memory" }

// MemorySink is implemented by a Sink that takes Memory frames; the
// Decoder skips them for a Sink without it.
type MemorySink interface {
	// Memory receives a batch with TS in host CLOCK_REALTIME ns (the
	// hello's clock offset added); ms is reused after the call.
	Memory(ms []tracer.MemEvent) error
}

// AppendMemory appends a Memory payload: uvarint n, then per event varint
// TS delta from the previous event's (the first from 0), varint bytes,
// uvarint addr, varint allocated, varint reserved (-1 unknown), varint
// pid, varint tid, varint device (-1 host memory).
func AppendMemory(b []byte, ms []tracer.MemEvent) []byte {
	b = appendUvarint(b, uint64(len(ms)))
	var ts int64
	for i := range ms {
		m := &ms[i]
		b = appendVarint(b, m.TS-ts)
		ts = m.TS
		b = appendVarint(b, m.Bytes)
		b = appendUvarint(b, m.Addr)
		b = appendVarint(b, m.Allocated)
		b = appendVarint(b, m.Reserved)
		b = appendVarint(b, int64(m.PID))
		b = appendVarint(b, int64(m.TID))
		b = appendVarint(b, int64(m.Device))
	}
	return b
}

// Memory decodes a Memory frame, appending to dst. A count the payload
// cannot hold (8 bytes or more per event) is rejected before growing dst.
func (f *Frame) Memory(dst []tracer.MemEvent) ([]tracer.MemEvent, error) {
	if err := f.want(TypeMemory); err != nil {
		return dst, err
	}
	p := f.Payload
	n, i := uv(p, 0)
	if i < 0 {
		return dst, f.errField("count", 0, "bad varint")
	}
	if n > uint64(len(p)-i)/8 {
		return dst, f.errField("count", 0, fmt.Sprintf("count %d cannot fit in %d bytes (each memory event takes at least 8)", n, len(p)-i))
	}
	var ts int64
	var u uint64
	for range int(n) {
		var m tracer.MemEvent
		var v [7]int64
		u, i = uv(p, i)
		if i < 0 {
			return dst, f.errField("ts", i, "bad varint")
		}
		ts += zz(u)
		m.TS = ts
		for j, name := range [...]string{"bytes", "addr", "allocated", "reserved", "pid", "tid", "device"} {
			u, i = uv(p, i)
			if i < 0 {
				return dst, f.errField(name, i, "bad varint")
			}
			if j == 1 {
				m.Addr = u
				continue
			}
			v[j] = zz(u)
			if j >= 4 && (v[j] < -1<<31 || v[j] >= 1<<31) {
				return dst, f.errField(name, i, "value over 32 bits")
			}
		}
		m.Bytes, m.Allocated, m.Reserved = v[0], v[2], v[3]
		m.PID, m.TID, m.Device = int32(v[4]), int32(v[5]), int32(v[6])
		dst = append(dst, m)
	}
	return dst, nil
}

// Memory writes ms as Memory frames.
func (w *Writer) Memory(ms []tracer.MemEvent) error {
	for len(ms) > 0 {
		n := min(len(ms), maxEventsPerFrame)
		w.scratch = AppendMemory(w.scratch[:0], ms[:n])
		if err := w.frame(TypeMemory, 0, w.scratch); err != nil {
			return err
		}
		ms = ms[n:]
	}
	return nil
}

// memory hands a Memory frame to sink when it takes them.
func (d *Decoder) memory(sink Sink, f *Frame) error {
	ms, ok := sink.(MemorySink)
	if !ok {
		return nil
	}
	if err := d.reserve(sink, f); err != nil {
		return err
	}
	var err error
	d.ms, err = f.Memory(d.ms[:0])
	if err != nil {
		return err
	}
	for i := range d.ms {
		d.ms[i].TS += d.offset
	}
	return ms.Memory(d.ms)
}

// maxQueuedMemory bounds the bytes of frames an AsyncSender holds for
// sending (Memory's are queued with them); past it Memory drops.
const maxQueuedMemory = 8 << 20

// Memory queues ms as Memory frames for the writer and returns true, or
// drops them (returns false) when the sender is ending, broken or already
// holds maxQueuedMemory bytes of frames: like Send, it never waits on I/O.
func (s *AsyncSender) Memory(ms []tracer.MemEvent) bool {
	if len(ms) == 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending || s.err.Load() != nil || len(s.prio) > maxQueuedMemory {
		return false
	}
	for len(ms) > 0 {
		n := min(len(ms), maxEventsPerFrame)
		s.queueFrame(TypeMemory, 0, AppendMemory(nil, ms[:n]))
		ms = ms[n:]
	}
	s.signal()
	return true
}
