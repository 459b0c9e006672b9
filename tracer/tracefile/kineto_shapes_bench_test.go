package tracefile

import (
	"path/filepath"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// BenchmarkKinetoImportShapes opens the shared TraceLens traces (recorded
// with record_shapes): the import, linking and, where shapes are read,
// the operator model. Before/after figures of a change to the shape path
// come from running it on both commits, interleaved:
//
//	go test ./tracer/tracefile -run XXX -bench KinetoImportShapes -count 10 -cpu 1
func BenchmarkKinetoImportShapes(b *testing.B) {
	for _, name := range []string{"tracelens_h100_qwen15_sdpa_flash", "tracelens_mi300_qwen15_aotriton"} {
		path := filepath.Join(testutil.SharedTraces(b), "kineto", name+".json.gz")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := kProcessCPU()
			for i := 0; i < b.N; i++ {
				if _, err := Open(path, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time per import (all threads): far steadier than wall
			// time on a shared machine.
			if cpu := kProcessCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
			}
		})
	}
}
