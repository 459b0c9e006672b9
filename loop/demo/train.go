package demo

import (
	"math"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// batchTargets is what the loss needs per board of a training batch.
type batchTargets struct {
	moves  []int32   // [nb*MaxLegal] legal actions, as Games.Moves
	nmoves []int32   // [nb]
	act    []int32   // [nb] index of the taken action within the legal list
	adv    []float32 // [nb] normalised advantage
	ret    []float32 // [nb] return the value head regresses to
}

// grads holds the backward pass's activation gradients for one batch size.
type grads struct {
	dx, dz   []float32 // [N,D]
	dfp, dgp []float32 // [N,Dk]
	lg       []float32 // [nb*MaxLegal] logits, then their gradient
}

func (m *Model) newGrads(nb int) *grads {
	N := nb * m.T
	return &grads{dx: make([]float32, N*m.D), dz: make([]float32, N*m.D), dfp: make([]float32, N*m.Dk), dgp: make([]float32, N*m.Dk), lg: make([]float32, nb*MaxLegal)}
}

// lossBackward computes the loss of a forward pass already in a and every
// parameter's gradient (Param.G, overwritten):
//
//	policy loss = −(1/nb) Σ_b A_b · log softmax(legal logits_b)[a_b]
//	value loss  = ValueCoef · (1/nb) Σ_b (v_b − R_b)²
//
// back through the heads, every block (MLP, norms, output projection,
// attention, QKV projection) and the embeddings.
func (m *Model) lossBackward(a *acts, g *grads, t *batchTargets, valueCoef float32, tr *gotrace.Tracer, nm *names) (policyLoss, valueLoss float32) {
	for _, p := range m.params {
		clear(p.G)
	}
	nb, N, D, F, T, Dk := a.nb, a.N, m.D, m.F, m.T, m.Dk
	s := tr.Now()
	m.headGather(g.lg, t.moves, t.nmoves, a)
	s = tr.Kernel(nm.headGather, s)
	inb := 1 / float32(nb)
	dvpre := make([]float32, nb)
	for b := 0; b < nb; b++ {
		lr := g.lg[b*MaxLegal : b*MaxLegal+int(t.nmoves[b])]
		mx := negInf32
		for _, v := range lr {
			mx = max(mx, v)
		}
		var sum float32
		for _, v := range lr {
			sum += expf(v - mx)
		}
		lse := mx + log32(sum)
		ai := int(t.act[b])
		policyLoss -= t.adv[b] * (lr[ai] - lse) * inb
		for i, v := range lr {
			p := expf(v - lse)
			if i == ai {
				p -= 1
			}
			lr[i] = t.adv[b] * p * inb
		}
		d := a.value[b] - t.ret[b]
		valueLoss += valueCoef * d * d * inb
		dvpre[b] = 2 * valueCoef * d * inb * (1 - a.value[b]*a.value[b])
	}
	s = tr.Kernel(nm.lossK, s)

	// Move head: logit = (fp_f · gp_t)·sc.
	clear(g.dfp)
	clear(g.dgp)
	sc := 1 / sqrt32(float32(Dk))
	for b := 0; b < nb; b++ {
		mv := t.moves[b*MaxLegal : b*MaxLegal+int(t.nmoves[b])]
		for i, act := range mv {
			d := g.lg[b*MaxLegal+i] * sc
			f, to := int(act)/Cells, int(act)%Cells
			axpy(g.dfp[(b*T+f)*Dk:(b*T+f+1)*Dk], d, a.gp[(b*T+to)*Dk:(b*T+to+1)*Dk])
			axpy(g.dgp[(b*T+to)*Dk:(b*T+to+1)*Dk], d, a.fp[(b*T+f)*Dk:(b*T+f+1)*Dk])
		}
	}
	gemm(m.wf.G, a.z, g.dfp, D, N, Dk, true, false)
	gemm(m.wt.G, a.z, g.dgp, D, N, Dk, true, false)
	gemm(g.dz, g.dfp, m.wf.W, N, Dk, D, false, true)
	tmp := a.tmp[:N*D]
	gemm(tmp, g.dgp, m.wt.W, N, Dk, D, false, true)
	addTo(g.dz, tmp)
	fh1, bh1 := gemmWork(D, N, Dk) // the weights' gradients
	fh2, bh2 := gemmWork(N, Dk, D) // the input's
	nf, nD := float64(N), float64(N*D)
	s = tr.KernelWork(nm.bwHead, s, 2*fh1+2*fh2+nD, 2*bh1+2*bh2+4*3*nD)
	for b := 0; b < nb; b++ {
		zc := a.z[(b*T+T-1)*D : (b*T+T)*D]
		axpy(m.wv.G, dvpre[b], zc)
		m.bv.G[0] += dvpre[b]
		axpy(g.dz[(b*T+T-1)*D:(b*T+T)*D], dvpre[b], m.wv.W)
	}
	s = tr.KernelWork(nm.bwValue, s, 6*float64(nb*D), 4*float64(3*nb*D+2*D))
	rmsnormBack(g.dx, m.nf.G, g.dz, a.xs[m.L], a.rf, m.nf.W, N, D)
	// Norms and SwiGLU: twice their forward FLOPs (opmodel's backward
	// convention); bytes are what the backward reads and writes.
	rmsBackF, rmsBackB := 2*5*nD, 4*(3*nD+nf+2*float64(D))
	s = tr.KernelWork(nm.bwRMS, s, rmsBackF, rmsBackB)

	dx := g.dx
	for l := m.L - 1; l >= 0; l-- {
		b := m.blocks[l]
		// MLP down: md = h·W2.
		dh := a.tmp[:N*F]
		gemm(dh, dx, b.w2.W, N, D, F, false, true)
		gemm(b.w2.G, a.h[l], dx, F, N, D, true, false)
		fa, ba := gemmWork(N, D, F)
		fb, bb := gemmWork(F, N, D)
		s = tr.KernelWork(nm.bwMLPDown, s, fa+fb, ba+bb)
		du, dg := a.tmp2[:N*F], a.h[l] // h is no longer needed
		swigluBack(du, dg, dh, a.u[l], a.g[l])
		s = tr.KernelWork(nm.bwSwiglu, s, 2*nf*float64(F), 4*5*nf*float64(F))
		gemm(b.w1.G, a.bn[l], du, D, N, F, true, false)
		gemm(b.w3.G, a.bn[l], dg, D, N, F, true, false)
		dbn := a.tmp[:N*D]
		gemm(dbn, du, b.w1.W, N, F, D, false, true)
		gemm(a.bn[l], dg, b.w3.W, N, F, D, false, true) // bn is no longer needed
		addTo(dbn, a.bn[l])
		fw, bw := gemmWork(D, N, F)
		fx, bx := gemmWork(N, F, D)
		s = tr.KernelWork(nm.bwMLPUp, s, 2*fw+2*fx+nD, 2*bw+2*bx+4*3*nD)
		dn := a.tmp2[:N*D]
		rmsnormBack(dn, b.n2.G, dbn, a.x1[l], a.r2[l], b.n2.W, N, D)
		addTo(dx, dn) // dx is now d(x1)
		s = tr.KernelWork(nm.bwRMS, s, rmsBackF+nD, rmsBackB+4*3*nD)
		do := a.tmp[:N*D]
		gemm(do, dx, b.wo.W, N, D, D, false, true)
		gemm(b.wo.G, a.o[l], dx, D, N, D, true, false)
		fo1, bo1 := gemmWork(N, D, D)
		fo2, bo2 := gemmWork(D, N, D)
		s = tr.KernelWork(nm.bwOutProj, s, fo1+fo2, bo1+bo2)
		ld := a.ld[l]
		var q, k, v []float32
		if ld == 3*D {
			q, k, v = a.qkv[l][0:], a.qkv[l][D:], a.qkv[l][2*D:]
		} else {
			q, k, v = a.qkv[l][:N*D], a.qkv[l][N*D:2*N*D], a.qkv[l][2*N*D:]
		}
		dqkv := a.tmp2[:N*3*D]
		sh := attnShape{nb: nb, T: T, H: m.H, dh: m.Dh, ld: ld, scale: 1 / sqrt32(float32(m.Dh))}
		attnBackward(dqkv[0:], dqkv[D:], dqkv[2*D:], 3*D, do, a.o[l], q, k, v, a.lse[l], D, sh)
		// Five [T,T]×dh products per head (Q·Kᵀ again, dO·Vᵀ, dV, dK, dQ),
		// the scores never stored: Q, K, V, O, dO and the log-sum-exps
		// read, dQ, dK, dV written.
		nT := float64(nb * m.H * T * T)
		s = tr.KernelWork(nm.bwAttn, s, 10*nT*float64(m.Dh), 4*(8*nD+float64(nb*m.H*T)))
		gemm(b.wqkv.G, a.a[l], dqkv, D, N, 3*D, true, false)
		da := a.tmp[:N*D]
		gemm(da, dqkv, b.wqkv.W, N, 3*D, D, false, true)
		fq1, bq1 := gemmWork(D, N, 3*D)
		fq2, bq2 := gemmWork(N, 3*D, D)
		s = tr.KernelWork(nm.bwQKV, s, fq1+fq2, bq1+bq2)
		dn = a.a[l] // a is no longer needed
		rmsnormBack(dn, b.n1.G, da, a.xs[l], a.r1[l], b.n1.W, N, D)
		addTo(dx, dn) // dx is now d(x_l)
		s = tr.KernelWork(nm.bwRMS, s, rmsBackF+nD, rmsBackB+4*3*nD)
	}
	for n := 0; n < N; n++ {
		d := dx[n*D : n*D+D]
		addTo(m.emb.G[int(a.tok[n])*D:int(a.tok[n])*D+D], d)
		addTo(m.pos.G[(n%T)*D:(n%T)*D+D], d)
	}
	tr.KernelWork(nm.bwEmbed, s, 2*nD, 4*5*nD)
	return policyLoss, valueLoss
}

// adamW applies one AdamW step (Loshchilov & Hutter 2019: decoupled weight
// decay, bias-corrected moments, β1 0.9, β2 0.999, ε 1e-8) after clipping
// the global gradient norm to 1. Norm gains and biases are not decayed.
func (m *Model) adamW(lr, wd float32) (gradNorm float32) {
	var ss float64
	for _, p := range m.params {
		for _, g := range p.G {
			ss += float64(g) * float64(g)
		}
	}
	gn := float32(math.Sqrt(ss))
	clip := float32(1)
	if gn > 1 {
		clip = 1 / gn
	}
	m.step++
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := float32(1 - math.Pow(b1, float64(m.step)))
	c2 := float32(1 - math.Pow(b2, float64(m.step)))
	for _, p := range m.params {
		decay := wd
		if p.Rows == 1 {
			decay = 0
		}
		for i, g := range p.G {
			g *= clip
			mm := b1*p.M[i] + (1-b1)*g
			vv := b2*p.V[i] + (1-b2)*g*g
			p.M[i], p.V[i] = mm, vv
			p.W[i] -= lr * ((mm/c1)/(sqrt32(vv/c2)+eps) + decay*p.W[i])
		}
	}
	m.ver++
	return gn
}
