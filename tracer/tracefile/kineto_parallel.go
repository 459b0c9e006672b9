package tracefile

import (
	"bytes"
	"io"
	"runtime"

	"github.com/rlktop/rlktop/tracer/opmodel"
)

// Reading one large event array on every core.
//
// The array is cut into chunks of about kParChunk bytes, each ending just
// before an object that follows a comma ("…},{"…"), a guess at an event's
// start; workers parse the chunks' events with the one tokenizer and
// event parser (parseEvent) into kev records, and this goroutine records
// them (record: interning, ids, B/E matching, warnings, the stream's
// windows) in file order, so that what is recorded, and every message,
// is what reading the array in one pass gives. A chunk whose first byte
// was no event start shows in the chunk before it: that one does not end
// exactly at the cut after a whole event and its comma. Then, and at the
// first malformed event, at the array's end and at the end of the input,
// the rest (the chunk from where its worker stopped, the chunks read
// ahead, the input not yet read) is read in one pass as before
// (eventsFrom). Memory: the chunks in flight and their records (about
// 2×parsers+1 chunks of kParChunk), whatever the array's size.

// kParChunk is the size of a chunk; kParMin the input size (uncompressed
// estimate) from which the array is read in parallel.
const (
	kParChunk = 1 << 20
	kParMin   = 16 << 20
)

// kparEvent is one event a worker parsed: its fields and first byte.
type kparEvent struct {
	ev    kev
	start int64
}

// kparChunk is one chunk of the event array and what its worker made of
// it.
type kparChunk struct {
	buf  []byte
	mem  []byte // buf's whole array, used again once the chunk is recorded
	base int64  // stream offset of buf[0]
	evs  []kparEvent
	// stop is the stream offset where the worker stopped; sepDue whether
	// a ',' or ']' is due there. The chunk is clean when stop is its end
	// with no separator due; otherwise the array is read on from stop in
	// one pass.
	stop   int64
	sepDue bool
	done   chan struct{}
}

func (c *kparChunk) clean() bool { return c.stop == c.base+int64(len(c.buf)) && !c.sepDue }

// parWorkers is how many goroutines read an input of the given options,
// the reading one included (1: one pass); the others parse chunks while
// the reading one records. With more than one core there is a parser per
// core besides the reading one: recording takes about 60% of a parser's
// time (a CPU profile of BenchmarkKinetoParallel), so a reading goroutine that had
// a core of its own left it idle much of the time (2 cores: 411 MB/s with
// one parser, 495 MB/s with two). Not so for the streamed windows, whose
// reading goroutine has the windows' work too: there the extra parser
// saved no time and cost 17 MB of the 100 MB they keep to.
func parWorkers(opts Options) int {
	n := opts.workers
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
		if n > 1 && opts.stream == nil {
			n++
		}
		size := opts.FileSize
		if opts.Gzipped {
			size *= 10
		}
		if size < kParMin {
			n = 1
		}
	}
	return n
}

// parse parses the chunk's events (run by a worker) into c.evs, which
// it takes from free when there is one.
func (c *kparChunk) parse(path string, free chan []kparEvent, noShapes bool, model *opmodel.Model) {
	defer close(c.done)
	select {
	case c.evs = <-free:
	default:
		c.evs = make([]kparEvent, 0, len(c.buf)/256)
	}
	d := &kdec{s: &jscan{buf: c.buf, end: len(c.buf), base: c.base, keep: -1, eof: true}, path: path, noShapes: noShapes, model: model}
	b := c.buf
	i := 0
	sepDue := false
	stop := func(at int, due bool) { c.stop, c.sepDue = c.base+int64(at), due }
	for {
		for i < len(b) && b[i] <= ' ' {
			i++
		}
		if i == len(b) {
			stop(i, sepDue)
			return
		}
		ch := b[i]
		if ch == ']' {
			stop(i, sepDue)
			return
		}
		if sepDue {
			if ch != ',' {
				stop(i, true)
				return
			}
			i++
			for i < len(b) && b[i] <= ' ' {
				i++
			}
			if i == len(b) {
				stop(i, false)
				return
			}
			if b[i] == ']' {
				stop(i, false)
				return
			}
		}
		if b[i] != '{' {
			stop(i, false)
			return
		}
		start := c.base + int64(i)
		w := kwin{b: b, i: i, base: c.base}
		// Parsed in place, into the chunk's next record (parseEvent
		// clears it, keeping its nums' array): a kev is 400 bytes, and
		// copying each one in and out of a record was a tenth of the
		// parse's time.
		if n := len(c.evs); n < cap(c.evs) {
			c.evs = c.evs[:n+1]
		} else {
			c.evs = append(c.evs, kparEvent{})
		}
		slot := &c.evs[len(c.evs)-1]
		slot.start = start
		d.ev = &slot.ev
		if err := d.parseEvent(&w, start); err != nil {
			c.evs = c.evs[:len(c.evs)-1]
			stop(i, false) // read again in one pass: the same error, or the event whole
			return
		}
		i = w.i
		sepDue = true
	}
}

