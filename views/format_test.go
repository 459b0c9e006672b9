package views_test

import (
	"testing"

	"github.com/rlktop/rlktop/views"
)

func TestFormatNs(t *testing.T) {
	cases := []struct {
		ns   int64
		want string
	}{
		{0, "0 ns"}, {999, "999 ns"}, {1_000, "1.00 µs"}, {1_234, "1.23 µs"},
		{12_345, "12.3 µs"}, {123_456, "123 µs"}, {999_499, "999 µs"}, {999_500, "1.00 ms"},
		{45_600_000, "45.6 ms"}, {1_000_000_000, "1.00 s"}, {1_250_000_000, "1.25 s"},
		{3_600_000_000_000, "1 h 00 m"}, {-2_500, "-2.50 µs"}, {9_996, "10.0 µs"},
		// From 999.5 s: minutes, hours, days (a span of 102 d 4 h 10 min).
		{999_000_000_000, "999 s"}, {999_500_000_000, "16 m 40 s"}, {8_827_800_000_000_000, "102 d 04 h"},
	}
	for _, c := range cases {
		if got := views.FormatNs(c.ns); got != c.want {
			t.Errorf("FormatNs(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestFormatCountShareBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := views.FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
	if got := views.FormatShare(0.3596); got != "36.0%" {
		t.Errorf("FormatShare = %q", got)
	}
	for n, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB", 12 << 20: "12.0 MiB", 16 << 30: "16.0 GiB"} {
		if got := views.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
