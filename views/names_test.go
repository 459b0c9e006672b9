package views

import (
	"slices"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// namesRows are kernel rows whose names come from the V100 ResNet trace
// (hta_ns_resolution_v100): the first two share a display name, which
// DistinctNames tells apart; with one of them gone the other shows its
// display name.
func namesRows() []attrib.KernelRow {
	ew := "at::native::vectorized_elementwise_kernel"
	return []attrib.KernelRow{
		{Name: "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", DisplayName: ew},
		{Name: "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", DisplayName: ew},
		{Name: "volta_sgemm_64x64_nt", DisplayName: "volta_sgemm_64x64_nt"},
		{Name: "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)", DisplayName: "cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>"},
		{Name: "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", DisplayName: "ncclKernel_AllReduce_RING_LL_Sum_float"},
		{Name: "volta_sgemm_128x64_nt", DisplayName: "volta_sgemm_128x64_nt"},
	}
}

// kernelNames across snapshots: reordered rows keep their names without
// telling them apart again; a set that changed (a name swapped for
// another, the row count unchanged; a moved row that is another name)
// shows the new names. The wanted names are DistinctNames of each
// snapshot's rows, computed afresh. Rows without name ids, with a live
// session's (one table: 1, 2, …; or ids in the millions, kept in a map),
// and with ids that lie (another table's, where one id names two rows'
// names).
func TestKernelNamesAcrossSnapshots(t *testing.T) {
	for _, ids := range []string{"none", "one table", "sparse", "tables"} {
		t.Run(ids, func(t *testing.T) {
			base := namesRows()
			for i := range base {
				switch ids {
				case "one table":
					base[i].NameID = tracer.StrID(i + 1)
				case "sparse": // a long session's table: ids in the millions
					base[i].NameID = tracer.StrID((i + 1) * 1_000_000)
				case "tables":
					base[i].NameID = tracer.StrID(i%2 + 1)
				}
			}
			kernelNamesAcross(t, base)
			if ids == "one table" || ids == "sparse" {
				// The same names from another source's table: the ids of
				// the first two rows (one display name) swapped.
				var n kernelNames
				n.SetRows(base)
				other := slices.Clone(base)
				other[0].NameID, other[1].NameID = base[1].NameID, base[0].NameID
				n.SetRows(other)
				want := attrib.DistinctNames(names(other))
				for i := range other {
					if got := n.Shown(i); got != want[i] {
						t.Errorf("ids of another table: row %d shows %q, want %q", i, got, want[i])
					}
				}
			}
		})
	}
}

// names is the rows' names and display names.
func names(rows []attrib.KernelRow) (n, d []string) {
	for _, r := range rows {
		n, d = append(n, r.Name), append(d, r.DisplayName)
	}
	return n, d
}

func kernelNamesAcross(t *testing.T, base []attrib.KernelRow) {
	fresh := func(rows []attrib.KernelRow) []string { return attrib.DistinctNames(names(rows)) }
	check := func(what string, n *kernelNames, rows []attrib.KernelRow) {
		t.Helper()
		want := fresh(rows)
		for i := range rows {
			if got := n.Shown(i); got != want[i] {
				t.Errorf("%s: row %d shows %q, want %q", what, i, got, want[i])
			}
			if got, w := n.Fitted(i, 20), attrib.FitNames(want, 20)[i]; got != w {
				t.Errorf("%s: row %d fitted %q, want %q", what, i, got, w)
			}
		}
	}
	var n kernelNames
	n.SetRows(base)
	check("first", &n, base)
	set := &n.shown[0]

	// Neighbours swapped and the last row moved to the top.
	moved := slices.Clone(base)
	moved[0], moved[1] = moved[1], moved[0]
	moved = append(moved[len(moved)-1:], moved[:len(moved)-1]...)
	n.SetRows(moved)
	check("moved", &n, moved)
	if &n.shown[0] != set {
		t.Error("reordered rows were told apart again")
	}

	// One name replaced by a new one, in place and moved.
	for _, at := range []int{0, 3} {
		other := slices.Clone(moved)
		other[at].Name, other[at].DisplayName = "volta_sgemm_128x64_nn", "volta_sgemm_128x64_nn"
		if at > 0 {
			other[at], other[at+1] = other[at+1], other[at]
		}
		n.SetRows(moved)
		n.SetRows(other)
		check("replaced", &n, other)
	}
	// One name twice in place of another (same count, another
	// multiset): the FillFunctor row gone, the add row shows its display
	// name.
	dup := slices.Clone(base)
	dup[1] = dup[2]
	n.SetRows(base)
	n.SetRows(dup)
	check("duplicated", &n, dup)
	if n.Shown(0) != "at::native::vectorized_elementwise_kernel" {
		t.Errorf("row 0 shows %q", n.Shown(0))
	}
}
