package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sync/atomic"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Frame is one decoded frame header with its payload.
type Frame struct {
	Type  Type
	Flags uint8
	// Payload aliases the Reader's buffer: valid only until the next call
	// of Reader.Next. Copy it to keep it.
	Payload []byte
	// Offset is the byte offset of the frame header in the stream,
	// counting the preamble.
	Offset int64
}

// Reader reads frames from a stream. It checks the preamble on the first
// call of Next. Not safe for concurrent use.
type Reader struct {
	br           *bufio.Reader
	buf          []byte
	held         int64 // bytes of buf counted in inFlight
	off          int64
	started      bool
	major, minor uint16

	// The last whole frame, for Resync's header repair: its type, flags
	// and payload length, the stream offset just after it, and the
	// largest payload length seen.
	lastType  Type
	lastFlags uint8
	lastLen   int
	lastEnd   int64
	maxLen    int
	pending   *repairedHeader // set by Resync: the header Next uses at r.off
	repaired  int
}

// repairedHeader is a damaged frame header Resync rebuilt from its
// payload: the payload length whose CRC-32C matches the header's
// checksum field, and the type and flags it is taken to have.
type repairedHeader struct {
	typ   Type
	flags uint8
	n     int
}

// MaxInFlight bounds the memory (bytes) every Reader of the process
// together holds for payloads larger than the read buffer (256 KiB) while
// they arrive and until the next Next: a sender that starts 16 MiB frames
// and never finishes them pins no more than this in all (60 half-sent
// frames pinned 1.8 GB). A frame that would go past it fails with
// ErrInFlight, and its connection is closed like one with a corrupt frame.
var MaxInFlight int64 = 256 << 20

var inFlight atomic.Int64

// ErrInFlight is the error of a frame refused for MaxInFlight.
var ErrInFlight = errors.New("wire: large frames of all connections together over the in-flight memory bound")

// InFlight returns the bytes large frames hold now (MaxInFlight's count).
func InFlight() int64 { return inFlight.Load() }

// release gives back the large buffer's bytes to the process-wide bound
// and drops the buffer.
func (r *Reader) release() {
	if r.held > 0 {
		inFlight.Add(-r.held)
		r.held = 0
	}
	r.buf = nil
}

// readerBuf is the bufio size; payloads up to this size are returned
// without copying.
const readerBuf = 256 << 10

// NewReader returns a Reader on r. It buffers r itself.
func NewReader(r io.Reader) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < readerBuf {
		br = bufio.NewReaderSize(r, readerBuf)
	}
	return &Reader{br: br}
}

// Version returns the stream's protocol version (0, 0 before the first
// successful Next).
func (r *Reader) Version() (major, minor uint16) { return r.major, r.minor }

