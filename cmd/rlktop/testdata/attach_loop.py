"""A small seeded PyTorch training loop that knows nothing of rlktop, for
rlktop attach's tests: started on its own, attached to, detached from.

Each iteration prints one line, flushed:

    iter N loss HEX params HEX prof 0|1 sdpa MATH,FLASH step_ms X

loss is the loss as float.hex (exact); params a hash of every parameter's
bytes after the optimizer step; prof whether a torch.profiler is recording
in this process now; sdpa whether the math and flash SDPA backends are
enabled (1/0 each); step_ms the iteration's wall time. Two runs with the
same --seed print the same loss and params on every line unless something
changed the computation. --hook-when-profiled registers a global optimizer
post hook (one that does nothing) the first time a profiler records: after
an attach, a hook that comes after the agent's. --leave-on-usr1 makes
SIGUSR1 ask an attached rlktop agent to leave by itself, as it does when
rlktop stops reading its sends.
"""

import argparse
import hashlib
import signal
import sys
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, w))
        return x + self.mlp(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=0, help="iterations (0: until killed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--hook-when-profiled", action="store_true",
                    help="register a global optimizer post hook once a torch.profiler records (after an attach: a hook after the agent's)")
    ap.add_argument("--leave-on-usr1", action="store_true",
                    help="on SIGUSR1, ask an attached rlktop agent to leave by itself")
    args = ap.parse_args()
    if args.leave_on_usr1:
        def leave(*_):
            a = getattr(sys.modules.get("rlktop"), "_agent", None)
            if a is not None:
                # From another thread: the handler may interrupt the agent's
                # own code on this one, inside its lock.
                threading.Thread(target=a.request_detach, args=("SIGUSR1 asked it to",)).start()
        signal.signal(signal.SIGUSR1, leave)
    hooked = []
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    model = nn.Sequential(Block(args.width, 4), Block(args.width, 4), nn.Linear(args.width, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(args.seed + 1)
    rf = torch.autograd.profiler.record_function
    it = 0
    while args.steps == 0 or it < args.steps:
        t0 = time.perf_counter()
        with rf("collect"):
            x = torch.randn(args.batch, args.tokens, args.width, generator=gen)
            y = x.sum(-1, keepdim=True).tanh()
        with rf("update"):
            with rf("forward"):
                loss = F.mse_loss(model(x), y)
            with rf("backward"):
                opt.zero_grad(set_to_none=True)
                loss.backward()
            with rf("optimizer"):
                opt.step()
        h = hashlib.blake2b(digest_size=8)
        for p in model.parameters():
            h.update(p.detach().numpy().tobytes())
        prof = int(torch.autograd._profiler_enabled())
        if prof and args.hook_when_profiled and not hooked:
            from torch.optim.optimizer import register_optimizer_step_post_hook

            hooked.append(register_optimizer_step_post_hook(lambda *a: None))
        b = torch.backends.cuda
        sdpa = "%d,%d" % (b.math_sdp_enabled(), b.flash_sdp_enabled())
        dt = time.perf_counter() - t0
        print("iter %d loss %s params %s prof %d sdpa %s step_ms %.1f" % (it, float(loss).hex(), h.hexdigest(), prof, sdpa, dt * 1e3), flush=True)
        it += 1


if __name__ == "__main__":
    main()
