package demo

import (
	"math"
	"testing"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// TestFullBackward checks every parameter's analytic gradient (through the
// heads, both blocks, attention, QKV, norms and embeddings) against central
// finite differences of the loss, recomputed here in float64 from the
// forward outputs (an independent computation of the loss).
func TestFullBackward(t *testing.T) {
	for _, attention := range []string{"math", "fused"} {
		for _, qkv := range []string{"separate", "fused"} {
			if testing.Short() && (attention != "fused" || qkv != "fused") {
				continue // -short checks one combination
			}
			t.Run(attention+"_"+qkv, func(t *testing.T) { gradCheck(t, attention, qkv) })
		}
	}
}

func gradCheck(t *testing.T, attention, qkv string) {
	c := DefaultConfig()
	c.Width, c.Heads, c.MLP, c.HeadDim, c.Layers = 12, 6, 8, 4, 2
	m := newModel(c)
	const nb = 2
	g, tok, _ := playedGames(t, nb, 6, 21)
	tr := gotrace.New(16)
	nm := registerNames(tr)
	a := m.newActs(nb)
	gr := m.newGrads(nb)
	copy(a.tok, tok)
	tg := batchTargets{moves: g.Moves, nmoves: g.NMoves, act: []int32{1, 3}, adv: []float32{0.7, -1.3}, ret: []float32{0.5, -0.25}}
	const vc = 0.5
	loss := func() float64 {
		m.ver++
		m.forward(a, attention, qkv, tr, &nm)
		lg := make([]float32, nb*MaxLegal)
		m.headGather(lg, g.Moves, g.NMoves, a)
		var l float64
		for b := 0; b < nb; b++ {
			row := lg[b*MaxLegal : b*MaxLegal+int(g.NMoves[b])]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = math.Max(mx, float64(v))
			}
			var s float64
			for _, v := range row {
				s += math.Exp(float64(v) - mx)
			}
			logp := float64(row[tg.act[b]]) - mx - math.Log(s)
			l += -float64(tg.adv[b]) * logp / nb
			d := float64(a.value[b]) - float64(tg.ret[b])
			l += vc * d * d / nb
		}
		return l
	}
	loss()
	m.lossBackward(a, gr, &tg, vc, tr, &nm)
	ana := map[*Param][]float32{}
	for _, p := range m.params {
		ana[p] = append([]float32(nil), p.G...)
	}
	r := newRNG(4)
	checked := 0
	for _, p := range m.params {
		for k := 0; k < 4; k++ {
			i := int(r.next() % uint64(len(p.W)))
			if p == m.emb {
				// Only rows of tokens that occur have gradients; pick one.
				i = int(tok[int(r.next()%uint64(len(tok)))])*m.D + int(r.next()%uint64(m.D))
			}
			o := p.W[i]
			const h = 1e-2
			p.W[i] = o + h
			lp := loss()
			p.W[i] = o - h
			lm := loss()
			p.W[i] = o
			num := (lp - lm) / (2 * h)
			got := float64(ana[p][i])
			if math.Abs(num-got) > 3e-2*math.Max(math.Abs(num), 1e-3)+2e-4 {
				t.Errorf("%s[%d]: backward %g, finite difference %g", p.Name, i, got, num)
			}
			checked++
		}
	}
	t.Logf("%d gradient entries checked", checked)
}
