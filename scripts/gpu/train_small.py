#!/usr/bin/env python3
"""A small transformer training loop with NVTX stages, for scripts/gpu-check.sh.

Each step is an NVTX range "step#N" holding "data", "forward", "backward"
and "optimizer" ranges (torch.cuda.nvtx). The attention implementation is
chosen by the environment variable RLK_SDPA (math | flash | efficient |
cudnn), which is how `rlktop run --flag RLK_SDPA=...` flips it; the chosen
backend is forced with torch.nn.attention.sdpa_kernel, so an unavailable
backend is an error, never a silent fallback.

Modes (one per process):
  default        run --warmup + --steps steps (traced when under rlktop run)
  --profile OUT  the same, with torch.profiler (CPU + CUDA) recording the
                 --steps measured steps; writes its Chrome trace to OUT
Always: --times OUT writes per-step wall times (ns, after
torch.cuda.synchronize) of the measured steps as JSON.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "math": SDPBackend.MATH,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab, d, heads, layers, ctx):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--times", default="")
    ap.add_argument("--profile", default="")
    a = ap.parse_args()

    sdpa = os.environ.get("RLK_SDPA", "math")
    if sdpa not in BACKENDS:
        sys.exit("RLK_SDPA=%s: use one of %s" % (sdpa, ", ".join(BACKENDS)))
    if not torch.cuda.is_available():
        sys.exit("train_small.py: no CUDA device")
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = TinyGPT(a.vocab, a.d, a.heads, a.layers, a.ctx).to(dev, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    nvtx = torch.cuda.nvtx

    def step(n):
        nvtx.range_push("step#%d" % n)
        nvtx.range_push("data")
        idx = torch.randint(0, a.vocab, (a.batch, a.ctx + 1), device=dev, generator=gen)
        x, y = idx[:, :-1], idx[:, 1:]
        nvtx.range_pop()
        nvtx.range_push("forward")
        with sdpa_kernel([BACKENDS[sdpa]]):
            logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, a.vocab), y.reshape(-1))
        nvtx.range_pop()
        nvtx.range_push("backward")
        with sdpa_kernel([BACKENDS[sdpa]]):
            loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        nvtx.range_pop()
        return loss

    for n in range(a.warmup):
        step(n)
    torch.cuda.synchronize()

    times = []
    losses = []

    def measured():
        for n in range(a.warmup, a.warmup + a.steps):
            t0 = time.perf_counter_ns()
            loss = step(n)
            torch.cuda.synchronize()
            times.append(time.perf_counter_ns() - t0)
            losses.append(loss.item())

    if a.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            measured()
        prof.export_chrome_trace(a.profile)
    else:
        measured()
    if any(not math.isfinite(v) for v in losses):
        sys.exit("train_small.py: non-finite loss")
    if a.times:
        with open(a.times, "w") as f:
            json.dump({"sdpa": sdpa, "warmup": a.warmup, "steps_ns": times, "final_loss": losses[-1],
                       "torch": torch.__version__, "cuda": torch.version.cuda,
                       "device": torch.cuda.get_device_name(0)}, f)


if __name__ == "__main__":
    main()
