package demo

// Multi-head self-attention over T tokens (no causal mask: a board position
// is seen whole). q, k and v are row-major with row stride ld (q[(b·T+t)·ld
// + h·dh + i]), so the same code reads three separate [N,D] buffers (ld = D)
// or one fused [N,3D] buffer (ld = 3D, k and v sliced at offsets D and 2D).
// The output o is [N,D]; lse[(b·H+h)·T+t] keeps the log-sum-exp of each
// score row for the backward pass.

// attnShape carries the sizes shared by the attention kernels.
type attnShape struct {
	nb, T, H, dh, ld int
	scale            float32 // 1/sqrt(dh)
}

// dot returns Σ a[i]·b[i] for i < len(a), summed in index order.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// attnMathQK writes the scaled scores S[b,h,i,j] = q_i·k_j/sqrt(dh) for all
// batches and heads into s ([nb,H,T,T], materialised).
func attnMathQK(s, q, k []float32, sh attnShape) {
	T, dh, ld := sh.T, sh.dh, sh.ld
	for b := 0; b < sh.nb; b++ {
		for h := 0; h < sh.H; h++ {
			sbh := s[(b*sh.H+h)*T*T : (b*sh.H+h+1)*T*T]
			for i := 0; i < T; i++ {
				qi := q[(b*T+i)*ld+h*dh : (b*T+i)*ld+h*dh+dh]
				row := sbh[i*T : i*T+T]
				for j := range row {
					kj := k[(b*T+j)*ld+h*dh : (b*T+j)*ld+h*dh+dh]
					row[j] = dot(qi, kj) * sh.scale
				}
			}
		}
	}
}

// attnMathSoftmax turns each score row of s into probabilities in place and
// writes its log-sum-exp to lse.
func attnMathSoftmax(s, lse []float32, sh attnShape) {
	T := sh.T
	rows := sh.nb * sh.H * T
	for r := 0; r < rows; r++ {
		row := s[r*T : r*T+T]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		var l float32
		for j, v := range row {
			e := expf(v - m)
			row[j] = e
			l += e
		}
		inv := 1 / l
		for j := range row {
			row[j] *= inv
		}
		lse[r] = m + log32(l)
	}
}

// attnMathPV writes o_i = Σ_j P[i,j]·v_j.
func attnMathPV(o, s, v []float32, D int, sh attnShape) {
	T, dh, ld := sh.T, sh.dh, sh.ld
	for b := 0; b < sh.nb; b++ {
		for h := 0; h < sh.H; h++ {
			sbh := s[(b*sh.H+h)*T*T : (b*sh.H+h+1)*T*T]
			for i := 0; i < T; i++ {
				oi := o[(b*T+i)*D+h*dh : (b*T+i)*D+h*dh+dh]
				clear(oi)
				row := sbh[i*T : i*T+T]
				for j, p := range row {
					axpy(oi, p, v[(b*T+j)*ld+h*dh:(b*T+j)*ld+h*dh+dh])
				}
			}
		}
	}
}

// fusedKeyBlock is the number of keys scored before the running maximum is
// updated; fusedQueryBlock the number of queries that share each key load.
const (
	fusedKeyBlock   = 32
	fusedQueryBlock = 4
)

