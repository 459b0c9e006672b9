package units

import (
	"math"
	"testing"
)

// TestLongDuration: values worked out by hand. 102 days 4 h 10 min
// (user trial: a span over 102 days printed as "8827800 s"):
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
