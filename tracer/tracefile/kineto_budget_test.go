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
)

// tinyKineto is a Kineto trace of n kernel events of 1 µs, gzipped: the
// hostile shape (a 7 MB file of 20 M such events took 2.6 GB whole).
func tinyKineto(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte(`{"traceEvents":[`))
	for i := range n {
		if i > 0 {
			zw.Write([]byte(","))
		}
		fmt.Fprintf(zw, `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":1}`, i%100)
	}
	zw.Write([]byte(`]}`))
	zw.Close()
	return b.Bytes()
}

// TestKinetoEventBudget: a whole Kineto read keeps at most the event
// budget, whatever the file's stored size: 3,000 events under
// --max-events 1,000 keep the first 1,000 with an *Error naming the file,
// the limit and both ways to raise it (there was no limit at all); the
// default is MaxKinetoEvents; 0 and RLKTOP_MAX_EVENTS=0 keep all.
func TestKinetoEventBudget(t *testing.T) {
	t.Cleanup(ResetLimits)
	data := tinyKineto(t, 3000)
	read := func() (int, error) {
		tr, err := Read(bytes.NewReader(data), "tiny.json.gz", int64(len(data)), Options{})
		if tr == nil {
			return -1, err
		}
		return len(tr.Events), err
	}
	if n, _ := kinetoBudget(); n != MaxKinetoEvents {
		t.Errorf("default budget %d, want %d", n, MaxKinetoEvents)
	}
	SetMaxEvents(1000)
	n, err := read()
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "tiny.json.gz" || n != 1000 {
		t.Fatalf("--max-events 1000: kept %d, err %v; want 1000 and an *Error naming the file", n, err)
	}
	for _, want := range []string{"more than 1000 events", "--max-events=1000", "RLKTOP_MAX_EVENTS", "streams"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	SetMaxEvents(0)
	if n, err := read(); err != nil || n != 3000 {
		t.Errorf("--max-events 0: kept %d, err %v; want all 3000", n, err)
	}
	ResetLimits()
	t.Setenv(MaxEventsEnv, "2000")
	if n, err := read(); err == nil || !strings.Contains(err.Error(), "RLKTOP_MAX_EVENTS=2000") || n != 2000 {
		t.Errorf("RLKTOP_MAX_EVENTS=2000: kept %d, err %v", n, err)
	}
}

// TestDecodedSize: a gzip file's decoded size is its trailer's ISIZE (here
// 4 MiB of zeros stored in a few KB), a plain file's its size, and a
// directory is an error.
func TestDecodedSize(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(make([]byte, 4<<20))
	zw.Close()
	gz := filepath.Join(dir, "zeros.gz")
	plain := filepath.Join(dir, "plain.json")
	os.WriteFile(gz, b.Bytes(), 0o644)
	os.WriteFile(plain, []byte(`{"traceEvents":[]}`), 0o644)
	if n, err := DecodedSize(gz); err != nil || n != 4<<20 {
		t.Errorf("gzip: %d, %v; want %d", n, err, 4<<20)
	}
	if n, err := DecodedSize(plain); err != nil || n != 18 {
		t.Errorf("plain: %d, %v; want 18", n, err)
	}
	if _, err := DecodedSize(dir); err == nil {
		t.Error("a directory: no error")
	}
}
