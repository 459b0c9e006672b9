package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestTopCutsTransfers (lead's user trial: --top 3 printed all 4
// memcpy/memset rows): table and md cut kernels and transfers to --top
// each, as JSON does, and count what they left out: 4 kernels and 4
// transfers at --top 3 leave 1 + 1 = 2 rows out (by hand).
func TestTopCutsTransfers(t *testing.T) {
	s := snap()
	s.Kernels, s.Transfers = nil, nil
	for i := range 4 {
		s.Kernels = append(s.Kernels, attrib.KernelRow{Kind: tracer.KindKernel, Name: fmt.Sprintf("k%d", i), DisplayName: fmt.Sprintf("k%d", i), Count: 1, TotalNs: int64(40 - i)})
		s.Transfers = append(s.Transfers, attrib.KernelRow{Kind: tracer.KindMemcpy, Name: fmt.Sprintf("Memcpy %d", i), DisplayName: fmt.Sprintf("Memcpy %d", i), Count: 1, TotalNs: int64(20 - i)})
	}
	for _, f := range []string{"table", "md"} {
		var b strings.Builder
		if err := Write(&b, s, Options{Format: f, Top: 3}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "Memcpy 2") || strings.Contains(out, "Memcpy 3") || strings.Contains(out, "k3") {
			t.Errorf("%s: want k0–k2 and Memcpy 0–2 only:\n%s", f, out)
		}
		if !strings.Contains(out, "2 more rows") {
			t.Errorf("%s: want '2 more rows':\n%s", f, out)
		}
	}
}
