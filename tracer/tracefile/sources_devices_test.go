package tracefile

import (
	"path/filepath"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestCombineSourcesDevicesApart: HTA's A100 trace lists devices 0–7 and
// ran GPU work on device 3 only; the V100 trace lists 0–1 and worked on
// device 1 only (a python3 json count of deviceProperties and the
// kernel/gpu_memcpy/gpu_memset events' args.device). Combined, the
// devices with work are exactly those two — not "A100 device 1", which
// matching ids across files gave — and 8 of the 10 listed
// ran none.
func TestCombineSourcesDevicesApart(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	read, errs := OpenAll([]string{filepath.Join(dir, "hta_diff_control_a100.json.gz"), filepath.Join(dir, "hta_diff_test_v100.json.gz")}, Options{})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := attrib.CombineSources(GroupRuns(read), nil)
	work := s.WorkingDevices()
	if len(work) != 2 || work[0].ID != 3 || work[0].ComputeCap != "8.0" || work[1].ID != 1 || work[1].ComputeCap != "7.0" {
		t.Errorf("devices with work %+v, want A100 id 3 then V100 id 1", work)
	}
	if len(s.Devices) != 10 || len(s.Devices)-len(work) != 8 {
		t.Errorf("%d devices listed, %d without work; want 10 and 8", len(s.Devices), len(s.Devices)-len(work))
	}
}
