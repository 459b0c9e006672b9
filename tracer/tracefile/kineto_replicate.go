package tracefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
)

// ReplicateKineto writes a larger Kineto trace made of copies of a real
// one, for benchmarks (BenchmarkKinetoImport, scripts/bench-import.sh).
//
// src is a complete uncompressed Kineto JSON object with a traceEvents
// array. The output keeps src's header keys and puts copies copies of the
// events in one traceEvents array; copy k has every "ts" shifted by k times
// the trace's span (first "ts" to the latest "ts" + "dur", so that copies
// never overlap in time, as consecutive profiler windows do not) rounded
// up to whole µs plus 1 ms (fraction digits are kept, so timestamps stay
// exact), and every "id", "correlation",
// "External id" and "external id" shifted by k times (largest id + 1), so
// flows and correlations stay unique, and every "ProfilerStep#N" renumbered
// N + k × (largest N − smallest N + 1), so each copy's steps are new steps
// as consecutive windows' are (copies with the same numbers read as one
// step per number, its GPU time summed over the copies). It returns the
// bytes written.
//
// Keys are found textually ("key": number); a string value that contains
// such text would be shifted too, which does not happen in Kineto output.
func ReplicateKineto(w io.Writer, src []byte, copies int) (int64, error) {
	return replicateKineto(w, src, copies, false)
}

// ReplicateKinetoOneWindow is ReplicateKineto for the shape of one long
// torch.profiler window: the CPU section of every copy (the events before
// the first launch or GPU op of src, which Kineto writes first), then the
// rest of every copy (launches, GPU ops, metadata), with the same shifts.
// src must be one window (its CPU events all before its first launch).
func ReplicateKinetoOneWindow(w io.Writer, src []byte, copies int) (int64, error) {
	return replicateKineto(w, src, copies, true)
}

// profilerStepN matches torch.profiler's step range names, ProfilerStep#N.
var profilerStepN = regexp.MustCompile(`ProfilerStep#([0-9]+)`)

// gpuSection matches an event of a Kineto window's second part.
var gpuSection = regexp.MustCompile(`"cat"\s*:\s*"(cuda_runtime|cuda_driver|kernel|gpu_memcpy|gpu_memset|gpu_user_annotation|cuda_sync)"`)

