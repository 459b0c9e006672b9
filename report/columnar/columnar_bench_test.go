package columnar

import (
	"path/filepath"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkWriteOps: the ops file of the real A100 trace (9,450 GPU ops),
// import excluded; reports rows/s and bytes/row of the Parquet output.
//
//	go test ./report/columnar -run XXX -bench WriteOps -benchtime 20x
func BenchmarkWriteOps(b *testing.B) {
	path := filepath.Join(testutil.SharedTraces(b), "kineto", "hta_diff_control_a100.json.gz")
	tr, err := tracefile.Open(path, tracefile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rules := attrib.DefaultRules()
	var rows, bytes int64
	b.ResetTimer()
	for b.Loop() {
		var w countWriter
		n, err := WriteOps(&w, []*tracer.Trace{tr}, rules)
		if err != nil {
			b.Fatal(err)
		}
		rows, bytes = rows+n, bytes+w.n
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/float64(rows), "B/row")
}
