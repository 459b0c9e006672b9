package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// TestTableTellsTemplateKernelsApart (in the V100 ResNet trace
// twelve kernels differing only in template arguments were all printed
// "at::native::vectorized_elementwise_kernel"): in the table of every
// kernel, two rows show the same name and category only when their
// original names (the trace's own, from the CSV's name column) are equal.
func TestTableTellsTemplateKernelsApart(t *testing.T) {
	f := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz")
	tr, err := tracefile.Open(f, tracefile.Options{})
	if tr == nil {
		t.Fatal(err)
	}
	a := attrib.NewAggregator(nil)
	a.AddTrace(tr)
	s := a.Snapshot()
	var b bytes.Buffer
	if err := Write(&b, s, Options{Format: "table", Top: 0}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	n := 0
	rows := append(append([]attrib.KernelRow{}, s.Kernels...), s.Transfers...)
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || n >= len(rows) {
			continue
		}
		r := rows[n]
		// name cells may hold spaces: everything before the category.
		i := strings.Index(line, "  "+r.Category+" ")
		if i < 0 {
			continue // a header line
		}
		key := strings.TrimSpace(line[:i]) + "|" + r.Category
		if prev, ok := seen[key]; ok && prev != r.Name {
			t.Errorf("two kernels print alike: %q\n  %.120s\n  %.120s", key, prev, r.Name)
		}
		seen[key] = r.Name
		n++
	}
	if n != len(rows) {
		t.Fatalf("matched %d table rows, want %d", n, len(rows))
	}
	if !strings.Contains(b.String(), "vectorized_elementwise_kernel<…CUDAFunctor_add<float>, Array<char*, 3>>") {
		t.Error("no disambiguated vectorized_elementwise_kernel row")
	}
}
