package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/internal/fileout"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// ErrNotRecording is returned by StopRecording when no recording runs.
var ErrNotRecording = errors.New("session: not recording")

// ErrRecording is returned by Record when a recording already runs.
var ErrRecording = errors.New("session: already recording (stop the current recording first)")

// recorder re-encodes what the session receives into one wire stream with
// the session's string ids. Frames are encoded under the session lock into
// a buffer and handed to a goroutine that compresses (gzip), writes and
// flushes them one group at a time, so a slow disk never holds the session
// lock. If more than maxRecQueue bytes wait, the recording stops with an
// error rather than stall ingestion.
type recorder struct {
	w       *wire.Writer // encodes into buf
	buf     bytes.Buffer
	strs    *tracer.Strings
	defined int // strs ids [1, defined) are in the recording
	// pyFrames, pyNodes: the session's Python frames and stacks written so far.
	pyFrames, pyNodes int
	ri                livestate.RecordingInfo
	err               error // stops the recording (session side)
	closed            bool

	q      chan []byte
	queued atomic.Int64 // bytes waiting in q
	bytes  atomic.Int64 // compressed bytes written
	werr   atomic.Pointer[error]
	done   chan struct{}
	file   *os.File // closed by StopRecording when RecordFile opened it
	zw     *gzip.Writer
}

// stopTimeout bounds how long StopRecording waits for the disk.
const stopTimeout = 30 * time.Second

// maxRecQueue bounds the encoded bytes waiting for the disk (64 MiB).
const maxRecQueue = 64 << 20

// errRecSlow stops a recording whose disk cannot keep up.
var errRecSlow = errors.New("recording stopped: the disk does not keep up (64 MiB waiting)")

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (r *recorder) run() {
	defer close(r.done)
	for b := range r.q {
		if r.werr.Load() == nil {
			_, err := r.zw.Write(b)
			if err == nil {
				err = r.zw.Flush()
			}
			if err != nil {
				r.werr.Store(&err)
			}
		}
		r.queued.Add(-int64(len(b)))
	}
	if r.werr.Load() == nil {
		if err := r.zw.Close(); err != nil {
			r.werr.Store(&err)
		}
	}
}

// Record starts teeing everything the session receives from now on to w as
// a recording (see tracer/wire FORMAT.md): the hellos of the children
// connected now and later (flagged FlagRelayed), the session's meta
// (with recording.start_ns, CLOCK_REALTIME ns, and recording.source), then
// strings, events (host CLOCK_REALTIME ns, the children's pids), counters,
// drop totals and control acks, each frame compressed and flushed at once so
// that a killed recorder leaves a file readable up to its last whole frame.
// w is not closed by the session. A write error stops the recording; it
// shows in State.Recording.Err.
func (s *Session) Record(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		return ErrRecording
	}
	r := &recorder{strs: s.strs, defined: 1, q: make(chan []byte, 4096), done: make(chan struct{})}
	zw, err := gzip.NewWriterLevel(&countWriter{w: w, n: &r.bytes}, gzip.BestSpeed)
	if err != nil {
		return err
	}
	r.zw = zw
	r.w = wire.NewWriter(&r.buf)
	r.w.Flags = wire.FlagRelayed
	go r.run()
	r.ri.Started = s.opts.Now()
	for _, c := range s.children {
		if c.info.Connected && c.info.Hello.Source != "" {
			h := c.info.Hello
			r.hello(&h)
		}
	}
	r.meta(append([]msg.KV{
		{Key: "recording.start_ns", Value: strconv.FormatInt(r.ri.Started.UnixNano(), 10)},
		{Key: "recording.source", Value: s.opts.Source},
	}, s.meta...))
	if d := s.droppedLocked(); d > 0 {
		r.drops(d)
	}
	s.rec = r
	s.version++
	return r.err
}

// RecordFile is Record into a new file at path, created with mode 0644;
// StopRecording and Close close it. Anything already at path, a symbolic
// link included, is an error (O_EXCL, O_NOFOLLOW): a planted link or file
// is never written through; the caller removes an old file it may replace.
// A character device or FIFO at path (/dev/null, a pipe to a reader) is
// written in place; a FIFO nobody reads is an error, not a wait.
func (s *Session) RecordFile(path string) error {
	var f *os.File
	var err error
	if fi, lerr := os.Lstat(path); lerr == nil && fileout.IsNode(fi) {
		f, err = fileout.OpenNode(path, true)
	} else {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	}
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := s.Record(f); err != nil {
		f.Close()
		return err
	}
	s.mu.Lock()
	if s.rec != nil {
		s.rec.file = f
		s.rec.ri.Path = path
	}
	s.mu.Unlock()
	return nil
}

