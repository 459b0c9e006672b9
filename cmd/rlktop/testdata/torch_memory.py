"""A step that allocates known temporaries, for rlktop's memory tests.

Each step: in stage "policy_head", a 64 MiB temporary (torch.ones of 16 Mi
float32, aten::ones) summed and dropped; in stage "attention", one
scaled_dot_product_attention call of q, k, v [B=16, H=8, T=256, D=16]
float32: the math backend materialises the [16, 8, 256, 256] scores, 32 MiB,
which the flash backend never writes. Steps are rlktop.step(); the sdpa
flag is the agent's (enable_*_sdp).
"""
import sys

import rlktop
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
big = "--no-big" not in sys.argv
N = 16 * 1024 * 1024
q = torch.randn(16, 8, 256, 16)
for i in range(steps):
    if big:
        with rlktop.stage("policy_head"):
            t = torch.ones(N)
            s = t.sum()
            del t
    with rlktop.stage("attention"):
        o = F.scaled_dot_product_attention(q, q, q)
    rlktop.step()
