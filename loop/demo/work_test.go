package demo

import (
	"math"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/gotrace"
)

// TestKernelWork: the built-in loop's attention kernels carry their FLOPs
// and bytes (gotrace.KernelWork), counted here by hand from the model's
// shapes: batch nb boards of T tokens, H heads of width dh, fp32. The math
// path's Q·Kᵀ is 2·nb·H·T²·dh FLOPs and writes the [nb,H,T,T] scores; the
// fused kernel does the same Q·Kᵀ and P·V FLOPs and moves only Q, K, V and
// the output: the math path moves far more bytes for the same FLOPs.
func TestKernelWork(t *testing.T) {
	work := func(attention string) map[string]tracer.Work {
		cfg := DefaultConfig()
		cfg.Envs = 4
		tr := gotrace.New(1 << 12)
		l, err := New(cfg, tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Set("attention", attention); err != nil {
			t.Fatal(err)
		}
		// A flag applies at a step boundary: the second step runs it.
		for range 2 {
			tr.Drain(func([]tracer.Event) {})
			if _, err := l.Step(); err != nil {
				t.Fatal(err)
			}
		}
		names := tr.Names(0)
		out := map[string]tracer.Work{}
		tr.Drain(func(evs []tracer.Event) {
			for _, e := range evs {
				if e.Kind != tracer.KindKernel {
					continue
				}
				if w, ok := tracer.UnpackWork(e.Value); ok && w.Modelled {
					if _, seen := out[names[e.Name]]; !seen {
						out[names[e.Name]] = w // the first call: the collection forward
					}
				}
			}
		})
		return out
	}
	m := work("math")
	f := work("fused")
	cfg := DefaultConfig()
	nb, H, dh := 4.0, float64(cfg.Heads), float64(cfg.Width/cfg.Heads)
	l, _ := New(cfg, nil)
	T := float64(l.model.T)
	scores := nb * H * T * T
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-6*want }
	qk, ok := m["attn_math_qk"]
	if !ok || !near(qk.Flops, 2*scores*dh) || !near(qk.Bytes, 4*(2*nb*T*H*dh+scores)) {
		t.Errorf("attn_math_qk %+v: want %.0f FLOPs, %.0f bytes", qk, 2*scores*dh, 4*(2*nb*T*H*dh+scores))
	}
	fu, ok := f["attn_fused_fwd"]
	if !ok || !near(fu.Flops, 4*scores*dh) || !near(fu.Bytes, 4*4*nb*T*H*dh) {
		t.Errorf("attn_fused_fwd %+v: want %.0f FLOPs, %.0f bytes", fu, 4*scores*dh, 4*4*nb*T*H*dh)
	}
	mathBytes := m["attn_math_qk"].Bytes + m["attn_math_softmax"].Bytes + m["attn_math_pv"].Bytes
	if mathBytes < 3*fu.Bytes {
		t.Errorf("math attention moves %.0f bytes, fused %.0f: want several times more", mathBytes, fu.Bytes)
	}
}
