package wire

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// AsyncSender sends frames from a traced process without ever blocking it:
// Send copies a batch into a preallocated ring of capacity events and
// returns; a background goroutine encodes and writes. When the ring cannot
// hold the whole batch, the batch is dropped and counted, and the counts go
// out in Drops frames. A slow, stalled or absent reader therefore costs the
// traced process one memory copy per batch and never a wait on I/O. Memory
// is bounded: the ring (64 bytes × capacity) plus one encoded frame.
//
// Frames other than events and counters (hello, strings, control acks,
// meta, bye) are small and never dropped.
//
// Control frames arriving on the same connection are delivered on
// Controls(). All methods are safe for concurrent use.
type AsyncSender struct {
	conn io.ReadWriter

	mu         sync.Mutex
	names      *tracer.Strings // the stream's ids: those Name handed out
	prio       []byte          // encoded frames that are never dropped (hello, strings, control, meta)
	ring       []tracer.Event
	head, tail uint64 // ring[tail:head) (mod len) is queued; tail advances after the write
	counters   []tracer.Counter
	closing    bool
	bye        []byte // encoded Bye frame, written after everything else
	ending     bool   // Close called: Send and Counters drop
	pending    int    // frames taken by the writer but not yet written
	flushed    *sync.Cond

	dropEvents  atomic.Uint64
	dropBatches atomic.Uint64
	sentEvents  atomic.Uint64
	err         atomic.Pointer[error]

	// src, when attached, is a ring the traced code writes events into
	// itself (AttachEvents): the writer encodes them from there.
	src EventSource

	wake     chan struct{}
	done     chan struct{}
	controls chan msg.Control
}

// EventSource is a single-consumer ring of events whose names are already
// the stream's ids (tracer/gotrace.Tracer with NameWith): Drain hands every
// published event to f in order, in contiguous batches that f must not
// keep, then frees them; Pending is how many are published and not yet
// drained.
type EventSource interface {
	Drain(f func(batch []tracer.Event)) int
	Pending() int
}

// DefaultSenderCapacity is the ring size NewAsyncSender uses for
// capacity <= 0: 1<<16 events (4.5 MiB).
const DefaultSenderCapacity = 1 << 16

// ErrClosed is returned by AsyncSender methods after Close.
var ErrClosed = errors.New("wire: sender closed")

// NewAsyncSender starts a sender on conn whose ring holds capacity events
// (capacity <= 0 means DefaultSenderCapacity); the ring is allocated and
// touched here so that Send never faults in fresh pages. It writes the
// preamble at once; call Hello next. When conn is also readable (a
// net.Conn), Control frames read from it are delivered on Controls().
func NewAsyncSender(conn io.ReadWriter, capacity int) *AsyncSender {
	if capacity <= 0 {
		capacity = DefaultSenderCapacity
	}
	s := &AsyncSender{
		conn:     conn,
		ring:     make([]tracer.Event, capacity),
		names:    tracer.NewStrings(),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		controls: make(chan msg.Control, 64),
	}
	for i := 0; i < len(s.ring); i += 32 { // 32 × 72 B < 4 KiB: one store per page
		s.ring[i].Dur = 0
	}
	s.flushed = sync.NewCond(&s.mu)
	s.prio = AppendPreamble(s.prio)
	go s.writeLoop()
	go s.readLoop()
	return s
}

func (s *AsyncSender) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *AsyncSender) queueFrame(t Type, flags uint8, payload []byte) {
	s.prio = appendHeader(s.prio, t, flags, payload)
	s.prio = append(s.prio, payload...)
}

// Hello queues the Hello frame; send it before any other frame.
func (s *AsyncSender) Hello(h *msg.Hello) {
	p := AppendHello(nil, h)
	s.mu.Lock()
	s.queueFrame(TypeHello, 0, p)
	s.mu.Unlock()
	s.signal()
}

// Name returns the stream id of name, defining it (queued, never dropped)
// when new. Events naming it may be sent right after.
func (s *AsyncSender) Name(name string) tracer.StrID {
	s.mu.Lock()
	n := s.names.Len()
	id := s.names.Intern(name)
	if int(id) == n { // new: the next id
		p := AppendStrings(nil, []uint32{uint32(id)}, []string{name})
		s.queueFrame(TypeStrings, 0, p)
	}
	s.mu.Unlock()
	return id
}

