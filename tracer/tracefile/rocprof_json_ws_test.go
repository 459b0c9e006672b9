package tracefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// runReader yields n copies of c: a long whitespace run without holding it.
type runReader struct {
	c byte
	n int64
}

func (r *runReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= int64(k)
	return k, nil
}

// TestRocprofJSONWhitespaceBounded: 64 MiB of whitespace between the
// records and 64 MiB inside one (a 1 MB .gz of mostly
// whitespace took 3.1 GB) read with the Decoder holding little: under
// 16 MiB allocated in all (the Decoder kept each run in its buffer:
// over 128 MiB), the 3 kernels of the fixture kept, and an error after
// the whitespace names the file's byte, not the squeezed stream's.
func TestRocprofJSONWhitespaceBounded(t *testing.T) {
	fix, err := os.ReadFile("testdata/rocprofv3_tool.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(fix)
	i := strings.Index(s, `"kernel_dispatch": [`) + len(`"kernel_dispatch": [`)
	j := strings.Index(s[i:], `"start_timestamp"`) + i
	const run = 64 << 20
	in := func(tail string) io.Reader {
		return io.MultiReader(strings.NewReader(s[:i]), &runReader{' ', run}, strings.NewReader(s[i:j]),
			&runReader{'\n', run}, strings.NewReader(tail))
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	tr, err := readRocprofJSON(in(s[j:]), "ws.json", Options{})
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if n := kinds(tr)[tracer.KindKernel]; n != 3 {
		t.Errorf("%d kernels, want the fixture's 3", n)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
		t.Errorf("allocated %d MiB reading 128 MiB of whitespace, want under 16", a>>20)
	}
	// A stray byte right after the second run makes the record holding
	// it malformed: the error names where the record starts in the file,
	// after the first run.
	_, err = readRocprofJSON(in("@"+s[j:]), "ws.json", Options{})
	var fe *Error
	want := int64(i + strings.Index(s[i:], "{") + run)
	if !errors.As(err, &fe) || fe.Offset != want {
		t.Errorf("error %v; want one at byte %d of the file", err, want)
	}
}

// kinds counts a trace's events by kind.
func kinds(tr *tracer.Trace) map[tracer.Kind]int {
	n := map[tracer.Kind]int{}
	if tr != nil {
		for _, e := range tr.Events {
			n[e.Kind]++
		}
	}
	return n
}

// TestRocprofJSONCutKeepsRecords: the fixture cut right after its second
// kernel_dispatch record keeps those 2 kernels (and the tables before
// them) with an *Error at the cut's byte saying the JSON ends early
// (nothing was kept and no offset named).
func TestRocprofJSONCutKeepsRecords(t *testing.T) {
	fix, err := os.ReadFile("testdata/rocprofv3_tool.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(fix)
	k := strings.Index(s, `"kernel_dispatch": [`)
	// The end of the second record: the "stream_id" member closing it.
	end := k
	for range 2 {
		end += strings.Index(s[end:], `"stream_id": {"handle": 1}}`) + len(`"stream_id": {"handle": 1}}`)
	}
	cut := s[:end+1] // and its comma
	tr, err := Read(bytes.NewReader([]byte(cut)), "cut.json", int64(len(cut)), Options{})
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "cut.json" || !strings.Contains(err.Error(), "ends early") {
		t.Fatalf("err = %v, want an *Error saying the JSON ends early", err)
	}
	if fe.Offset != int64(len(cut)) {
		t.Errorf("offset %d, want the cut at %d", fe.Offset, len(cut))
	}
	if n := kinds(tr)[tracer.KindKernel]; n != 2 {
		t.Errorf("%d kernels kept, want the 2 before the cut", n)
	}
}

// A rocprofv3 record starting before 0 ns is warned about (it was taken
// silently), and one lasting 5e18 ns is said to be no real duration (it
// was called "ends before it starts"); both keep their event.
func TestRocprofJSONOddTimesWarned(t *testing.T) {
	fix, err := os.ReadFile("testdata/rocprofv3_tool.json")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(fix), `"start_timestamp": 1000, "end_timestamp": 1750`, `"start_timestamp": -5, "end_timestamp": 1750`, 1)
	s = strings.Replace(s, `"start_timestamp": 2000, "end_timestamp": 2300`, `"start_timestamp": 2000, "end_timestamp": 5000000000000002000`, 1)
	if s == string(fix) {
		t.Fatal("fixture changed: the test edits nothing")
	}
	tr, err := readRocprofJSON(strings.NewReader(s), "odd.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var neg, long bool
	for _, w := range tr.Warnings {
		neg = neg || strings.Contains(w, "starts at -5 ns, before the clock's origin")
		long = long || strings.Contains(w, "at 2000 ns lasts 5000000000000000000 ns (over 146 years: not a real duration)")
	}
	if !neg || !long {
		t.Errorf("warnings %q: want the negative start and the 5e18 ns duration named", tr.Warnings)
	}
	if n := kinds(tr)[tracer.KindKernel]; n != 3 {
		t.Errorf("%d kernels, want the fixture's 3 kept", n)
	}
}
