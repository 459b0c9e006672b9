package demo

import (
	"fmt"
	"math"
	"runtime"
	"syscall"
	"testing"
)

type attnCase struct {
	sh      attnShape
	D       int
	q, k, v []float32
}

func newAttnCase(seed uint64, nb, T, H, dh int, fused bool, scale float32) attnCase {
	r := newRNG(seed)
	D := H * dh
	ld := D
	if fused {
		ld = 3 * D
	}
	buf := randSlice(&r, nb*T*ld*3, scale)
	c := attnCase{sh: attnShape{nb: nb, T: T, H: H, dh: dh, ld: ld, scale: 1 / sqrt32(float32(dh))}, D: D}
	if fused {
		c.q, c.k, c.v = buf[0:], buf[D:], buf[2*D:]
	} else {
		n := nb * T * D
		c.q, c.k, c.v = buf[:n], buf[n:2*n], buf[2*n:3*n]
	}
	return c
}

// attnRef is softmax(QKᵀ/√dh)V per head in float64: the independent
// computation both backends are held to.
func attnRef(c attnCase) []float64 {
	sh := c.sh
	out := make([]float64, sh.nb*sh.T*c.D)
	s := make([]float64, sh.T)
	for b := 0; b < sh.nb; b++ {
		for h := 0; h < sh.H; h++ {
			for i := 0; i < sh.T; i++ {
				m := math.Inf(-1)
				for j := 0; j < sh.T; j++ {
					var d float64
					for t := 0; t < sh.dh; t++ {
						d += float64(c.q[(b*sh.T+i)*sh.ld+h*sh.dh+t]) * float64(c.k[(b*sh.T+j)*sh.ld+h*sh.dh+t])
					}
					s[j] = d / math.Sqrt(float64(sh.dh))
					m = math.Max(m, s[j])
				}
				var l float64
				for j := range s {
					s[j] = math.Exp(s[j] - m)
					l += s[j]
				}
				for j := range s {
					for t := 0; t < sh.dh; t++ {
						out[(b*sh.T+i)*c.D+h*sh.dh+t] += s[j] / l * float64(c.v[(b*sh.T+j)*sh.ld+h*sh.dh+t])
					}
				}
			}
		}
	}
	return out
}

func runAttn(c attnCase, fused bool) (o, lse []float32) {
	sh := c.sh
	o = make([]float32, sh.nb*sh.T*c.D)
	lse = make([]float32, sh.nb*sh.H*sh.T)
	if fused {
		attnFused(o, lse, c.q, c.k, c.v, make([]float32, sh.T*sh.dh), make([]float32, sh.T*sh.dh), make([]float32, sh.T*sh.dh), c.D, sh)
	} else {
		s := make([]float32, sh.nb*sh.H*sh.T*sh.T)
		attnMathQK(s, c.q, c.k, sh)
		attnMathSoftmax(s, lse, sh)
		attnMathPV(o, s, c.v, c.D, sh)
	}
	return
}

// TestAttentionBackendsAgree: math and fused agree with the float64
// reference within 1e-5·(1+|ref|)·log2(T)... stated bound: |Δ| ≤ 2e-5 for
// |v| ≤ 1 (each output is a convex combination of v's, so rounding error is
// bounded by (dh + T + a few exp ulps)·2^-24 ≈ 1e-5 at T=90, dh=16), and
// with each other within 4e-5; lse within 1e-5·|lse|+1e-5. No NaN.
func TestAttentionBackendsAgree(t *testing.T) {
	for _, tc := range []struct {
		nb, T, H, dh int
		fused        bool
		scale        float32
	}{
		{2, 90, 6, 8, false, 1}, {3, 90, 6, 16, true, 1}, {1, 7, 6, 4, false, 3}, {2, 33, 6, 8, true, 4}, {1, 100, 6, 70, false, 1},
	} {
		t.Run(fmt.Sprintf("T%d_dh%d_fusedqkv%v", tc.T, tc.dh, tc.fused), func(t *testing.T) {
			c := newAttnCase(uint64(tc.T), tc.nb, tc.T, tc.H, tc.dh, tc.fused, tc.scale)
			ref := attnRef(c)
			om, lm := runAttn(c, false)
			of, lf := runAttn(c, true)
			for i := range ref {
				if math.IsNaN(float64(om[i])) || math.IsNaN(float64(of[i])) {
					t.Fatalf("NaN at %d", i)
				}
				if d := math.Abs(float64(om[i]) - ref[i]); d > 2e-5 {
					t.Fatalf("math o[%d]=%g ref %g (Δ %g)", i, om[i], ref[i], d)
				}
				if d := math.Abs(float64(of[i]) - ref[i]); d > 2e-5 {
					t.Fatalf("fused o[%d]=%g ref %g (Δ %g)", i, of[i], ref[i], d)
				}
			}
			for i := range lm {
				if d := math.Abs(float64(lm[i] - lf[i])); d > 1e-5*math.Abs(float64(lm[i]))+1e-5 {
					t.Fatalf("lse[%d] math %g fused %g", i, lm[i], lf[i])
				}
			}
		})
	}
}

