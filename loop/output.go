package loop

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
)

// The child's stdout and stderr are files, not pipes. A pipe ties the
// child to rlktop: when rlktop dies (kill -9, an OOM kill) the child's next
// write gets EPIPE (Python: BrokenPipeError) or SIGPIPE (C, Go), and while
// rlktop is stopped (SIGSTOP, Ctrl-Z, a debugger) a full pipe blocks the
// child's write(). A regular file has neither failure: the child writes at
// disk speed whatever rlktop does, and rlktop tails the files.
//
// Each Start makes a private directory (os.MkdirTemp, mode 0700) holding
// "stdout" and "stderr", opened O_APPEND for the child. A tailer goroutine
// reads both every OutputPoll, splits them into lines, and feeds the
// stderr tail, Spec.Stdout / Spec.StderrCopy and the output ring. The
// directory is removed once the child has exited and its last bytes are
// read. If rlktop dies first, the directory stays, and the child's
// further output keeps landing there (Status.OutputDir names it).
//
// Bounded: bytes already read are released from the files with
// fallocate(FALLOC_FL_PUNCH_HOLE) every OutputPunchBytes, so disk use stays
// near OutputPunchBytes per stream while rlktop reads. Where punching is not
// supported the file is truncated once it holds OutputMaxBytes and rlktop
// has read all of it; a line written in the instant between rlktop's last
// read and the truncation is lost, and the ring says so. A backlog larger
// than OutputMaxBytes (rlktop stopped for a long time) is skipped down to
// its last OutputSkipKeep bytes, also said in the ring.

// Output tuning; see the comment above.
const (
	OutputPoll       = 50 * time.Millisecond
	OutputPunchBytes = 1 << 20  // bytes: release read bytes after this many
	OutputMaxBytes   = 64 << 20 // bytes: truncate (no punch) / skip backlog above this
	OutputSkipKeep   = 1 << 20  // bytes: what a skipped backlog keeps
	// OutputLines is how many lines the output ring keeps (both streams).
	OutputLines = 1000
	// MaxLineBytes cuts longer lines: the rest starts a new line.
	MaxLineBytes = 4096
)

// TailLines is how many stderr lines Status keeps.
const TailLines = 20

// outputLog is the Supervisor's output ring and stderr tail.
type outputLog struct {
	mu      sync.Mutex
	ring    []livestate.OutputLine // circular, len ≤ OutputLines
	start   int                    // index of the oldest line in ring
	seq     uint64                 // Seq of the newest line
	split   [3]lineSplitter
	tail    []string // last TailLines stderr lines
	sinks   [3]io.Writer
	sinkErr [3]bool
}

func newOutputLog() *outputLog { return &outputLog{} }

// reset starts a new child: unterminated lines and the stderr tail are
// dropped (the ring and its Seq go on).
func (o *outputLog) reset(stdout, stderr io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.split = [3]lineSplitter{}
	o.tail = nil
	o.sinks = [3]io.Writer{nil, stdout, stderr}
	o.sinkErr = [3]bool{}
}

// feed takes bytes the child wrote to stream st. Sink writes happen under
// the lock, in order; a sink that fails is not written again.
func (o *outputLog) feed(st livestate.Stream, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w := o.sinks[st]; w != nil && !o.sinkErr[st] {
		if _, err := w.Write(p); err != nil {
			o.sinkErr[st] = true
		}
	}
	now := time.Now()
	o.split[st].feed(p, func(line []byte) { o.pushLocked(st, string(line), now) })
}

// notice adds a line of rlktop's own to the ring.
func (o *outputLog) notice(text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pushLocked(livestate.Notice, "rlktop: "+text, time.Now())
}

func (o *outputLog) pushLocked(st livestate.Stream, text string, now time.Time) {
	o.seq++
	l := livestate.OutputLine{Seq: o.seq, Stream: st, Text: text, Time: now}
	if len(o.ring) < OutputLines {
		o.ring = append(o.ring, l)
	} else {
		o.ring[o.start] = l
		o.start = (o.start + 1) % len(o.ring)
	}
	if st == livestate.Stderr {
		o.tail = append(o.tail, text)
		if len(o.tail) > 2*TailLines {
			o.tail = append(o.tail[:0], o.tail[len(o.tail)-TailLines:]...)
		}
	}
}

func (o *outputLog) since(after uint64) (lines, partial []livestate.OutputLine) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.ring)
	for i := range n {
		l := o.ring[(o.start+i)%n]
		if l.Seq > after {
			lines = append(lines, l)
		}
	}
	for _, st := range []livestate.Stream{livestate.Stdout, livestate.Stderr} {
		if cur := o.split[st].cur; len(cur) > 0 {
			partial = append(partial, livestate.OutputLine{Stream: st, Text: string(cur)})
		}
	}
	return lines, partial
}

// stderrTail is the last TailLines stderr lines, the unterminated one
// included.
func (o *outputLog) stderrTail() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := append([]string(nil), o.tail...)
	if cur := o.split[livestate.Stderr].cur; len(cur) > 0 {
		out = append(out, string(cur))
	}
	if len(out) > TailLines {
		out = out[len(out)-TailLines:]
	}
	return out
}

