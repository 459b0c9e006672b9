package views_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

func TestKernelsSortAndFilter(t *testing.T) {
	k := views.NewKernels(styles())
	k.SetSize(80, 20)
	k.SetFocused(true)
	k.SetSnapshot(viewstest.Snapshot())
	if n := len(k.Rows()); n != len(viewstest.Kernels) {
		t.Fatalf("rows = %d, want %d", n, len(viewstest.Kernels))
	}
	check := func(name string, less func(a, b viewstest.Kernel) bool) {
		t.Helper()
		rows := k.Rows()
		byName := map[string]viewstest.Kernel{}
		for _, f := range viewstest.Kernels {
			byName[f.Name] = f
		}
		for i := 1; i < len(rows); i++ {
			if less(byName[rows[i].Name], byName[rows[i-1].Name]) {
				t.Errorf("%s: row %d (%s) should come before row %d (%s)", name, i, rows[i].DisplayName, i-1, rows[i-1].DisplayName)
			}
		}
	}
	press(k, "c")
	if col, desc := k.Sort(); col != attrib.ByCount || !desc {
		t.Fatalf("after c: sort %v desc %v", col, desc)
	}
	check("count desc", func(a, b viewstest.Kernel) bool { return a.Count > b.Count })
	press(k, "c")
	check("count asc", func(a, b viewstest.Kernel) bool { return a.Count < b.Count })
	press(k, "m")
	check("mean desc", func(a, b viewstest.Kernel) bool { return a.TotalNs/a.Count > b.TotalNs/b.Count })
	press(k, "n")
	check("name asc", func(a, b viewstest.Kernel) bool { return a.Display < b.Display })
	press(k, "t")
	check("total desc", func(a, b viewstest.Kernel) bool { return a.TotalNs > b.TotalNs })

	// Filter: case-insensitive substring of the name or the display name,
	// counted here straight from the fixture.
	for _, f := range []string{"GEMM", "flash", "kernel<", "cub::", "qkv"} {
		want := 0
		for _, r := range viewstest.Kernels {
			lf := strings.ToLower(f)
			if strings.Contains(strings.ToLower(r.Name), lf) || strings.Contains(strings.ToLower(r.Display), lf) {
				want++
			}
		}
		k.SetFilter(f)
		if got := len(k.Rows()); got != want {
			t.Errorf("filter %q: %d rows, want %d", f, got, want)
		}
	}
	// x adds the memcpy/memset rows; their share becomes a share of all
	// GPU time (1,040 ms in the fixture: 1,000 ms kernels + 40 ms transfers).
	k.SetFilter("")
	press(k, "x")
	if got := len(k.Rows()); got != len(viewstest.Kernels)+2 {
		t.Fatalf("with transfers: %d rows, want %d", got, len(viewstest.Kernels)+2)
	}
	press(k, "/", "m", "e", "m", "c", "p", "y", "enter")
	if got := k.Rows(); len(got) != 1 || got[0].TotalNs != 30_000_000 {
		t.Fatalf("memcpy filter: %+v", got)
	}
	press(k, "x")
	if got := len(k.Rows()); got != 0 {
		t.Fatalf("transfers hidden again but %d memcpy rows remain", got)
	}
	press(k, "esc")
	// Typing through the input, then esc clears.
	k.SetFilter("")
	press(k, "/", "v", "o", "l", "t", "a")
	if got := k.Rows(); len(got) != 1 || got[0].Name != "volta_sgemm_64x64_nt" {
		t.Fatalf("filter volta: %v", got)
	}
	if !k.Capturing() {
		t.Fatal("filter input should capture keys")
	}
	press(k, "esc")
	if k.Capturing() || k.Filter() != "" || len(k.Rows()) != len(viewstest.Kernels) {
		t.Fatalf("esc should close and clear the filter: capturing %v filter %q rows %d", k.Capturing(), k.Filter(), len(k.Rows()))
	}
}

func TestKernelsKeepsSelectionAcrossSnapshots(t *testing.T) {
	k := views.NewKernels(styles())
	k.SetSize(80, 20)
	k.SetSnapshot(viewstest.Snapshot())
	press(k, "down", "down", "down") // cudnn bn_bw, 4th by total
	want := k.Selected().Name
	s := viewstest.Snapshot()
	// A live update where that kernel grew to the top.
	for i := range s.Kernels {
		if s.Kernels[i].Name == want {
			s.Kernels[i].TotalNs = 2_000_000_000
		}
	}
	k.SetSnapshot(s)
	if got := k.Selected().Name; got != want {
		t.Fatalf("selection moved to %q, want %q", got, want)
	}
	if k.Rows()[0].Name != want {
		t.Fatalf("grown kernel should sort first")
	}
}

