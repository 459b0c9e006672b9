package attrib

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestMemoryBoundTopThree: the three largest memory-bound rows by
// modelled time, the earlier row first among equals (by hand: times 5, 9,
// 9, 1, 9, 7 give rows 1, 2, 4), and the sums over every row and over
// one category's rows (a: rows 0, 2, 3, 5 memory-bound, 5+9+1+7 = 22 ns,
// top rows 2, 5, 0; row 6, 100 ns of 1 TFLOP on 1 byte, is
// compute-bound: a's modelled time 122 ns).
func TestMemoryBoundTopThree(t *testing.T) {
	s := &Snapshot{Peak: &Peak{BytesPerS: 1e12}}
	s.Peak.FlopsPerS[tracer.DTypeFP32] = 1e14
	cats := []string{"a", "b", "a", "a", "b", "a"}
	for i, ns := range []int64{5, 9, 9, 1, 9, 7} {
		name := fmt.Sprintf("k%d", i)
		s.Kernels = append(s.Kernels, KernelRow{Name: name, DisplayName: name, Category: cats[i], Work: Work{Flops: 1, Bytes: 1e3, Ns: ns}})
	}
	s.Kernels = append(s.Kernels, KernelRow{Name: "k6", DisplayName: "k6", Category: "a", Work: Work{Flops: 1e12, Bytes: 1, Ns: 100}})
	s.Kernels[6].Work.FlopsByDType[tracer.DTypeFP32] = 1e12
	scan := &boundScan{s: s}
	names := func(top []string) []string {
		var got []string
		for _, x := range top {
			got = append(got, strings.Fields(x)[0])
		}
		return got
	}
	all, mem, top := memoryBound(scan, "", &kernelLabelSet{s: s})
	if all.Ns != 140 || mem.Ns != 40 {
		t.Errorf("modelled %d ns, memory-bound %d ns: want 140 and 40", all.Ns, mem.Ns)
	}
	if want := []string{"k1", "k2", "k4"}; !slices.Equal(names(top), want) {
		t.Errorf("top %q, want %v", top, want)
	}
	all, mem, top = memoryBound(scan, "a", &kernelLabelSet{s: s})
	if all.Ns != 122 || mem.Ns != 22 {
		t.Errorf("category a: modelled %d ns, memory-bound %d ns: want 122 and 22", all.Ns, mem.Ns)
	}
	if want := []string{"k2", "k5", "k0"}; !slices.Equal(names(top), want) {
		t.Errorf("category a: top %q, want %v", top, want)
	}
	if all, _, _ := memoryBound(scan, "none", &kernelLabelSet{s: s}); all.Ns != 0 {
		t.Errorf("a category of no rows: %d ns", all.Ns)
	}
}
