package wire

import (
	"io"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// maxEventsPerFrame bounds an Events frame: an event encodes to at most
// 1+5+10+10+1+5*4+10+10 = 67 bytes, so 200 000 events stay under MaxPayload.
const maxEventsPerFrame = 200_000

// Writer writes frames synchronously to an io.Writer. It writes the
// preamble before the first frame and each frame with a single Write call,
// so a compressor below can be flushed frame by frame. Not safe for
// concurrent use; traced processes use AsyncSender instead.
type Writer struct {
	w       io.Writer
	started bool
	buf     []byte
	scratch []byte
	names   *tracer.Strings // the ids Name handed out
	pendIDs []uint32
	pendStr []string
	// Flags is OR-ed into the flags byte of every Hello frame written
	// (FlagRelayed for recordings).
	Flags uint8
}

// NewWriter returns a Writer on w. String ids handed out by Name start at 1.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, names: tracer.NewStrings()}
}

// frame writes one frame (and the preamble first if needed).
func (w *Writer) frame(t Type, flags uint8, payload []byte) error {
	w.buf = w.buf[:0]
	if !w.started {
		w.buf = AppendPreamble(w.buf)
		w.started = true
	}
	w.buf = appendHeader(w.buf, t, flags, payload)
	w.buf = append(w.buf, payload...)
	_, err := w.w.Write(w.buf)
	return err
}

// WriteFrame writes a frame with an already encoded payload (at most
// MaxPayload bytes).
func (w *Writer) WriteFrame(t Type, flags uint8, payload []byte) error {
	return w.frame(t, flags, payload)
}

// Hello writes a Hello frame (with w.Flags).
func (w *Writer) Hello(h *msg.Hello) error {
	w.scratch = AppendHello(w.scratch[:0], h)
	return w.frame(TypeHello, w.Flags, w.scratch)
}

// Name returns the id of s in this stream's string table, assigning the
// next id when s is new; the Strings frame defining it is written before
// the next Events or Counters frame.
func (w *Writer) Name(s string) tracer.StrID {
	n := w.names.Len()
	id := w.names.Intern(s)
	if int(id) < n {
		return id
	}
	w.pendIDs = append(w.pendIDs, uint32(id))
	w.pendStr = append(w.pendStr, s)
	return id
}

// Define queues a string with a caller-chosen id (a relay that keeps its own
// table's ids). Do not mix with Name in one stream.
func (w *Writer) Define(id tracer.StrID, s string) {
	w.pendIDs = append(w.pendIDs, uint32(id))
	w.pendStr = append(w.pendStr, s)
}

// flushStrings writes queued string definitions.
func (w *Writer) flushStrings() error {
	for len(w.pendIDs) > 0 {
		n, size := 0, 0
		for n < len(w.pendIDs) && size < MaxPayload/2 {
			size += len(w.pendStr[n]) + 16
			n++
		}
		w.scratch = AppendStrings(w.scratch[:0], w.pendIDs[:n], w.pendStr[:n])
		if err := w.frame(TypeStrings, 0, w.scratch); err != nil {
			return err
		}
		w.pendIDs = w.pendIDs[n:]
		w.pendStr = w.pendStr[n:]
	}
	w.pendIDs, w.pendStr = w.pendIDs[:0], w.pendStr[:0]
	return nil
}

// Events writes evs as one or more Events frames (after any pending string
// definitions). Ctx is not sent.
func (w *Writer) Events(evs []tracer.Event) error {
	if err := w.flushStrings(); err != nil {
		return err
	}
	for len(evs) > 0 {
		n := min(len(evs), maxEventsPerFrame)
		w.scratch = AppendEvents(w.scratch[:0], evs[:n])
		if err := w.frame(TypeEvents, 0, w.scratch); err != nil {
			return err
		}
		evs = evs[n:]
	}
	return nil
}

// Counters writes cs as Counters frames (after pending strings).
func (w *Writer) Counters(cs []tracer.Counter) error {
	if err := w.flushStrings(); err != nil {
		return err
	}
	for len(cs) > 0 {
		n := min(len(cs), maxEventsPerFrame)
		w.scratch = AppendCounters(w.scratch[:0], cs[:n])
		if err := w.frame(TypeCounters, 0, w.scratch); err != nil {
			return err
		}
		cs = cs[n:]
	}
	return nil
}

