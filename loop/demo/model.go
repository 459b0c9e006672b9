package demo

import (
	"math"

	"github.com/rlktop/rlktop/tracer/gotrace"
)

// Param is one weight tensor with its gradient and AdamW moments, all
// row-major [Rows, Cols].
type Param struct {
	Name       string
	Rows, Cols int
	W, G, M, V []float32
}

func newParam(name string, rows, cols int) *Param {
	n := rows * cols
	return &Param{Name: name, Rows: rows, Cols: cols, W: make([]float32, n), G: make([]float32, n), M: make([]float32, n), V: make([]float32, n)}
}

type block struct {
	n1, wqkv, wo, n2, w1, w3, w2 *Param
}

// Model is the policy/value transformer:
//
//	x0 = Emb[token] + Pos[t]                              [N=nb·T, D]
//	L × { a = RMSNorm(x)·g1; q,k,v = a·Wqkv (Wq|Wk|Wv, [D,3D]);
//	      x += MHA(q,k,v)·Wo  (H heads of dh = D/H);
//	      b = RMSNorm(x)·g2; x += (silu(b·W1) ⊙ b·W3)·W2 }   (W1,W3 [D,F], W2 [F,D])
//	z = RMSNorm(x)·gf
//	logit(from f, to t) = (z_f·Wf)·(z_t·Wt)/√Dk over cell tokens  (bilinear)
//	value = tanh(z_last·wv + bv)  (the last global token summarises)
type Model struct {
	D, H, Dh, F, L, Dk, T int

	emb, pos *Param
	blocks   []block
	nf       *Param
	wf, wt   *Param
	wv, bv   *Param
	params   []*Param

	// qkv=separate reads three [D,D] copies of Wqkv's column blocks,
	// refreshed when the weights change (ver != splitVer).
	split         [][3][]float32
	ver, splitVer int64
	step          int64 // AdamW step count
}

func newModel(c Config) *Model {
	m := &Model{D: c.Width, H: c.Heads, Dh: c.Width / c.Heads, F: c.MLP, L: c.Layers, Dk: c.HeadDim, T: Tokens}
	r := newRNG(mix3(c.Seed, 0x6d6f64656c, 0))
	add := func(p *Param, std float32) *Param {
		for i := range p.W {
			if std < 0 {
				p.W[i] = 1
			} else {
				p.W[i] = r.normal() * std
			}
		}
		m.params = append(m.params, p)
		return p
	}
	D, F := m.D, m.F
	is := func(fan int) float32 { return 1 / float32(math.Sqrt(float64(fan))) }
	m.emb = add(newParam("emb", Vocab, D), 0.5)
	m.pos = add(newParam("pos", Tokens, D), 0.5)
	for l := 0; l < m.L; l++ {
		m.blocks = append(m.blocks, block{
			n1:   add(newParam("n1", 1, D), -1),
			wqkv: add(newParam("wqkv", D, 3*D), is(D)),
			wo:   add(newParam("wo", D, D), is(D)/float32(math.Sqrt(float64(2*m.L)))),
			n2:   add(newParam("n2", 1, D), -1),
			w1:   add(newParam("w1", D, F), is(D)),
			w3:   add(newParam("w3", D, F), is(D)),
			w2:   add(newParam("w2", F, D), is(F)/float32(math.Sqrt(float64(2*m.L)))),
		})
	}
	m.nf = add(newParam("nf", 1, D), -1)
	m.wf = add(newParam("wf", D, m.Dk), is(D))
	m.wt = add(newParam("wt", D, m.Dk), is(D))
	m.wv = add(newParam("wv", D, 1), is(D))
	m.bv = add(newParam("bv", 1, 1), 0)
	m.split = make([][3][]float32, m.L)
	for l := range m.split {
		for j := 0; j < 3; j++ {
			m.split[l][j] = make([]float32, D*D)
		}
	}
	m.splitVer = -1
	return m
}