// Offset returns the number of stream bytes consumed so far.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next frame. At a clean end of stream (at a frame
// boundary) it returns io.EOF. A stream that ends inside the preamble or a
// frame returns a *FormatError wrapping ErrTruncated (and so
// io.ErrUnexpectedEOF); every earlier frame was returned intact. Other
// problems return a *FormatError wrapping ErrNotWire, ErrVersion or
// ErrCorrupt. Payloads larger than MaxPayload are rejected before any
// allocation.
func (r *Reader) Next() (Frame, error) {
	r.release() // the previous large payload is no longer valid
	if r.pending != nil {
		return r.nextRepaired()
	}
	if !r.started {
		if err := r.preamble(); err != nil {
			return Frame{}, err
		}
	}
	hdr, err := r.br.Peek(HeaderSize)
	if err != nil {
		if err == io.EOF && len(hdr) == 0 {
			return Frame{}, io.EOF
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Frame{}, &FormatError{Offset: r.off, Msg: fmt.Sprintf("%d of %d header bytes", len(hdr), HeaderSize), Err: ErrTruncated}
		}
		return Frame{}, err
	}
	f := Frame{Type: Type(hdr[0]), Flags: hdr[1], Offset: r.off}
	if hdr[2] != headerSync[0] || hdr[3] != headerSync[1] {
		return Frame{}, &FormatError{Offset: r.off, Msg: fmt.Sprintf("header sync bytes are %#02x %#02x, want 'R' 'K': not at a frame boundary", hdr[2], hdr[3]), Err: ErrCorrupt}
	}
	n := binary.LittleEndian.Uint32(hdr[4:])
	sum := binary.LittleEndian.Uint32(hdr[8:])
	if n > MaxPayload {
		return Frame{}, &FormatError{Offset: r.off, Frame: f.Type, Field: "length", Msg: fmt.Sprintf("payload length %d exceeds the %d-byte limit", n, MaxPayload), Err: ErrCorrupt}
	}
	r.br.Discard(HeaderSize)
	if int(n) <= r.br.Size() {
		p, err := r.br.Peek(int(n))
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return Frame{}, &FormatError{Offset: r.off, Frame: f.Type, Msg: fmt.Sprintf("%d of %d payload bytes", len(p), n), Err: ErrTruncated}
			}
			return Frame{}, err
		}
		r.br.Discard(int(n))
		f.Payload = p
	} else {
		// Large payload: grow the buffer as data arrives so that a lying
		// length costs no more memory than the bytes actually present.
		for len(r.buf) < int(n) {
			chunk := min(int(n)-len(r.buf), readerBuf)
			if len(r.buf)+chunk > cap(r.buf) {
				// Grow by doubling, never past n, each byte of capacity
				// counted against MaxInFlight before it is allocated.
				nc := min(max(2*cap(r.buf), len(r.buf)+chunk), int(n))
				grow := int64(nc - cap(r.buf))
				if inFlight.Add(grow) > MaxInFlight {
					inFlight.Add(-grow)
					r.release()
					return Frame{}, &FormatError{Offset: r.off, Frame: f.Type, Field: "length", Msg: fmt.Sprintf("a %d-byte payload would take the large frames of all connections past %d bytes in memory", n, MaxInFlight), Err: ErrInFlight}
				}
				r.held += grow
				nb := make([]byte, len(r.buf), nc)
				copy(nb, r.buf)
				r.buf = nb
			}
			r.buf = r.buf[:len(r.buf)+chunk]
			got, err := io.ReadFull(r.br, r.buf[len(r.buf)-chunk:])
			if err != nil {
				have := len(r.buf) - chunk + got
				r.release()
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return Frame{}, &FormatError{Offset: r.off, Frame: f.Type, Msg: fmt.Sprintf("%d of %d payload bytes", have, n), Err: ErrTruncated}
				}
				return Frame{}, err
			}
		}
		f.Payload = r.buf
	}
	if c := Checksum(f.Payload); c != sum {
		r.release()
		err := &FormatError{Offset: r.off, Frame: f.Type, Field: "crc32c", Msg: fmt.Sprintf("payload checksum %#08x, header says %#08x", c, sum), Err: ErrCorrupt}
		r.off += HeaderSize + int64(n) // consumed: Next goes on after it
		return Frame{}, err
	}
	r.off += HeaderSize + int64(n)
	r.whole(f.Type, f.Flags, int(n))
	return f, nil
}

// whole notes a frame read whole, for Resync's header repair.
func (r *Reader) whole(t Type, flags uint8, n int) {
	r.lastType, r.lastFlags, r.lastLen, r.lastEnd = t, flags, n, r.off
	r.maxLen = max(r.maxLen, n)
}

// Repaired returns how many frames Resync read by their payload's
// CRC-32C where their header's other fields were damaged.
func (r *Reader) Repaired() int { return r.repaired }

// nextRepaired returns the frame at r.off whose header Resync repaired.
func (r *Reader) nextRepaired() (Frame, error) {
	h := r.pending
	r.pending = nil
	p, err := r.br.Peek(HeaderSize + h.n)
	if err != nil {
		return Frame{}, &FormatError{Offset: r.off, Frame: h.typ, Msg: "repaired frame no longer buffered", Err: ErrCorrupt}
	}
	f := Frame{Type: h.typ, Flags: h.flags, Offset: r.off, Payload: p[HeaderSize:]}
	r.br.Discard(HeaderSize + h.n)
	r.off += HeaderSize + int64(h.n)
	r.repaired++
	r.whole(f.Type, f.Flags, h.n)
	return f, nil
}