// attnFused computes the same o and lse as the three math kernels but
// streams over keys with an online softmax (Milakov & Gimelshein 2018;
// FlashAttention's forward): per query a running max m, normaliser l and
// accumulator acc, rescaled by exp(m_old − m_new) when a key block raises
// the max. Scores never leave a 4×32 stack tile. Q (pre-scaled by 1/√dh)
// and K of one (batch, head) are first packed contiguously ([T,dh]), V
// transposed ([dh,T]; qpack/kpack/vpack need T·dh each), and each key row
// loaded is used by 4 queries.
func attnFused(o, lse, q, k, v, qpack, kpack, vpack []float32, D int, sh attnShape) {
	T, dh, ld := sh.T, sh.dh, sh.ld
	if T <= fusedKeyBlock {
		attnFusedShort(o, lse, q, k, v, D, sh)
		return
	}
	var sc [fusedQueryBlock][fusedKeyBlock]float32
	var m, l [fusedQueryBlock]float32
	var accStack [fusedQueryBlock * 16]float32
	accBuf := accStack[:]
	if fusedQueryBlock*dh > len(accStack) {
		accBuf = make([]float32, fusedQueryBlock*dh)
	}
	accBuf = accBuf[:fusedQueryBlock*dh]
	a0, a1, a2, a3 := accBuf[0:dh], accBuf[dh:2*dh], accBuf[2*dh:3*dh], accBuf[3*dh:4*dh]
	qp, kp, vp := qpack[:T*dh], kpack[:T*dh], vpack[:T*dh]
	for b := 0; b < sh.nb; b++ {
		for h := 0; h < sh.H; h++ {
			for j := 0; j < T; j++ {
				src := (b*T+j)*ld + h*dh
				copy(kp[j*dh:j*dh+dh], k[src:src+dh])
				for t, vv := range v[src : src+dh] {
					vp[t*T+j] = vv // V transposed: [dh, T]
				}
				qd, qs := qp[j*dh:j*dh+dh], q[src:src+dh]
				for t := range qd {
					qd[t] = qs[t] * sh.scale
				}
			}
			tail := T - T%fusedQueryBlock
			for i := tail; i < T; i++ {
				attnFusedRow(o[(b*T+i)*D+h*dh:(b*T+i)*D+h*dh+dh], &lse[(b*sh.H+h)*T+i], qp[i*dh:i*dh+dh], kp, vp, accBuf[:dh], T)
			}
			for i0 := 0; i0 < tail; i0 += fusedQueryBlock {
				nq := fusedQueryBlock
				r1, r2, r3 := i0+1, i0+2, i0+3
				q0, q1, q2, q3 := qp[i0*dh:i0*dh+dh], qp[r1*dh:r1*dh+dh], qp[r2*dh:r2*dh+dh], qp[r3*dh:r3*dh+dh]
				q1, q2, q3 = q1[:len(q0)], q2[:len(q0)], q3[:len(q0)]
				m = [fusedQueryBlock]float32{negInf32, negInf32, negInf32, negInf32}
				l = [fusedQueryBlock]float32{}
				clear(accBuf)
				for j0 := 0; j0 < T; j0 += fusedKeyBlock {
					nk := min(fusedKeyBlock, T-j0)
					bm := [fusedQueryBlock]float32{negInf32, negInf32, negInf32, negInf32}
					for jj := 0; jj < nk; jj++ {
						kj := kp[(j0+jj)*dh : (j0+jj)*dh+dh]
						kj = kj[:len(q0)]
						var s0, s1, s2, s3 float32
						for t, kv := range kj {
							s0 += q0[t] * kv
							s1 += q1[t] * kv
							s2 += q2[t] * kv
							s3 += q3[t] * kv
						}
						sc[0][jj], sc[1][jj], sc[2][jj], sc[3][jj] = s0, s1, s2, s3
						bm[0], bm[1], bm[2], bm[3] = max(bm[0], s0), max(bm[1], s1), max(bm[2], s2), max(bm[3], s3)
					}
					for qi := 0; qi < fusedQueryBlock; qi++ {
						if bm[qi] > m[qi] {
							c := expf(m[qi] - bm[qi])
							l[qi] *= c
							a := accBuf[qi*dh : qi*dh+dh]
							for t := range a {
								a[t] *= c
							}
							m[qi] = bm[qi]
						}
						mq := m[qi]
						row := sc[qi][:nk]
						var ls float32
						for jj, s := range row {
							p := expf(s - mq)
							row[jj] = p
							ls += p
						}
						l[qi] += ls
					}
					// acc_r[t] += Σ_jj p_r[jj]·V[jj,t], over the transposed V
					// so both operands stream contiguously and the four sums
					// stay in registers.
					p0r, p1r, p2r, p3r := sc[0][:nk], sc[1][:nk], sc[2][:nk], sc[3][:nk]
					a1, a2, a3 := a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
					for t := range a0 {
						vr := vp[t*T+j0 : t*T+j0+nk]
						p0r, p1r, p2r, p3r := p0r[:len(vr)], p1r[:len(vr)], p2r[:len(vr)], p3r[:len(vr)]
						var x0, x1, x2, x3 float32
						for jj, vv := range vr {
							x0 += p0r[jj] * vv
							x1 += p1r[jj] * vv
							x2 += p2r[jj] * vv
							x3 += p3r[jj] * vv
						}
						a0[t] += x0
						a1[t] += x1
						a2[t] += x2
						a3[t] += x3
					}
				}
				for qi := 0; qi < nq; qi++ {
					i := i0 + qi
					oi := o[(b*T+i)*D+h*dh : (b*T+i)*D+h*dh+dh]
					inv := 1 / l[qi]
					for t, a := range accBuf[qi*dh : qi*dh+dh] {
						oi[t] = a * inv
					}
					lse[(b*sh.H+h)*T+i] = m[qi] + log32(l[qi])
				}
			}
		}
	}
}

