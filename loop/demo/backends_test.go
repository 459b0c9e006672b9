package demo

import (
	"fmt"
	"math"
	"testing"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// playedGames returns n games after `plies` random plies, with legal moves
// and mask filled, and their tokens.
func playedGames(tb testing.TB, n, plies int, seed uint64) (*Games, []int32, []bool) {
	g, err := NewGames(n, 8, 200, seed)
	if err != nil {
		tb.Fatal(err)
	}
	r := newRNG(seed + 1)
	acts := make([]int32, n)
	mask := make([]bool, n*Actions)
	for p := 0; p < plies; p++ {
		g.Legal(nil)
		for i := range acts {
			l := g.LegalOf(i)
			acts[i] = l[r.next()%uint64(len(l))]
		}
		if err := g.Step(acts); err != nil {
			tb.Fatal(err)
		}
	}
	g.Legal(mask)
	tok := make([]int32, n*Tokens)
	g.Observe(tok)
	return g, tok, mask
}

func smallCfg() Config {
	c := DefaultConfig()
	c.Envs, c.Group, c.UpdateBatch = 8, 4, 8
	return c
}

// TestQKVBackendsAgree: qkv=separate and qkv=fused give the same trunk
// output within |Δ| ≤ 1e-4·(1+|z|): both are float32 GEMMs over the same D
// products per entry (gonum's kernel sums in the same k order whatever the
// n-blocking, so in practice they are bitwise equal; the bound allows a
// different BLAS).
func TestQKVBackendsAgree(t *testing.T) {
	m := newModel(smallCfg())
	_, tok, _ := playedGames(t, 8, 10, 3)
	tr := gotrace.New(16)
	nm := registerNames(tr)
	run := func(qkv string) []float32 {
		a := m.newActs(8)
		copy(a.tok, tok)
		m.forward(a, "fused", qkv, tr, &nm)
		return append(a.z, a.value...)
	}
	s, f := run("separate"), run("fused")
	var worst float64
	for i := range s {
		if math.IsNaN(float64(s[i])) || math.IsNaN(float64(f[i])) {
			t.Fatalf("NaN at %d", i)
		}
		d := math.Abs(float64(s[i] - f[i]))
		worst = max(worst, d)
		if d > 1e-4*(1+math.Abs(float64(s[i]))) {
			t.Fatalf("z[%d]: separate %g fused %g", i, s[i], f[i])
		}
	}
	t.Logf("qkv separate vs fused: max |Δ| = %g", worst)
}

// TestHeadAndSamplerBackendsMatchInLoop: two loops with the same seed, one
// with head=materialized and one with head=gatherdot (and each sampler /
// scan combination), choose identical actions at every step: the legal
// logits are bitwise equal (same dot products), -Inf entries add exact
// zeros to the softmax sums in the same order, the descending sort puts the
// zero-probability illegal moves after every legal one, and both draw from
// the same uniform stream.
func TestHeadBackendsMatchInLoop(t *testing.T) {
	for _, sampler := range []string{"multinomial", "gumbel"} {
		for _, scan := range []string{"serial", "sklansky"} {
			t.Run(sampler+"_"+scan, func(t *testing.T) {
				mk := func(head string) *Loop {
					c := smallCfg()
					c.Head, c.Sampler, c.Scan = head, sampler, scan
					c.UpdateEvery = 3
					l, err := New(c, nil)
					if err != nil {
						t.Fatal(err)
					}
					return l
				}
				a, b := mk("materialized"), mk("gatherdot")
				for s := 0; s < 7; s++ {
					if _, err := a.Step(); err != nil {
						t.Fatal(err)
					}
					if _, err := b.Step(); err != nil {
						t.Fatal(err)
					}
					for i := range a.actions {
						if a.actions[i] != b.actions[i] {
							t.Fatalf("step %d board %d: materialized chose %d, gatherdot %d", s, i, a.actions[i], b.actions[i])
						}
					}
				}
			})
		}
	}
}

// TestHeadLogitsBitwise: the legal entries of the materialised logits equal
// the gathered ones bit for bit, the others are -Inf.
func TestHeadLogitsBitwise(t *testing.T) {
	m := newModel(smallCfg())
	g, tok, mask := playedGames(t, 8, 12, 5)
	tr := gotrace.New(16)
	nm := registerNames(tr)
	a := m.newActs(8)
	copy(a.tok, tok)
	m.forward(a, "fused", "fused", tr, &nm)
	full := make([]float32, 8*Actions)
	comp := make([]float32, 8*MaxLegal)
	m.headMaterialized(full, mask, a)
	m.headGather(comp, g.Moves, g.NMoves, a)
	for b := 0; b < 8; b++ {
		legal := g.LegalOf(b)
		j := 0
		for act := 0; act < Actions; act++ {
			v := full[b*Actions+act]
			if j < len(legal) && int(legal[j]) == act {
				if math.Float32bits(v) != math.Float32bits(comp[b*MaxLegal+j]) {
					t.Fatalf("board %d action %d: %g vs %g", b, act, v, comp[b*MaxLegal+j])
				}
				j++
			} else if !math.IsInf(float64(v), -1) {
				t.Fatalf("board %d illegal action %d has logit %g", b, act, v)
			}
		}
	}
}

// randomProbs returns a descending-sorted probability vector of length n
// (a softmax of scaled normals), as the top-p scan sees it.
func randomProbs(r *rng, n int, temp float32) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = r.normal() * temp
	}
	p := make([]float32, n)
	softmaxRows(p, l, n, []int32{int32(n)}, 1)
	keys := make([]uint64, n)
	s := make([]float32, n)
	sortRows(keys, s, p, n, []int32{int32(n)})
	return s
}

