// Package demo is rlktop's built-in workload: a miniature but complete
// reinforcement-learning self-play training loop, written in Go on
// gorgonia.org/tensor (GEMMs) with hand-written loops for everything else,
// traced op by op through tracer/gotrace so that `rlktop` with no arguments
// has a real training process to profile without a GPU.
//
// # Game
//
// 9x9 Ataxx (game.go), batched: 81 cell tokens + 9 global tokens (T = 90),
// from→to actions (81·81 = 6561) with a legal-move list and mask, terminal
// rewards ±1/0, automatic restarts, deterministic under Config.Seed.
// BenchmarkEnvStep (Step + Observe + Legal with mask, 256 games, random
// play): 212k env steps/s wall on a lightly loaded moment of the 2-core dev
// machine, ~300k env steps per CPU second.
//
// # Model
//
// Token embedding + position → Layers × {RMSNorm, QKV projection, 6-head
// attention, output projection, RMSNorm, SwiGLU MLP} → RMSNorm → move
// logits scored pairwise (z_from·Wf)·(z_to·Wt)/√Dk, and a tanh value head on
// the last global token (model.go).
//
// # Step
//
// Loop.Step runs the stages env.step, env.observe, env.legal_mask, forward,
// sample (temperature softmax, top-p by a descending sort and a cumulative
// scan, then a draw) and, every UpdateEvery steps, update: returns (game
// outcome, or a value bootstrap for games still running), group-normalised
// advantages with a std floor, a minibatch forward, policy-gradient + value
// loss, backward through the whole network (heads, every block including
// attention and the QKV projection, norms, embeddings; checked against
// finite differences in TestFullBackward) and AdamW. Everything runs in the
// calling goroutine; gonum's GEMM may use worker goroutines for large
// matrices (set GOMAXPROCS=1 in the child for a strictly single-threaded
// loop).
//
// # Backends
//
// Each is a second implementation of the same function, switchable between
// steps with Loop.Set (applied at the next step boundary):
//
//	attention = math | fused        [nb,H,T,T] scores materialised vs online softmax over key blocks
//	qkv       = separate | fused    three [D,D] GEMMs vs one [D,3D] GEMM
//	scan      = serial | sklansky   prefix sum in index order vs Sklansky's parallel prefix
//	sampler   = multinomial | gumbel  inverse CDF vs Gumbel-max over the top-p set
//	head      = materialized | gatherdot  all 6561 pairs then mask vs legal pairs only
//
// Agreement (tests): attention within 2e-5 of a float64 reference (both);
// qkv within 1e-4·(1+|z|) (bitwise in practice); scan within
// i+⌈log2(i+1)⌉+1 ulps at position i; samplers pass a χ² test against the
// truncated distribution; head logits bitwise equal on legal moves, and two
// loops differing only in head choose identical actions.
//
// # Measured (2-core AMD EPYC dev VM shared with other jobs, load 10–20;
// CPU time is quoted because wall time there mostly measures the load)
//
// Default size (32 boards, 2 layers, width 48, 6 heads, MLP 128, T = 90,
// update every 4 steps on 32 samples): ~250 ms of process CPU per step
// (BenchmarkLoopStep cpu-ns/op), i.e. ≈ 4 steps/s when the cores are free;
// 2.7 steps/s wall measured at load ≈ 10. Stage shares of step time:
// forward ≈ 60 %, update ≈ 40 % (update.forward 16 %, update.backward 22 %,
// optimizer < 0.1 %), sample, env.step, env.observe, env.legal_mask each
// < 0.1 %. Kernels (RLK_SHARES=1 go test -run KernelShares -v): attention
// forward ≈ 39 %, MLP GEMMs ≈ 22 %, attention backward ≈ 10 %, QKV ≈ 7 %.
//
// Backend pairs, interleaved minimum CPU time at batch 32 / 1024, T = 90
// (RLK_AB=1 go test -run ABMin -v): attention math/fused 1.31x / 1.38x
// (fused wins from T = 8 to 100, dh 8 to 64: 1.03x–1.59x); qkv
// separate/fused 0.82x / 0.82x, 0.87x–1.01x in later runs (fused is no
// faster on gonum: its 64-wide column blocking leaves a 16-wide remainder
// of 3D = 144); head
// materialized/gatherdot 50x / 23x; scan serial/sklansky 0.91x / 0.60x (a
// parallel prefix does n·log n/2 adds; it pays only on parallel hardware);
// sampler multinomial/gumbel ≈ 0.01x (Gumbel-max draws one uniform and two
// logs per candidate, the inverse CDF one binary search).
//
// # Kernel names
//
// Every op records a kernel-like event with a stable name: embed, rmsnorm,
// qkv_separate_q/_k/_v, qkv_fused, attn_math_qk, attn_math_softmax,
// attn_math_pv, attn_fused_fwd, matmul_out_proj, matmul_mlp_up, swiglu,
// matmul_mlp_down, matmul_head_proj, value_head, head_materialized,
// head_gatherdot, topp_softmax, topp_sort, topp_scan_serial,
// topp_scan_sklansky, sample_multinomial, sample_gumbel, env_step,
// env_observe, env_legal_mask, advantages, policy_value_loss, backward_head,
// backward_value, backward_rmsnorm, backward_mlp_down, backward_swiglu,
// backward_mlp_up, backward_out_proj, backward_attn, backward_qkv,
// backward_embed, adamw. Stages are ranges named env.step, env.observe,
// env.legal_mask, forward, sample, update (with update.forward,
// update.backward, update.optimizer inside); steps are KindStep events; a
// flag change is an instant named "flag key=value".
package demo