// eventsParallel reads the event array whose '[' was just consumed with
// workers goroutines in all: this one reading and recording, the others
// parsing chunks (see above).
func (d *kdec) eventsParallel(workers int) error {
	s := d.s
	chunkSize := kParChunk
	if d.parChunk > 0 {
		chunkSize = d.parChunk
	}
	// The bytes read but not yet in a chunk; the window's, first.
	carry := append([]byte(nil), s.buf[s.pos:s.end]...)
	base := s.base + int64(s.pos)
	readErr := s.rerr
	eof := s.eof || readErr != nil
	// Chunks in flight: two per parser (one parsed, one waiting) and the
	// one being recorded; more made the streamed path's memory grow, not
	// its speed.
	parsers := max(workers-1, 1)
	jobs := make(chan *kparChunk, 2*parsers+1)
	defer close(jobs)
	// Chunks' buffers and records are used again once recorded.
	freeEvs := make(chan []kparEvent, cap(jobs)+parsers)
	var freeBufs [][]byte
	for range parsers {
		go func() {
			for c := range jobs {
				c.parse(d.path, freeEvs, d.noShapes, d.model)
			}
		}()
	}
	var pending []*kparChunk
	newBuf := func(n int) []byte {
		if k := len(freeBufs); k > 0 && cap(freeBufs[k-1]) >= n {
			b := freeBufs[k-1]
			freeBufs = freeBufs[:k-1]
			return b[:0]
		}
		return make([]byte, 0, max(n, chunkSize+chunkSize/2))
	}
	next := func() *kparChunk {
		// Read until the block holds a cut past its first byte, or the
		// input ends.
		buf := carry
		for {
			cut := -1
			if len(buf) > chunkSize/2 || eof {
				cut = kCut(buf)
			}
			if cut > 0 || eof || len(buf) >= 16*chunkSize {
				if cut <= 0 {
					cut = len(buf)
				}
				c := &kparChunk{buf: buf[:cut:cut], mem: buf, base: base, done: make(chan struct{})}
				carry = append(newBuf(len(buf)-cut+chunkSize), buf[cut:]...)
				base += int64(cut)
				return c
			}
			if cap(buf)-len(buf) < chunkSize/2 {
				buf = append(newBuf(len(buf)+chunkSize), buf...)
			}
			n, err := io.ReadAtLeast(s.r, buf[len(buf):cap(buf)], 1)
			buf = buf[:len(buf)+n]
			if err != nil {
				eof = true
				if err != io.EOF {
					readErr = err
				}
			}
		}
	}
	idx := 0
	for {
		for len(pending) < cap(jobs) && (len(carry) > 0 || !eof) {
			c := next()
			pending = append(pending, c)
			jobs <- c
		}
		c := pending[0]
		<-c.done
		pending = pending[1:]
		// Record the chunk's events against its bytes.
		s.buf, s.pos, s.end, s.base, s.keep = c.buf, 0, len(c.buf), c.base, -1
		for k := range c.evs {
			d.ev = &c.evs[k].ev // read in place (no copy); back to evOwn below
			if err := d.record(c.evs[k].start); err != nil {
				d.ev = &d.evOwn
				return err
			}
			d.nEvents++
			idx++
		}
		d.ev = &d.evOwn
		last := len(pending) == 0 && len(carry) == 0 && eof
		if c.clean() && !last {
			select {
			case freeEvs <- c.evs[:0]:
			default:
			}
			freeBufs = append(freeBufs, c.mem)
			continue
		}
		// Read on in one pass from where the worker stopped: the rest of
		// this chunk, the chunks read ahead, then the input.
		rest := c.buf[c.stop-c.base:]
		for _, p := range pending {
			rest = append(rest, p.buf...)
		}
		rest = append(rest, carry...)
		win := make([]byte, len(rest)+64<<10)
		copy(win, rest)
		s.buf, s.pos, s.end, s.base, s.keep = win, 0, len(rest), c.stop, -1
		s.eof, s.rerr = eof && readErr == nil, readErr
		return d.eventsFrom(idx, c.sepDue)
	}
}

// kCut is where a chunk of b ends: at the last '{' that follows a ','
// (whitespace between), before which the chunk may end after an event;
// -1 when b has none.
func kCut(b []byte) int {
	for end := len(b); ; {
		i := bytes.LastIndex(b[:end], []byte(`{"`))
		if i <= 0 {
			return -1
		}
		j := i - 1
		for j >= 0 && b[j] <= ' ' {
			j--
		}
		if j >= 0 && b[j] == ',' {
			return i
		}
		end = i
	}
}
