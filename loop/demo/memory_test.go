package demo

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
)

// TestForwardReportsScores: a forward on the math attention path reports
// each layer's [nb, H, T, T] float32 score matrix allocated and freed
// (nb·H·T²·4 bytes, hand count from the config), at one address per
// layer, inside the layer's attention_math operator with the three math
// kernels; the fused path reports nothing (it never writes them), its
// kernel inside attention_fused.
func TestForwardReportsScores(t *testing.T) {
	c := smallCfg()
	m := newModel(c)
	_, tok, _ := playedGames(t, 8, 10, 3)
	tr := gotrace.New(1 << 12)
	tr.Enable(true)
	nm := registerNames(tr)
	a := m.newActs(8)
	copy(a.tok, tok)
	tr.Drain(func([]tracer.Event) {})
	m.forward(a, "math", "fused", tr, &nm)
	ms := tr.TakeMemory()
	evs := drained(tr)
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
	// Each layer's scores and its three math kernels lie inside one
	// attention_math operator, so the memory model names it.
	ops := opsNamed(evs, tr, "attention_math")
	if len(ops) != c.Layers {
		t.Fatalf("%d attention_math operators, want %d (one per layer)", len(ops), c.Layers)
	}
	for l, op := range ops {
		alloc, free := ms[2*l], ms[2*l+1]
		if alloc.TS < op.Start || free.TS >= op.End() {
			t.Errorf("layer %d: scores allocated at %d, freed at %d; want both inside its operator [%d, %d)", l, alloc.TS, free.TS, op.Start, op.End())
		}
		for _, k := range []string{"attn_math_qk", "attn_math_softmax", "attn_math_pv"} {
			if n := kernelsInside(evs, tr, k, op); n != 1 {
				t.Errorf("layer %d: %d %s kernels launched inside its operator, want 1", l, n, k)
			}
		}
	}
	m.forward(a, "fused", "fused", tr, &nm)
	if ms := tr.TakeMemory(); len(ms) != 0 {
		t.Errorf("fused attention reported %d memory events, want none", len(ms))
	}
	evs = drained(tr)
	ops = opsNamed(evs, tr, "attention_fused")
	if len(ops) != c.Layers {
		t.Fatalf("%d attention_fused operators, want %d", len(ops), c.Layers)
	}
	for l, op := range ops {
		if n := kernelsInside(evs, tr, "attn_fused_fwd", op); n != 1 {
			t.Errorf("layer %d: %d attn_fused_fwd kernels inside its operator, want 1", l, n)
		}
	}
}

// drained returns the events tr holds, copied.
func drained(tr *gotrace.Tracer) []tracer.Event {
	var out []tracer.Event
	tr.Drain(func(b []tracer.Event) { out = append(out, b...) })
	return out
}

// opsNamed returns evs' CPU operators named name, in order.
func opsNamed(evs []tracer.Event, tr *gotrace.Tracer, name string) []tracer.Event {
	var out []tracer.Event
	for _, e := range evs {
		if e.Kind == tracer.KindCPUOp && tr.NameOf(gotrace.NameID(e.Name)) == name {
			out = append(out, e)
		}
	}
	return out
}

// kernelsInside counts evs' kernels named name launched (started) inside
// op and ending by its end.
func kernelsInside(evs []tracer.Event, tr *gotrace.Tracer, name string, op tracer.Event) int {
	n := 0
	for _, e := range evs {
		if e.Kind == tracer.KindKernel && tr.NameOf(gotrace.NameID(e.Name)) == name && e.Start >= op.Start && e.Start < op.End() && e.End() <= op.End() {
			n++
		}
	}
	return n
}
