package session

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestLinkerPruneAmortized: a thread fed far more operators than maxIvs
// keeps at most maxIvs, and prunes in chunks (a quarter of maxIvs at a
// time), not once per operator — 20,000 operators over a bound of 1,000
// need about (20,000 − 1,000) / 250 = 76 prunes, not 19,000.
func TestLinkerPruneAmortized(t *testing.T) {
	strs := tracer.NewStrings()
	l := newLinker(strs, func([]tracer.Event) {})
	l.maxIvs = 1000
	name := strs.Intern("aten::mm")
	for i := range 20000 {
		e := tracer.Event{Kind: tracer.KindCPUOp, Name: name, PID: 1, TID: 1, Start: int64(i) * 10, Dur: 5, Device: -1}
		l.add(&e, 0)
		if n := l.core.Intervals(1, 1); n > l.maxIvs {
			t.Fatalf("after %d operators the thread holds %d intervals, bound %d", i+1, n, l.maxIvs)
		}
	}
	if l.prunes > 80 {
		t.Errorf("%d prunes for 20,000 operators over a bound of 1,000: want about 76", l.prunes)
	}
}