// lineSplitter cuts a byte stream into lines: "\n" and "\r\n" end a line,
// a lone "\r" starts the current line over, MaxLineBytes cuts it.
type lineSplitter struct {
	cur []byte
	cr  bool // the last byte was '\r'
}

func (ls *lineSplitter) feed(p []byte, emit func([]byte)) {
	for _, b := range p {
		if ls.cr {
			ls.cr = false
			if b == '\n' {
				emit(ls.cur)
				ls.cur = ls.cur[:0]
				continue
			}
			ls.cur = ls.cur[:0]
		}
		switch b {
		case '\n':
			emit(ls.cur)
			ls.cur = ls.cur[:0]
		case '\r':
			ls.cr = true
		default:
			ls.cur = append(ls.cur, b)
			if len(ls.cur) >= MaxLineBytes {
				emit(ls.cur)
				ls.cur = ls.cur[:0]
			}
		}
	}
}

// outputFiles is one child's pair of output files and their tailer.
type outputFiles struct {
	dir   string
	w     [3]*os.File // the child's ends (closed in rlktop after Start)
	r     [3]*os.File // rlktop's read ends
	off   [3]int64    // bytes read so far
	freed [3]int64    // bytes released (punched) so far
	stuck [3]bool     // neither punching nor truncation works: stop trying
	log   *outputLog
	stop  chan struct{}
	done  chan struct{}
}

// openOutputFiles makes the run directory and both files.
func openOutputFiles(log *outputLog) (*outputFiles, error) {
	dir, err := os.MkdirTemp("", "rlktop-output-")
	if err != nil {
		return nil, fmt.Errorf("making the directory for the child's output: %w", err)
	}
	f := &outputFiles{dir: dir, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	for _, st := range []livestate.Stream{livestate.Stdout, livestate.Stderr} {
		p := filepath.Join(dir, st.String())
		w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			f.remove()
			return nil, fmt.Errorf("creating the child's %s file: %w", st, err)
		}
		f.w[st] = w
		// Read-write: hole punching needs a writable descriptor.
		r, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			f.remove()
			return nil, fmt.Errorf("opening the child's %s file: %w", st, err)
		}
		f.r[st] = r
	}
	return f, nil
}

// closeChildEnds closes rlktop's copies of the child's write ends (after
// the child started, or when it failed to).
func (f *outputFiles) closeChildEnds() {
	for i, w := range f.w {
		if w != nil {
			w.Close()
			f.w[i] = nil
		}
	}
}

// remove closes everything and deletes the directory.
func (f *outputFiles) remove() {
	f.closeChildEnds()
	for i, r := range f.r {
		if r != nil {
			r.Close()
			f.r[i] = nil
		}
	}
	os.RemoveAll(f.dir)
}

// run tails both files until finish is called, then reads what is left.
func (f *outputFiles) run() {
	defer close(f.done)
	buf := make([]byte, 64<<10)
	t := time.NewTicker(OutputPoll)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			f.drain(buf)
			return
		case <-t.C:
			f.drain(buf)
		}
	}
}

// finish stops the tailer after a last read, waits for it, and removes the
// files.
func (f *outputFiles) finish() {
	close(f.stop)
	<-f.done
	f.remove()
}

func (f *outputFiles) drain(buf []byte) {
	for _, st := range []livestate.Stream{livestate.Stdout, livestate.Stderr} {
		f.drainOne(st, buf)
	}
}

func (f *outputFiles) drainOne(st livestate.Stream, buf []byte) {
	r := f.r[st]
	fi, err := r.Stat()
	if err != nil {
		return
	}
	size := fi.Size()
	if size < f.off[st] { // truncated by someone else: start over
		f.off[st], f.freed[st] = 0, 0
	}
	if size-f.off[st] > OutputMaxBytes {
		skip := size - OutputSkipKeep - f.off[st]
		f.log.notice(fmt.Sprintf("skipped %d bytes of the child's %s (it wrote more than %d MiB while rlktop was not reading)", skip, st, OutputMaxBytes>>20))
		f.off[st] += skip
	}
	for f.off[st] < size {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-f.off[st])], f.off[st])
		if n > 0 {
			f.log.feed(st, buf[:n])
			f.off[st] += int64(n)
		}
		if err != nil {
			break
		}
	}
	f.release(st)
}

// release frees the bytes already read: punch them out, or truncate a
// file that is big and fully read where punching is not supported.
func (f *outputFiles) release(st livestate.Stream) {
	const block = 4096
	upto := f.off[st] &^ (block - 1)
	if f.stuck[st] || upto-f.freed[st] < OutputPunchBytes {
		return
	}
	err := punchHole(f.r[st], f.freed[st], upto-f.freed[st])
	if err == nil {
		f.freed[st] = upto
		return
	}
	if f.off[st] < OutputMaxBytes {
		return
	}
	// No hole punching: empty the file. O_APPEND makes the child's next
	// write land at the new end.
	if terr := f.r[st].Truncate(0); terr != nil {
		f.stuck[st] = true
		f.log.notice(fmt.Sprintf("cannot release the child's %s file (%v, %v); it grows on", st, err, terr))
		return
	}
	f.log.notice(fmt.Sprintf("the child's %s file reached %d MiB and was emptied (%v); a line written at that instant may be lost", st, OutputMaxBytes>>20, err))
	f.off[st], f.freed[st] = 0, 0
}
