// Package tracefile reads traces written by other tools (Kineto / Chrome
// trace-event JSON, rocprofv3, rocpd, rocprof, Nsight Systems) and rlktop's
// own recordings into tracer.Trace, and writes Chrome trace-event JSON.
//
// Formats are detected by content, never by file name: Open sniffs the first
// bytes (after gunzipping when the gzip magic 1f 8b is present) and hands the
// stream to the first format whose Sniff accepts it.
package tracefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/opmodel"
	"github.com/rlktop/rlktop/tracer/steps"
)

// ErrUnknownFormat is returned (wrapped in *Error) when no importer
// recognises a file.
var ErrUnknownFormat = errors.New("not a trace format rlktop knows")

// Error is a bad-input error: what was wrong and where.
type Error struct {
	Path   string // file
	Offset int64  // byte offset in the (uncompressed) stream; -1 unknown
	Line   int    // 1-based line for line formats; 0 unknown
	Field  string // field or column, "" when not about one field
	Msg    string // what was expected / found
	Hint   string // what the user can do; may be ""
	Err    error  // underlying error, may be nil
	// Uncompressed says that Offset counts bytes of a .gz input's
	// uncompressed data (set by Read), so that the message says so: the
	// offset is not one in the file as stored.
	Uncompressed bool
}

func (e *Error) Error() string {
	var b bytes.Buffer
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Offset >= 0 && e.Uncompressed {
		fmt.Fprintf(&b, " (byte %d of the uncompressed data)", e.Offset)
	} else if e.Offset >= 0 {
		fmt.Fprintf(&b, " (byte %d)", e.Offset)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Options tune reading.
type Options struct {
	// Progress, when non-nil, is called after every 8 MiB read from the
	// file with the bytes of the file read so far (compressed bytes for a
	// .gz) and the file's size, so read/size is the fraction done.
	Progress func(readBytes, fileSize int64)
	// FileSize and Gzipped are set by Read for the importers: the size of
	// the file as stored (bytes, compressed when Gzipped; 0 unknown), so
	// that an importer can pre-size its event array.
	FileSize int64
	Gzipped  bool
	// Own marks a recording rlktop itself has just written and reads
	// back (compare's, record's summary): trusted input, read without
	// the recording event limit, which bounds files of unknown origin.
	Own bool
	// OpModel gives kernels the FLOPs and bytes of the operators that
	// launched them, from the shapes the trace recorded (nil:
	// opmodel.Default()).
	OpModel *opmodel.Model
	// NoShapes ignores the shapes a trace recorded (no operator calls, no
	// modelled work): a long torch.profiler window with shapes is then
	// streamed (OpenStream) in parts like one without.
	NoShapes bool
	// PartWindow is the number of events past which OpenStream reads a
	// window in parts instead of holding it (0: DefaultPartWindow;
	// negative: every window is read in parts). The result is the same at
	// any size: tests set it small to take small traces through the parts.
	PartWindow int
	// Spill sizes what a window read in parts sorts and keeps on disk
	// (its intervals, its nesting records: tracer.SpillSizes; zero: the
	// defaults).
	Spill tracer.SpillSizes

	stream *kstream   // OpenStream's: Kineto events go window by window
	late   *kLate     // Read's: the Kineto importer leaves its nesting check to finishLate
	resync resyncMode // Open's further readings of a recording with damaged deflate data (resyncGzip)

	// workers parse a Kineto event array at once (0: one per core for a
	// large input, kineto_parallel.go; 1: one pass); chunk is their chunk
	// size (0: kParChunk). Tests set them.
	workers, chunk int
}

// Format is one importer.
type Format struct {
	Name string // "kineto", "rocprofv3-csv", …
	// Sniff reports whether head (up to 64 KiB of the uncompressed start of
	// the file; shorter for small files) looks like this format.
	Sniff func(head []byte) bool
	// Read parses the stream into a trace (Read, not the format, cuts its
	// steps and links it). path is for messages
	// (and for formats that must reopen the file, e.g. SQLite; they get
	// the uncompressed path). Read must not panic on any input.
	Read func(r io.Reader, path string, opts Options) (*tracer.Trace, error)
}

var formats []Format

// Register adds an importer. Called from init functions; earlier
// registrations are tried first.
func Register(f Format) { formats = append(formats, f) }

// Formats lists the registered importers' names in sniffing order.
func Formats() []string {
	var n []string
	for _, f := range formats {
		n = append(n, f.Name)
	}
	return n
}

// Open reads the trace at path in whatever supported format it holds.
// The returned trace has its steps cut (steps.ApplyTrace; Trace.StepRule
// says how) and is linked (tracer.Trace.Link), here for every importer. A trace with no
// kernel, memcpy or memset carries a warning naming the importer and what
// it found (events by kind, or the importer's own counts by table, category
// or process), so that an empty result is never silent.
// Errors are *Error values naming the file, offset and what was expected.
func Open(path string, opts Options) (*tracer.Trace, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f, path, size, opts)
	var ce flate.CorruptInputError
	if err != nil && errors.As(err, &ce) && opts.stream == nil {
		// The deflate data is damaged. A recording's frames carry their
		// own CRC-32C: read it again past the damage (resyncGzip), and
		// keep that reading if it is one.
		// Each way of restarting the decompressor (resyncMode) keeps
		// more of some damage; the reading that keeps the most events
		// is the one returned.
		for _, mode := range []resyncMode{resyncHistory, resyncLastBlock} {
			if _, serr := f.Seek(0, io.SeekStart); serr != nil {
				break
			}
			ro := opts
			ro.resync = mode
			if t2, err2 := Read(f, path, size, ro); t2 != nil && t2.Format == "rlktop" && (t == nil || len(t2.Events) > len(t.Events)) {
				t, err = t2, err2
			}
		}
	}
	return t, err
}

// OpenCause is why opening a file failed without the operation and path
// an *fs.PathError repeats ("no such file or directory", not "open
// /x: no such file or directory" after an Error that names /x already).
func OpenCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openFile opens path for Open and OpenStream: the file and its size
// (0 when it cannot be read), or an *Error saying it cannot be opened.
func openFile(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, &Error{Path: path, Offset: -1, Msg: "cannot open", Err: OpenCause(err)}
	}
	var size int64
	if st, err := f.Stat(); err == nil {
		if st.IsDir() {
			f.Close()
			return nil, 0, &Error{Path: path, Offset: -1, Msg: "is a directory, not a trace file",
				Hint: "give the trace files in it, e.g. " + filepath.Join(path, "*.json.gz")}
		}
		size = st.Size()
	}
	return f, size, nil
}

