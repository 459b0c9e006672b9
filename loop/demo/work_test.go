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

// TestBackwardWork: the update's backward kernels carry their work too,
// counted by hand: a GEMM's backward is two products of its forward's
// size (dX and dW), so backward_qkv is exactly 2× qkv_fused's FLOPs; the
// attention backward does five [T,T]×dh products per head (Q·Kᵀ again,
// dO·Vᵀ, dV, dK, dQ): 10·nb·H·T²·dh FLOPs, 2.5× the fused forward's.
func TestBackwardWork(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Envs = 4
	tr := gotrace.New(1 << 14)
	l, err := New(cfg, tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Set("attention", "fused"); err != nil {
		t.Fatal(err)
	}
	got := map[string]tracer.Work{}
	nbOf := map[string]bool{}
	for i := 0; i < 40 && !nbOf["backward_attn"]; i++ {
		if _, err := l.Step(); err != nil {
			t.Fatal(err)
		}
		names := tr.Names(0)
		tr.Drain(func(evs []tracer.Event) {
			for _, e := range evs {
				if e.Kind != tracer.KindKernel {
					continue
				}
				if w, ok := tracer.UnpackWork(e.Value); ok && w.Modelled {
					n := names[e.Name]
					if n == "backward_attn" || n == "backward_qkv" {
						nbOf[n] = true
						got[n] = w
					}
				}
			}
		})
	}
	if !nbOf["backward_attn"] || !nbOf["backward_qkv"] {
		t.Fatalf("no modelled backward kernels in 40 steps: %v", got)
	}
	// The update's batch: its work fixes nb through the QKV product,
	// whose FLOPs are 2·2·N·D·3D for N = nb·T tokens.
	l0, _ := New(cfg, nil)
	T, D, H := float64(l0.model.T), float64(cfg.Width), float64(cfg.Heads)
	dh := D / H
	N := got["backward_qkv"].Flops / (2 * 2 * D * 3 * D)
	if N != math.Trunc(N) || int(N)%int(T) != 0 {
		t.Fatalf("backward_qkv %.0f FLOPs is not 4·N·D·3D for whole boards of %v tokens (N %v)", got["backward_qkv"].Flops, T, N)
	}
	nb := N / T
	want := 10 * nb * H * T * T * dh
	if a := got["backward_attn"].Flops; math.Abs(a-want) > 1e-6*want {
		t.Errorf("backward_attn %.0f FLOPs, want 10·nb·H·T²·dh = %.0f (nb %v)", a, want, nb)
	}
}