// TestAttentionBackward: the recomputing backward against central finite
// differences of the float64 reference.
func TestAttentionBackward(t *testing.T) {
	c := newAttnCase(11, 1, 6, 2, 3, true, 1)
	sh := c.sh
	o, lse := runAttn(c, true)
	r := newRNG(12)
	do := randSlice(&r, len(o), 1)
	grad := make([]float32, sh.nb*sh.T*3*c.D)
	attnBackward(grad[0:], grad[c.D:], grad[2*c.D:], 3*c.D, do, o, c.q, c.k, c.v, lse, c.D, sh)
	loss := func() float64 {
		ref := attnRef(c)
		var s float64
		for i := range ref {
			s += ref[i] * float64(do[i])
		}
		return s
	}
	base := c.q[:sh.nb*sh.T*sh.ld] // q, k, v interleave in one buffer (ld = 3D)
	for idx := range base {
		row, col := idx/sh.ld, idx%sh.ld
		if col >= 3*c.D {
			continue
		}
		o := base[idx]
		const h = 1e-3
		base[idx] = o + h
		lp := loss()
		base[idx] = o - h
		lm := loss()
		base[idx] = o
		num := (lp - lm) / (2 * h)
		got := float64(grad[row*3*c.D+col])
		if math.Abs(num-got) > 1e-3*max(1, math.Abs(num)) {
			t.Fatalf("d[%d,%d] = %g, numeric %g", row, col, got, num)
		}
	}
}

func benchAttn(b *testing.B, nb, T, H, dh int, fused bool) {
	c := newAttnCase(1, nb, T, H, dh, true, 1)
	sh := c.sh
	o := make([]float32, nb*T*c.D)
	lse := make([]float32, nb*H*T)
	var s []float32
	if !fused {
		s = make([]float32, nb*H*T*T)
	}
	qp, kp, vp := make([]float32, T*dh), make([]float32, T*dh), make([]float32, T*dh)
	defer cpuTimer(b)()
	for b.Loop() {
		if fused {
			attnFused(o, lse, c.q, c.k, c.v, qp, kp, vp, c.D, sh)
		} else {
			attnMathQK(s, c.q, c.k, sh)
			attnMathSoftmax(s, lse, sh)
			attnMathPV(o, s, c.v, c.D, sh)
		}
	}
}

// BenchmarkAttention: attention=math vs fused at the default size (64
// boards, T=90, 6 heads, dh=8) and at batch 1024.
func BenchmarkAttention(b *testing.B) {
	for _, nb := range benchBatches {
		for _, dh := range []int{8, 16} {
			for _, f := range []bool{false, true} {
				name := "math"
				if f {
					name = "fused"
				}
				b.Run(fmt.Sprintf("B%d_T90_dh%d/%s", nb, dh, name), func(b *testing.B) { benchAttn(b, nb, 90, 6, dh, f) })
			}
		}
	}
}

// cpuTimer reports the process's CPU time per op ("cpu-ns/op", all
// threads: gonum's GEMM runs workers on other goroutines) besides wall time:
// the shared dev machine is often loaded by other jobs, and CPU time is what
// a pair of backends should be compared on there.
func cpuTimer(b *testing.B) func() {
	runtime.GC()
	start := processCPU()
	b.ResetTimer()
	return func() {
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}

// processCPU returns the user+system CPU ns of this process (getrusage).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