func (m *Model) refreshSplit() {
	if m.splitVer == m.ver {
		return
	}
	D := m.D
	for l, b := range m.blocks {
		for r := 0; r < D; r++ {
			for j := 0; j < 3; j++ {
				copy(m.split[l][j][r*D:(r+1)*D], b.wqkv.W[r*3*D+j*D:r*3*D+(j+1)*D])
			}
		}
	}
	m.splitVer = m.ver
}

// acts holds the forward activations of one batch (kept for backward).
type acts struct {
	nb, N int
	tok   []int32
	xs    [][]float32 // L+1 residual streams [N,D]
	r1    [][]float32 // [N]
	a     [][]float32 // [N,D]
	qkv   [][]float32 // [N,3D]: separate: q|k|v blocks of N·D (ld D); fused: rows of 3D
	ld    []int       // row stride of the layer's q/k/v views
	lse   [][]float32 // [nb,H,T]
	o     [][]float32 // [N,D]
	x1    [][]float32 // [N,D]
	r2    [][]float32
	bn    [][]float32
	u, g  [][]float32 // [N,F]
	h     [][]float32
	rf    []float32
	z     []float32 // [N,D]
	fp    []float32 // [N,Dk] from-projection
	gp    []float32 // [N,Dk] to-projection
	vpre  []float32 // [nb]
	value []float32 // [nb]

	s          []float32 // math attention scores [nb,H,T,T], allocated on first use
	qp, kp, vp []float32 // fused attention packs [T,dh]
	tmp, tmp2  []float32 // [N, max(3D,F)]
}

func (m *Model) newActs(nb int) *acts {
	N := nb * m.T
	D, F, L := m.D, m.F, m.L
	mk := func(n int) [][]float32 {
		out := make([][]float32, L)
		for i := range out {
			out[i] = make([]float32, n)
		}
		return out
	}
	a := &acts{nb: nb, N: N, tok: make([]int32, N)}
	a.xs = make([][]float32, L+1)
	for i := range a.xs {
		a.xs[i] = make([]float32, N*D)
	}
	a.r1, a.a, a.qkv, a.ld = mk(N), mk(N*D), mk(N*3*D), make([]int, L)
	a.lse, a.o, a.x1, a.r2, a.bn = mk(nb*m.H*m.T), mk(N*D), mk(N*D), mk(N), mk(N*D)
	a.u, a.g, a.h = mk(N*F), mk(N*F), mk(N*F)
	a.rf, a.z = make([]float32, N), make([]float32, N*D)
	a.fp, a.gp = make([]float32, N*m.Dk), make([]float32, N*m.Dk)
	a.vpre, a.value = make([]float32, nb), make([]float32, nb)
	a.qp, a.kp, a.vp = make([]float32, m.T*m.Dh), make([]float32, m.T*m.Dh), make([]float32, m.T*m.Dh)
	w := max(3*D, F)
	a.tmp, a.tmp2 = make([]float32, N*w), make([]float32, N*w)
	return a
}

// names are the stable kernel and stage names the loop emits.
type names struct {
	embed, rmsnorm, qkvSepQ, qkvSepK, qkvSepV, qkvFused                  gotrace.NameID
	attnQK, attnSoftmax, attnPV, attnFused, outProj, mlpUp, swiglu       gotrace.NameID
	opAttnMath, opAttnFused                                              gotrace.NameID
	mlpDown, headProj, valueHead, headMat, headGather                    gotrace.NameID
	toppSoftmax, toppSort, scanSerial, scanSklansky, sampleMult, sampleG gotrace.NameID
	envStepK, envObserveK, envLegalK                                     gotrace.NameID
	bwHead, bwValue, bwRMS, bwMLPDown, bwSwiglu, bwMLPUp, bwOutProj      gotrace.NameID
	bwAttn, bwQKV, bwEmbed, adamw, advantages, lossK                     gotrace.NameID

	stEnvStep, stObserve, stLegal, stForward, stSample        gotrace.NameID
	stUpdate, stUpdForward, stUpdBackward, stUpdOptim, stFlag gotrace.NameID
}

