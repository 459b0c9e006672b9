package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// The "rlktop" format: rlktop's own recordings (a gzip-compressed wire
// stream, see tracer/wire/FORMAT.md), and also a raw, uncompressed wire
// stream as one child sent it. Read gunzips by magic before sniffing, so
// Sniff sees the "RLKW" preamble either way.
func init() {
	Register(Format{Name: "rlktop", Sniff: sniffRecording, Read: readRecording})
}

func sniffRecording(head []byte) bool { return bytes.HasPrefix(head, wire.Magic[:]) }

// readRecording reads a wire stream into a linked trace. Event and counter
// times of streams written by a traced process are shifted by the hello's
// clock offset to host CLOCK_REALTIME ns; a recording's frames carry
// FlagRelayed on their hellos and are already in host time. A stream that
// ends inside a frame (a recorder killed with SIGKILL) keeps every whole
// frame before it and adds a warning; it is not an error, since that is how
// a killed recording ends. A damaged frame (CRC-32 or layout) after whole
// ones is an error returned with the trace of the frames before it.
//
// What one import holds is bounded (recordingBudget): a frame whose
// declared event or counter count would take the trace past the budget is
// not decoded; the frames before it come back with an error that names the
// limit and RLKTOP_MAX_RECORDING_EVENTS.
func readRecording(r io.Reader, path string, opts Options) (*tracer.Trace, error) {
	rs := &recSink{t: tracer.NewTrace("rlktop", path), path: path, dropped: map[int]uint64{}}
	rs.budget, rs.budgetWhy = recordingBudget()
	rs.names = newNameBudget()
	if opts.Own {
		rs.budget, rs.budgetWhy = ^uint64(0), "none: rlktop's own recording"
		rs.names = nameBudget{}
	}
	t := rs.t
	dec := wire.NewDecoder(r)
	bad := func(err error) error {
		var fe *wire.FormatError
		off := dec.Offset()
		field := ""
		if errors.As(err, &fe) {
			off, field = fe.Offset, fe.Field
		}
		hint := "the file is damaged; frames before this offset are intact"
		if errors.Is(err, wire.ErrVersion) {
			// Not damage: another rlktop wrote it.
			return &Error{Path: path, Offset: off, Field: field, Msg: "rlktop recording of another version", Err: err}
		}
		return &Error{Path: path, Offset: off, Field: field, Msg: "bad rlktop recording", Err: err, Hint: hint}
	}
	var damage error // the first *Error of damage, nil when none
	// Frames that failed their check, and the bytes Resync skipped past
	// to the next whole frame.
	damagedFrames, skippedBytes := 0, int64(0)
	for {
		whole := dec.Frames()
		afterBye := rs.bye // the last whole frame was a Bye
		rs.bye = false
		err := dec.Next(rs)
		if err == io.EOF {
			break
		}
		if err == nil {
			continue
		}
		if re := (*Error)(nil); errors.As(err, &re) {
			// Past the budget (recSink.Reserve, Intern): the frames
			// before it come back with the error.
			if re.Offset < 0 {
				re.Offset = dec.Offset()
			}
			damage = re
			break
		}
		if whole == 0 {
			return nil, bad(err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && afterBye && opts.Gzipped {
			t.Warn(fmt.Sprintf("%s: the gzip stream is cut after the recording's closing Bye frame (byte %d): all %d frames are kept, only the gzip trailer (its CRC-32 check) is missing", t.Path, dec.Offset(), whole))
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			t.Warn(fmt.Sprintf("%s: recording stops at byte %d without its closing Bye frame (the recorder was killed, or the file is cut): kept the %d whole frames before it", t.Path, dec.Offset(), whole))
			break
		}
		// Damage inside the stream (a frame whose CRC-32 or layout is
		// wrong) is an error, as in every format, but it costs the frames
		// it touched only: the reading goes on at the next whole frame
		// (a flipped bit in the compressed data damages the frames whose
		// bytes, or back-references, it changed), and every intact frame
		// after it comes back with the error.
		if damage == nil {
			damage = bad(err)
		}
		damagedFrames++
		if !errors.Is(err, wire.ErrCorrupt) || damagedFrames > maxDamagedFrames {
			break
		}
		skipped, ok := dec.Resync()
		skippedBytes += skipped
		if !ok {
			break
		}
	}
	if damagedFrames > 0 {
		var re *Error
		if errors.As(damage, &re) {
			// A repaired header was counted as damage when Next
			// failed on it, but its frame was read.
			re.Hint = fmt.Sprintf("the file is damaged: %d damaged frames and %d bytes between frames were skipped; every intact frame before and after them is kept", damagedFrames-dec.Repaired(), skippedBytes)
			if n := dec.Repaired(); n > 0 {
				re.Hint += fmt.Sprintf(" (%d of them read with a damaged header, by their payload's CRC-32C)", n)
			}
		}
	}
	// A recording's Drops frames carry the recorder's total; a raw stream's
	// are each sender's own cumulative count.
	if rs.relayed || rs.hellos == 0 {
		t.Dropped = rs.lastDrops
	} else {
		for _, d := range rs.dropped {
			t.Dropped += d
		}
	}
	if rs.undefined > 0 {
		t.Warn(fmt.Sprintf("%s: %d events or counters name a string id the recording never defined; their name is empty", t.Path, rs.undefined))
	}
	if dec.Frames() == 0 {
		return nil, &Error{Path: path, Offset: dec.Offset(), Msg: "rlktop recording holds no frames",
			Hint: "the recorder stopped before writing anything"}
	}
	return t, damage
}

// maxDamagedFrames bounds the damaged frames one recording import skips
// past before it stops: a file that is mostly damage is not a recording.
const maxDamagedFrames = 10000

// recSink builds a trace from the frames of a recording (wire.Sink).
type recSink struct {
	t         *tracer.Trace
	path      string
	budget    uint64 // events and counters one import may hold
	budgetWhy string
	hellos    int
	undefined int
	dropped   map[int]uint64 // per hello (sender), cumulative
	lastDrops uint64
	names     nameBudget
	relayed   bool
	bye       bool             // the frame just decoded was a Bye
	pyDropped map[int32]uint64 // per process: Python samples dropped (cumulative)
}

// Reserve refuses a frame that would take the trace past the budget.
func (rs *recSink) Reserve(ty wire.Type, n uint64, off int64) error {
	held := uint64(len(rs.t.Events) + len(rs.t.Counters) + len(rs.t.Memory))
	if n <= rs.budget && held <= rs.budget-n {
		return nil
	}
	what := "events"
	switch ty {
	case wire.TypeCounters:
		what = "counters"
	case wire.TypeMemory:
		what = "memory"
	}
	return &Error{Path: rs.path, Offset: off, Field: "count",
		Msg:  fmt.Sprintf("the recording would hold more than %d events and counters (%s): kept the %d before a %s frame declaring %d", rs.budget, rs.budgetWhy, held, what, n),
		Hint: fmt.Sprintf("to read it all, pass --%s N or set %s to a larger number (0: no limit; each event takes about %d bytes at a report's peak)", MaxRecordingEventsFlag, MaxRecordingEventsEnv, RecordingEventBytes)}
}

func (rs *recSink) Hello(h *msg.Hello, relayed bool) error {
	rs.hellos++
	rs.relayed = rs.relayed || relayed
	addHello(rs.t, h, rs.hellos)
	return nil
}

func (rs *recSink) Intern(s []byte) (tracer.StrID, error) {
	id := rs.t.Strings.InternBytes(s)
	if msg, hint, over := rs.names.over(rs.t.Strings.Bytes(), "frames"); over {
		return id, &Error{Path: rs.path, Offset: -1, Field: "name", Msg: msg, Hint: hint}
	}
	return id, nil
}

func (rs *recSink) Events(evs []tracer.Event, undefined int) error {
	rs.t.Events = append(rs.t.Events, evs...)
	rs.undefined += undefined
	return nil
}

func (rs *recSink) Counters(cs []tracer.Counter, undefined int) error {
	rs.t.Counters = append(rs.t.Counters, cs...)
	rs.undefined += undefined
	return nil
}

func (rs *recSink) Drops(d msg.Drops) error {
	rs.dropped[rs.hellos] = d.Events
	rs.lastDrops = d.Events
	return nil
}

func (rs *recSink) Meta(kv []msg.KV) error {
	for _, p := range kv {
		rs.t.Meta[p.Key] = p.Value
	}
	return nil
}

func (rs *recSink) Control(c *msg.Control) error {
	if c.Op == msg.ControlAck && c.Err == "" && len(c.Flags) > 0 {
		var fl []string
		for _, p := range c.Flags {
			fl = append(fl, p.Key+"="+p.Value)
		}
		rs.t.Meta["flags"] = strings.Join(fl, ",")
		rs.t.Meta["flags_changes"] = strconv.Itoa(atoi(rs.t.Meta["flags_changes"]) + 1)
	}
	return nil
}

// Memory takes the allocations and frees (Trace.Memory).
func (rs *recSink) Memory(ms []tracer.MemEvent) error {
	rs.t.Memory = append(rs.t.Memory, ms...)
	return nil
}

// TraceFile frames (the Python agent's torch.profiler windows) are not
// read back from a recording: their events were merged into the stream.
func (rs *recSink) TraceFile(wire.TraceFile) error { return nil }

func (rs *recSink) Bye(y msg.Bye) error {
	rs.bye = true
	rs.t.Meta["end"] = y.Reason
	if y.ExitCode >= 0 {
		rs.t.Meta["exit_code"] = strconv.FormatInt(y.ExitCode, 10)
	}
	return nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// addHello records a sender's identity in the trace: devices, rank, and
// meta keys prefixed with the sender's number when there are several.
func addHello(t *tracer.Trace, h *msg.Hello, n int) {
	p := ""
	if n > 1 {
		p = fmt.Sprintf("child%d.", n)
	}
	t.Meta[p+"source"] = h.Source
	t.Meta[p+"pid"] = strconv.FormatInt(h.PID, 10)
	t.Meta[p+"host"] = h.Host
	if h.Device != "" {
		t.Meta[p+"device"] = h.Device
	}
	if len(h.Cmdline) > 0 {
		t.Meta[p+"cmdline"] = strings.Join(h.Cmdline, " ")
	}
	if h.Rank >= 0 {
		t.Meta[p+"rank"] = strconv.FormatInt(int64(h.Rank), 10)
	}
	if t.Rank < 0 && h.Rank >= 0 {
		t.Rank = int(h.Rank)
	}
	if h.World > 0 && t.World == 0 {
		t.World = int(h.World)
	}
	for _, d := range h.Devices {
		dup := false
		for _, e := range t.Devices {
			if e.ID == d.ID && e.Name == d.Name {
				dup = true
			}
		}
		if !dup {
			t.Devices = append(t.Devices, d)
		}
	}
}

// MaxRecordingEventsEnv names the environment variable that sets how many
// events and counters (together) one recording import may hold, in place
// of the default of recordingBudget; 0 means no limit.
const MaxRecordingEventsEnv = "RLKTOP_MAX_RECORDING_EVENTS"

// recordingBudget returns how many events and counters one recording
// import may hold, and why (for the message): --max-recording-events
// (SetMaxRecordingEvents), else RLKTOP_MAX_RECORDING_EVENTS when set (0:
// no limit), else MaxRecordingEvents (limits.go).
func recordingBudget() (uint64, string) {
	if p := setRecordingEvents.Load(); p != nil {
		if *p == 0 {
			return ^uint64(0), "--" + MaxRecordingEventsFlag + "=0"
		}
		return *p, fmt.Sprintf("--%s=%d", MaxRecordingEventsFlag, *p)
	}
	if v := os.Getenv(MaxRecordingEventsEnv); v != "" {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			if n == 0 {
				return ^uint64(0), MaxRecordingEventsEnv + "=0"
			}
			return n, MaxRecordingEventsEnv + "=" + v
		}
	}
	why := fmt.Sprintf("the default limit: %d MiB at about %d bytes an event", DefaultImportBytes>>20, RecordingEventBytes)
	if v := os.Getenv(MaxRecordingEventsEnv); v != "" {
		why = fmt.Sprintf("%s=%q is not a whole number, so %s", MaxRecordingEventsEnv, v, why)
	}
	return MaxRecordingEvents, why
}
