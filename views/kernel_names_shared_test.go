package views_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/views"
)

// TestKernelNamesApartAt80 (kernels whose names differ only in
// template arguments looked identical at 80 columns): in every shared
// Kineto trace, the Kernels table at 80 columns shows every row's
// (name cell, category) differently from every other row's unless both
// rows have the same original name (one name, two categories is one
// kernel). The oracle is the trace's own names: rows are told apart
// when their original names differ, whatever rlktop shortens.
func TestKernelNamesApartAt80(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
	if len(files) == 0 {
		t.Skipf("no Kineto traces in %s", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := tracefile.Open(f, tracefile.Options{})
			if tr == nil {
				t.Skipf("%v", err)
			}
			a := attrib.NewAggregator(attrib.DefaultRules())
			a.AddTrace(tr)
			s := a.Snapshot()
			if len(s.Kernels) == 0 {
				t.Skip("no kernels")
			}
			h := len(s.Kernels) + 10
			k := views.NewKernels(styles())
			k.SetSize(80, h)
			k.SetSnapshot(s)
			rows := k.Rows()
			lines := strings.Split(ansi.Strip(k.View()), "\n")[1:] // after the heading
			seen := map[string]string{}                            // shown cells → original name
			for i, r := range rows {
				l := []rune(lines[i])
				cells := strings.TrimSpace(string(l[1:min(len(l), 47)])) // name and category columns
				if prev, ok := seen[cells]; ok && prev != r.Name {
					t.Errorf("two kernels look alike at 80 columns: %q\n  %s\n  %s", cells, prev, r.Name)
				}
				seen[cells] = r.Name
			}
		})
	}
}