// repairHeader looks at r.off, just after the last whole frame, for a
// frame whose header is damaged (sync bytes, type, flags or length) but
// whose payload and checksum field are not. That is how a recording's
// deflate damage usually spreads: the compressor copies each header's
// constant bytes from the previous frame, so one wrong byte there is
// copied into every later header while the payloads, new data written as
// literals, stay intact. The payload length is the one whose CRC-32C
// matches the checksum field: the last frame's length first, then the
// header's own, then every length up to twice the largest payload seen
// (plus 64 bytes) that the read buffer holds; at a whole number of
// last-frame lengths after it (Resync's scan passing over frames of one
// length whose checksum field is damaged too) the last length only.
// A wrong match is a
// 2^-32 chance per length tried, and its payload must still decode as
// its type. The type and flags are the header's where its sync bytes are
// intact, else the last frame's.
func (r *Reader) repairHeader() bool {
	if r.lastEnd == 0 {
		return false
	}
	stride := int64(HeaderSize + r.lastLen)
	if r.off < r.lastEnd || (r.off-r.lastEnd)%stride != 0 {
		return false
	}
	// Past the frame after the last whole one only the last length is
	// tried (frames of one length, and their headers damaged alike).
	full := r.off == r.lastEnd
	hdr, err := r.br.Peek(HeaderSize)
	if err != nil || len(hdr) < HeaderSize {
		return false
	}
	sum := binary.LittleEndian.Uint32(hdr[8:])
	limit := min(2*r.maxLen+64, r.br.Size()-HeaderSize, MaxPayload)
	buf, _ := r.br.Peek(HeaderSize + limit)
	if len(buf) <= HeaderSize {
		return false
	}
	p := buf[HeaderSize:]
	n := -1
	hn := int(binary.LittleEndian.Uint32(hdr[4:]))
	switch {
	case r.lastLen <= len(p) && Checksum(p[:r.lastLen]) == sum:
		n = r.lastLen
	case !full:
	case hn <= len(p) && Checksum(p[:hn]) == sum:
		n = hn
	default:
		c := uint32(0)
		for i := 0; i <= len(p); i++ {
			if c == sum {
				n = i
				break
			}
			if i < len(p) {
				c = crc32.Update(c, castagnoli, p[i:i+1])
			}
		}
	}
	if n < 0 {
		return false
	}
	h := &repairedHeader{typ: r.lastType, flags: r.lastFlags, n: n}
	if hdr[2] == headerSync[0] && hdr[3] == headerSync[1] && hdr[0] >= byte(TypeHello) && hdr[0] <= byte(TypeTraceFile) {
		h.typ, h.flags = Type(hdr[0]), hdr[1]
	}
	r.pending = h
	return true
}

// Resync skips to the next place in the stream that holds a whole frame
// (sync bytes, a known type, a length within MaxPayload and, for a
// payload the read buffer holds, a matching CRC-32C), after a Next that
// failed with ErrCorrupt, so that damage costs the frames it touched
// only; where the damage is in the header just after the last whole
// frame and its payload is intact, that frame is read with its header
// repaired (repairHeader). It returns the bytes skipped, and false at
// the end of the stream with no frame found (or before the preamble was
// read).
func (r *Reader) Resync() (int64, bool) {
	if !r.started {
		return 0, false
	}
	r.release()
	if r.repairHeader() {
		return 0, true
	}
	var skipped int64
	for {
		hdr, err := r.br.Peek(HeaderSize)
		if len(hdr) < HeaderSize || err != nil {
			return skipped, false
		}
		n := binary.LittleEndian.Uint32(hdr[4:])
		if hdr[2] == headerSync[0] && hdr[3] == headerSync[1] && hdr[0] >= byte(TypeHello) && hdr[0] <= byte(TypeTraceFile) && n <= MaxPayload {
			if int(n)+HeaderSize > r.br.Size() {
				return skipped, true // too large to check here: Next checks it
			}
			if p, err := r.br.Peek(HeaderSize + int(n)); err == nil && Checksum(p[HeaderSize:]) == binary.LittleEndian.Uint32(hdr[8:]) {
				return skipped, true
			}
		}
		if skipped > 0 && r.repairHeader() {
			return skipped, true
		}
		r.br.Discard(1)
		r.off++
		skipped++
	}
}

func (r *Reader) preamble() error {
	p, err := r.br.Peek(PreambleSize)
	if err != nil {
		if err == io.EOF && len(p) == 0 {
			return io.EOF
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if len(p) >= 4 && string(p[:4]) != string(Magic[:]) {
				return &FormatError{Offset: 0, Field: "magic", Msg: fmt.Sprintf("stream starts with %q", p[:4]), Err: ErrNotWire}
			}
			return &FormatError{Offset: 0, Field: "preamble", Msg: fmt.Sprintf("%d of %d preamble bytes", len(p), PreambleSize), Err: ErrTruncated}
		}
		return err
	}
	if string(p[:4]) != string(Magic[:]) {
		return &FormatError{Offset: 0, Field: "magic", Msg: fmt.Sprintf("stream starts with %q", p[:4]), Err: ErrNotWire}
	}
	major := binary.LittleEndian.Uint16(p[4:])
	minor := binary.LittleEndian.Uint16(p[6:])
	if major != VersionMajor {
		return &FormatError{Offset: 4, Field: "version", Msg: fmt.Sprintf("stream is version %d.%d, this rlktop reads %d.x", major, minor, VersionMajor),
			Err: fmt.Errorf("%w (use an rlktop whose wire version matches the tracer that wrote it)", ErrVersion)}
	}
	r.br.Discard(PreambleSize)
	r.major, r.minor, r.off, r.started = major, minor, PreambleSize, true
	return nil
}

