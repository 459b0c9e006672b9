package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestTopCutsTransfers (--top 3 printed all 4
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

// TestTableLabelsTransfers: in the table the memcpy/memset rows come
// under their own line naming their count, time and share denominator,
// after the kernel rows (the share column changes denominator there).
func TestTableLabelsTransfers(t *testing.T) {
	s := snap()
	s.Kernels = []attrib.KernelRow{{Kind: tracer.KindKernel, Name: "k0", DisplayName: "k0", Count: 1, TotalNs: 40}}
	s.Transfers = []attrib.KernelRow{{Kind: tracer.KindMemcpy, Name: "Memcpy HtoD", DisplayName: "Memcpy HtoD", Count: 3, TotalNs: 2000}}
	s.Totals.TransferCount, s.Totals.TransferNs = 3, 2000
	var b strings.Builder
	if err := Write(&b, s, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	k, l, m := strings.Index(out, "\nk0 "), strings.Index(out, "\nmemcpy/memset (3, 2.00 µs; share of memcpy/memset time):\n"), strings.Index(out, "\nMemcpy HtoD ")
	if k < 0 || l < k || m < l {
		t.Errorf("want k0, then the memcpy/memset line, then Memcpy HtoD:\n%s", out)
	}
}

// TestTableFitsWidth: at Options.Width 80 no line of a kernel table whose
// name is 120 runes is wider than 80, the name, count, total and share
// columns stay, and every column left out is named and gone from the
// header; without a width the p99 column and the 72-rune name are there.
func TestTableFitsWidth(t *testing.T) {
	s := snap()
	long := strings.Repeat("a", 60) + "_" + strings.Repeat("b", 59)
	s.Kernels = []attrib.KernelRow{{Kind: tracer.KindKernel, Name: long, DisplayName: long, Category: "gemm", Count: 12, TotalNs: 123456789, MeanNs: 10288065, MinNs: 1, MaxNs: 20000000, P50Ns: 1e7, P99Ns: 2e7, Share: 1}}
	s.Transfers = nil
	var b strings.Builder
	if err := Write(&b, s, Options{Format: "table", Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var head string
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d runes: %q", n, line)
		}
		if strings.HasPrefix(line, "kernel ") {
			head = line
		}
	}
	for _, col := range []string{"kernel", "count", "total", "share"} {
		if !strings.Contains(head, col) {
			t.Errorf("header %q lost %s", head, col)
		}
	}
	i := strings.Index(out, "left out to fit 80 columns: ")
	if i < 0 {
		t.Fatalf("no columns named as left out:\n%s", out)
	}
	list := strings.ReplaceAll(out[i+len("left out to fit 80 columns: "):], "\n  ", " ")
	list = list[:strings.Index(list, " (")]
	for _, col := range strings.Split(list, ", ") {
		if slices.Contains(strings.Fields(head), col) {
			t.Errorf("%s named as left out but in the header %q", col, head)
		}
	}
	b.Reset()
	if err := Write(&b, s, Options{Format: "table"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, " p99 ") || strings.Contains(out, "left out") || !strings.Contains(out, "names cut to 72") {
		t.Errorf("without a width: want every column and names cut to 72:\n%s", out)
	}
}

// TestWrapProse: lines break at the last space that fits, continuing
// indented by two; a word longer than the width stays whole (by hand).
func TestWrapProse(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"aaa bbb ccc", 7, "aaa bbb\n  ccc"},
		{"aaa bbb ccc", 0, "aaa bbb ccc"},
		{"aaaaaaaaaa b\nc d", 4, "aaaaaaaaaa\n  b\nc d"},
		{"short\n", 80, "short\n"},
	} {
		if got := wrapProse(c.in, c.width); got != c.want {
			t.Errorf("wrapProse(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}
