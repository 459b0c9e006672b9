package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestSharedKinetoTraces reports every shared Kineto trace as JSON and has
// testdata/check_report.py (python3, standard json module) recompute
// per-kernel counts and totals, kernel totals and busy time from the raw
// file; they must agree to the nanosecond.
func TestSharedKinetoTraces(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the independent check needs it")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(files) == 0 {
		t.Skipf("no traces in %s", dir)
	}
	tmp := t.TempDir()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if st, err := os.Stat(f); err == nil && testing.Short() && st.Size() > 200<<10 {
				t.Skip("-short: large trace skipped")
			}
			tr, err := tracefile.Open(f, tracefile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a := attrib.NewAggregator(nil)
			a.AddTrace(tr)
			out := filepath.Join(tmp, filepath.Base(f)+".report.json")
			fh, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := Write(fh, a.Snapshot(), Options{Format: "json", Top: 0}); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			res, err := exec.Command(py, filepath.Join("testdata", "check_report.py"), f, out).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(res), "OK ") {
				t.Errorf("independent check: %v\n%s", err, res)
			}
		})
	}
}
