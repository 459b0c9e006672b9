package demo

import "math"

// update runs the learning phase on the samples buffered since the last
// update and empties the buffer:
//
//  1. returns: a sample whose game ended got ±1/0 (resolve); the others
//     bootstrap from the value head at their game's latest buffered state
//     (+v if the same player is to move there, −v otherwise);
//  2. group-normalised advantages: A = (R − mean_g)/max(std_g, AdvFloor)
//     over the samples of each group of Group games (which share openings),
//     the floor keeping near-unanimous groups from blowing up (GRPO-style
//     normalisation, Shao et al. 2024, with a std floor);
//  3. a minibatch of UpdateBatch samples (a seeded shuffle), forward with
//     the current backends, policy-gradient + value loss, backward through
//     the whole network, AdamW.
func (l *Loop) update(cfg Config) (pl, vl, gn float32) {
	tr, nm := l.tr, &l.nm
	b := &l.buf
	n := b.n
	defer func() { b.n = 0 }()
	if n == 0 {
		return 0, 0, 0
	}
	s := tr.Now()
	// 1. bootstrap the unresolved returns from each env's latest sample.
	last := make([]int, cfg.Envs)
	for i := range last {
		last[i] = -1
	}
	for i := 0; i < n; i++ {
		last[b.env[i]] = i
	}
	for i := 0; i < n; i++ {
		if b.resolved[i] {
			continue
		}
		j := last[b.env[i]]
		v := b.value[j]
		if b.player[j] != b.player[i] {
			v = -v
		}
		b.ret[i] = v
	}
	// 2. group statistics.
	ng := (cfg.Envs + cfg.Group - 1) / cfg.Group
	sum, sq, cnt := make([]float64, ng), make([]float64, ng), make([]float64, ng)
	for i := 0; i < n; i++ {
		g := int(b.env[i]) / cfg.Group
		r := float64(b.ret[i])
		sum[g] += r
		sq[g] += r * r
		cnt[g]++
	}
	for i := 0; i < n; i++ {
		g := int(b.env[i]) / cfg.Group
		mean := sum[g] / cnt[g]
		std := math.Sqrt(max(0, sq[g]/cnt[g]-mean*mean))
		b.adv[i] = float32((float64(b.ret[i]) - mean) / max(std, float64(cfg.AdvFloor)))
	}
	s = tr.Kernel(nm.advantages, s)

	// 3. minibatch.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	r := newRNG(mix3(cfg.Seed, uint64(l.step), 0x7570))
	for i := n - 1; i > 0; i-- {
		j := int(r.next() % uint64(i+1))
		idx[i], idx[j] = idx[j], idx[i]
	}
	a := l.tacts
	nb := a.nb
	if n < nb {
		// Too few samples (tiny configs): repeat them.
		for len(idx) < nb {
			idx = append(idx, idx[len(idx)%n])
		}
	}
	t := batchTargets{moves: make([]int32, nb*MaxLegal), nmoves: make([]int32, nb), act: make([]int32, nb), adv: make([]float32, nb), ret: make([]float32, nb)}
	for k := 0; k < nb; k++ {
		i := idx[k]
		copy(a.tok[k*Tokens:(k+1)*Tokens], b.tok[i*Tokens:])
		copy(t.moves[k*MaxLegal:k*MaxLegal+int(b.nmoves[i])], b.moves[i*MaxLegal:])
		t.nmoves[k], t.act[k], t.adv[k], t.ret[k] = b.nmoves[i], b.act[i], b.adv[i], b.ret[i]
	}
	tr.RangeBegin(nm.stUpdForward)
	l.model.forward(a, cfg.Attention, cfg.QKV, tr, nm)
	tr.RangeEnd()
	tr.RangeBegin(nm.stUpdBackward)
	pl, vl = l.model.lossBackward(a, l.gr, &t, cfg.ValueCoef, tr, nm)
	tr.RangeEnd()
	tr.RangeBegin(nm.stUpdOptim)
	s = tr.Now()
	gn = l.model.adamW(cfg.LR, cfg.WeightDecay)
	tr.Kernel(nm.adamw, s)
	tr.RangeEnd()
	return pl, vl, gn
}
