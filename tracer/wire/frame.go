package wire

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Protocol version carried in the stream preamble. A reader accepts any
// minor version of its major version (minor versions only append fields to
// payloads and add frame types, which older readers skip) and rejects any
// other major version with ErrVersion.
const (
	VersionMajor = 1
	VersionMinor = 2
)

// Magic is the first four bytes of every stream (connection direction or
// recording file): "RLKW".
var Magic = [4]byte{'R', 'L', 'K', 'W'}

// PreambleSize is the size of the stream preamble: Magic, major u16 LE,
// minor u16 LE.
const PreambleSize = 8

// HeaderSize is the size of a frame header in bytes: type u8, flags u8,
// sync "RK" (2 bytes), payload length u32 LE, CRC-32C of the payload u32 LE.
const HeaderSize = 12

// MaxPayload is the largest payload a reader accepts (16 MiB). Writers split
// event batches so that no frame exceeds it.
const MaxPayload = 16 << 20

// headerSync is bytes 2–3 of every frame header; a mismatch means the stream
// is not at a frame boundary (corruption or not a wire stream).
var headerSync = [2]byte{'R', 'K'}

// Type says what a frame's payload holds.
type Type uint8

// Frame types. Values are part of the protocol; never renumber.
const (
	TypeHello    Type = 1 // sender identity; first frame of a sender's stream
	TypeStrings  Type = 2 // new string-table entries (id → bytes)
	TypeEvents   Type = 3 // a packed batch of tracer.Event
	TypeCounters Type = 4 // a batch of tracer.Counter samples
	TypeControl  Type = 5 // rlktop → child commands; child → rlktop acks
	TypeDrops    Type = 6 // records dropped by the sender so far (cumulative)
	TypeMeta     Type = 8 // key/value pairs for the run record
	TypeBye      Type = 9 // orderly end of the stream
	// TypeTraceFile (minor 1) names a trace file the sender wrote for
	// rlktop to import and merge (the Python agent's torch.profiler
	// windows); see TraceFile.
	TypeTraceFile Type = 10
)

var typeNames = map[Type]string{
	TypeHello: "hello", TypeStrings: "strings", TypeEvents: "events", TypeCounters: "counters",
	TypeControl: "control", TypeDrops: "drops", TypeMeta: "meta", TypeBye: "bye", TypeTraceFile: "tracefile",
}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Frame flags (header byte 1).
const (
	// FlagRelayed marks frames written by rlktop's recorder rather than by
	// the traced process: event and counter times are already host
	// CLOCK_REALTIME ns (the hello's ClockOffsetNs must not be applied
	// again) and string ids are the recorder's. Set on Hello frames of a
	// recording.
	FlagRelayed uint8 = 1 << 0
)

// Sentinel errors. Errors returned by Reader and the decoders wrap one of
// these inside a *FormatError that gives the byte offset and field.
var (
	// ErrNotWire: the stream does not start with the "RLKW" magic.
	ErrNotWire = errors.New("not an rlktop wire stream (magic \"RLKW\" missing)")
	// ErrVersion: the stream's major version is not VersionMajor.
	ErrVersion = errors.New("unsupported wire protocol major version")
	// ErrTruncated: the stream ended inside a frame (a killed writer). Every
	// frame before it was returned intact. It wraps io.ErrUnexpectedEOF.
	ErrTruncated = fmt.Errorf("stream ends inside a frame (writer killed?): %w", io.ErrUnexpectedEOF)
	// ErrCorrupt: a header or payload failed its checks (sync bytes, length
	// limit, CRC, field encoding).
	ErrCorrupt = errors.New("corrupt wire frame")
)

// FormatError says what was wrong with a stream and where.
type FormatError struct {
	Offset int64  // byte offset of the frame header in the (uncompressed) stream
	Frame  Type   // frame type, 0 when the header itself was bad
	Field  string // field being decoded, "" for header problems
	Msg    string
	Err    error // one of the sentinels above
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("wire: byte %d", e.Offset)
	if e.Frame != 0 {
		s += fmt.Sprintf(", %s frame", e.Frame)
	}
	if e.Field != "" {
		s += fmt.Sprintf(", field %s", e.Field)
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C (Castagnoli) of p, as stored in frame headers.
func Checksum(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// appendHeader appends a frame header for payload p.
func appendHeader(b []byte, t Type, flags uint8, p []byte) []byte {
	n := uint32(len(p))
	c := Checksum(p)
	return append(b, byte(t), flags, headerSync[0], headerSync[1],
		byte(n), byte(n>>8), byte(n>>16), byte(n>>24),
		byte(c), byte(c>>8), byte(c>>16), byte(c>>24))
}

// AppendPreamble appends the stream preamble (magic and version).
func AppendPreamble(b []byte) []byte {
	b = append(b, Magic[:]...)
	return append(b, VersionMajor, 0, VersionMinor, 0)
}