// ---- payload decoding ----

// errField builds the error for a bad field of f.
func (f *Frame) errField(field string, pos int, msg string) error {
	return &FormatError{Offset: f.Offset, Frame: f.Type, Field: field,
		Msg: fmt.Sprintf("%s (payload byte %d of %d)", msg, pos, len(f.Payload)), Err: ErrCorrupt}
}

type dec struct {
	f   *Frame
	p   []byte
	i   int
	err error
}

func (d *dec) fail(field, msg string) {
	if d.err == nil {
		d.err = d.f.errField(field, d.i, msg)
	}
}

func (d *dec) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p[d.i:])
	if n <= 0 {
		d.fail(field, "bad or truncated varint")
		return 0
	}
	d.i += n
	return v
}

func (d *dec) varint(field string) int64 {
	u := d.uvarint(field)
	return int64(u>>1) ^ -int64(u&1)
}

func (d *dec) int32(field string) int32 {
	v := d.varint(field)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(field, fmt.Sprintf("value %d does not fit in 32 bits", v))
		return 0
	}
	return int32(v)
}

func (d *dec) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if d.i >= len(d.p) {
		d.fail(field, "payload ends")
		return 0
	}
	b := d.p[d.i]
	d.i++
	return b
}

func (d *dec) bytes(field string) []byte {
	n := d.uvarint(field)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.p)-d.i) {
		d.fail(field, fmt.Sprintf("string length %d exceeds the %d bytes left", n, len(d.p)-d.i))
		return nil
	}
	b := d.p[d.i : d.i+int(n)]
	d.i += int(n)
	return b
}

func (d *dec) str(field string) string { return string(d.bytes(field)) }

// count reads a list length whose elements take at least minSize bytes each,
// rejecting lengths the remaining payload cannot hold (bounding allocation).
func (d *dec) count(field string, minSize int) int {
	n := d.uvarint(field)
	if d.err != nil {
		return 0
	}
	if n > uint64((len(d.p)-d.i)/minSize) {
		d.fail(field, fmt.Sprintf("count %d cannot fit in the %d bytes left", n, len(d.p)-d.i))
		return 0
	}
	return int(n)
}

func (d *dec) kvs(field string) []msg.KV {
	n := d.count(field, 2)
	var kv []msg.KV
	if n > 0 {
		kv = make([]msg.KV, 0, n)
	}
	for range n {
		k := d.str(field + ".key")
		v := d.str(field + ".value")
		if d.err != nil {
			return nil
		}
		kv = append(kv, msg.KV{Key: k, Value: v})
	}
	return kv
}

// errType is returned when a payload method is called on the wrong frame type.
var errType = errors.New("wrong frame type for this decoder")

func (f *Frame) want(t Type) error {
	if f.Type != t {
		return &FormatError{Offset: f.Offset, Frame: f.Type, Msg: "decoding as " + t.String(), Err: errType}
	}
	return nil
}

// Hello decodes a Hello frame. Fields a newer minor version appended are
// ignored.
func (f *Frame) Hello() (msg.Hello, error) {
	var h msg.Hello
	if err := f.want(TypeHello); err != nil {
		return h, err
	}
	d := dec{f: f, p: f.Payload}
	h.Source = d.str("source")
	h.PID = d.varint("pid")
	h.Rank = d.varint("rank")
	h.World = d.varint("world")
	h.Host = d.str("host")
	h.Device = d.str("device")
	h.ClockOffsetNs = d.varint("clock_offset_ns")
	h.StartNs = d.varint("start_ns")
	if n := d.count("cmdline", 1); n > 0 {
		h.Cmdline = make([]string, n)
		for i := range h.Cmdline {
			h.Cmdline[i] = d.str("cmdline")
		}
	}
	if n := d.count("devices", 8); n > 0 {
		h.Devices = make([]tracer.Device, n)
		for i := range h.Devices {
			dv := &h.Devices[i]
			dv.ID = d.int32("device.id")
			dv.Name = d.str("device.name")
			dv.Vendor = d.str("device.vendor")
			dv.TotalMemory = d.varint("device.total_memory")
			dv.SMs = int(d.int32("device.sms"))
			dv.ComputeCap = d.str("device.compute_cap")
			if kv := d.kvs("device.props"); len(kv) > 0 {
				dv.Props = make(map[string]string, len(kv))
				for _, p := range kv {
					dv.Props[p.Key] = p.Value
				}
			}
		}
	}
	return h, d.err
}

