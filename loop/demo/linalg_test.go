package demo

import (
	"math"
	"testing"
)

func randSlice(r *rng, n int, scale float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = (r.uniform()*2 - 1) * scale
	}
	return s
}

// TestGemm checks the four transpose combinations against a float64 triple
// loop; float32 GEMM with k terms of |a||b| ≤ 1 is within k·2^-24·k (γ_k
// bound) of it: tolerance 1e-5·k.
func TestGemm(t *testing.T) {
	r := newRNG(1)
	m, k, n := 37, 23, 19
	a := randSlice(&r, m*k, 1)
	b := randSlice(&r, k*n, 1)
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			c := make([]float32, m*n)
			want := make([]float32, m*n)
			gemm(c, a, b, m, k, n, ta, tb)
			gemmRef(want, a, b, m, k, n, ta, tb)
			for i := range c {
				if d := math.Abs(float64(c[i] - want[i])); d > 1e-5*float64(k) {
					t.Fatalf("ta=%v tb=%v: c[%d]=%g want %g", ta, tb, i, c[i], want[i])
				}
			}
		}
	}
}

func TestExpf(t *testing.T) {
	var worst float64
	for x := float32(-87); x < 88; x += 0.0137 {
		got := float64(expf(x))
		want := math.Exp(float64(x))
		rel := math.Abs(got-want) / want
		worst = max(worst, rel)
	}
	// 2 ulp of float32 relative: 2·2^-23.
	if worst > 2*math.Pow(2, -23) {
		t.Fatalf("expf worst relative error %g > 2 ulp", worst)
	}
	if expf(-100) != 0 || expf(float32(math.Inf(-1))) != 0 || expf(100) < 1e38 {
		t.Fatal("expf range ends")
	}
}

// TestNormSwigluGrad checks the hand-written backward passes against central
// finite differences in float64 of the forward (an independent computation).
func TestNormSwigluGrad(t *testing.T) {
	r := newRNG(5)
	rows, d := 3, 8
	x := randSlice(&r, rows*d, 1)
	g := randSlice(&r, d, 1)
	dy := randSlice(&r, rows*d, 1)
	y := make([]float32, rows*d)
	ri := make([]float32, rows)
	loss := func() float64 {
		rmsnorm(y, ri, x, g, rows, d)
		var s float64
		for i := range y {
			s += float64(y[i]) * float64(dy[i])
		}
		return s
	}
	loss()
	dx := make([]float32, rows*d)
	dg := make([]float32, d)
	rmsnormBack(dx, dg, dy, x, ri, g, rows, d)
	const h = 1e-2
	for i := range x {
		o := x[i]
		x[i] = o + h
		lp := loss()
		x[i] = o - h
		lm := loss()
		x[i] = o
		num := (lp - lm) / (2 * h)
		if math.Abs(num-float64(dx[i])) > 2e-3*max(1, math.Abs(num)) {
			t.Fatalf("rmsnorm dx[%d] = %g, numeric %g", i, dx[i], num)
		}
	}
	for i := range g {
		o := g[i]
		g[i] = o + h
		lp := loss()
		g[i] = o - h
		lm := loss()
		g[i] = o
		num := (lp - lm) / (2 * h)
		if math.Abs(num-float64(dg[i])) > 2e-3*max(1, math.Abs(num)) {
			t.Fatalf("rmsnorm dg[%d] = %g, numeric %g", i, dg[i], num)
		}
	}
	u := randSlice(&r, 16, 3)
	gg := randSlice(&r, 16, 1)
	dh := randSlice(&r, 16, 1)
	hh := make([]float32, 16)
	du := make([]float32, 16)
	dgg := make([]float32, 16)
	swigluBack(du, dgg, dh, u, gg)
	for i := range u {
		f := func(v float32) float64 {
			o := u[i]
			u[i] = v
			swiglu(hh, u, gg)
			u[i] = o
			return float64(hh[i]) * float64(dh[i])
		}
		num := (f(u[i]+h) - f(u[i]-h)) / (2 * h)
		if math.Abs(num-float64(du[i])) > 2e-3*max(1, math.Abs(num)) {
			t.Fatalf("swiglu du[%d] = %g, numeric %g", i, du[i], num)
		}
	}
}

func BenchmarkExpf(b *testing.B) {
	x := float32(-3)
	var s float32
	for b.Loop() {
		s += expf(x)
		x += 1e-6
	}
	_ = s
}