func registerNames(tr *gotrace.Tracer) names {
	n := tr.Name
	return names{
		embed: n("embed"), rmsnorm: n("rmsnorm"), qkvSepQ: n("qkv_separate_q"), qkvSepK: n("qkv_separate_k"), qkvSepV: n("qkv_separate_v"),
		qkvFused: n("qkv_fused"), attnQK: n("attn_math_qk"), attnSoftmax: n("attn_math_softmax"), attnPV: n("attn_math_pv"),
		attnFused: n("attn_fused_fwd"), opAttnMath: n("attention_math"), opAttnFused: n("attention_fused"), outProj: n("matmul_out_proj"), mlpUp: n("matmul_mlp_up"), swiglu: n("swiglu"),
		mlpDown: n("matmul_mlp_down"), headProj: n("matmul_head_proj"), valueHead: n("value_head"),
		headMat: n("head_materialized"), headGather: n("head_gatherdot"),
		toppSoftmax: n("topp_softmax"), toppSort: n("topp_sort"), scanSerial: n("topp_scan_serial"), scanSklansky: n("topp_scan_sklansky"),
		sampleMult: n("sample_multinomial"), sampleG: n("sample_gumbel"),
		envStepK: n("env_step"), envObserveK: n("env_observe"), envLegalK: n("env_legal_mask"),
		bwHead: n("backward_head"), bwValue: n("backward_value"), bwRMS: n("backward_rmsnorm"), bwMLPDown: n("backward_mlp_down"),
		bwSwiglu: n("backward_swiglu"), bwMLPUp: n("backward_mlp_up"), bwOutProj: n("backward_out_proj"), bwAttn: n("backward_attn"),
		bwQKV: n("backward_qkv"), bwEmbed: n("backward_embed"), adamw: n("adamw"), advantages: n("advantages"), lossK: n("policy_value_loss"),
		stEnvStep: n("env.step"), stObserve: n("env.observe"), stLegal: n("env.legal_mask"), stForward: n("forward"), stSample: n("sample"),
		stUpdate: n("update"), stUpdForward: n("update.forward"), stUpdBackward: n("update.backward"), stUpdOptim: n("update.optimizer"),
		stFlag: n("flag_change"),
	}
}

// forward runs the trunk and the value head on a.tok (nb boards), keeping
// every activation in a. attention/qkv select the backends.
// memScoresAddr is the address the math attention scores of layer 0 are
// reported at (gotrace.Tracer.Memory); layer l's at +l.
const memScoresAddr = 0x5c0000