// Read is Open on an already open stream of size bytes (0 unknown).
// A gzip stream is read to its end and its trailer checked (CRC-32 and
// length, checkGzipEnd) after the format's reader is done, whatever the
// file's size.
func Read(r io.Reader, path string, size int64, opts Options) (t *tracer.Trace, err error) {
	cr := &countingReader{r: r, size: size, progress: opts.Progress}
	br := bufio.NewReaderSize(cr, 1<<20)
	magic, _ := br.Peek(2)
	var src io.Reader = br
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		var zr io.Reader
		if opts.resync != resyncNone {
			zr = newResyncGzip(br, opts.resync)
		} else {
			gr, zerr := gzip.NewReader(br)
			if zerr != nil {
				return nil, &Error{Path: path, Offset: 0, Msg: "gzip header unreadable", Err: zerr}
			}
			defer gr.Close()
			zr = gr
		}
		zc := &gzipCounter{r: zr}
		zsrc := bufio.NewReaderSize(zc, 1<<20)
		src = zsrc
		opts.Gzipped = true
		defer func() {
			t, err = checkGzipEnd(zsrc, zc, path, t, err)
			var e *Error
			if errors.As(err, &e) && e.Path == path {
				e.Uncompressed = true
			}
		}()
	}
	opts.FileSize = size
	sb := src.(*bufio.Reader)
	head, err := sb.Peek(64 << 10)
	// A truncated gzip stream (a recorder killed mid-write) still hands its
	// readable start to the formats; they report what is missing.
	// So does one whose trailer does not match (checkGzipEnd says so).
	truncated := (err == io.ErrUnexpectedEOF || errors.Is(err, gzip.ErrChecksum)) && len(head) > 0
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull && !truncated {
		e := &Error{Path: path, Offset: int64(len(head)), Msg: "cannot read the start of the file", Err: err}
		if opts.Gzipped {
			e.Hint = "the .gz file may be truncated or damaged; check it with `gzip -t`"
		}
		return nil, e
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, &Error{Path: path, Offset: 0, Msg: "file is empty", Hint: "expected a trace (Kineto/Chrome JSON, rocprofv3 CSV/JSON/SQLite, nsys SQLite, rlktop recording)"}
	}
	if bytes.HasPrefix(head, parquetMagic) {
		return nil, parquetError(path)
	}
	for _, f := range formats {
		if f.Sniff(head) {
			if opts.stream != nil {
				if f.Name != "kineto" {
					return nil, fmt.Errorf("%s: a %s file, %w: %w", path, f.Name, ErrOtherFormat, ErrNotStreamable)
				}
				// Steps and links were done window by window; the input
				// has GPU work (else it is not streamed).
				t, err := f.Read(sb, path, opts)
				if t != nil {
					warnDuplicateSteps(t, path)
					nameWarnings(t, path)
				}
				return t, err
			}
			late := &kLate{}
			opts.late = late
			t, err := f.Read(sb, path, opts)
			if t != nil {
				finishLate(t, late)
				warnDuplicateSteps(t, path)
				nameWarnings(t, path)
			}
			if err != nil {
				return t, err
			}
			checkGPUWork(t)
			if n := t.CPUOpKernels(); n > 0 {
				t.Link()
				// A CPU run that says so (expectedCPUOnly) needs no
				// warning: the report's header says the rows are CPU
				// operators.
				if !expectedCPUOnly(t) {
					t.Warn(fmt.Sprintf("%s: no GPU work: the kernel tables show its CPU operators by self time (%d operator calls)", path, n))
				}
			}
			assignWork(t, opts)
			return t, nil
		}
	}
	if e := unknownCSV(head, path); e != nil {
		return nil, e
	}
	return nil, &Error{Path: path, Offset: 0, Msg: "it starts with " + quoteShort(string(head[:min(len(head), quoteMax)])), Err: ErrUnknownFormat,
		Hint: KnownFormats}
}