func replicateKineto(w io.Writer, src []byte, copies int, oneWindow bool) (int64, error) {
	i := bytes.Index(src, []byte(`"traceEvents"`))
	if i < 0 {
		return 0, fmt.Errorf("replicate: no traceEvents in the source")
	}
	lb := bytes.IndexByte(src[i:], '[')
	if lb < 0 {
		return 0, fmt.Errorf("replicate: traceEvents is not an array")
	}
	lb += i
	kw := kwin{b: src, i: lb, eof: true}
	var st []byte
	if err := kw.skip(&st); err != nil {
		if err == errKMore {
			err = errors.New("the source ends inside it")
		}
		return 0, fmt.Errorf("replicate: traceEvents array: %w", err)
	}
	rb := kw.i - 1 // the closing ']'
	body := bytes.TrimSpace(src[lb+1 : rb])

	minTs, maxTs, maxID := int64(1<<62), int64(-1<<62), int64(0)
	lastTs := int64(0) // the "ts" before a "dur" (Kineto writes them in one event, ts first)
	walkKineto(body, func(key string, num []byte) {
		switch key {
		case "ts":
			if v, err := parseMicrosNs(num); err == nil {
				minTs, maxTs, lastTs = min(minTs, v), max(maxTs, v), v
			}
		case "dur":
			if v, err := parseMicrosNs(num); err == nil && v > 0 {
				maxTs = max(maxTs, lastTs+v)
			}
		default:
			if v, ok := kParseInt(num); ok && v > maxID {
				maxID = v
			}
		}
	})
	if minTs > maxTs {
		minTs, maxTs = 0, 0
	}
	spanUs := (maxTs-minTs)/1000 + 1001
	idStride := maxID + 1
	var stepStride int64
	if ms := profilerStepN.FindAllSubmatch(body, -1); len(ms) > 0 {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, m := range ms {
			if v, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if lo <= hi {
			stepStride = hi - lo + 1
		}
	}

	// Where the second part (launches, GPU ops) starts: the first such
	// event, at the '{' that opens it.
	split := len(body)
	if oneWindow {
		if m := gpuSection.FindIndex(body); m != nil {
			// The '{' that opens the event: the last one before "cat"
			// that follows a ',' between events (Kineto writes "cat"
			// before any nested object).
			split = bytes.LastIndexByte(body[:m[0]], '{')
			for split > 0 {
				prev := bytes.TrimRight(body[:split], " \t\r\n")
				if len(prev) > 0 && prev[len(prev)-1] == ',' {
					break
				}
				split = bytes.LastIndexByte(body[:split], '{')
			}
		}
		if split <= 0 || split >= len(body) {
			return 0, fmt.Errorf("replicate: no CPU section before the first launch or GPU op")
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	cw.Write(src[:lb+1])
	var tmp []byte
	parts := [][]byte{body}
	if oneWindow {
		first := bytes.TrimRight(bytes.TrimSpace(body[:split]), ",")
		parts = [][]byte{first, bytes.TrimSpace(body[split:])}
	}
	n := 0
	for _, part := range parts {
		for k := 0; k < copies; k++ {
			if n > 0 {
				cw.Write([]byte(",\n"))
			}
			n++
			if k == 0 || stepStride == 0 {
				tmp = writeShifted(cw, part, k, spanUs, idStride, tmp)
				continue
			}
			// Renumber the copy's steps in its shifted bytes.
			var out bytes.Buffer
			tmp = writeShifted(&countWriter{w: &out}, part, k, spanUs, idStride, tmp)
			cw.Write(profilerStepN.ReplaceAllFunc(out.Bytes(), func(m []byte) []byte {
				v, err := strconv.ParseInt(string(m[len("ProfilerStep#"):]), 10, 64)
				if err != nil {
					return m
				}
				return strconv.AppendInt([]byte("ProfilerStep#"), v+int64(k)*stepStride, 10)
			}))
		}
	}
	cw.Write(src[rb:])
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	return cw.n, cw.err
}

// writeShifted writes body with copy k's shifts of "ts" and ids.
func writeShifted(cw *countWriter, body []byte, k int, spanUs, idStride int64, tmp []byte) []byte {
	{
		last := 0
		walkKinetoPos(body, func(key string, a, b int) {
			num := body[a:b]
			intEnd := bytes.IndexAny(num, ".eE")
			if intEnd < 0 {
				intEnd = len(num)
			}
			v, ok := kParseInt(num[:intEnd])
			if !ok || key == "dur" {
				return
			}
			if key == "ts" {
				v += int64(k) * spanUs
			} else {
				if intEnd != len(num) {
					return
				}
				v += int64(k) * idStride
			}
			cw.Write(body[last:a])
			tmp = strconv.AppendInt(tmp[:0], v, 10)
			cw.Write(tmp)
			cw.Write(num[intEnd:])
			last = b
		})
		cw.Write(body[last:])
	}
	return tmp
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

var replicateKeys = map[string]bool{"ts": true, "dur": true, "id": true, "correlation": true, "External id": true, "external id": true}

func walkKineto(body []byte, fn func(key string, num []byte)) {
	walkKinetoPos(body, func(key string, a, b int) { fn(key, body[a:b]) })
}

// walkKinetoPos calls fn with the span of each number that follows one of
// replicateKeys as `"key":`.
func walkKinetoPos(body []byte, fn func(key string, a, b int)) {
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`":`))
		if j < 0 {
			return
		}
		j += i
		i = j + 2
		q := bytes.LastIndexByte(body[max(0, j-16):j], '"')
		if q < 0 {
			continue
		}
		key := body[max(0, j-16)+q+1 : j]
		if !replicateKeys[string(key)] {
			continue
		}
		a := i
		for a < len(body) && body[a] == ' ' {
			a++
		}
		b := a
		for b < len(body) && kIsNumByte(body[b]) {
			b++
		}
		if b > a {
			fn(string(key), a, b)
		}
	}
}
