package tracefile

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// jscan is a streaming JSON byte scanner over a sliding window. It never
// builds a document tree: callers walk objects key by key, read the scalars
// they need as spans of the window and skip everything else.
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

// str scans the string whose opening quote is at pos. It returns the
// absolute span of its raw content (escapes not decoded) and whether it
// holds a backslash.
func (s *jscan) str() (a, b int64, esc bool, err error) {
	// Fast path: the string ends in the window without escapes. Short
	// strings (keys, categories) are scanned byte by byte, which beats
	// IndexByte's call overhead; long ones (kernel names) with IndexByte.
	buf := s.buf[:s.end]
	i := s.pos + 1
	for lim := min(i+24, len(buf)); i < lim; i++ {
		c := buf[i]
		if c == '"' {
			a, b = s.base+int64(s.pos+1), s.base+int64(i)
			s.pos = i + 1
			return a, b, false, nil
		}
		if c == '\\' {
			return s.strSlow()
		}
	}
	if i < len(buf) {
		if q := bytes.IndexByte(buf[i:], '"'); q >= 0 && bytes.IndexByte(buf[i:i+q], '\\') < 0 {
			a, b = s.base+int64(s.pos+1), s.base+int64(i+q)
			s.pos = i + q + 1
			return a, b, false, nil
		}
	}
	return s.strSlow()
}

// strSlow is str for strings with escapes or crossing the window's end.
func (s *jscan) strSlow() (a, b int64, esc bool, err error) {
	s.pos++
	a = s.off()
	setKeep := s.keep < 0
	if setKeep {
		s.keep = s.pos
	}
	ai := a
	qabs := int64(-1) // known position of the next unescaped-candidate quote
	for {
		i := int(ai - s.base)
		if i >= s.end {
			s.pos = s.end
			if !s.fill() {
				if setKeep {
					s.keep = -1
				}
				return a, a, esc, s.eofErr("a string")
			}
			continue
		}
		seg := s.buf[i:s.end]
		var q int
		if qabs >= ai {
			q = int(qabs - ai)
		} else {
			q = bytes.IndexByte(seg, '"')
			if q >= 0 {
				qabs = ai + int64(q)
			}
		}
		lim := len(seg)
		if q >= 0 {
			lim = q
		}
		if k := bytes.IndexByte(seg[:lim], '\\'); k >= 0 {
			esc = true
			ai += int64(k + 2)
			continue
		}
		if q >= 0 {
			b = ai + int64(q)
			s.pos = i + q + 1
			if setKeep {
				s.keep = -1
			}
			return a, b, esc, nil
		}
		ai += int64(len(seg))
	}
}

func kIsNumByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// num scans a number token starting at pos and returns its absolute span.
func (s *jscan) num() (a, b int64) {
	a = s.off()
	setKeep := s.keep < 0
	if setKeep {
		s.keep = s.pos
	}
	for {
		for s.pos < s.end && kIsNumByte(s.buf[s.pos]) {
			s.pos++
		}
		if s.pos < s.end || !s.fill() {
			break
		}
	}
	if setKeep {
		s.keep = -1
	}
	return a, s.off()
}

// lit consumes the literal word (true, false, null) at pos.
func (s *jscan) lit(word string) error {
	a := s.off()
	for i := 0; i < len(word); i++ {
		if s.pos >= s.end && !s.fill() {
			return s.eofErr("a literal")
		}
		if s.buf[s.pos] != word[i] {
			return &kErrJSON{off: a, expected: "a JSON value", found: kQuoteByte(s.buf[s.pos])}
		}
		s.pos++
	}
	return nil
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

// value reads the value at the next non-space byte. Strings and numbers
// return their span; objects and arrays are skipped (their span covers the
// whole value).
func (s *jscan) value() (kind byte, a, b int64, esc bool, err error) {
	c, ok := s.ws()
	if !ok {
		return 0, 0, 0, false, s.eofErr("a value")
	}
	switch {
	case c == '"':
		a, b, esc, err = s.str()
		return kvString, a, b, esc, err
	case c == '-' || (c >= '0' && c <= '9'):
		a, b = s.num()
		return kvNumber, a, b, false, nil
	case c == 't':
		a = s.off()
		return kvTrue, a, a + 4, false, s.lit("true")
	case c == 'f':
		a = s.off()
		return kvFalse, a, a + 5, false, s.lit("false")
	case c == 'n':
		a = s.off()
		return kvNull, a, a + 4, false, s.lit("null")
	case c == '{' || c == '[':
		a = s.off()
		err = s.skipComposite()
		return c, a, s.off(), false, err
	}
	return 0, 0, 0, false, &kErrJSON{off: s.off(), expected: "a JSON value", found: kQuoteByte(c)}
}

// skipComposite skips the object or array starting at pos, checking that
// brackets match. Nesting deeper than 10000 is an error.
func (s *jscan) skipComposite() error {
	var stack [64]byte
	st := stack[:0]
	for {
		c, ok := s.ws()
		if !ok {
			return s.eofErr("an object or array")
		}
		switch c {
		case '{', '[':
			if len(st) >= 10000 {
				return &kErrJSON{off: s.off(), expected: "JSON nested at most 10000 deep"}
			}
			st = append(st, c)
			s.pos++
		case '}', ']':
			open := byte('{')
			if c == ']' {
				open = '['
			}
			if len(st) == 0 || st[len(st)-1] != open {
				return &kErrJSON{off: s.off(), expected: "matching brackets", found: kQuoteByte(c)}
			}
			st = st[:len(st)-1]
			s.pos++
			if len(st) == 0 {
				return nil
			}
		case '"':
			if _, _, _, err := s.str(); err != nil {
				return err
			}
		case ',', ':':
			s.pos++
		default:
			if c == '-' || (c >= '0' && c <= '9') {
				s.num()
				continue
			}
			var err error
			switch c {
			case 't':
				err = s.lit("true")
			case 'f':
				err = s.lit("false")
			case 'n':
				err = s.lit("null")
			default:
				err = &kErrJSON{off: s.off(), expected: "a JSON value", found: kQuoteByte(c)}
			}
			if err != nil {
				return err
			}
		}
	}
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
