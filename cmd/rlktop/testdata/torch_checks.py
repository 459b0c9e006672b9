"""A small deterministic PyTorch loop that uses rlktop's output checks
(the real-PyTorch tests run it under `rlktop compare`).

Flags it declares: poison=off|on (on: NaN in two rows of the logits every
third step), lr (SGD learning rate). The seed is RLKTOP_SEED (A′ of a
restart comparison gets another). Each step's batch depends only on the
step number, so two processes with the same seed and flags replay the
same numbers.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import rlktop

torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
torch.manual_seed(int(os.environ.get("RLKTOP_SEED", "1")))
poison = rlktop.flag("poison", "off", ["off", "on"])
lr = rlktop.flag("lr", "0.01")


class Net(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.emb = nn.Linear(8, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, 4)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.emb(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, -1)
        return self.out(a.mean(1))


def batch(step):
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(64, 16, 8, generator=g)
    y = (x[:, :, 0].sum(1) > 0).long() + 2 * (x[:, :, 1].sum(1) > 0).long()
    return x, y


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
probe_x, _ = batch(-1)
rlktop.probe("logits", lambda: net(probe_x))
for step in range(steps):
    for g in opt.param_groups:
        g["lr"] = float(lr.value)
    x, y = batch(step)
    logits = net(x)
    if poison.value == "on" and step % 3 == 0:
        logits = logits.clone()
        logits[:2] = float("nan")
    rlktop.check("logits", logits)
    rlktop.audit("logits", logits)
    loss = F.cross_entropy(logits.nan_to_num(), y)
    rlktop.log(loss=loss)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done", flush=True)
