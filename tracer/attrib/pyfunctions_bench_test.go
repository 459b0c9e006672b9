package attrib_test

import (
	"fmt"
	"testing"

	"github.com/rlktop/rlktop/views/viewstest"
)

// BenchmarkPyFunctions is the function table of every stage of the
// profiles BenchmarkFrame's Python view shows, at 2k, 20k and 100k
// functions: FunctionTable (what the view's table builds once per
// snapshot), Functions (every row made, as reports use it) and Tree
// (what the view's call tree builds).
func BenchmarkPyFunctions(b *testing.B) {
	for _, n := range []int{2_000, 20_000, 100_000} {
		p := viewstest.BigPython(n, false)
		b.Run(fmt.Sprintf("Table/%dk", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.FunctionTable("")
			}
		})
		b.Run(fmt.Sprintf("Rows/%dk", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Functions("")
			}
		})
		b.Run(fmt.Sprintf("Tree/%dk", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Tree("")
			}
		})
	}
}
