package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// jscan is the sliding window of a streaming JSON scan. It never builds a
// document tree: callers walk objects key by key, read the scalars they
// need as spans of the window and skip everything else. Tokens are read by
// one tokenizer, kwin (below), over the window's complete bytes; when a
// token or event runs off the window's end, the window is refilled (keeping
// its start) and it is read again.
//
// Positions handed out are absolute byte offsets in the (uncompressed)
// stream, so they stay meaningful when the window slides. Data from index
// keep on is never discarded by a refill, so spans at or after keep remain
// readable (via bytes) until keep is moved; the window grows when one kept
// region is larger than it, up to max bytes.
type jscan struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread index in buf
	end  int   // buf[:end] holds data
	base int64 // stream offset of buf[0]
	keep int   // index from which data must survive a refill; -1 none
	max  int   // largest window allowed
	eof  bool  // r returned io.EOF
	rerr error // r returned another error (truncated gzip, I/O)

	brackets []byte // reused bracket stack of kwin.skip
}

// kErrTooLarge is set as rerr when a single event (or header value) does not
// fit in the largest window.
var kErrTooLarge = errors.New("a single JSON value is larger than the 256 MiB limit")

// kErrJSON is a syntax problem; the caller wraps it with offset and field.
type kErrJSON struct {
	off      int64
	expected string
	found    string
}

func (e *kErrJSON) Error() string {
	if e.found == "" {
		return "expected " + e.expected
	}
	return "expected " + e.expected + ", found " + e.found
}

// kErrEOF says the stream ended (or failed) where more JSON was needed.
type kErrEOF struct {
	off  int64
	what string
	rerr error // non-nil when a read error, not a clean EOF, ended it
}

func (e *kErrEOF) Error() string { return "the file ends inside " + e.what }

// kWindow is the window size a scanner grows to on large inputs: reads
// that large go straight past a 1 MiB bufio.Reader into the window, saving
// a copy.
const kWindow = 4 << 20

// newScan returns a scanner with a 64 KiB window that grows to kWindow as
// the input turns out large (and beyond, up to max, for one huge value).
func newScan(r io.Reader) *jscan {
	return &jscan{r: r, buf: make([]byte, 64<<10), keep: -1, max: 256 << 20}
}

// off returns the absolute offset of the next unread byte.
func (s *jscan) off() int64 { return s.base + int64(s.pos) }

// bytes returns the window bytes of the absolute span [a,b). The span must
// lie at or after keep (or have been read since the last refill).
func (s *jscan) bytes(a, b int64) []byte {
	return s.buf[a-s.base : b-s.base]
}

// fill reads more data, sliding or growing the window. It reports whether
// new bytes arrived.
func (s *jscan) fill() bool {
	if s.eof || s.rerr != nil {
		return false
	}
	from := s.pos
	if s.keep >= 0 && s.keep < from {
		from = s.keep
	}
	if from > 0 {
		n := copy(s.buf, s.buf[from:s.end])
		s.base += int64(from)
		s.pos -= from
		s.end = n
		if s.keep >= 0 {
			s.keep -= from
		}
	}
	if s.end == len(s.buf) || len(s.buf) < kWindow {
		// Grow when full, and up to kWindow anyway: small inputs get a
		// small window, large ones reach the 4 MiB that reads straight
		// past the bufio.Reader.
		if len(s.buf) >= s.max {
			s.rerr = kErrTooLarge
			return false
		}
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for tries := 0; ; tries++ {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			if err == io.EOF {
				s.eof = true
			} else {
				s.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
		if tries > 100 {
			s.rerr = io.ErrNoProgress
			return false
		}
	}
}

func (s *jscan) eofErr(what string) error {
	return &kErrEOF{off: s.off(), what: what, rerr: s.rerr}
}

// ws skips whitespace and returns the next byte without consuming it;
// ok is false at the end of the stream. The common case (no whitespace)
// is inlined.
func (s *jscan) ws() (byte, bool) {
	if s.pos < s.end {
		if c := s.buf[s.pos]; c > ' ' {
			return c, true
		}
	}
	return s.wsSlow()
}

func (s *jscan) wsSlow() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c > ' ' {
				return c, true
			}
			s.pos++
		}
		if !s.fill() {
			return 0, false
		}
	}
}

func kIsNumByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// Value kinds returned by value.
const (
	kvString = 's'
	kvNumber = 'n'
	kvTrue   = 't'
	kvFalse  = 'f'
	kvNull   = 'z'
	kvObject = '{'
	kvArray  = '['
)