// Control decodes a Control frame.
func (f *Frame) Control() (msg.Control, error) {
	var c msg.Control
	if err := f.want(TypeControl); err != nil {
		return c, err
	}
	d := dec{f: f, p: f.Payload}
	c.Op = msg.ControlOp(d.byte("op"))
	c.Seq = d.uvarint("seq")
	c.Key = d.str("key")
	c.Value = d.str("value")
	c.Flags = d.kvs("flags")
	c.Tracing = d.byte("state")&1 != 0
	c.Step = d.varint("step")
	c.Err = d.str("err")
	if d.err == nil && (c.Op < msg.ControlSet || c.Op > msg.ControlDetach) {
		d.fail("op", fmt.Sprintf("unknown control op %d", c.Op))
	}
	return c, d.err
}

// Drops decodes a Drops frame.
func (f *Frame) Drops() (msg.Drops, error) {
	if err := f.want(TypeDrops); err != nil {
		return msg.Drops{}, err
	}
	d := dec{f: f, p: f.Payload}
	x := msg.Drops{Events: d.uvarint("events"), Batches: d.uvarint("batches")}
	return x, d.err
}

// Meta decodes a Meta frame.
func (f *Frame) Meta() ([]msg.KV, error) {
	if err := f.want(TypeMeta); err != nil {
		return nil, err
	}
	d := dec{f: f, p: f.Payload}
	kv := d.kvs("pairs")
	return kv, d.err
}

// Bye decodes a Bye frame.
func (f *Frame) Bye() (msg.Bye, error) {
	if err := f.want(TypeBye); err != nil {
		return msg.Bye{}, err
	}
	d := dec{f: f, p: f.Payload}
	y := msg.Bye{Reason: d.str("reason"), ExitCode: d.varint("exit_code")}
	return y, d.err
}

// TraceFile decodes a TraceFile frame.
func (f *Frame) TraceFile() (TraceFile, error) {
	if err := f.want(TypeTraceFile); err != nil {
		return TraceFile{}, err
	}
	d := dec{f: f, p: f.Payload}
	t := TraceFile{Format: d.str("format"), Path: d.str("path"), FirstStep: d.varint("first_step"), LastStep: d.varint("last_step")}
	return t, d.err
}

// MaxStringID is the largest string id a sender may define; larger ids are
// rejected so that a receiver's id map stays bounded (16 M entries).
const MaxStringID = 1<<24 - 1

// Strings decodes a Strings frame, calling fn for each entry. s aliases the
// payload: copy it to keep it. An error from fn stops decoding and is
// returned.
func (f *Frame) Strings(fn func(id uint32, s []byte) error) error {
	if err := f.want(TypeStrings); err != nil {
		return err
	}
	d := dec{f: f, p: f.Payload}
	n := d.count("count", 2)
	for range n {
		id := d.uvarint("id")
		s := d.bytes("bytes")
		if d.err != nil {
			return d.err
		}
		if id > MaxStringID {
			d.fail("id", fmt.Sprintf("string id %d exceeds the limit %d", id, MaxStringID))
			return d.err
		}
		if err := fn(uint32(id), s); err != nil {
			return err
		}
	}
	return d.err
}

// Counters decodes a Counters frame, appending to dst. Name ids are the
// sender's.
func (f *Frame) Counters(dst []tracer.Counter) ([]tracer.Counter, error) {
	if err := f.want(TypeCounters); err != nil {
		return dst, err
	}
	d := dec{f: f, p: f.Payload}
	n := d.count("count", 11)
	var ts int64
	for range n {
		ts += d.varint("ts")
		name := d.uvarint("name")
		dev := d.int32("device")
		if d.err != nil {
			break
		}
		if len(d.p)-d.i < 8 {
			d.fail("value", "payload ends")
			break
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.p[d.i:]))
		d.i += 8
		if name > MaxStringID {
			d.fail("name", fmt.Sprintf("string id %d exceeds the limit", name))
			break
		}
		dst = append(dst, tracer.Counter{TS: ts, Name: tracer.StrID(name), Device: dev, Value: v})
	}
	return dst, d.err
}

