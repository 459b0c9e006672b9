// Package units holds formatting of quantities shared by the TUI (views)
// and the headless writers (report).
package units

import "fmt"

// LongDuration formats ns of at least 999.5 s (what three significant
// digits of seconds would print as "1000 s" or more) in minutes, hours
// and days, two units each, the smaller one rounded: "16 m 40 s",
// "2 h 05 m", "102 d 04 h". ok is false below 999.5 s: callers keep their
// own format there ("812 ms", "45.6 s"). Negative ns are formatted by
// their absolute value with a leading "-".
func LongDuration(ns int64) (s string, ok bool) {
	if ns < 0 {
		if ns == -ns { // MinInt64
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
	if sec < 3600 {
		return fmt.Sprintf("%d m %02d s", sec/60, sec%60), true
	}
	if m := sec/60 + (sec%60+30)/60; m < 24*60 {
		return fmt.Sprintf("%d h %02d m", m/60, m%60), true
	}
	h := sec/3600 + (sec%3600+1800)/3600
	return fmt.Sprintf("%d d %02d h", h/24, h%24), true
}