// Drops writes a Drops frame (cumulative counts).
func (w *Writer) Drops(d msg.Drops) error {
	w.scratch = AppendDrops(w.scratch[:0], d)
	return w.frame(TypeDrops, 0, w.scratch)
}

// Control writes a Control frame.
func (w *Writer) Control(c *msg.Control) error {
	w.scratch = AppendControl(w.scratch[:0], c)
	return w.frame(TypeControl, 0, w.scratch)
}

// Controls writes several Control frames with one Write, so that a
// receiver reading the stream gets them together (a flag switch of
// several keys is applied at one step boundary, not split over two).
func (w *Writer) Controls(cs []msg.Control) error {
	w.buf = w.buf[:0]
	if !w.started {
		w.buf = AppendPreamble(w.buf)
		w.started = true
	}
	for i := range cs {
		w.scratch = AppendControl(w.scratch[:0], &cs[i])
		w.buf = appendHeader(w.buf, TypeControl, 0, w.scratch)
		w.buf = append(w.buf, w.scratch...)
	}
	_, err := w.w.Write(w.buf)
	return err
}

// Meta writes a Meta frame.
func (w *Writer) Meta(kv []msg.KV) error {
	w.scratch = AppendMeta(w.scratch[:0], kv)
	return w.frame(TypeMeta, 0, w.scratch)
}

// Bye writes a Bye frame.
func (w *Writer) Bye(y msg.Bye) error {
	w.scratch = AppendBye(w.scratch[:0], y)
	return w.frame(TypeBye, 0, w.scratch)
}

// Flush flushes the underlying writer when it has a Flush() error method
// (bufio.Writer, gzip.Writer, zstd.Encoder).
func (w *Writer) Flush() error {
	if f, ok := w.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// Names maps one sender's string ids to a receiver's tracer.Strings.
// Not safe for concurrent use.
type Names struct {
	tab    *tracer.Strings
	dense  []tracer.StrID // sender id → receiver id; 0 = undefined (or "")
	sparse map[uint32]tracer.StrID
}

// NewNames returns an empty map into tab.
func NewNames(tab *tracer.Strings) *Names { return &Names{tab: tab, dense: []tracer.StrID{0}} }

// Define interns s in the receiver table as sender id. Redefining an id
// replaces it.
func (n *Names) Define(id uint32, s []byte) { n.set(id, n.tab.InternBytes(s)) }

// set maps sender id to receiver id rid.
func (n *Names) set(id uint32, rid tracer.StrID) {
	switch {
	case int(id) < len(n.dense):
		n.dense[id] = rid
	case int(id) < len(n.dense)+4096:
		for len(n.dense) < int(id) {
			n.dense = append(n.dense, 0)
		}
		n.dense = append(n.dense, rid)
	default:
		if n.sparse == nil {
			n.sparse = map[uint32]tracer.StrID{}
		}
		n.sparse[id] = rid
	}
}

// Map returns the receiver id for sender id; ok is false when the sender
// never defined it (id 0, the empty string, is always defined).
func (n *Names) Map(id tracer.StrID) (tracer.StrID, bool) {
	if int(id) < len(n.dense) {
		r := n.dense[id]
		return r, r != 0 || id == 0
	}
	r, ok := n.sparse[uint32(id)]
	return r, ok
}

// MapEvents rewrites evs[i].Name from sender to receiver ids in place and
// returns how many names were undefined (those become 0, the empty name).
func (n *Names) MapEvents(evs []tracer.Event) (undefined int) {
	d := n.dense
	for i := range evs {
		id := evs[i].Name
		if int(id) < len(d) {
			r := d[id]
			if r == 0 && id != 0 {
				undefined++
			}
			evs[i].Name = r
			continue
		}
		r, ok := n.sparse[uint32(id)]
		if !ok {
			undefined++
		}
		evs[i].Name = r
	}
	return undefined
}