func (m *Model) forward(a *acts, attention, qkv string, tr *gotrace.Tracer, nm *names) {
	N, D, F, T := a.N, m.D, m.F, m.T
	s := tr.Now()
	x := a.xs[0]
	for n := 0; n < N; n++ {
		e := m.emb.W[int(a.tok[n])*D : int(a.tok[n])*D+D]
		p := m.pos.W[(n%T)*D : (n%T)*D+D]
		xr := x[n*D : n*D+D]
		for i := range xr {
			xr[i] = e[i] + p[i]
		}
	}
	s = tr.KernelWork(nm.embed, s, float64(N*D), 4*float64(N+3*N*D))
	sh := attnShape{nb: a.nb, T: T, H: m.H, dh: m.Dh, scale: 1 / sqrt32(float32(m.Dh))}
	nf, nT := float64(N), float64(a.nb*m.H*T*T) // tokens; attention scores [nb, H, T, T]
	for l, b := range m.blocks {
		x := a.xs[l]
		rmsnorm(a.a[l], a.r1[l], x, b.n1.W, N, D)
		s = tr.KernelWork(nm.rmsnorm, s, 5*nf*float64(D), 4*(2*nf*float64(D)+float64(D)))
		var q, k, v []float32
		if qkv == "fused" {
			gemm(a.qkv[l], a.a[l], b.wqkv.W, N, D, 3*D, false, false)
			f, by := gemmWork(N, D, 3*D)
			s = tr.KernelWork(nm.qkvFused, s, f, by)
			a.ld[l] = 3 * D
			q, k, v = a.qkv[l][0:], a.qkv[l][D:], a.qkv[l][2*D:]
		} else {
			m.refreshSplit()
			buf := a.qkv[l]
			q, k, v = buf[:N*D], buf[N*D:2*N*D], buf[2*N*D:3*N*D]
			fq, bq := gemmWork(N, D, D)
			gemm(q, a.a[l], m.split[l][0], N, D, D, false, false)
			s = tr.KernelWork(nm.qkvSepQ, s, fq, bq)
			gemm(k, a.a[l], m.split[l][1], N, D, D, false, false)
			s = tr.KernelWork(nm.qkvSepK, s, fq, bq)
			gemm(v, a.a[l], m.split[l][2], N, D, D, false, false)
			s = tr.KernelWork(nm.qkvSepV, s, fq, bq)
			a.ld[l] = D
		}
		sh.ld = a.ld[l]
		if attention == "math" {
			if len(a.s) < a.nb*m.H*T*T {
				a.s = make([]float32, a.nb*m.H*T*T)
			}
			// The scores are a temporary of the math path (the fused
			// kernel never writes them): reported as allocated for the
			// layer's attention, freed after P·V, at one address per layer.
			// The three kernels and the scores are one operator's, as
			// PyTorch's math attention is (its memory model names the
			// operator a temporary was allocated in).
			op := s
			scores := int64(a.nb*m.H*T*T) * 4
			tr.Memory(scores, memScoresAddr+uint64(l))
			attnMathQK(a.s, q, k, sh)
			s = tr.KernelWork(nm.attnQK, s, 2*nT*float64(m.Dh), 4*(2*nf*float64(D)+nT))
			attnMathSoftmax(a.s, a.lse[l], sh)
			s = tr.KernelWork(nm.attnSoftmax, s, 3*nT, 4*2*nT) // 3 FLOPs per score, as tracer/opmodel's softmax
			attnMathPV(a.o[l], a.s, v, D, sh)
			s = tr.KernelWork(nm.attnPV, s, 2*nT*float64(m.Dh), 4*(nT+2*nf*float64(D)))
			tr.Memory(-scores, memScoresAddr+uint64(l))
			s = tr.Op(nm.opAttnMath, op)
		} else {
			// Fused: the same Q·Kᵀ and P·V FLOPs, only Q, K, V read and
			// the output written (softmax uncounted, as for SDPA).
			op := s
			attnFused(a.o[l], a.lse[l], q, k, v, a.qp, a.kp, a.vp, D, sh)
			s = tr.KernelWork(nm.attnFused, s, 4*nT*float64(m.Dh), 4*4*nf*float64(D))
			s = tr.Op(nm.opAttnFused, op)
		}
		y := a.tmp[:N*D]
		gemm(y, a.o[l], b.wo.W, N, D, D, false, false)
		x1 := a.x1[l]
		for i := range x1 {
			x1[i] = x[i] + y[i]
		}
		fo, bo := gemmWork(N, D, D)
		s = tr.KernelWork(nm.outProj, s, fo+nf*float64(D), bo+4*2*nf*float64(D))
		rmsnorm(a.bn[l], a.r2[l], x1, b.n2.W, N, D)
		s = tr.KernelWork(nm.rmsnorm, s, 5*nf*float64(D), 4*(2*nf*float64(D)+float64(D)))
		gemm(a.u[l], a.bn[l], b.w1.W, N, D, F, false, false)
		gemm(a.g[l], a.bn[l], b.w3.W, N, D, F, false, false)
		fu, bu := gemmWork(N, D, F)
		s = tr.KernelWork(nm.mlpUp, s, 2*fu, 2*bu)
		swiglu(a.h[l], a.u[l], a.g[l])
		s = tr.KernelWork(nm.swiglu, s, nf*float64(F), 4*3*nf*float64(F))
		md := a.tmp[:N*D]
		gemm(md, a.h[l], b.w2.W, N, F, D, false, false)
		x2 := a.xs[l+1]
		for i := range x2 {
			x2[i] = x1[i] + md[i]
		}
		fd, bd := gemmWork(N, F, D)
		s = tr.KernelWork(nm.mlpDown, s, fd+nf*float64(D), bd+4*2*nf*float64(D))
	}
	rmsnorm(a.z, a.rf, a.xs[m.L], m.nf.W, N, D)
	s = tr.KernelWork(nm.rmsnorm, s, 5*nf*float64(D), 4*(2*nf*float64(D)+float64(D)))
	gemm(a.fp, a.z, m.wf.W, N, D, m.Dk, false, false)
	gemm(a.gp, a.z, m.wt.W, N, D, m.Dk, false, false)
	fh, bh := gemmWork(N, D, m.Dk)
	s = tr.KernelWork(nm.headProj, s, 2*fh, 2*bh)
	for b := 0; b < a.nb; b++ {
		zc := a.z[(b*T+T-1)*D : (b*T+T)*D]
		p := dot(zc, m.wv.W) + m.bv.W[0]
		a.vpre[b] = p
		a.value[b] = tanh32(p)
	}
	tr.Kernel(nm.valueHead, s)
}

