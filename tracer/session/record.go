package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
)

// ErrNotRecording is returned by StopRecording when no recording runs.
var ErrNotRecording = errors.New("session: not recording")

// ErrRecording is returned by Record when a recording already runs.
var ErrRecording = errors.New("session: already recording (stop the current recording first)")

// RecordingInfo describes a running or finished recording.
type RecordingInfo struct {
	Path    string // set by RecordFile
	Started time.Time
	Bytes   int64 // compressed bytes written so far
	Frames  int64 // frames written
	Events  uint64
	Err     string // the write error that stopped the recording, "" none
}

// recorder re-encodes what the session receives into one wire stream with
// the session's string ids, gzip-compressed and flushed after every frame.
type recorder struct {
	cw      *countWriter
	zw      *gzip.Writer
	w       *wire.Writer
	strs    *tracer.Strings
	defined int // strs ids [1, defined) are in the recording
	ri      RecordingInfo
	err     error
	file    *os.File // closed by StopRecording when RecordFile opened it
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
	cw := &countWriter{w: w}
	zw, err := gzip.NewWriterLevel(cw, gzip.BestSpeed)
	if err != nil {
		return err
	}
	r := &recorder{cw: cw, zw: zw, w: wire.NewWriter(zw), strs: s.strs, defined: 1}
	r.w.Flags = wire.FlagRelayed
	r.ri.Started = s.opts.Now()
	for _, c := range s.children {
		if c.info.Connected && c.info.Hello.Source != "" {
			h := c.info.Hello
			r.hello(&h)
		}
	}
	r.meta(append([]wire.KV{
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

// RecordFile is Record into a new file at path (created with mode 0644,
// truncating any file there); StopRecording and Close close it.
func (s *Session) RecordFile(path string) error {
	f, err := os.Create(path)
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

// StopRecording writes the final Bye, ends the gzip stream (closing the
// file when RecordFile opened it) and returns the recording's figures.
func (s *Session) StopRecording() (RecordingInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec
	if r == nil {
		return RecordingInfo{}, ErrNotRecording
	}
	s.rec = nil
	s.version++
	if r.err == nil {
		r.done(r.w.Bye(wire.Bye{Reason: "recording stopped", ExitCode: -1}))
	}
	if r.err == nil {
		r.err = r.zw.Close()
	}
	if r.file != nil {
		if err := r.file.Close(); r.err == nil {
			r.err = err
		}
	}
	return r.info(), r.err
}

// Meta adds key/value pairs to the session's run record: written into the
// current recording at once and at the start of every later one.
func (s *Session) Meta(kv []wire.KV) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta = append(s.meta, kv...)
	if s.rec != nil {
		s.rec.meta(kv)
	}
}

func (r *recorder) info() RecordingInfo {
	ri := r.ri
	ri.Bytes = r.cw.n
	if r.err != nil {
		ri.Err = r.err.Error()
	}
	return ri
}

// done finishes a frame: count it and flush the compressor.
func (r *recorder) done(err error) {
	if r.err != nil {
		return
	}
	if err == nil {
		err = r.w.Flush()
	}
	if err != nil {
		r.err = err
		return
	}
	r.ri.Frames++
}

func (r *recorder) defineStrings() {
	for id := r.defined; id < r.strs.Len(); id++ {
		r.w.Define(tracer.StrID(id), r.strs.Get(tracer.StrID(id)))
	}
	r.defined = r.strs.Len()
}

func (r *recorder) hello(h *wire.Hello) {
	if r.err == nil {
		r.done(r.w.Hello(h))
	}
}

func (r *recorder) events(evs []tracer.Event) {
	if r.err != nil || len(evs) == 0 {
		return
	}
	r.defineStrings()
	r.done(r.w.Events(evs))
	r.ri.Events += uint64(len(evs))
}

func (r *recorder) counters(cs []tracer.Counter) {
	if r.err != nil || len(cs) == 0 {
		return
	}
	r.defineStrings()
	r.done(r.w.Counters(cs))
}

func (r *recorder) drops(total uint64) {
	if r.err == nil {
		r.done(r.w.Drops(wire.Drops{Events: total}))
	}
}

func (r *recorder) control(c *wire.Control) {
	if r.err == nil {
		c2 := *c
		c2.Flags = slices.Clone(c.Flags)
		r.done(r.w.Control(&c2))
	}
}

func (r *recorder) meta(kv []wire.KV) {
	if r.err == nil {
		r.done(r.w.Meta(kv))
	}
}
