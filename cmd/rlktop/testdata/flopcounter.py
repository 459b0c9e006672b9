"""Writes a torch.profiler CPU trace (record_shapes) of a small model's
forward and backward — conv2d, linear, math SDPA — and the FLOPs
torch.utils.flop_counter.FlopCounterMode counts for one iteration of it,
per operator: the independent reference of rlktop's operator model
(cmd/rlktop roofline_torch_test.go).

usage: python3 flopcounter.py TRACE.json COUNTS.json [--steps N]
"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.flop_counter import FlopCounterMode

trace, counts = sys.argv[1], sys.argv[2]
steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 3
torch.manual_seed(0)
torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.qkv = nn.Linear(64, 192)
        self.out = nn.Linear(64, 10)

    def forward(self, x):
        h = F.relu(self.conv(x))  # [B, 8, 8, 8]
        b = h.shape[0]
        t = h.reshape(b, 8, 64)  # 8 tokens of width 64
        q, k, v = self.qkv(t).chunk(3, dim=-1)
        heads = lambda z: z.reshape(b, 8, 4, 16).transpose(1, 2)  # [B, 4, 8, 16]
        a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v))
        a = a.transpose(1, 2).reshape(b, 8, 64)
        return self.out(a.mean(dim=1))


net = Net()
x = torch.randn(16, 3, 16, 16)


def iteration():
    with sdpa_kernel(SDPBackend.MATH):
        loss = net(x).square().mean()
    loss.backward()


iteration()  # warm-up
fc = FlopCounterMode(display=False)
with fc:
    iteration()
per_op = {str(op).replace("aten.", "aten::"): n for op, n in fc.get_flop_counts()["Global"].items()}
# One step of warm-up (not recorded), then `steps` ProfilerStep#N windows.
sched = schedule(wait=0, warmup=1, active=steps, repeat=1)
with profile(activities=[ProfilerActivity.CPU], record_shapes=True, schedule=sched) as p:
    for _ in range(steps + 1):
        iteration()
        p.step()
p.export_chrome_trace(trace)
with open(counts, "w") as f:
    json.dump({"per_iteration": per_op, "total": fc.get_total_flops(), "steps": steps}, f)
print("OK", json.dumps(per_op))
