package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestReportStepGPUTimeNote: a step table in which
// some step's gpu time exceeds its duration says why under the table
// (text and markdown), once; one where none does has no note. Figures by
// python3 (json module): each kernel, gpu_memcpy and gpu_memset event
// joined to its cuda_runtime / cuda_driver launch by args.correlation,
// counted in the ProfilerStep#N range that holds the launch:
//   - hta_ns_resolution_v100: 2 of 5 steps (101: 35115.8 µs long,
//     94569.8 µs of GPU ops; 102: 72077.5 and 94591.1 µs);
//   - hta_diff_test_v100: 4 of 6 (1009, 1010, 1012, 1013);
//   - hta_sampled_rank0: none (551: 607312 µs, 302241 µs of GPU ops;
//     552: 622928 and 305603 µs).
func TestReportStepGPUTimeNote(t *testing.T) {
	k := filepath.Join(testutil.SharedTraces(t), "kineto")
	const why = "it sums the durations of the GPU ops launched in the step (ops on several streams overlap, and work can end after the step), so it can exceed the step's wall time"
	for _, c := range []struct {
		file, want string
	}{
		{"hta_ns_resolution_v100.json.gz", "gpu time exceeds duration in 2 of 5 steps: "},
		{"hta_diff_test_v100.json.gz", "gpu time exceeds duration in 4 of 6 steps: "},
		{"hta_sampled_rank0.json.gz", ""},
	} {
		for _, format := range []string{"table", "md"} {
			out, err := runReport(t, "--by", "step", "--format", format, filepath.Join(k, c.file))
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			n := strings.Count(out, why)
			switch {
			case c.want == "" && n != 0:
				t.Errorf("%s --format %s: a note though no step's gpu time exceeds its duration:\n%s", c.file, format, out)
			case c.want != "" && (n != 1 || !strings.Contains(out, c.want+why)):
				t.Errorf("%s --format %s: want one note %q:\n%s", c.file, format, c.want+why, out)
			}
		}
	}
	// --help says what the column sums.
	cmd := newReportCmd()
	if !strings.Contains(strings.Join(strings.Fields(cmd.Long), " "), `"gpu time" sums the durations of the GPU ops launched in the step`) {
		t.Errorf("report --help does not say what gpu time sums:\n%s", cmd.Long)
	}
}