// attnFusedShort is attnFused for T ≤ one key block: each query's scores
// fit a stack row, so there is nothing to stream and nothing worth packing;
// scores, softmax and P·V happen per query without the [T,T] matrix.
func attnFusedShort(o, lse, q, k, v []float32, D int, sh attnShape) {
	T, dh, ld := sh.T, sh.dh, sh.ld
	var sc [fusedKeyBlock]float32
	for b := 0; b < sh.nb; b++ {
		for h := 0; h < sh.H; h++ {
			for i := 0; i < T; i++ {
				qi := q[(b*T+i)*ld+h*dh : (b*T+i)*ld+h*dh+dh]
				row := sc[:T]
				m := negInf32
				for j := range row {
					s := dot(qi, k[(b*T+j)*ld+h*dh:(b*T+j)*ld+h*dh+dh]) * sh.scale
					row[j] = s
					m = max(m, s)
				}
				var l float32
				for j, s := range row {
					p := expf(s - m)
					row[j] = p
					l += p
				}
				oi := o[(b*T+i)*D+h*dh : (b*T+i)*D+h*dh+dh]
				clear(oi)
				inv := 1 / l
				for j, p := range row {
					axpy(oi, p*inv, v[(b*T+j)*ld+h*dh:(b*T+j)*ld+h*dh+dh])
				}
				lse[(b*sh.H+h)*T+i] = m + log32(l)
			}
		}
	}
}

// attnFusedRow is attnFused for one query row (the T mod 4 rows left over
// by the 4-query tiles), same online softmax over key blocks; vT is V
// transposed ([dh, T]).
func attnFusedRow(o []float32, lse *float32, q, kp, vT, acc []float32, T int) {
	dh := len(q)
	clear(acc)
	m, l := negInf32, float32(0)
	var sc [fusedKeyBlock]float32
	for j0 := 0; j0 < T; j0 += fusedKeyBlock {
		nk := min(fusedKeyBlock, T-j0)
		bm := negInf32
		for jj := 0; jj < nk; jj++ {
			s := dot(q, kp[(j0+jj)*dh:(j0+jj)*dh+dh])
			sc[jj] = s
			bm = max(bm, s)
		}
		if bm > m {
			c := expf(m - bm)
			l *= c
			for t := range acc {
				acc[t] *= c
			}
			m = bm
		}
		for jj := 0; jj < nk; jj++ {
			p := expf(sc[jj] - m)
			l += p
			sc[jj] = p
		}
		for t := range acc {
			acc[t] += dot(sc[:nk], vT[t*T+j0:t*T+j0+nk])
		}
	}
	inv := 1 / l
	for t, a := range acc {
		o[t] = a * inv
	}
	*lse = m + log32(l)
}