// StopRecording writes the final Bye, waits for everything queued to be
// compressed and written, ends the gzip stream (closing the file when
// RecordFile opened it) and returns the recording's figures.
func (s *Session) StopRecording() (livestate.RecordingInfo, error) {
	s.mu.Lock()
	r := s.rec
	if r == nil {
		s.mu.Unlock()
		return livestate.RecordingInfo{}, ErrNotRecording
	}
	s.rec = nil
	s.version++
	if r.err == nil {
		r.done1(r.w.Bye(msg.Bye{Reason: "recording stopped", ExitCode: -1}))
	}
	r.closed = true
	close(r.q)
	s.mu.Unlock()
	select {
	case <-r.done:
	case <-time.After(stopTimeout):
		return r.info(), fmt.Errorf("recording: the disk has not taken the last %d bytes after %v; giving up (the file may end early but is readable)", r.queued.Load(), stopTimeout)
	}
	if r.file != nil {
		if err := r.file.Close(); err != nil && r.werr.Load() == nil {
			r.werr.Store(&err)
		}
	}
	ri := r.info()
	if r.err != nil {
		return ri, r.err
	}
	if p := r.werr.Load(); p != nil {
		return ri, *p
	}
	return ri, nil
}

// Meta adds key/value pairs to the session's run record: written into the
// current recording at once and at the start of every later one.
func (s *Session) Meta(kv []msg.KV) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta = append(s.meta, kv...)
	if s.rec != nil {
		s.rec.meta(kv)
	}
}

func (r *recorder) info() livestate.RecordingInfo {
	ri := r.ri
	ri.Bytes = r.bytes.Load()
	if r.err != nil {
		ri.Err = r.err.Error()
	} else if p := r.werr.Load(); p != nil {
		ri.Err = (*p).Error()
	}
	return ri
}

// done1 finishes a frame group: hand the encoded bytes to the writer
// goroutine (s.mu held).
func (r *recorder) done1(err error) {
	if r.err != nil || r.closed {
		return
	}
	if err == nil {
		if p := r.werr.Load(); p != nil {
			err = *p
		}
	}
	if err == nil && r.queued.Load()+int64(r.buf.Len()) > maxRecQueue {
		err = errRecSlow
	}
	if err != nil {
		r.err = err
		r.buf.Reset()
		return
	}
	b := bytes.Clone(r.buf.Bytes())
	r.buf.Reset()
	r.queued.Add(int64(len(b)))
	select {
	case r.q <- b:
		r.ri.Frames++
	default:
		r.queued.Add(-int64(len(b)))
		r.err = errRecSlow
	}
}

func (r *recorder) defineStrings() {
	for id := r.defined; id < r.strs.Len(); id++ {
		r.w.Define(tracer.StrID(id), r.strs.Get(tracer.StrID(id)))
	}
	r.defined = r.strs.Len()
}

func (r *recorder) hello(h *msg.Hello) {
	if r.err == nil {
		r.done1(r.w.Hello(h))
	}
}

func (r *recorder) events(evs []tracer.Event) {
	if r.err != nil || len(evs) == 0 {
		return
	}
	r.defineStrings()
	r.done1(r.w.Events(evs))
	r.ri.Events += uint64(len(evs))
	for i := range evs {
		if evs[i].Kind == tracer.KindStep {
			r.ri.Steps++
		}
	}
}

func (r *recorder) counters(cs []tracer.Counter) {
	if r.err != nil || len(cs) == 0 {
		return
	}
	r.defineStrings()
	r.done1(r.w.Counters(cs))
}

func (r *recorder) drops(total uint64) {
	if r.err == nil {
		r.done1(r.w.Drops(msg.Drops{Events: total}))
	}
}

func (r *recorder) control(c *msg.Control) {
	if r.err == nil {
		c2 := *c
		c2.Flags = slices.Clone(c.Flags)
		r.done1(r.w.Control(&c2))
	}
}

func (r *recorder) meta(kv []msg.KV) {
	if r.err == nil {
		r.done1(r.w.Meta(kv))
	}
}
