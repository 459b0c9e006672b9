package load

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
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