// attnBackward computes dq, dk, dv (written, not accumulated, into buffers
// with row stride dld) from do, recomputing each probability from q, k and
// lse (no [T,T] matrix is kept), FlashAttention-style:
// P_ij = exp(q_i·k_j·s − lse_i), Δ_i = do_i·o_i, dS_ij = P_ij(do_i·v_j − Δ_i),
// dq_i = s·Σ_j dS_ij k_j, dk_j = s·Σ_i dS_ij q_i, dv_j = Σ_i P_ij do_i.
// Q (pre-scaled), K, V and dO of one (batch, head) are packed contiguously
// and each key row loaded serves a tile of 4 queries, as in attnFused.
func attnBackward(dq, dk, dv []float32, dld int, do, o, q, k, v, lse []float32, D int, sh attnShape) {
	T, dh, ld := sh.T, sh.dh, sh.ld
	pack := make([]float32, 7*T*dh)
	qp, kp, vp, dop := pack[:T*dh], pack[T*dh:2*T*dh], pack[2*T*dh:3*T*dh], pack[3*T*dh:4*T*dh]
	dqp, dkp, dvp := pack[4*T*dh:5*T*dh], pack[5*T*dh:6*T*dh], pack[6*T*dh:7*T*dh]
	delta := make([]float32, T)
	for b := 0; b < sh.nb; b++ {
		for h := 0; h < sh.H; h++ {
			for j := 0; j < T; j++ {
				src := (b*T+j)*ld + h*dh
				copy(kp[j*dh:j*dh+dh], k[src:src+dh])
				copy(vp[j*dh:j*dh+dh], v[src:src+dh])
				qd, qs := qp[j*dh:j*dh+dh], q[src:src+dh]
				for t := range qd {
					qd[t] = qs[t] * sh.scale
				}
				od := (b*T+j)*D + h*dh
				copy(dop[j*dh:j*dh+dh], do[od:od+dh])
				delta[j] = dot(do[od:od+dh], o[od:od+dh])
			}
			clear(dqp)
			clear(dkp)
			clear(dvp)
			lrow := lse[(b*sh.H+h)*T : (b*sh.H+h+1)*T]
			tail := T - T%4
			for i0 := 0; i0 < tail; i0 += 4 {
				q0, q1, q2, q3 := qp[i0*dh:i0*dh+dh], qp[(i0+1)*dh:(i0+2)*dh], qp[(i0+2)*dh:(i0+3)*dh], qp[(i0+3)*dh:(i0+4)*dh]
				d0, d1, d2, d3 := dop[i0*dh:i0*dh+dh], dop[(i0+1)*dh:(i0+2)*dh], dop[(i0+2)*dh:(i0+3)*dh], dop[(i0+3)*dh:(i0+4)*dh]
				g0, g1, g2, g3 := dqp[i0*dh:i0*dh+dh], dqp[(i0+1)*dh:(i0+2)*dh], dqp[(i0+2)*dh:(i0+3)*dh], dqp[(i0+3)*dh:(i0+4)*dh]
				q1, q2, q3 = q1[:len(q0)], q2[:len(q0)], q3[:len(q0)]
				d0, d1, d2, d3 = d0[:len(q0)], d1[:len(q0)], d2[:len(q0)], d3[:len(q0)]
				g0, g1, g2, g3 = g0[:len(q0)], g1[:len(q0)], g2[:len(q0)], g3[:len(q0)]
				l0, l1, l2, l3 := lrow[i0], lrow[i0+1], lrow[i0+2], lrow[i0+3]
				e0, e1, e2, e3 := delta[i0], delta[i0+1], delta[i0+2], delta[i0+3]
				for j := 0; j < T; j++ {
					kj, vj := kp[j*dh:j*dh+dh], vp[j*dh:j*dh+dh]
					kj, vj = kj[:len(q0)], vj[:len(q0)]
					var s0, s1, s2, s3, p0, p1, p2, p3 float32
					for t, kv := range kj {
						vv := vj[t]
						s0 += q0[t] * kv
						s1 += q1[t] * kv
						s2 += q2[t] * kv
						s3 += q3[t] * kv
						p0 += d0[t] * vv
						p1 += d1[t] * vv
						p2 += d2[t] * vv
						p3 += d3[t] * vv
					}
					a0, a1, a2, a3 := expf(s0-l0), expf(s1-l1), expf(s2-l2), expf(s3-l3)
					b0, b1, b2, b3 := a0*(p0-e0), a1*(p1-e1), a2*(p2-e2), a3*(p3-e3)
					dkj, dvj := dkp[j*dh:j*dh+dh], dvp[j*dh:j*dh+dh]
					dkj, dvj = dkj[:len(q0)], dvj[:len(q0)]
					for t, kv := range kj {
						dvj[t] += a0*d0[t] + a1*d1[t] + a2*d2[t] + a3*d3[t]
						dkj[t] += b0*q0[t] + b1*q1[t] + b2*q2[t] + b3*q3[t]
						g0[t] += b0 * kv
						g1[t] += b1 * kv
						g2[t] += b2 * kv
						g3[t] += b3 * kv
					}
				}
			}
			for i := tail; i < T; i++ {
				qi, di, gi := qp[i*dh:i*dh+dh], dop[i*dh:i*dh+dh], dqp[i*dh:i*dh+dh]
				for j := 0; j < T; j++ {
					kj, vj := kp[j*dh:j*dh+dh], vp[j*dh:j*dh+dh]
					p := expf(dot(qi, kj) - lrow[i])
					ds := p * (dot(di, vj) - delta[i])
					axpy(dvp[j*dh:j*dh+dh], p, di)
					axpy(dkp[j*dh:j*dh+dh], ds, qi)
					axpy(gi, ds, kj)
				}
			}
			for j := 0; j < T; j++ {
				dst := (b*T+j)*dld + h*dh
				gq := dq[dst : dst+dh]
				for t, g := range dqp[j*dh : j*dh+dh] {
					gq[t] = g * sh.scale
				}
				copy(dk[dst:dst+dh], dkp[j*dh:j*dh+dh])
				copy(dv[dst:dst+dh], dvp[j*dh:j*dh+dh])
			}
		}
	}
}
