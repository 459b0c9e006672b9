// Package wire is rlktop's framed binary protocol between a traced process
// (the built-in loop's gotrace, the CUPTI injection library, the rocprofiler
// tool) and rlktop, and the format of rlktop's native recordings, which are
// the same frame stream in a (compressed) file. FORMAT.md in this directory
// is the same description for readers of ARCHITECTURE.md.
//
// Receivers read a stream with a Decoder, which hands each frame, decoded,
// to a Sink (names mapped into the receiver's table, times in host ns): the
// live session and the recording reader are its two Sinks. Senders write
// with a Writer or, in a traced process, an AsyncSender.
//
// # Stream
//
// Each direction of a connection, and each recording, is one stream:
//
//	preamble (8 bytes): "RLKW"  major u16 LE  minor u16 LE
//	frame*
//
// The current version is 1.2. A reader rejects any other major version with
// ErrVersion; minor versions only append fields to payloads (readers ignore
// trailing payload bytes) and add frame types (readers skip unknown types).
//
// # Frame
//
//	offset size field
//	0      1    type            (Type: 1 hello, 2 strings, 3 events, 4 counters,
//	                             5 control, 6 drops, 8 meta, 9 bye)
//	1      1    flags           (bit 0 FlagRelayed; others 0)
//	2      2    sync            "RK"
//	4      4    payload length  u32 LE, at most MaxPayload (16 MiB)
//	8      4    CRC-32C         (Castagnoli) of the payload, u32 LE
//	12     n    payload
//
// The checksum lets a reader of a recording whose writer was killed keep
// every whole frame and detect the torn last one (ErrTruncated, which wraps
// io.ErrUnexpectedEOF).
//
// # Payload encodings
//
// uvarint is Go's encoding/binary unsigned varint (LEB128); varint is a
// zigzag-encoded signed value in a uvarint; str is uvarint length + bytes;
// kvs is uvarint count + (str key, str value)*.
//
//   - Hello: str source ("gotrace", "cupti", "rocprof"), varint pid, varint
//     rank (-1 unknown), varint world (0 unknown), str host, str device
//     (one-line description), varint clock_offset_ns (host CLOCK_REALTIME ns
//     = tracer clock ns + offset), varint start_ns (CLOCK_REALTIME at the
//     hello), uvarint n + str cmdline[n], uvarint n + device[n] where device
//     = varint id, str name, str vendor, varint total_memory bytes, varint
//     sms, str compute_cap, kvs props (sorted by key).
//   - Strings: uvarint n, then n × (uvarint id, str bytes). Ids are the
//     sender's, at most MaxStringID, 0 is always "". A receiver maps them
//     into its own table (Names). A string is defined before any frame that
//     uses its id.
//   - Events: uvarint n, then n packed tracer.Event (Ctx is not sent): a
//     header byte of presence bits (0 kind, 1 pid, 2 tid, 3 device,
//     4 stream, 5 corr, 6 value, 7 reserved = 0), uvarint name id, varint
//     start delta from the previous event's start (first from 0), uvarint
//     dur; then, for each set bit in bit order, kind (1 byte) or a varint:
//     pid/tid/device/stream are sent only when they differ from the previous
//     event's (initially kind 0, pid 0, tid 0, device -1, stream 0), corr as
//     a delta from the previous non-zero corr, value when non-zero. A
//     decoder rejects counts the payload cannot hold (4 bytes per event at
//     least) before allocating.
//   - Counters: uvarint n, then n × (varint ts delta, uvarint name id,
//     varint device, float64 value as 8 bytes LE).
//   - Control: op u8 (1 set, 2 pause, 3 resume, 4 stop, 5 ack), uvarint seq,
//     str key, str value, kvs flags (acks: every flag in force), u8 state
//     (bit 0: tracing on; acks), varint step (acks: step the command took
//     effect at, -1 unknown), str err (acks: why refused, "" applied).
//     rlktop → child carries ops 1–4; child → rlktop carries acks.
//   - Drops: uvarint events, uvarint batches, both cumulative since the
//     sender started.
//   - Meta: kvs (run-record fields).
//   - Bye: str reason, varint exit code (-1 unknown).
//   - PySamples (minor 2): Python stack samples as a table of frames and
//     stacks (entries new since the sender's previous PySamples frame)
//     and samples naming a stack id; see AppendPySamples. Ids are the
//     sender's (at most MaxStringID); a stack names its parent stack (0:
//     outermost) and its frame, both defined before it.
//
// # Transport
//
// rlktop calls Listen, which makes a fresh 0700 directory (os.MkdirTemp) and
// a Unix socket in it, and passes the socket path to the child in the
// environment variable RLKTOP_SOCKET (EnvSocket). The child's tracer calls
// DialEnv and wraps the connection in an AsyncSender, whose Send never
// blocks: a full queue drops the batch and counts it; counts go out in Drops
// frames.
//
// For ranks on other hosts, ListenTCP listens on TCP and returns
// "tcp:HOST:PORT#TOKEN" (a random 128-bit token, hex). The client's first
// bytes are "RLKA", u16 LE token length, the token; Accept drops clients
// whose token differs (constant-time compare, 5 s limit). The wire stream
// follows unchanged.
//
// # Recordings
//
// A recording is a gzip stream (github.com/klauspost/compress/gzip) holding
// one wire stream written by rlktop's session: the children's hellos (with
// FlagRelayed: event times are already host CLOCK_REALTIME ns and string
// ids are the recorder's), Strings, Events, Counters, Drops (the session's
// total), Meta and a final Bye. The compressor is flushed after every frame,
// so a recorder killed with SIGKILL leaves a file readable up to its last
// whole frame.
package wire