// value reads the value at the next non-space byte with the importer's
// one JSON tokenizer (kwin.value, restarted on a refilled window until the
// value is whole): strings and numbers (NaN, Infinity, -Infinity too:
// Python's json writes them) return their span; objects and arrays are
// skipped (brackets matched, strings respected) and their span covers the
// whole value, which must fit in the window (max bytes).
func (s *jscan) value() (kind byte, a, b int64, esc bool, err error) {
	if _, ok := s.ws(); !ok {
		return 0, 0, 0, false, s.eofErr("a value")
	}
	if s.keep < 0 {
		s.keep = s.pos
		defer func() { s.keep = -1 }()
	}
	for {
		w := kwin{b: s.buf[:s.end], i: s.pos, base: s.base, eof: s.eof}
		k, wa, wb, e, err := w.value(&s.brackets)
		if err == errKMore {
			if s.fill() || (s.eof && !w.eof) { // once more at the end: a number may end there
				continue
			}
			return 0, 0, 0, false, s.eofErr("a value")
		}
		if err != nil {
			return 0, 0, 0, false, err
		}
		s.pos = w.i
		return k, s.base + int64(wa), s.base + int64(wb), e, nil
	}
}

// bom consumes a UTF-8 byte order mark at pos; it reports whether there
// was one.
func (s *jscan) bom() bool {
	for s.end-s.pos < 3 && s.fill() {
	}
	if s.end-s.pos < 3 || string(s.buf[s.pos:s.pos+3]) != "\xef\xbb\xbf" {
		return false
	}
	s.pos += 3
	return true
}

// errKMore says the window ended before the event did.
var errKMore = errors.New("need more input")

// kwin is a parser over a window of complete bytes: it never reads, it
// reports errKMore instead.
type kwin struct {
	b    []byte
	i    int
	base int64
	eof  bool // b ends where the stream does: a number may end there
}

func (w *kwin) ws() (byte, bool) {
	for w.i < len(w.b) {
		if c := w.b[w.i]; c > ' ' {
			return c, true
		}
		w.i++
	}
	return 0, false
}

// str scans the string whose quote is at i; ok is false when the window
// ends first. a, e index its raw content.
func (w *kwin) str() (a, e int, esc, ok bool) {
	b := w.b
	i := w.i + 1
	a = i
	// Eight bytes at a time (SWAR): the lowest byte flagged by
	// kQuoteOrBackslash is exact. Long strings switch to IndexByte.
	for lim := min(a+64, len(b)-8); i <= lim; i += 8 {
		if m := kQuoteOrBackslash(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if b[i] == '"' {
				w.i = i + 1
				return a, i, false, true
			}
			goto slow
		}
	}
	if i < len(b) {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return 0, 0, false, false
		}
		if bytes.IndexByte(b[i:i+q], '\\') < 0 {
			w.i = i + q + 1
			return a, i + q, false, true
		}
	}
slow:
	for i = a; i < len(b); {
		switch b[i] {
		case '\\':
			esc = true
			i += 2
		case '"':
			w.i = i + 1
			return a, i, esc, true
		default:
			i++
		}
	}
	return 0, 0, false, false
}

// value reads the value at the next non-space byte. Composite values are
// skipped (brackets matched, strings respected; their other content is not
// validated).
func (w *kwin) value(st *[]byte) (kind byte, a, e int, esc bool, err error) {
	c, ok := w.ws()
	if !ok {
		return 0, 0, 0, false, errKMore
	}
	switch {
	case c == '"':
		a, e, esc, ok = w.str()
		if !ok {
			return 0, 0, 0, false, errKMore
		}
		return kvString, a, e, esc, nil
	case c == 'N':
		return w.lit("NaN", kvNumber) // Python's json writes these
	case c == 'I':
		return w.lit("Infinity", kvNumber)
	case c == '-' && w.i+1 < len(w.b) && w.b[w.i+1] == 'I':
		return w.lit("-Infinity", kvNumber)
	case c == '-' || (c >= '0' && c <= '9'):
		a = w.i
		i := a + 1
		for i < len(w.b) && kIsNumByte(w.b[i]) {
			i++
		}
		if i == len(w.b) && !w.eof {
			return 0, 0, 0, false, errKMore
		}
		w.i = i
		return kvNumber, a, i, false, nil
	case c == 't':
		return w.lit("true", kvTrue)
	case c == 'f':
		return w.lit("false", kvFalse)
	case c == 'n':
		return w.lit("null", kvNull)
	case c == '{' || c == '[':
		a = w.i
		if err := w.skip(st); err != nil {
			return 0, 0, 0, false, err
		}
		return c, a, w.i, false, nil
	}
	return 0, 0, 0, false, &kErrJSON{off: w.base + int64(w.i), expected: "a JSON value", found: kQuoteByte(c)}
}

