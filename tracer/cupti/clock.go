package cupti

import "sort"

// Clock maps CUPTI timestamps (ns, CUPTI's clock, which a process may
// replace — Kineto installs a TSC clock) to host CLOCK_MONOTONIC ns using
// pairs sampled together. Between two pairs the offset is interpolated
// linearly; before the first and after the last pair the nearest pair's
// offset holds. With no pair at all the CUPTI time is returned unchanged.
// It keeps the last MaxPairs pairs. Not safe for concurrent use.
type Clock struct {
	pairs []clockPair // ascending cupti
}

type clockPair struct{ cupti, host int64 }

// MaxPairs bounds how many pairs a Clock keeps.
const MaxPairs = 4096

// Add records that CUPTI time cupti (ns) and host time host (ns) were read
// at the same moment. Pairs that go backwards in either clock replace the
// history (the clock source changed).
func (c *Clock) Add(cupti, host int64) {
	if n := len(c.pairs); n > 0 {
		last := c.pairs[n-1]
		if cupti < last.cupti || host < last.host {
			c.pairs = c.pairs[:0]
		} else if cupti == last.cupti {
			return
		}
	}
	if len(c.pairs) == MaxPairs {
		copy(c.pairs, c.pairs[MaxPairs/2:])
		c.pairs = c.pairs[:MaxPairs-MaxPairs/2]
	}
	c.pairs = append(c.pairs, clockPair{cupti, host})
}

// Len returns the number of pairs held.
func (c *Clock) Len() int { return len(c.pairs) }

// Host maps a CUPTI timestamp (ns) to host CLOCK_MONOTONIC ns.
func (c *Clock) Host(t int64) int64 {
	n := len(c.pairs)
	switch {
	case n == 0:
		return t
	case t <= c.pairs[0].cupti:
		return t + c.pairs[0].host - c.pairs[0].cupti
	case t >= c.pairs[n-1].cupti:
		return t + c.pairs[n-1].host - c.pairs[n-1].cupti
	}
	i := sort.Search(n, func(i int) bool { return c.pairs[i].cupti > t }) // pairs[i-1] <= t < pairs[i]
	a, b := c.pairs[i-1], c.pairs[i]
	offA, offB := a.host-a.cupti, b.host-b.cupti
	span := b.cupti - a.cupti
	// offA + (offB-offA)*(t-a)/span without overflow for spans up to ~292 years.
	d := float64(offB-offA) * float64(t-a.cupti) / float64(span)
	return t + offA + int64(d)
}
