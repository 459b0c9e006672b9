package demo

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// gemm computes c = op(a)·op(b) for row-major float32 matrices through
// gorgonia's tensor.MatMul (gonum's SSE Sgemm underneath: 6.5 GFLOP/s on
// one core of the dev machine against 3.3 for a plain Go i-k-j loop).
// op(a) is [m,k] (a stored [k,m] when ta), op(b) is [k,n] (b stored [n,k]
// when tb); c is [m,n] and is overwritten.
func gemm(c, a, b []float32, m, k, n int, ta, tb bool) {
	var A, B *tensor.Dense
	if ta {
		A = tensor.New(tensor.WithShape(k, m), tensor.WithBacking(a[:m*k]))
		A.T()
	} else {
		A = tensor.New(tensor.WithShape(m, k), tensor.WithBacking(a[:m*k]))
	}
	if tb {
		B = tensor.New(tensor.WithShape(n, k), tensor.WithBacking(b[:k*n]))
		B.T()
	} else {
		B = tensor.New(tensor.WithShape(k, n), tensor.WithBacking(b[:k*n]))
	}
	C := tensor.New(tensor.WithShape(m, n), tensor.WithBacking(c[:m*n]))
	if _, err := tensor.MatMul(A, B, tensor.WithReuse(C)); err != nil {
		// Shapes are fixed by the model's construction; a failure here is a
		// programming error, reported with the shapes.
		panic(fmt.Sprintf("demo: gemm [%d,%d]x[%d,%d] (ta=%v tb=%v): %v", m, k, k, n, ta, tb, err))
	}
}

// gemmRef is the textbook triple loop in float64, for tests.
func gemmRef(c, a, b []float32, m, k, n int, ta, tb bool) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				av := a[i*k+p]
				if ta {
					av = a[p*m+i]
				}
				bv := b[p*n+j]
				if tb {
					bv = b[j*k+p]
				}
				s += float64(av) * float64(bv)
			}
			c[i*n+j] = float32(s)
		}
	}
}

func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

const rmsEps = 1e-5

// rmsnorm: y[r] = x[r] / rms(x[r]) ⊙ g for rows of width d; rinv[r] keeps
// 1/rms for the backward pass.
func rmsnorm(y, rinv, x, g []float32, rows, d int) {
	g = g[:d]
	for r := 0; r < rows; r++ {
		xr := x[r*d : r*d+d]
		var ss float32
		for _, v := range xr {
			ss += v * v
		}
		ri := 1 / sqrt32(ss/float32(d)+rmsEps)
		rinv[r] = ri
		yr := y[r*d : r*d+d]
		for i, v := range xr {
			yr[i] = v * ri * g[i]
		}
	}
}

// rmsnormBack: given dy, adds dg and writes dx (dx may alias nothing).
// dx = r·(g⊙dy) − x·r³·Σ(g⊙dy⊙x)/d.
func rmsnormBack(dx, dg, dy, x, rinv, g []float32, rows, d int) {
	g = g[:d]
	dg = dg[:d]
	for r := 0; r < rows; r++ {
		xr := x[r*d : r*d+d]
		dyr := dy[r*d : r*d+d]
		dxr := dx[r*d : r*d+d]
		ri := rinv[r]
		var dot float32
		for i, v := range xr {
			gy := g[i] * dyr[i]
			dot += gy * v
			dg[i] += dyr[i] * v * ri
		}
		c := dot * ri * ri * ri / float32(d)
		for i, v := range xr {
			dxr[i] = ri*g[i]*dyr[i] - v*c
		}
	}
}

func sigmoid32(x float32) float32 { return 1 / (1 + expf(-x)) }

// swiglu: h = silu(u) ⊙ g elementwise.
func swiglu(h, u, g []float32) {
	g = g[:len(h)]
	u = u[:len(h)]
	for i := range h {
		x := u[i]
		h[i] = x * sigmoid32(x) * g[i]
	}
}

// swigluBack: du = dh·g·silu'(u), dg = dh·silu(u).
func swigluBack(du, dg, dh, u, g []float32) {
	for i := range dh {
		x := u[i]
		s := sigmoid32(x)
		silu := x * s
		dg[i] = dh[i] * silu
		du[i] = dh[i] * g[i] * s * (1 + x*(1-s))
	}
}

// expf is a float32 exp: x = k·ln2 + r with k = round(x·log2 e) (by the
// 1.5·2^23 rounding trick), |r| ≤ ln2/2 (Cody–Waite two-part ln2), a
// degree-6 Taylor polynomial for e^r (truncation < 2^-25 there) and 2^k by
// exponent bits. Relative error ≤ 2 ulp against math.Exp over [-87, 88]
// (TestExpf); 0 below -87.3 (so exp(-Inf) = 0), clamped at exp(88.7) above.
// About 4x faster than float32(math.Exp(float64(x))).
func expf(x float32) float32 {
	if x < -87.3 {
		return 0
	}
	x = min(x, 88.7)
	const log2e = 1.4426950408889634
	const ln2hi = 0.693145751953125
	const ln2lo = 1.428606765330187045e-06
	const round = 12582912 // 1.5·2^23
	kf := (x*log2e + round) - round
	r := x - kf*ln2hi - kf*ln2lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(kf)+127)<<23)
}
