package units

import (
	"math"
	"testing"
	"time"
)

// TestLongDuration: values worked out by hand. 102 days 4 h 10 min
// (a span over 102 days printed as "8827800 s"):
// (102·86400 + 4·3600 + 600) s = 8,827,800 s → "102 d 04 h".
func TestLongDuration(t *testing.T) {
	cases := []struct {
		ns   int64
		want string
		ok   bool
	}{
		{999_400_000_000, "", false},           // 999.4 s: the caller's "999 s"
		{999_500_000_000, "16 m 40 s", true},   // rounds to 1000 s
		{3_599_400_000_000, "59 m 59 s", true}, // 3599.4 s
		{3_600_000_000_000, "1 h 00 m", true},  // 3600 s
		{7_529_000_000_000, "2 h 05 m", true},  // 7529 s = 125.48 min
		{86_399_000_000_000, "1 d 00 h", true}, // 86399 s rounds to 1440 min: a day
		{86_400_000_000_000, "1 d 00 h", true}, // one day
		{8_827_800_000_000_000, "102 d 04 h", true},
		{-3_600_000_000_000, "-1 h 00 m", true},
		{math.MaxInt64, "106752 d 00 h", true}, // 9,223,372,037 s = 106751 d 23 h 47 m 17 s: 47 m rounds the hour up
		{math.MinInt64, "-106752 d 00 h", true},
	}
	for _, c := range cases {
		got, ok := LongDuration(c.ns)
		if got != c.want || ok != c.ok {
			t.Errorf("LongDuration(%d) = %q, %v; want %q, %v", c.ns, got, ok, c.want, c.ok)
		}
	}
}

// TestDuration: expected strings worked out by hand (three significant
// digits; the unit after rounding). The two rules that disagreed before
// units.Duration was the only one: report printed 999,700 ns as
// "1000 µs" and 9,996 ns as "10.00 µs" (four digits), the TUI
// "1.00 ms" and "10.0 µs".
func TestDuration(t *testing.T) {
	cases := []struct {
		ns   int64
		want string
	}{
		{0, "0 ns"},
		{999, "999 ns"},
		{1_000, "1.00 µs"},
		{1_234, "1.23 µs"},
		{9_994, "9.99 µs"},
		{9_996, "10.0 µs"}, // 9.996 rounds to 10.00: one decimal, not "10.00"
		{45_649, "45.6 µs"},
		{99_960, "100 µs"},
		{999_499, "999 µs"},
		{999_700, "1.00 ms"}, // not "1000 µs"
		{45_600_000, "45.6 ms"},
		{999_500_000, "1.00 s"},
		{1_200_000_000, "1.20 s"},
		{999_400_000_000, "999 s"},
		{999_500_000_000, "16 m 40 s"},
		{-1_234, "-1.23 µs"},
		{-999_700, "-1.00 ms"},
		{math.MinInt64, "-106752 d 00 h"},
	}
	for _, c := range cases {
		if got := Duration(c.ns); got != c.want {
			t.Errorf("Duration(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

// TestElapsed: the TUI's clock of a running comparison; past an hour it
// now reads as LongDuration does (it printed "75 m 00 s" before).
func TestElapsed(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0 s"},
		{42*time.Second + 400*time.Millisecond, "42 s"},
		{59*time.Second + 600*time.Millisecond, "1 m 00 s"},
		{185 * time.Second, "3 m 05 s"},
		{75 * time.Minute, "1 h 15 m"},
		{25 * time.Hour, "1 d 01 h"},
	}
	for _, c := range cases {
		if got := Elapsed(c.d); got != c.want {
			t.Errorf("Elapsed(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestShareRatio: shares and ratios by hand.
func TestShareRatio(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{0, "0.0%"}, {0.123, "12.3%"}, {0.99951, "100.0%"}, {1.5, "150.0%"}, {math.NaN(), "NaN%"}} {
		if got := Share(c.f); got != c.want {
			t.Errorf("Share(%v) = %q, want %q", c.f, got, c.want)
		}
	}
	if got := Percent(145.26); got != "145.3%" {
		t.Errorf("Percent(145.26) = %q, want 145.3%%", got)
	}
	for _, c := range []struct {
		v, lo, hi float64
		want      string
	}{
		{1.0434, 1.0121, 1.0709, "1.043 [1.012, 1.071]"},
		{0.5, 0, 0, "0.500"},
		{0, 0, 0, "—"},
		{math.Inf(1), 0, 0, "+Inf"},
	} {
		if got := Ratio(c.v, c.lo, c.hi); got != c.want {
			t.Errorf("Ratio(%v, %v, %v) = %q, want %q", c.v, c.lo, c.hi, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b int64
		want string
	}{{0, 0, "-"}, {0, 5, "new"}, {5, 0, "gone"}, {3, 1, "0.333"}, {2, 3, "1.500"}} {
		if got := RatioOf(c.a, c.b); got != c.want {
			t.Errorf("RatioOf(%d, %d) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestCountBytes by hand: 1536 B = 1.5 KiB; 126,143,283 B / 2^20 = 120.3.
func TestCountBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-1234, "-1,234"}, {math.MinInt64, "-9,223,372,036,854,775,808"}} {
		if got := Count(c.n); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {1536, "1.5 KiB"}, {126_143_283, "120.3 MiB"}, {2 << 30, "2.0 GiB"}} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestDurationInterval: 656,250 ns and 718,750 ns (10.5 ms / 16 and
// 11.5 ms / 16, report's sweep fixture) by hand.
func TestDurationInterval(t *testing.T) {
	if got, want := DurationInterval(656_250, 718_750), "[656 µs, 719 µs]"; got != want {
		t.Errorf("DurationInterval = %q, want %q", got, want)
	}
}

// TestTimes: the prose form, by hand (the "0.71× [0.70, 0.75]").
func TestTimes(t *testing.T) {
	if got := Times(0.714); got != "0.71×" {
		t.Errorf("Times(0.714) = %q", got)
	}
	if got := TimesInterval(0.714, 0.7, 0.754); got != "0.71× [0.70, 0.75]" {
		t.Errorf("TimesInterval = %q", got)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int64]string{0: "0 steps", 1: "1 step", 2: "2 steps", 1200: "1,200 steps"} {
		if got := Plural(n, "step"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSI: prefixes by hand; zero is none ("0 FLOP"), not "0.00".
func TestSI(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{0, "FLOP", "0 FLOP"},
		{0.004, "FLOP", "0.00 FLOP"}, // a small amount still shows its rounding
		{512, "B", "512 B"},
		{999.4, "B", "999 B"},
		{999.5, "B", "1.00 kB"},
		{8.52e12, "FLOP/s", "8.52 TFLOP/s"},
		{-3.35e12, "B/s", "-3.35 TB/s"},
	} {
		if got := SI(c.v, c.unit); got != c.want {
			t.Errorf("SI(%g, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

// TestShareWhole: whole percentages as fmt's %.0f rounds them (half to
// even on the binary value: 0.125 is exactly 12.5 → "12%").
func TestShareWhole(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{0.123, "12%"}, {0.125, "12%"}, {0.135, "14%"}, {1, "100%"}, {0, "0%"}, {0.996, "100%"}} {
		if got := ShareWhole(c.f); got != c.want {
			t.Errorf("ShareWhole(%v) = %q, want %q", c.f, got, c.want)
		}
	}
	if got := PercentWhole(42.4); got != "42%" {
		t.Errorf("PercentWhole(42.4) = %q", got)
	}
}
