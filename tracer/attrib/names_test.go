package attrib

import (
	"slices"
	"testing"
)

// Real names from the V100 ResNet trace (hta_ns_resolution_v100) whose
// display names collide (all "at::native::vectorized_elementwise_kernel");
// the wanted strings are written by hand from the names: the shared
// "vectorized_elementwise_kernel<4, " is elided, then what differs.
func TestDistinctNamesTemplates(t *testing.T) {
	names := []string{
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
		"gemm_nt",
		"void k<1>(int)",
		"void k<1>(float)",
	}
	disp := []string{"at::native::vectorized_elementwise_kernel", "at::native::vectorized_elementwise_kernel",
		"at::native::vectorized_elementwise_kernel", "gemm_nt", "k", "k"}
	got := DistinctNames(names, disp)
	want := []string{
		"vectorized_elementwise_kernel<…CUDAFunctor_add<float>, Array<char*, 3>>",
		"vectorized_elementwise_kernel<…FillFunctor<float>, Array<char*, 1>>",
		"vectorized_elementwise_kernel<…CUDAFunctor_add<float>, Array<char*, 3>>", // same name, another category
		"gemm_nt",
		"k<1>",    // differs only in the parameter list, which compacting drops:
		"k<1> #2", // numbered
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// FitNames at 16 runes, by hand: the plain cut of the first two is the
// same "split_embeddin…"; they differ after "split_embedding_backward_"
// (25 runes, a '_' boundary): "unweighted" (10) leaves room for a head of
// 16-1-10 = 5 runes, "weighted" (8) for 7. The last two differ at rune 20
// with no boundary in the 6 before: head 5 (16/3), "…", then from rune 20
// cut to 16. Names that fit are untouched.
func TestFitNames(t *testing.T) {
	names := []string{
		"split_embedding_backward_unweighted",
		"split_embedding_backward_weighted",
		"short",
		"aaaaaaaaaaaaaaaaaaaaX_bbbbbbbbbbbbbbbbbbbbbbY",
		"aaaaaaaaaaaaaaaaaaaaZ_bbbbbbbbbbbbbbbbbbbbbbW",
	}
	got := FitNames(names, 16)
	want := []string{"split…unweighted", "split_e…weighted", "short", "aaaaa…X_bbbbbbb…", "aaaaa…Z_bbbbbbb…"}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	for _, s := range got {
		if n := len([]rune(s)); n > 16 {
			t.Errorf("%q is %d runes, want <= 16", s, n)
		}
	}
}

// TestDistinctNamesEmptyCompact: a kernel whose compacted name is empty
// ("void ", "") beside another of the same display name gets a name, not
// a panic (the elision cut one past the end when the shared prefix had no
// ", ": strings.LastIndex's -1 plus 2).
func TestDistinctNamesEmptyCompact(t *testing.T) {
	for _, g := range [][]string{{"void ", "void x"}, {"", "a"}, {"void ", "void  "}} {
		got := DistinctNames(g, g)
		if len(got) != len(g) {
			t.Errorf("%q: %d names", g, len(got))
		}
	}
}
