package tracefile

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// jsonSqueeze is the reader under rocprofv3 JSON's encoding/json Decoder.
// It bounds what the Decoder buffers by what one value decodes to:
//
//   - A run of whitespace outside strings longer than squeezeRun bytes
//     is cut to squeezeRun: the Decoder keeps a run it skips in its
//     buffer until the next token (1 GB of newlines took 3.1 GB, and
//     rescanning it made the import quadratic). Cuts are recorded so
//     that orig maps a Decoder offset back to the file's.
//   - At most maxValue bytes are read between two marks (rpStream marks
//     before each Token and Decode): past it Read fails with
//     errValueTooLarge, since one record, key or string of that size is
//     not what rocprofv3 writes and the Decoder would hold all of it.
type jsonSqueeze struct {
	r         io.Reader
	inStr     bool
	esc       bool
	run       int   // whitespace bytes of the current run passed through
	in, out   int64 // bytes read from r, bytes handed out
	cuts      []squeezeCut
	sinceMark int64
	maxValue  int64
}

// squeezeCut: output bytes at or after out come from delta bytes further
// on in the input.
type squeezeCut struct{ out, delta int64 }

const (
	squeezeRun   = 4096
	jsonMaxValue = 16 << 20
)

var errValueTooLarge = errors.New("one JSON value is larger than 16 MiB")

func newJSONSqueeze(r io.Reader) *jsonSqueeze {
	return &jsonSqueeze{r: r, maxValue: jsonMaxValue}
}

// mark starts a new value: the bytes read since it count toward maxValue.
func (z *jsonSqueeze) mark() { z.sinceMark = 0 }

func (z *jsonSqueeze) Read(p []byte) (int, error) {
	for {
		if z.sinceMark > z.maxValue {
			return 0, fmt.Errorf("%w (at byte %d)", errValueTooLarge, z.in)
		}
		n, err := z.r.Read(p)
		w := 0
		for i := 0; i < n; i++ {
			c := p[i]
			z.in++
			switch {
			case z.inStr:
				if z.esc {
					z.esc = false
				} else if c == '\\' {
					z.esc = true
				} else if c == '"' {
					z.inStr = false
				}
			case c == ' ' || c == '\n' || c == '\t' || c == '\r':
				if z.run++; z.run > squeezeRun {
					if k := len(z.cuts); k > 0 && z.cuts[k-1].out == z.out {
						z.cuts[k-1].delta++
					} else {
						d := int64(1)
						if k > 0 {
							d += z.cuts[k-1].delta
						}
						z.cuts = append(z.cuts, squeezeCut{out: z.out, delta: d})
					}
					continue
				}
			default:
				z.run = 0
				if c == '"' {
					z.inStr = true
				}
			}
			if z.inStr || c > ' ' {
				z.run = 0
			}
			p[w] = c
			w++
			z.out++
		}
		z.sinceMark += int64(w)
		if w > 0 || err != nil {
			return w, err
		}
	}
}

// orig maps an offset in the squeezed stream to the file's.
func (z *jsonSqueeze) orig(off int64) int64 {
	if off < 0 {
		return off
	}
	i := sort.Search(len(z.cuts), func(i int) bool { return z.cuts[i].out > off })
	if i == 0 {
		return off
	}
	return off + z.cuts[i-1].delta
}