func ulpDiff(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// TestScanULP: for non-negative inputs, |serial_i − sklansky_i| ≤
// i + ⌈log2(i+1)⌉ + 1 ulps of the serial value (the bound stated at
// scanSklansky; ulp(y) ≥ u·y), and both are within that bound of the
// float64 exact prefix. Sizes up to the full 6561-move action space.
func TestScanULP(t *testing.T) {
	r := newRNG(17)
	var worst int64
	for _, n := range []int{1, 2, 3, 7, 64, 100, 1000, 6561} {
		for _, temp := range []float32{0.1, 1, 4} {
			p := randomProbs(&r, n, temp)
			a := append([]float32(nil), p...)
			b := append([]float32(nil), p...)
			scanSerial(a)
			scanSklansky(b)
			var exact float64
			for i := range p {
				exact += float64(p[i])
				if math.IsNaN(float64(b[i])) {
					t.Fatal("NaN")
				}
				bound := int64(i) + int64(math.Ceil(math.Log2(float64(i+1)))) + 1
				d := ulpDiff(a[i], b[i])
				worst = max(worst, d)
				if d > bound {
					t.Fatalf("n=%d i=%d: serial %g sklansky %g differ by %d ulp > %d", n, i, a[i], b[i], d, bound)
				}
				if de := ulpDiff(b[i], float32(exact)); de > bound {
					t.Fatalf("n=%d i=%d: sklansky %d ulp from exact", n, i, de)
				}
			}
		}
	}
	t.Logf("serial vs sklansky: worst %d ulp", worst)
}

// TestSamplersSameDistribution: multinomial and Gumbel-max draws over the
// top-p set match the renormalised truncated distribution (chi-square,
// 40000 draws each, fixed seeds; critical value of χ²(k−1) at p = 0.001).
func TestSamplersSameDistribution(t *testing.T) {
	p := []float32{0.4, 0.2, 0.15, 0.1, 0.07, 0.05, 0.02, 0.01}
	cum := append([]float32(nil), p...)
	scanSerial(cum)
	k := cutoff(cum, p, 0.9) // 0.4+0.2+0.15+0.1 = 0.85 < 0.9 → 5 entries (0.92)
	if k != 5 {
		t.Fatalf("cutoff = %d, want 5 (hand count)", k)
	}
	const draws = 40000
	crit := map[int]float64{4: 18.47}[k-1]
	for _, name := range []string{"multinomial", "gumbel"} {
		cnt := make([]float64, k)
		r := newRNG(99)
		for d := 0; d < draws; d++ {
			var i int
			if name == "gumbel" {
				i = drawGumbel(p, k, &r)
			} else {
				i = drawMultinomial(cum, k, r.uniform())
			}
			cnt[i]++
		}
		var chi float64
		for i := 0; i < k; i++ {
			e := draws * float64(p[i]) / float64(cum[k-1])
			chi += (cnt[i] - e) * (cnt[i] - e) / e
		}
		t.Logf("%s: χ² = %.2f (df %d, critical %.2f)", name, chi, k-1, crit)
		if chi > crit {
			t.Fatalf("%s: χ² = %.2f > %.2f: counts %v", name, chi, crit, cnt)
		}
	}
}

// --- backend pair benchmarks: default batch (32 boards) and 1024, T = 90 ---

var benchBatches = []int{32, 1024}

func BenchmarkQKV(b *testing.B) {
	for _, nb := range benchBatches {
		c := DefaultConfig()
		m := newModel(c)
		a := m.newActs(nb)
		r := newRNG(1)
		for i := range a.a[0] {
			a.a[0][i] = r.uniform()
		}
		N, D := nb*Tokens, m.D
		for _, mode := range []string{"separate", "fused"} {
			b.Run(fmt.Sprintf("B%d/%s", nb, mode), func(b *testing.B) {
				m.refreshSplit()
				defer cpuTimer(b)()
				for b.Loop() {
					if mode == "fused" {
						gemm(a.qkv[0], a.a[0], m.blocks[0].wqkv.W, N, D, 3*D, false, false)
					} else {
						for j := 0; j < 3; j++ {
							gemm(a.qkv[0][j*N*D:(j+1)*N*D], a.a[0], m.split[0][j], N, D, D, false, false)
						}
					}
				}
			})
		}
	}
}

func benchRows(nb, n int) ([]float32, []int32) {
	r := newRNG(3)
	p := make([]float32, nb*n)
	for b := 0; b < nb; b++ {
		copy(p[b*n:], randomProbs(&r, n, 2))
	}
	ns := make([]int32, nb)
	for i := range ns {
		ns[i] = int32(n)
	}
	return p, ns
}

// BenchmarkScan: the top-p scan over rows of the full 6561-move space.
func BenchmarkScan(b *testing.B) {
	for _, nb := range benchBatches {
		p, _ := benchRows(nb, Actions)
		c := make([]float32, len(p))
		for _, mode := range []string{"serial", "sklansky"} {
			b.Run(fmt.Sprintf("B%d/%s", nb, mode), func(b *testing.B) {
				defer cpuTimer(b)()
				for b.Loop() {
					copy(c, p)
					for r := 0; r < nb; r++ {
						if mode == "serial" {
							scanSerial(c[r*Actions : (r+1)*Actions])
						} else {
							scanSklansky(c[r*Actions : (r+1)*Actions])
						}
					}
				}
			})
		}
	}
}

// BenchmarkSampler: one draw per row after the top-p cut (p = 0.95).
func BenchmarkSampler(b *testing.B) {
	for _, nb := range benchBatches {
		p, _ := benchRows(nb, Actions)
		c := append([]float32(nil), p...)
		ks := make([]int, nb)
		for r := 0; r < nb; r++ {
			scanSerial(c[r*Actions : (r+1)*Actions])
			ks[r] = cutoff(c[r*Actions:(r+1)*Actions], p[r*Actions:(r+1)*Actions], 0.95)
		}
		for _, mode := range []string{"multinomial", "gumbel"} {
			b.Run(fmt.Sprintf("B%d/%s", nb, mode), func(b *testing.B) {
				rr := newRNG(5)
				var sink int
				defer cpuTimer(b)()
				for b.Loop() {
					for r := 0; r < nb; r++ {
						if mode == "gumbel" {
							sink += drawGumbel(p[r*Actions:(r+1)*Actions], ks[r], &rr)
						} else {
							sink += drawMultinomial(c[r*Actions:(r+1)*Actions], ks[r], rr.uniform())
						}
					}
				}
				_ = sink
			})
		}
	}
}

// BenchmarkHead: scoring all 6561 from→to pairs (and masking) vs only the
// legal ones, on positions 30 plies into random games.
func BenchmarkHead(b *testing.B) {
	for _, nb := range benchBatches {
		m := newModel(DefaultConfig())
		g, tok, mask := playedGames(b, nb, 30, 9)
		tr := gotrace.New(16)
		nm := registerNames(tr)
		a := m.newActs(nb)
		copy(a.tok, tok)
		m.forward(a, "fused", "fused", tr, &nm)
		full := make([]float32, nb*Actions)
		comp := make([]float32, nb*MaxLegal)
		for _, mode := range []string{"materialized", "gatherdot"} {
			b.Run(fmt.Sprintf("B%d/%s", nb, mode), func(b *testing.B) {
				defer cpuTimer(b)()
				for b.Loop() {
					if mode == "materialized" {
						m.headMaterialized(full, mask, a)
					} else {
						m.headGather(comp, g.Moves, g.NMoves, a)
					}
				}
			})
		}
	}
}