// Send copies batch into the ring and returns true, or drops the whole
// batch (counting its events) and returns false when the ring lacks room or
// the sender is closed or broken. It never waits on I/O; it holds the
// sender's mutex only for the copy.
func (s *AsyncSender) Send(batch []tracer.Event) bool {
	if len(batch) == 0 {
		return true
	}
	s.mu.Lock()
	if s.ending || s.err.Load() != nil || int(s.head-s.tail)+len(batch) > len(s.ring) {
		s.mu.Unlock()
		s.dropEvents.Add(uint64(len(batch)))
		s.dropBatches.Add(1)
		return false
	}
	at := int(s.head % uint64(len(s.ring)))
	n := copy(s.ring[at:], batch)
	copy(s.ring, batch[n:])
	s.head += uint64(len(batch))
	s.mu.Unlock()
	s.signal()
	return true
}

// AttachEvents makes the sender's writer take events from src as well as
// from Send: the traced code writes them into src's ring itself, and they
// are encoded from there (no copy into the sender's ring; src counts what
// does not fit, which the caller adds with AddDropped). Attach before
// events are published; call Notify when some are.
func (s *AsyncSender) AttachEvents(src EventSource) {
	s.mu.Lock()
	s.src = src
	s.mu.Unlock()
}

// Notify wakes the writer to drain the attached source (never blocks).
func (s *AsyncSender) Notify() { s.signal() }

// Counters queues counter samples; like Send they are dropped (not counted
// as event drops) when capacity is exceeded.
func (s *AsyncSender) Counters(cs []tracer.Counter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending || len(s.counters)+len(cs) > len(s.ring) {
		return false
	}
	s.counters = append(s.counters, cs...)
	s.signal()
	return true
}

// Ack queues a Control frame (normally Op ControlAck) to rlktop.
func (s *AsyncSender) Ack(c *msg.Control) {
	p := AppendControl(nil, c)
	s.mu.Lock()
	s.queueFrame(TypeControl, 0, p)
	s.mu.Unlock()
	s.signal()
}

// Meta queues a Meta frame.
func (s *AsyncSender) Meta(kv []msg.KV) {
	p := AppendMeta(nil, kv)
	s.mu.Lock()
	s.queueFrame(TypeMeta, 0, p)
	s.mu.Unlock()
	s.signal()
}

// Controls returns the channel on which Control frames from rlktop arrive.
// It is closed when the connection's read side ends. If nobody reads it,
// the reading goroutine waits (the traced process is unaffected).
func (s *AsyncSender) Controls() <-chan msg.Control { return s.controls }

// AddDropped adds n records that the tracer itself dropped before they
// reached the sender (a full gotrace ring, CUPTI's dropped-record count) to
// the Events count sent in Drops frames, so that rlktop shows one total.
func (s *AsyncSender) AddDropped(n uint64) {
	if n > 0 {
		s.dropEvents.Add(n)
		s.signal()
	}
}

// Dropped returns the cumulative drop counts.
func (s *AsyncSender) Dropped() msg.Drops {
	return msg.Drops{Events: s.dropEvents.Load(), Batches: s.dropBatches.Load()}
}

// Sent returns the number of events written to the connection so far.
func (s *AsyncSender) Sent() uint64 { return s.sentEvents.Load() }

// Err returns the write error that stopped the sender, or nil.
func (s *AsyncSender) Err() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Flush waits until everything queued before the call was written, or the
// timeout passed, or the connection failed. It returns the write error, if
// any, or an error saying the timeout passed.
func (s *AsyncSender) Flush(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() { s.mu.Lock(); s.flushed.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	s.signal()
	s.mu.Lock()
	defer s.mu.Unlock()
	for (len(s.prio) > 0 || len(s.bye) > 0 || s.head != s.tail || len(s.counters) > 0 || s.pending > 0 || (s.src != nil && s.src.Pending() > 0)) && s.err.Load() == nil {
		if !time.Now().Before(deadline) {
			return errors.New("wire: flush timed out with frames still queued (reader too slow or gone)")
		}
		s.flushed.Wait()
	}
	return s.Err()
}

// Close queues a Bye frame, waits up to timeout for the queue to drain,
// stops the writer and closes conn when it is an io.Closer.
func (s *AsyncSender) Close(y msg.Bye, timeout time.Duration) error {
	p := AppendBye(nil, y)
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		return ErrClosed
	}
	s.ending = true
	s.bye = appendHeader(nil, TypeBye, 0, p)
	s.bye = append(s.bye, p...)
	s.mu.Unlock()
	err := s.Flush(timeout)
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.signal()
	if c, ok := s.conn.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	<-s.done
	return err
}

