package load

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestStreamableByDecodedSize: Streamable takes a gzipped Kineto file by
// what it decodes to, not its stored size (a 7 MB .gz of 20 M events was
// read whole: 2.6 GB): 2 MiB of events stored in a few KB stream under a
// 1 MiB threshold; the same events plain under a 4 MiB one do not.
func TestStreamableByDecodedSize(t *testing.T) {
	ev := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1},`
	js := `{"traceEvents":[` + strings.Repeat(ev, 2<<20/len(ev)) + ev[:len(ev)-1] + `]}`
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte(js))
	zw.Close()
	dir := t.TempDir()
	gz := filepath.Join(dir, "t.json.gz")
	plain := filepath.Join(dir, "t.json")
	os.WriteFile(gz, b.Bytes(), 0o644)
	os.WriteFile(plain, []byte(js), 0o644)
	if b.Len() >= 1<<20 {
		t.Fatalf("the .gz is %d bytes: the test needs it under the threshold", b.Len())
	}
	if !Streamable([]string{gz}, Options{StreamMinBytes: 1 << 20}) {
		t.Errorf("%d-byte .gz of %d bytes decoded: not streamed", b.Len(), len(js))
	}
	if Streamable([]string{plain}, Options{StreamMinBytes: 4 << 20}) {
		t.Errorf("%d bytes plain under a 4 MiB threshold: streamed", len(js))
	}
}

// TestStreamMemoryInOnePass: a streamed report takes the memory model
// from its captures, without reading the file a second time, when every
// capture holding memory events is held whole: three copies of the H100
// trace (profile_memory) give three times its [memory] events, counted in
// the JSON text. Captures read in parts do not hold their operators, so
// such a file is read whole again for the model (MemoryReread 1), with
// the same count.
func TestStreamMemoryInOnePass(t *testing.T) {
	raw := testutil.ReadTrace(t, filepath.Join(testutil.SharedTraces(t), "kineto", "tracelens_h100_qwen15_sdpa_flash.json.gz"))
	one := bytes.Count(raw, []byte(`"[memory]"`))
	if one == 0 {
		t.Fatal("no [memory] events in the H100 trace")
	}
	out := filepath.Join(t.TempDir(), "h100x3.json")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracefile.ReplicateKineto(w, raw, 3); err != nil {
		t.Fatal(err)
	}
	w.Close()
	check := func(opts Options, reread int) {
		t.Helper()
		r, err := Report([]string{out}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Streamed || r.Windows != 3 {
			t.Fatalf("streamed %v, %d windows: want 3 windows streamed", r.Streamed, r.Windows)
		}
		if r.Snapshot.Memory == nil || r.Snapshot.Memory.Events != 3*one {
			t.Errorf("memory model: %+v; want %d events (3 × %d)", r.Snapshot.Memory, 3*one, one)
		}
		if r.MemoryReread != reread {
			t.Errorf("files read again for memory: %d, want %d", r.MemoryReread, reread)
		}
	}
	check(Options{StreamMinBytes: 1}, 0)
	check(Options{StreamMinBytes: 1, NoShapes: true, PartWindow: -1}, 1)
}

// TestCutGzipIsDamageOnly: a .gz cut part way (the H100 trace's first
// 100,000 bytes, before its first kernel) is damage and nothing else: its
// last four bytes, data read as the gzip size (over 1 GiB here), do not
// make it large enough to stream, and streamed anyway it is said damaged
// (the events before the cut kept), never "no GPU work: cannot be
// streamed".
func TestCutGzipIsDamageOnly(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.SharedTraces(t), "kineto", "tracelens_h100_qwen15_sdpa_flash.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.json.gz")
	if err := os.WriteFile(cut, b[:100000], 0o600); err != nil {
		t.Fatal(err)
	}
	if Streamable([]string{cut}, Options{}) {
		t.Error("a 100 kB cut .gz is taken for 256 MiB of JSON")
	}
	var refused error
	r, err := Report([]string{cut}, Options{StreamMinBytes: 1, ReadWhole: func(e error) { refused = e }})
	if err != nil {
		t.Fatal(err)
	}
	if refused != nil {
		t.Errorf("told %q", refused)
	}
	if len(r.Damaged) != 1 || len(r.Traces[0].Events) == 0 {
		t.Errorf("%d damaged, %d events kept: want the file damaged, its events before the cut kept", len(r.Damaged), len(r.Traces[0].Events))
	}
}
