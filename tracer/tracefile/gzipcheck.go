package tracefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
)

// checkGzipEnd reads a gzip input to its end after the format's reader
// returned (importers may stop at their last record, and gzip checks a
// member's CRC-32 and length only at its end) and turns a failed check into
// an error. zsrc is the buffered decompressed stream the format read, zc
// counts the decompressed bytes.
//
//   - A CRC-32 or length mismatch is an *Error saying how many
//     decompressed bytes were read: the damage can be anywhere in them, so
//     the trace is dropped, except for rlktop recordings, whose frames
//     carry their own CRC-32 (all of which matched) and which keep it.
//   - A stream that ends without its trailer (cut after the last record)
//     keeps the trace with a warning saying it is unverified (none for a
//     recording: a killed recorder always leaves one so, and its reader
//     warns about the missing Bye frame).
//   - Data that is not gzip after the last member (two writes into one
//     file, a cut rewrite) is ignored with a warning, as after a JSON
//     document.
//   - When the format itself failed, its error gets a hint if the gzip
//     stream is cut or damaged, so a cut file is not called a format error
//     alone.
func checkGzipEnd(zsrc *bufio.Reader, zc *gzipCounter, path string, t *tracer.Trace, err error) (*tracer.Trace, error) {
	_, derr := io.Copy(io.Discard, zsrc)
	if zc.trailing && t != nil {
		t.Warn(fmt.Sprintf("%s: data after the end of the gzip stream (after %d decompressed bytes) ignored", path, zc.n))
	}
	if err != nil {
		var e *Error
		if derr != nil && errors.As(err, &e) && !errors.Is(err, derr) {
			e.Hint = gzipJoinHint(e.Hint, gzipTrouble(derr, zc.n))
		}
		return t, err
	}
	if t == nil || derr == nil {
		return t, err
	}
	e := &Error{Path: path, Offset: zc.n, Err: derr}
	switch {
	case errors.Is(derr, gzip.ErrChecksum):
		e.Msg = fmt.Sprintf("gzip check failed (CRC-32 or length) after %d decompressed bytes: the data is damaged somewhere in them", zc.n)
		if t.Format != "rlktop" {
			e.Hint = "nothing was kept: any figure could be wrong; check the file with `gzip -t` and copy it again"
			return nil, e
		}
		e.Hint = "every recording frame's own CRC-32 matched, so what was read is kept"
	case errors.Is(derr, io.ErrUnexpectedEOF):
		// The format read all it needed; only the check is missing. A
		// recording always ends so when its recorder is killed (its
		// reader says so, and its frames carry their own CRC-32).
		if t.Format != "rlktop" {
			t.Warn(fmt.Sprintf("%s: the gzip stream ends without its trailer after %d decompressed bytes: what was read is kept but unverified (the file was cut or not completely written)", path, zc.n))
		}
		return t, nil
	default:
		e.Msg = fmt.Sprintf("gzip data unreadable after %d decompressed bytes", zc.n)
		e.Hint = "what was read before is kept"
	}
	return t, e
}

// gzipCounter counts the decompressed bytes read and keeps the first
// error other than io.EOF, returning it to every later Read (the gzip
// reader reports a checksum mismatch once, then io.EOF).
type gzipCounter struct {
	r        io.Reader
	n        int64
	err      error
	trailing bool // data that is not gzip after the last member
}

func (c *gzipCounter) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if errors.Is(err, gzip.ErrHeader) {
		// The reader looks for a next member only after a whole one
		// (its CRC-32 checked): what follows is not gzip. Like data after
		// a JSON document, it ends the input and is warned about
		// (checkGzipEnd), not an error.
		c.trailing = true
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// gzipTrouble says what a failed read to the end of a gzip stream means.
func gzipTrouble(derr error, n int64) string {
	switch {
	case errors.Is(derr, gzip.ErrChecksum):
		return fmt.Sprintf("the gzip check (CRC-32 or length) also failed after %d decompressed bytes: the file is damaged", n)
	case errors.Is(derr, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the gzip stream is cut after %d decompressed bytes: the file was not completely written", n)
	}
	return fmt.Sprintf("the gzip data is unreadable after %d decompressed bytes: %v", n, derr)
}

func gzipJoinHint(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
