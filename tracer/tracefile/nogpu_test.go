package tracefile

import (
	"strings"
	"testing"
)

func noGPUWarning(ws []string) string {
	for _, w := range ws {
		if strings.Contains(w, noGPUWarn) {
			return w
		}
	}
	return ""
}

// HTA's CPU-only Kineto trace: the warning names the kineto importer and
// what it kept by kind. A count over the JSON (python3 json): 11 X events
// of cat user_annotation, one of them ProfilerStep#…, so range 10 + step 1;
// 4 cpu_op; 2 "i" instants; 1 X of cat "Trace" (unknown); 18 in all.
func TestNoGPUWarningCPUOnlyKineto(t *testing.T) {
	tr := openShared(t, "kineto/hta_cpu_only.json.gz")
	w := noGPUWarning(tr.Warnings)
	if !strings.Contains(w, "by the kineto importer; it found 18 events (range 10, cpu_op 4, instant 2, unknown 1, step 1)") {
		t.Errorf("warning %q", w)
	}
}

// rocprofv3 writes one CSV per domain: the marker file alone has no GPU
// work and says so; merged with the run's kernel file it does not.
func TestNoGPUWarningDroppedByMerge(t *testing.T) {
	m := openShared(t, "rocprof/marker_api_trace_2024.csv")
	if noGPUWarning(m.Warnings) == "" {
		t.Fatalf("marker file alone: warnings %q", m.Warnings)
	}
	k := openShared(t, "rocprof/kernel_trace_2024.csv")
	if w := noGPUWarning(Merge(m, k).Warnings); w != "" {
		t.Errorf("merged with kernels, still %q", w)
	}
}