// parquetMagic opens (and ends) every Parquet file (Apache Parquet's file
// format: "PAR1" at byte 0 and in the last 4 bytes).
var parquetMagic = []byte("PAR1")

// parquetError says that a Parquet file is what rlktop exports (export
// --format parquet), not an input, and what reads it.
func parquetError(path string) *Error {
	return &Error{Path: path, Offset: -1,
		Msg: "a Parquet file: Parquet is rlktop's export format (rlktop export --format parquet), not an input it reads",
		Hint: "query it with DuckDB (SELECT category, sum(dur_ns) FROM '" + path + "' GROUP BY 1), Polars or pandas; " +
			"rlktop report, open and export read the trace files it was exported from"}
}

// KnownFormats says, for people, what rlktop reads (the hint of an
// unknown file; README's command table says the same).
const KnownFormats = "rlktop reads Kineto / Chrome trace JSON (.json, .json.gz: torch.profiler, HTA), " +
	"rlktop recordings, Nsight Systems SQLite exports (nsys export --type sqlite) and `nsys stats` CSV, " +
	"rocprofv3 CSV, JSON and rocpd SQLite, rocprof v1/v2 CSV, results.json and results.db"

// nameWarnings prefixes "path: " to each of t's warnings that does not
// name the file, so that every importer's warning (and the step and link
// rules' ones) says which input it is about when several are read. The
// importers name it themselves; this catches the rest.
func nameWarnings(t *tracer.Trace, path string) {
	for i, w := range t.Warnings {
		if !strings.Contains(w, path) {
			t.Warnings[i] = path + ": " + w
		}
	}
}

// assignWork gives the kernels of a trace with recorded shapes their
// modelled FLOPs and bytes (opmodel.Model.Assign).
func assignWork(t *tracer.Trace, opts Options) {
	if len(t.Calls) < 2 {
		return
	}
	m := opts.OpModel
	if m == nil {
		m = opmodel.Default()
	}
	m.Assign(t)
	opmodel.Retype(t.Events, t.Strings)
	nameWarnings(t, t.Path)
}

// finish runs what every importer's trace needs, once, here: the step rule
// of files (steps.ApplyTrace; a recording's steps were cut when it was
// recorded) and the one linking rule (tracer.Trace.Link).
func finish(t *tracer.Trace) { finishLate(t, nil) }

// finishLate is finish for a trace whose importer left its nesting check
// to late (kLate): the check runs on a core of its own beside Link, and
// its warning, with the importer's warnings after it, is added once both
// are done, in the order the importer would have added them. Both only
// read what the other writes not: the check reads the CPU intervals (Kind,
// Start, Dur, PID, TID), Link writes GPU events' Ctx and Call and the
// calls' parents. The step rule runs first: it turns ranges into steps and
// back, which the check tells apart no more than Link's ranges do.
func finishLate(t *tracer.Trace, late *kLate) {
	if t.Format == "rlktop" {
		t.StepRule = steps.RuleSourceSteps
	} else {
		steps.ApplyTrace(t)
	}
	if late == nil || !late.pending {
		t.Link()
		return
	}
	var n int
	var a, b *tracer.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, a, b, _ = nestingScan(t.Events)
	}()
	t.Link()
	<-done
	if n > 0 {
		t.Warn(nestingWarning(late.path, n, t.Strings, a, b))
	}
	for _, w := range late.after {
		t.Warn(w)
	}
	late.pending, late.after = false, nil
}

type countingReader struct {
	r        io.Reader
	n, size  int64
	last     int64
	progress func(int64, int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && c.n-c.last >= 8<<20 {
		c.last = c.n
		c.progress(c.n, c.size)
	}
	return n, err
}
