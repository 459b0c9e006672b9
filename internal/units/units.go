// Package units formats quantities for people: durations, elapsed
// clock time, shares, ratios with their intervals, counts and byte sizes.
// It is the one implementation shared by the TUI (views, tui) and the
// headless writers (report), so a number reads the same on the screen and
// in a report (pprof's internal/measurement is the model: one package
// that turns a value of a known unit into text). Text from traces is made
// safe by internal/escape, not here.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration formats ns with three significant digits in the unit that
// keeps the printed number between 1 and 999: "812 ns", "1.23 µs",
// "45.6 ms", "1.20 s", and from 999.5 s in minutes, hours and days
// (LongDuration): "16 m 40 s", "102 d 04 h". The unit is chosen after
// rounding, so 999,700 ns is "1.00 ms", never "1000 µs" (NIST SP 811,
// 1995, §7.9: prefixes "chosen in such a way that numerical values are
// between 0.1 and 1000"). Negative values keep their sign.
func Duration(ns int64) string {
	if ns < 0 {
		if ns == math.MinInt64 {
			ns++ // one ns less: -ns would overflow
		}
		return "-" + Duration(-ns)
	}
	v := float64(ns)
	switch {
	case v < 999.5:
		return strconv.FormatInt(ns, 10) + " ns"
	case v < 999.5e3:
		return Sig3(v/1e3) + " µs"
	case v < 999.5e6:
		return Sig3(v/1e6) + " ms"
	}
	if l, ok := LongDuration(ns); ok {
		return l
	}
	return Sig3(v/1e9) + " s"
}