func (w *kwin) lit(word string, kind byte) (byte, int, int, bool, error) {
	a := w.i
	for k := 0; k < len(word); k++ {
		if a+k >= len(w.b) {
			return 0, 0, 0, false, errKMore
		}
		if w.b[a+k] != word[k] {
			return 0, 0, 0, false, &kErrJSON{off: w.base + int64(a+k), expected: "a JSON value", found: kQuoteByte(w.b[a+k])}
		}
	}
	w.i = a + len(word)
	return kind, a, w.i, false, nil
}

// skipFlat is skip for an object that is likely flat (a flow event): one
// whose bytes up to its first '}' hold no other bracket and no backslash,
// and an even number of quotes, ends at that '}' (every quote opens or
// closes a string, so the '}' is outside them), which a few vector
// searches find faster than skip's walk. Anything else is left to skip.
func (w *kwin) skipFlat(st *[]byte) error {
	b := w.b
	if i := w.i; i < len(b) && b[i] == '{' {
		if j := bytes.IndexByte(b[i+1:], '}'); j >= 0 {
			seg := b[i+1 : i+1+j]
			if bytes.IndexByte(seg, '\\') < 0 && bytes.IndexByte(seg, '{') < 0 && bytes.IndexByte(seg, '[') < 0 &&
				bytes.IndexByte(seg, ']') < 0 && bytes.Count(seg, []byte{'"'})&1 == 0 {
				w.i = i + 1 + j + 1
				return nil
			}
		}
	}
	return w.skip(st)
}

// kSkipStop flags the bytes skip stops at: a string's quote and the
// brackets. The rest of a skipped value (numbers, literals, ',', ':',
// spaces) is passed by one table load per byte, without the byte
// switch's branches.
var kSkipStop = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// kStrStop flags the bytes that end a run of a string's content.
var kStrStop = [256]bool{'"': true, '\\': true}

// skip skips the object or array at i. st is a reused bracket stack.
func (w *kwin) skip(st *[]byte) error {
	stack := (*st)[:0]
	defer func() { *st = stack[:0] }()
	b := w.b
	for {
		i := w.i
		for i < len(b) && !kSkipStop[b[i]] {
			i++
		}
		w.i = i
		if i >= len(b) {
			return errKMore
		}
		switch c := b[i]; c {
		case '"':
			// The strings of a skipped value are short keys and labels
			// mostly: read here byte by byte (no call, no setup), as
			// the rest is.
			for i++; ; i++ {
				for i < len(b) && !kStrStop[b[i]] {
					i++
				}
				if i >= len(b) {
					return errKMore
				}
				if b[i] == '"' {
					break
				}
				i++ // a backslash: the byte after it is escaped
			}
		case '{', '[':
			if len(stack) >= 10000 {
				return &kErrJSON{off: w.base + int64(i), expected: "JSON nested at most 10000 deep"}
			}
			stack = append(stack, c)
		default: // '}', ']'
			open := byte('{')
			if c == ']' {
				open = '['
			}
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return &kErrJSON{off: w.base + int64(i), expected: "matching brackets", found: kQuoteByte(c)}
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				w.i = i + 1
				return nil
			}
		}
		w.i = i + 1
	}
}

const (
	kLo = 0x0101010101010101
	kHi = 0x8080808080808080
)

// kZeroBytes flags (high bit) the zero bytes of v; the lowest flag is
// exact, higher ones may be false positives after a true one.
func kZeroBytes(v uint64) uint64 { return (v - kLo) &^ v & kHi }

// kQuoteOrBackslash flags the bytes of v that are '"' or '\\'.
func kQuoteOrBackslash(v uint64) uint64 {
	return kZeroBytes(v^(kLo*'"')) | kZeroBytes(v^(kLo*'\\'))
}

func kQuoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "byte 0x" + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
}

// kUnescape appends the decoded form of the raw JSON string content src to
// dst. Invalid escapes are an error; lone surrogates become U+FFFD as in
// encoding/json.
func kUnescape(dst, src []byte) ([]byte, error) {
	for i := 0; i < len(src); {
		c := src[i]
		if c != '\\' {
			j := bytes.IndexByte(src[i:], '\\')
			if j < 0 {
				return append(dst, src[i:]...), nil
			}
			dst = append(dst, src[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(src) {
			return dst, errors.New("string ends in a lone backslash")
		}
		e := src[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := kHex4(src, i)
			if !ok {
				return dst, errors.New(`invalid \u escape (want 4 hex digits)`)
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := kHex4(src, i+2); ok && i+1 < len(src) && src[i] == '\\' && src[i+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						i += 6
						dst = utf8.AppendRune(dst, d)
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, errors.New("invalid escape \\" + string(rune(e)))
		}
	}
	return dst, nil
}

func kHex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
