package demo

import (
	"testing"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// TestForwardReportsScores: a forward on the math attention path reports
// each layer's [nb, H, T, T] float32 score matrix allocated and freed
// (nb·H·T²·4 bytes, hand count from the config), at one address per
// layer; the fused path reports nothing (it never writes them).
func TestForwardReportsScores(t *testing.T) {
	c := smallCfg()
	m := newModel(c)
	_, tok, _ := playedGames(t, 8, 10, 3)
	tr := gotrace.New(1 << 12)
	tr.Enable(true)
	nm := registerNames(tr)
	a := m.newActs(8)
	copy(a.tok, tok)
	m.forward(a, "math", "fused", tr, &nm)
	ms := tr.TakeMemory()
	want := int64(8*c.Heads*Tokens*Tokens) * 4
	if len(ms) != 2*c.Layers {
		t.Fatalf("%d memory events, want %d (alloc and free per layer): %+v", len(ms), 2*c.Layers, ms)
	}
	for i, e := range ms {
		sign := int64(1)
		if i%2 == 1 {
			sign = -1
		}
		if e.Bytes != sign*want || e.Addr != memScoresAddr+uint64(i/2) || (i%2 == 1 && e.TS < ms[i-1].TS) {
			t.Errorf("event %d %+v: want %d bytes at %#x", i, e, sign*want, memScoresAddr+i/2)
		}
	}
	m.forward(a, "fused", "fused", tr, &nm)
	if ms := tr.TakeMemory(); len(ms) != 0 {
		t.Errorf("fused attention reported %d memory events, want none", len(ms))
	}
}