// Sig3 formats v (≥ 0.9995 for three significant digits; below, two
// decimals) never in exponent form: "1.23", "45.6", "812", "1234".
func Sig3(v float64) string {
	switch {
	case v < 9.995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// LongDuration formats ns of at least 999.5 s (what three significant
// digits of seconds would print as "1000 s" or more) in minutes, hours
// and days, two units each, the smaller one rounded: "16 m 40 s",
// "2 h 05 m", "102 d 04 h". ok is false below 999.5 s (Duration prints
// "812 ms", "45.6 s" there). Negative ns are formatted by their absolute
// value with a leading "-".
func LongDuration(ns int64) (s string, ok bool) {
	if ns < 0 {
		if ns == math.MinInt64 {
			ns++
		}
		s, ok = LongDuration(-ns)
		if ok {
			s = "-" + s
		}
		return s, ok
	}
	if float64(ns) < 999.5e9 {
		return "", false
	}
	sec := ns / 1_000_000_000
	if ns%1_000_000_000 >= 500_000_000 {
		sec++
	}
	return clock(sec), true
}

// clock writes sec (≥ 60) as minutes and seconds below an hour, hours and
// minutes below a day, else days and hours; the smaller unit rounded.
func clock(sec int64) string {
	if sec < 3600 {
		return fmt.Sprintf("%d m %02d s", sec/60, sec%60)
	}
	if m := sec/60 + (sec%60+30)/60; m < 24*60 {
		return fmt.Sprintf("%d h %02d m", m/60, m%60)
	}
	h := sec/3600 + (sec%3600+1800)/3600
	return fmt.Sprintf("%d d %02d h", h/24, h%24)
}

// Elapsed formats wall-clock time that is counting (a comparison running
// for d) in whole seconds: "42 s", then as LongDuration does from a
// minute on: "3 m 05 s", "1 h 15 m". Negative d is "0 s".
func Elapsed(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 60 {
		return fmt.Sprintf("%d s", max(s, 0))
	}
	return clock(s)
}

// Share formats a fraction (0.123) as a percentage with one decimal:
// "12.3%". NaN is "NaN%".
func Share(f float64) string { return Percent(f * 100) }

// Percent formats a value already in percent (a CPU% of 145.25) with one
// decimal: "145.3%" (Share of p/100, without the division's rounding).
func Percent(p float64) string {
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// ShareWhole formats a fraction (0.123) as a whole percentage: "12%", for
// a share a sentence quotes (findings' evidence, a progress line) where a
// decimal would be noise. NaN is "NaN%".
func ShareWhole(f float64) string { return PercentWhole(f * 100) }

// PercentWhole formats a value already in percent (42.4) as a whole
// percentage: "42%".
func PercentWhole(p float64) string {
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// Ratio formats a ratio (B/A) to three decimals with its confidence
// interval: "1.043 [1.012, 1.071]" (the interval as APA style writes
// one: brackets, comma). Without an interval (lo and hi both 0) the value
// alone, "1.043"; without a ratio (all three 0) "—".
func Ratio(v, lo, hi float64) string {
	switch {
	case v == 0 && lo == 0 && hi == 0:
		return "—"
	case lo == 0 && hi == 0:
		return ratio3(v)
	}
	return ratio3(v) + " " + Interval(lo, hi)
}

// Interval formats a ratio's confidence interval to three decimals:
// "[1.012, 1.071]".
func Interval(lo, hi float64) string {
	return "[" + ratio3(lo) + ", " + ratio3(hi) + "]"
}

// ratio3 is v to three decimals (±Inf as "+Inf", "-Inf").
func ratio3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// Times formats a ratio in prose as a factor, two decimals and "×":
// "0.71×" — the short form of a sentence ("step 0.71× [0.70, 0.75]
// faster", the wording); tables use Ratio's three decimals.
func Times(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "×" }

// TimesInterval is Times with its interval to two decimals:
// "0.71× [0.70, 0.75]".
func TimesInterval(v, lo, hi float64) string {
	return Times(v) + " [" + strconv.FormatFloat(lo, 'f', 2, 64) + ", " + strconv.FormatFloat(hi, 'f', 2, 64) + "]"
}

// DurationInterval formats a confidence interval of durations (ns) as
// Interval does a ratio's: "[10.5 ms, 11.5 ms]".
func DurationInterval(lo, hi int64) string {
	return "[" + Duration(lo) + ", " + Duration(hi) + "]"
}

// RatioOf formats b/a (two totals in the same unit) as Ratio does: "-"
// when both are 0, "new" when only a is, "gone" when only b is (not
// "0.000": a row only in A is the mirror of one only in B).
func RatioOf(a, b int64) string {
	switch {
	case a == 0 && b == 0:
		return "-"
	case a == 0:
		return "new"
	case b == 0:
		return "gone"
	}
	return ratio3(float64(b) / float64(a))
}

// Plural says n things, n as Count writes it: "1 step", "1,200 steps"
// (what takes an s).
func Plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return Count(n) + " " + what + "s"
}

// Count formats n with thousands separators: 1234567 → "1,234,567".
func Count(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "-9,223,372,036,854,775,808"
		}
		return "-" + Count(-n)
	}
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// Bytes formats a byte count in binary (IEC) units: "512 B", "1.5 KiB",
// "120.3 MiB", "2.0 GiB", up to PiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// SI formats v with a decimal SI prefix and three significant digits
// before unit: SI(8.52e12, "FLOP/s") = "8.52 TFLOP/s", SI(3.35e12, "B/s")
// = "3.35 TB/s", SI(512, "B") = "512 B". Rates and work counts (FLOPs,
// bytes moved) are quoted in powers of 1000, as datasheets quote them;
// memory sizes are Bytes' powers of 1024.
func SI(v float64, unit string) string {
	if v < 0 {
		return "-" + SI(-v, unit)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64) + " " + unit
	}
	if v == 0 {
		return "0 " + unit // none, not a small amount rounded ("0.00")
	}
	const prefixes = " kMGTPE"
	i := 0
	for v >= 999.5 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return Sig3(v) + " " + unit
	}
	return Sig3(v) + " " + string(prefixes[i]) + unit
}