// headMaterialized scores every from×to pair of each board into logits
// ([nb, Actions]) and sets illegal pairs (mask false) to -Inf.
func (m *Model) headMaterialized(logits []float32, mask []bool, a *acts) {
	T, Dk := m.T, m.Dk
	sc := 1 / sqrt32(float32(Dk))
	for b := 0; b < a.nb; b++ {
		lr := logits[b*Actions : (b+1)*Actions]
		mr := mask[b*Actions : (b+1)*Actions]
		for f := 0; f < Cells; f++ {
			ff := a.fp[(b*T+f)*Dk : (b*T+f+1)*Dk]
			row := lr[f*Cells : (f+1)*Cells]
			for t := range row {
				row[t] = dot(ff, a.gp[(b*T+t)*Dk:(b*T+t+1)*Dk]) * sc
			}
		}
		for i, ok := range mr {
			if !ok {
				lr[i] = negInf32
			}
		}
	}
}

// headGather scores only the legal moves: logits[b*MaxLegal+i] for the i-th
// legal action of board b (moves/nmoves as Games.Moves/NMoves). Each score
// is the same dot product in the same order as headMaterialized's, so the
// two agree bitwise on legal moves.
func (m *Model) headGather(logits []float32, moves []int32, nmoves []int32, a *acts) {
	T, Dk := m.T, m.Dk
	sc := 1 / sqrt32(float32(Dk))
	for b := 0; b < a.nb; b++ {
		mv := moves[b*MaxLegal : b*MaxLegal+int(nmoves[b])]
		lr := logits[b*MaxLegal : b*MaxLegal+len(mv)]
		for i, act := range mv {
			f, t := int(act)/Cells, int(act)%Cells
			lr[i] = dot(a.fp[(b*T+f)*Dk:(b*T+f+1)*Dk], a.gp[(b*T+t)*Dk:(b*T+t+1)*Dk]) * sc
		}
	}
}

// gemmWork is the work of an [m,k]×[k,n] fp32 product (gemm): 2·m·k·n
// FLOPs, the two inputs read and the output written once (4 bytes each).
func gemmWork(m, k, n int) (flops, bytes float64) {
	return 2 * float64(m) * float64(k) * float64(n), 4 * float64(m*k+k*n+m*n)
}
