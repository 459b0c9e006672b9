package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// kinetoKernels is a Kineto trace of n kernels of 500 µs each: the kernel
// time is n × 500,000,000 ns / 1000 = n × 500,000 ns.
func kinetoKernels(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":500,"args":{"device":0,"stream":7,"correlation":%d}}`, 1000*(i+1), i+1)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// storedGzip compresses data without compression (stored blocks), so that
// changing a byte of data changes the content but keeps the deflate
// stream valid: only the CRC-32 in the trailer can tell.
func storedGzip(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func kernelNs(tr *tracer.Trace) int64 {
	var s int64
	for _, e := range tr.Events {
		if e.Kind == tracer.KindKernel {
			s += e.Dur
		}
	}
	return s
}

// A gzip member whose data was changed (a "dur":500 become "dur":504)
// fails its CRC-32: an error that says how much was read, whatever the
// file's size (above 64 KiB the wrong total was reported with
// exit 0; below, the whole file was rejected as unreadable). A gzip
// stream cut in its trailer keeps what was read, with a warning.
func TestGzipTrailerChecked(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{10, 2000} { // 1.3 KB and 260 KB of JSON
		data := kinetoKernels(n)
		good := storedGzip(t, data)
		// The intact file: n × 500 µs.
		p := filepath.Join(dir, fmt.Sprintf("good%d.json.gz", n))
		os.WriteFile(p, good, 0o644)
		tr, err := Open(p, Options{})
		if err != nil || kernelNs(tr) != int64(n)*500_000 {
			t.Fatalf("%d kernels, intact: err %v, kernel ns %d", n, err, kernelNs(tr))
		}
		// The last kernel's "dur":500 → "dur":504 inside the stored block.
		bad := bytes.Clone(good)
		i := bytes.LastIndex(bad, []byte(`"dur":500`))
		bad[i+len(`"dur":50`)] = '4'
		p = filepath.Join(dir, fmt.Sprintf("bad%d.json.gz", n))
		os.WriteFile(p, bad, 0o644)
		tr, err = Open(p, Options{})
		var te *Error
		if !errors.As(err, &te) || !errors.Is(err, gzip.ErrChecksum) {
			t.Fatalf("%d kernels, CRC mismatch: err %v, want a *Error wrapping gzip.ErrChecksum", n, err)
		}
		if tr != nil && kernelNs(tr) != int64(n)*500_000 {
			t.Errorf("%d kernels, CRC mismatch: a trace with the damaged total %d ns came back", n, kernelNs(tr))
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%d decompressed bytes", len(data))) && !strings.Contains(err.Error(), "checksum") {
			t.Errorf("%d kernels: the error does not say what was read: %v", n, err)
		}
		// The trailer cut off (the last 8 bytes: CRC-32 and length).
		p = filepath.Join(dir, fmt.Sprintf("cut%d.json.gz", n))
		os.WriteFile(p, good[:len(good)-8], 0o644)
		tr, err = Open(p, Options{})
		if err != nil || tr == nil || kernelNs(tr) != int64(n)*500_000 || !strings.Contains(strings.Join(tr.Warnings, "\n"), "ends without its trailer") {
			t.Errorf("%d kernels, cut trailer: err %v, trace %v; want the %d kernels kept with a warning", n, err, tr != nil, n)
		}
	}
}

// A recording damaged inside (a frame's bytes changed) returns the frames
// before the damage with a positioned error, as every format does (a
// damaged recording and a damaged Kineto file end alike); a recording
// cut at its end (the recorder killed) is a warning only.
func TestRecordingDamageIsAnError(t *testing.T) {
	b := rawStream(0)
	b[len(b)-3] ^= 0xff
	tr, err := Read(bytes.NewReader(b), "bad.rlk", 0, Options{})
	var te *Error
	if !errors.As(err, &te) || tr == nil || len(tr.Events) != 3 || te.Path != "bad.rlk" || te.Offset <= 0 {
		t.Fatalf("damaged frame: err %v, trace %v", err, tr)
	}
	cut := rawStream(0)
	cut = cut[:len(cut)-3]
	tr, err = Read(bytes.NewReader(cut), "cut.rlk", 0, Options{})
	if err != nil || tr == nil || len(tr.Warnings) == 0 {
		t.Fatalf("cut recording: err %v, trace %v", err, tr)
	}
}

// Garbage after a whole gzip member is warned about and ignored, like
// data after a JSON document (it was an error, exit 1, while the same
// garbage after plain JSON warned): the 3 kernels are kept, for Kineto
// and for a CSV.
func TestGzipTrailingGarbageWarned(t *testing.T) {
	gz := func(data []byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return append(b.Bytes(), "garbage after the member\n"...)
	}
	csv := []byte("Kind,Agent_Id,Queue_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp\n" +
		"KERNEL_DISPATCH,1,1,1,k,1,1000,1500\nKERNEL_DISPATCH,1,1,1,k,2,2000,2500\nKERNEL_DISPATCH,1,1,1,k,3,3000,3500\n")
	for name, in := range map[string][]byte{"k.json.gz": gz(kinetoKernels(3)), "kernel_trace.csv.gz": gz(csv)} {
		tr, err := Read(bytes.NewReader(in), name, int64(len(in)), Options{})
		if err != nil {
			t.Errorf("%s: %v; want a warning", name, err)
			continue
		}
		n := 0
		for _, e := range tr.Events {
			if e.Kind == tracer.KindKernel {
				n++
			}
		}
		if n != 3 {
			t.Errorf("%s: %d kernels, want 3", name, n)
		}
		found := false
		for _, w := range tr.Warnings {
			found = found || strings.Contains(w, name+": data after the end of the gzip stream")
		}
		if !found {
			t.Errorf("%s: warnings %q lack the trailing data", name, tr.Warnings)
		}
	}
}

// A recording whose gzip stream lacks only its trailer (the Bye frame
// read whole) says exactly that, not that it lacks its Bye frame; one cut
// before the Bye still says the Bye is missing.
func TestRecordingTrailerCutSaidPrecisely(t *testing.T) {
	var plain bytes.Buffer
	w := wire.NewWriter(&plain)
	w.Flags = wire.FlagRelayed
	w.Hello(&msg.Hello{Source: "gotrace", PID: 9})
	k := w.Name("k")
	w.Events([]tracer.Event{{Kind: tracer.KindKernel, Name: k, Start: 20, Dur: 5, PID: 9, TID: 1}})
	w.Flush()
	beforeBye := plain.Len()
	w.Bye(msg.Bye{Reason: "exit"})
	w.Flush()
	gzOf := func(b []byte) []byte {
		var g bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&g, gzip.NoCompression)
		zw.Write(b)
		zw.Close()
		return g.Bytes()
	}
	whole := gzOf(plain.Bytes())
	cutTrailer := whole[:len(whole)-8] // CRC-32 and ISIZE gone
	tr, err := Read(bytes.NewReader(cutTrailer), "r.rlk", int64(len(cutTrailer)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "cut after the recording's closing Bye frame") || !strings.Contains(tr.Warnings[0], "only the gzip trailer") {
		t.Errorf("trailer cut: warnings %q", tr.Warnings)
	}
	cutBye := gzOf(plain.Bytes()[:beforeBye+3])
	cutBye = cutBye[:len(cutBye)-8]
	tr, err = Read(bytes.NewReader(cutBye), "r.rlk", int64(len(cutBye)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "without its closing Bye frame") {
		t.Errorf("cut inside the Bye: warnings %q", tr.Warnings)
	}
}
