package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestMemorySharedTraces: the two shared traces with torch.profiler
// memory events (TraceLens, H100 and MI300X) reported as JSON; the
// independent testdata/check_memory.py recomputes the per-step peaks, the
// temporaries and the per-operator bytes from the raw file by the written
// rule, and must agree exactly.
func TestMemorySharedTraces(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the independent check needs it")
	}
	for _, name := range []string{"tracelens_h100_qwen15_sdpa_flash.json.gz", "tracelens_mi300_qwen15_aotriton.json.gz"} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name)
			tr, err := tracefile.Open(f, tracefile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			snap := attrib.CombineSources([]*tracer.Trace{tr}, nil)
			if snap.Memory == nil {
				t.Fatal("no memory model from a trace with [memory] events")
			}
			out := filepath.Join(t.TempDir(), "report.json")
			fh, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := Write(fh, snap, Options{Format: "json", By: ByMemory, Top: 0}); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			res, err := exec.Command(py, filepath.Join("testdata", "check_memory.py"), f, out).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(res), "OK ") {
				t.Errorf("independent check: %v\n%s", err, res)
			}
			t.Logf("%s", res)
		})
	}
}
