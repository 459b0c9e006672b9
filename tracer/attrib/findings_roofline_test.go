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
// 9, 1, 9, 7 give rows 1, 2, 4), and the sums over every row.
func TestMemoryBoundTopThree(t *testing.T) {
	s := &Snapshot{Peak: &Peak{BytesPerS: 1e12}}
	s.Peak.FlopsPerS[tracer.DTypeFP32] = 1e14
	for i, ns := range []int64{5, 9, 9, 1, 9, 7} {
		name := fmt.Sprintf("k%d", i)
		s.Kernels = append(s.Kernels, KernelRow{Name: name, DisplayName: name, Work: Work{Flops: 1, Bytes: 1e3, Ns: ns}})
	}
	all, mem, top := memoryBound(s, func(*KernelRow) bool { return true }, &kernelLabelSet{s: s})
	if all.Ns != 40 || mem.Ns != 40 {
		t.Errorf("modelled %d ns, memory-bound %d ns: want 40 and 40", all.Ns, mem.Ns)
	}
	var got []string
	for _, x := range top {
		got = append(got, strings.Fields(x)[0])
	}
	if want := []string{"k1", "k2", "k4"}; !slices.Equal(got, want) {
		t.Errorf("top %q, want %v", top, want)
	}
}