// writeLoop is the background goroutine that owns all writes to conn.
func (s *AsyncSender) writeLoop() {
	defer close(s.done)
	bw := bufio.NewWriterSize(s.conn, 256<<10)
	var (
		buf      []byte
		scratch  []byte
		lastDrop msg.Drops
		prio     []byte
		counters []tracer.Counter
	)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	fail := func(err error) {
		s.err.Store(&err)
		s.mu.Lock()
		s.prio, s.counters, s.pending, s.bye = nil, nil, 0, nil
		s.tail = s.head
		s.flushed.Broadcast()
		s.mu.Unlock()
	}
	write := func(t Type, payload []byte) error {
		buf = appendHeader(buf[:0], t, 0, payload)
		buf = append(buf, payload...)
		_, err := bw.Write(buf)
		return err
	}
	size := uint64(len(s.ring))
	for {
		select {
		case <-s.wake:
		case <-tick.C:
		}
		s.mu.Lock()
		closing := s.closing
		prio, s.prio = s.prio, prio[:0]
		counters, s.counters = s.counters, counters[:0]
		bye := s.bye
		s.bye = nil
		head, tail := s.head, s.tail
		src := s.src
		s.pending = len(prio) + len(counters) + len(bye)
		if src != nil {
			s.pending += src.Pending() // written once bw is flushed, below
		}
		s.mu.Unlock()
		if closing {
			return
		}
		if s.err.Load() != nil {
			continue
		}
		_, err := bw.Write(prio)
		// Events: ring[tail:head), in frames of at most maxEventsPerFrame,
		// split at the ring's end. The region is not overwritten until tail
		// advances below.
		for tail < head && err == nil {
			at := tail % size
			n := min(head-tail, size-at, maxEventsPerFrame)
			scratch = AppendEvents(scratch[:0], s.ring[at:at+n])
			if err = write(TypeEvents, scratch); err == nil {
				s.sentEvents.Add(n)
				tail += n
				s.mu.Lock()
				s.tail = tail
				s.mu.Unlock()
			}
		}
		// The attached source's events, from its own ring.
		if src != nil && err == nil {
			src.Drain(func(b []tracer.Event) {
				for len(b) > 0 && err == nil {
					n := min(len(b), maxEventsPerFrame)
					scratch = AppendEvents(scratch[:0], b[:n])
					if err = write(TypeEvents, scratch); err == nil {
						s.sentEvents.Add(uint64(n))
					}
					b = b[n:]
				}
			})
		}
		if err == nil && len(counters) > 0 {
			scratch = AppendCounters(scratch[:0], counters)
			err = write(TypeCounters, scratch)
		}
		if d := s.Dropped(); err == nil && d != lastDrop {
			err = write(TypeDrops, AppendDrops(scratch[:0], d))
			lastDrop = d
		}
		if err == nil && len(bye) > 0 {
			_, err = bw.Write(bye)
		}
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			fail(err)
			continue
		}
		s.mu.Lock()
		s.pending = 0
		s.flushed.Broadcast()
		s.mu.Unlock()
	}
}

// readLoop delivers Control frames from rlktop.
func (s *AsyncSender) readLoop() {
	defer close(s.controls)
	r := NewReader(s.conn)
	for {
		f, err := r.Next()
		if err != nil {
			return
		}
		if f.Type != TypeControl {
			continue
		}
		c, err := f.Control()
		if err != nil {
			continue
		}
		select {
		case s.controls <- c:
		case <-s.done:
			return
		}
	}
}