// BenchmarkKernelsView renders the kernels table of a 2,000-kernel
// snapshot at 200×50, as a live session does ~10 times a second; and,
// separately, the cost of taking a new snapshot (filter + sort).
func BenchmarkKernelsView(b *testing.B) {
	snap := viewstest.Big(2000)
	k := views.NewKernels(styles())
	k.SetSize(200, 45)
	k.SetFocused(true)
	k.SetSnapshot(snap)
	b.Run("View", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = k.View()
		}
	})
	b.Run("SetSnapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k.SetSnapshot(snap)
		}
	})
	b.Run("SetSnapshotFiltered", func(b *testing.B) {
		k.SetFilter("mulfunctor<float>>")
		b.ReportAllocs()
		for b.Loop() {
			k.SetSnapshot(snap)
		}
	})
}

// Real kernel names from the V100 ResNet trace whose shortened display
// names collide; the table must show them apart.
func TestKernelsDuplicateDisplayNames(t *testing.T) {
	s := viewstest.Snapshot()
	s.Kernels = s.Kernels[:2]
	s.Kernels[0].Name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
	s.Kernels[1].Name = "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<float, float, float, at::native::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::BUnaryFunctor<float, float, float, at::native::MulFunctor<float> >, at::detail::Array<char*, 2>)"
	s.Kernels[0].DisplayName = "at::native::vectorized_elementwise_kernel"
	s.Kernels[1].DisplayName = "at::native::vectorized_elementwise_kernel"
	k := views.NewKernels(styles())
	k.SetSize(80, 8)
	k.SetSnapshot(s)
	narrow := render(t, k.View(), 80, 8)
	for _, want := range []string{"vectorized…CUDAFunctor_add<flo…", "vectorized…BUnaryFunctor<float…"} {
		if !strings.Contains(narrow, want) {
			t.Errorf("80 columns: table lacks %q:\n%s", want, narrow)
		}
	}
	k.SetSize(160, 8)
	out := render(t, k.View(), 160, 8)
	for _, want := range []string{
		// The shared "4, " is elided; the functors come first.
		"vectorized_elementwise_kernel<…CUDAFunctor_add<float>, Array<char*, 3>>",
		"vectorized_elementwise_kernel<…BUnaryFunctor<float, float, float, MulFunctor<float>>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestStepsFollowLiveTail(t *testing.T) {
	s := views.NewSteps(styles())
	s.SetSize(80, 4) // heading + 3 steps
	snap := viewstest.Snapshot()
	full := snap.Steps
	snap.Steps = full[:1]
	s.SetSnapshot(snap)
	for n := 2; n <= len(full); n++ {
		next := *snap
		next.Steps = full[:n]
		s.SetSnapshot(&next)
	}
	out := render(t, s.View(), 80, 4)
	if !strings.Contains(out, " 5 ") || strings.Contains(out, " 1 ") {
		t.Fatalf("steps view should follow the newest steps:\n%s", out)
	}
	press(s, "up", "up", "up", "up")
	next := *snap
	next.Steps = append(append([]attrib.StepRow{}, full...), attrib.StepRow{Step: 6, DurNs: 1})
	s.SetSnapshot(&next)
	if out := render(t, s.View(), 80, 4); !strings.Contains(out, " 1 ") {
		t.Fatalf("after moving up the view should stay put:\n%s", out)
	}
}

// Four real cutlass kernel names of the A100 trace
// (hta_diff_control_a100) that differ in their tile shape and their
// alignment, too far apart for the 32 cells an 80-column table gives
// names: the table numbers them (" #1", " #2"), the detail pane of the
// selected row says which number it is beside its full name, and the
// view's info line says what the numbers mean; at 200 columns the names
// show whole and nothing is numbered.
func TestKernelsNumberedNamesExplained(t *testing.T) {
	s := viewstest.Snapshot()
	base := s.Kernels[0]
	s.Kernels = nil
	for _, v := range []string{"128x128_32x3_nt_align1", "128x128_32x3_nt_align4", "256x128_32x3_nt_align1", "256x128_32x3_nt_align4"} {
		r := base
		r.Name = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_" + v + ">(cutlass_80_tensorop_s1688gemm_" + v + "::Params)"
		r.DisplayName = ""
		r.TotalNs -= int64(len(s.Kernels)) // a fixed order by total
		s.Kernels = append(s.Kernels, r)
	}
	k := views.NewKernels(styles())
	k.SetSize(80, 12)
	k.SetSnapshot(s)
	out := render(t, k.View(), 80, 12)
	tag := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "›") {
			if m := regexp.MustCompile(` (#[0-9]+) `).FindStringSubmatch(line); m != nil {
				tag = m[1]
			}
		}
	}
	if tag == "" {
		t.Fatalf("80 columns: the selected row's name is not numbered:\n%s", out)
	}
	if want := "name " + tag + " void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_"; !strings.Contains(out, want) {
		t.Errorf("detail pane lacks %q:\n%s", want, out)
	}
	if !strings.Contains(k.Info(), "#N: alike names, full one below") {
		t.Errorf("info %q does not say what the numbers mean", k.Info())
	}
	k.SetSize(200, 12)
	if out := render(t, k.View(), 200, 12); strings.Contains(k.Info(), "#N") || regexp.MustCompile(` #[0-9]+ `).MatchString(out) {
		t.Errorf("200 columns: numbers shown or spoken of (info %q):\n%s", k.Info(), out)
	}
}