// uv decodes a uvarint at p[i:], returning the value and the next index, or
// i = -1 when the bytes are not a valid uvarint (truncated, longer than 10
// bytes or over 64 bits). Small enough to be inlined.
func uv(p []byte, i int) (v uint64, j int) {
	for s := uint(0); s < 64; s += 7 {
		if uint(i) >= uint(len(p)) {
			break
		}
		b := p[i]
		i++
		if b < 0x80 {
			if s == 63 && b > 1 {
				break
			}
			return v | uint64(b)<<s, i
		}
		v |= uint64(b&0x7f) << s
	}
	return 0, -1
}

func zz(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// Events decodes an Events frame, appending to dst. Name ids are the
// sender's (map them with a Names table); Ctx is 0. The layout is described
// at AppendEvents. Decoding does not allocate beyond growing dst, and a
// count larger than the payload can hold is rejected before growing it.
func (f *Frame) Events(dst []tracer.Event) ([]tracer.Event, error) {
	if err := f.want(TypeEvents); err != nil {
		return dst, err
	}
	p := f.Payload
	n, i := uv(p, 0)
	if i < 0 {
		return dst, f.errField("count", 0, "bad varint")
	}
	if n > uint64(len(p)-i)/4 {
		return dst, f.errField("count", 0, fmt.Sprintf("count %d cannot fit in %d bytes (each event takes at least 4)", n, len(p)-i))
	}
	dst = grow(dst, int(n))
	var (
		e    tracer.Event
		corr int64
		u    uint64
	)
	e.Device = -1
	for range int(n) {
		if i >= len(p) {
			return dst, f.errField("header", i, "payload ends")
		}
		h := p[i]
		i++
		if h&^evMask != 0 {
			return dst, f.errField("header", i-1, fmt.Sprintf("reserved bits set in %#02x", h))
		}
		u, i = uv(p, i)
		if i < 0 || u > MaxStringID {
			return dst, f.errField("name", i, "bad varint or id over the limit")
		}
		e.Name = tracer.StrID(u)
		u, i = uv(p, i)
		if i < 0 {
			return dst, f.errField("start", i, "bad varint")
		}
		e.Start += zz(u)
		u, i = uv(p, i)
		if i < 0 || int64(u) < 0 {
			return dst, f.errField("dur", i, "bad varint or negative duration")
		}
		e.Dur = int64(u)
		if h&evKind != 0 {
			if i >= len(p) {
				return dst, f.errField("kind", i, "payload ends")
			}
			e.Kind = tracer.Kind(p[i])
			i++
		}
		if h&(evPID|evTID|evDevice|evStream) != 0 {
			var ok bool
			if i, ok = decodeIDs(p, i, h, &e); !ok {
				return dst, f.errField("pid/tid/device/stream", i, "bad varint or value over 32 bits")
			}
		}
		if h&evCorr != 0 {
			u, i = uv(p, i)
			if i < 0 {
				return dst, f.errField("corr", i, "bad varint")
			}
			corr += zz(u)
			e.Corr = uint64(corr)
		} else {
			e.Corr = 0
		}
		if h&evValue != 0 {
			u, i = uv(p, i)
			if i < 0 {
				return dst, f.errField("value", i, "bad varint")
			}
			e.Value = zz(u)
		} else {
			e.Value = 0
		}
		dst = append(dst, e)
	}
	return dst, nil
}

func decodeIDs(p []byte, i int, h byte, e *tracer.Event) (int, bool) {
	var u uint64
	for bit, dst := range [4]*int32{&e.PID, &e.TID, &e.Device, &e.Stream} {
		if h&(evPID<<bit) == 0 {
			continue
		}
		u, i = uv(p, i)
		if i < 0 {
			return i, false
		}
		v := zz(u)
		if v < math.MinInt32 || v > math.MaxInt32 {
			return i, false
		}
		*dst = int32(v)
	}
	return i, true
}

// grow makes room for n more events, doubling the capacity (append grows
// large slices by only 1.25×) so that decoding frame after frame into one
// slice copies each event about once.
func grow(s []tracer.Event, n int) []tracer.Event {
	if cap(s)-len(s) >= n {
		return s
	}
	return slices.Grow(s, max(n, len(s)))
}
