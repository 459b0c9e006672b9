#!/usr/bin/env python3
"""A small but real PyTorch RL training loop: batched Connect Four self-play.

Each iteration collects `--plies` moves in `--envs` games at once (the same
policy plays both sides), then takes one policy-gradient step with AdamW.

* observation: 42 cell tokens (empty / mine / theirs, from the mover's view)
  plus one global token, embedded, through a pre-norm transformer whose
  attention is torch.nn.functional.scaled_dot_product_attention;
* policy: 7 column logits (full columns masked), sampled by top-p: sort,
  cumulative sum, cut, renormalise, multinomial;
* update: REINFORCE with a per-batch baseline on the discounted outcome of
  each finished game, an entropy bonus, AdamW.

It runs on CPU, CUDA and ROCm and needs nothing of rlktop; under rlktop
(whose agent puts the `rlktop` module on PYTHONPATH) it also reports the
policy's logits for NaN, a probe (the logits of a fixed batch of boards,
compared bitwise and in ulps at every switch between compared settings)
and its loss and entropy as learning curves:

    python3 examples/selfplay_connect4.py --steps 50
    rlktop run -- python3 examples/selfplay_connect4.py
    rlktop compare --flag sdpa=math,flash -- python3 examples/selfplay_connect4.py

Stages are torch.profiler record_function ranges (and NVTX ranges on CUDA):
collect (observe, forward, sample, env_step) and update (forward, backward,
optimizer). Each iteration prints one log line: mean loss, entropy, games
finished and the mover's win rate.
"""

import argparse
import contextlib
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # optional: output checks when run under rlktop
    import rlktop
except ImportError:
    rlktop = None

ROWS, COLS = 6, 7


@contextlib.contextmanager
def stage(name):
    """A named range: user_annotation in torch.profiler traces, NVTX on CUDA."""
    nvtx = torch.cuda.is_available()
    if nvtx:
        torch.cuda.nvtx.range_push(name)
    try:
        with torch.autograd.profiler.record_function(name):
            yield
    finally:
        if nvtx:
            torch.cuda.nvtx.range_pop()


class Games:
    """`n` Connect Four boards: 0 empty, 1 the player to move, -1 the other."""

    def __init__(self, n, device):
        self.n, self.device = n, device
        self.board = torch.zeros(n, ROWS, COLS, dtype=torch.int8, device=device)
        # The 69 lines of four, as flat cell indices [69, 4].
        lines = []
        for r in range(ROWS):
            for c in range(COLS):
                for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    cells = [(r + k * dr, c + k * dc) for k in range(4)]
                    if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                        lines.append([rr * COLS + cc for rr, cc in cells])
        self.lines = torch.tensor(lines, device=device)

    def legal(self):
        return self.board[:, 0, :] == 0  # [n, 7]

    def observe(self):
        return (self.board.view(self.n, -1).long() + 1)  # [n, 42] in {0,1,2}

    def step(self, col):
        """Drops the mover's piece in `col`; returns (won, draw) [n] bool and
        flips the board so the next mover sees itself as 1."""
        b = self.board
        filled = (b[torch.arange(self.n, device=self.device), :, col] != 0).sum(1)  # pieces in the column
        row = ROWS - 1 - filled
        b[torch.arange(self.n, device=self.device), row, col] = 1
        flat = b.view(self.n, -1)
        won = (flat[:, self.lines] == 1).all(-1).any(-1)
        draw = ~won & (b[:, 0, :] != 0).all(-1)
        self.board = -b
        return won, draw

    def reset(self, mask):
        self.board[mask] = 0


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, w))
        return x + self.mlp(self.norm2(x))


class Policy(nn.Module):
    def __init__(self, width, layers, heads):
        super().__init__()
        self.cell = nn.Embedding(3, width)
        self.pos = nn.Parameter(torch.randn(ROWS * COLS + 1, width) * 0.02)
        self.glob = nn.Parameter(torch.zeros(1, 1, width))
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 1)

    def forward(self, obs):
        """obs [n, 42] → column logits [n, 7]."""
        n = obs.shape[0]
        x = torch.cat([self.glob.expand(n, 1, -1), self.cell(obs)], 1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        cells = self.head(self.norm(x[:, 1:])).view(n, ROWS, COLS)
        return cells.mean(1)  # a column's logit: mean over its cells


def top_p_sample(logits, p, gen):
    """Top-p (nucleus) sampling by sort + cumulative sum; returns [n] indices."""
    probs = torch.softmax(logits, -1)
    sorted_p, idx = probs.sort(-1, descending=True)
    cum = sorted_p.cumsum(-1)
    keep = cum - sorted_p < p  # the smallest prefix whose mass reaches p
    sorted_p = sorted_p * keep
    sorted_p = sorted_p / sorted_p.sum(-1, keepdim=True)
    choice = torch.multinomial(sorted_p, 1, generator=gen).squeeze(-1)
    return idx.gather(-1, choice[:, None]).squeeze(-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--plies", type=int, default=8, help="moves collected per iteration")
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--top-p", type=float, default=0.9)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--steps", type=int, default=0, help="iterations (0: until stopped)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compile", action="store_true", help="torch.compile the policy")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    gen = torch.Generator(device=dev).manual_seed(args.seed + 1)
    policy = Policy(args.width, args.layers, args.heads).to(dev)
    opt = torch.optim.AdamW(policy.parameters(), lr=args.lr, weight_decay=0.01)
    fwd = torch.compile(policy) if args.compile else policy
    games = Games(args.envs, dev)
    if rlktop is not None:
        # A fixed batch of 32 positions (random legal plays from empty
        # boards), the same in every process with the same seed.
        pg = Games(32, dev)
        g0 = torch.Generator(device=dev).manual_seed(12345)
        for _ in range(6):
            legal = pg.legal().float()
            pg.step(torch.multinomial(legal, 1, generator=g0).squeeze(-1))
        probe_obs = pg.observe()
        rlktop.probe("policy_logits", lambda: policy(probe_obs))
    # The last plies of every board (obs, legal, action), and each board's
    # plies in its current game.
    traj = []
    length = torch.zeros(args.envs, dtype=torch.long, device=dev)
    it = 0
    while args.steps == 0 or it < args.steps:
        t0 = time.perf_counter()
        done_obs, done_legal, done_act, done_ret = [], [], [], []
        wins = finished = 0
        with stage("collect"):
            for _ in range(args.plies):
                with stage("observe"):
                    obs, legal = games.observe(), games.legal()
                with stage("forward"), torch.no_grad():
                    logits = fwd(obs).float()
                    if rlktop is not None:
                        rlktop.check("logits", logits)
                    logits = logits.masked_fill(~legal, -math.inf)
                with stage("sample"):
                    act = top_p_sample(logits, args.top_p, gen)
                with stage("env_step"):
                    won, draw = games.step(act)
                traj.append((obs, legal, act))
                del traj[:-ROWS * COLS]  # a game lasts at most 42 plies
                length += 1
                end = won | draw
                if end.any():
                    # Outcome from each ply's mover's view: the last mover
                    # wins (+1), the one before loses (-1), … discounted by
                    # 0.97 per ply; a draw is 0.
                    k = len(traj)
                    for j, (o, l, a) in enumerate(traj):
                        d = k - 1 - j
                        rows = end & (length > d)
                        if not rows.any():
                            continue
                        sign = 1.0 if d % 2 == 0 else -1.0
                        done_obs.append(o[rows])
                        done_legal.append(l[rows])
                        done_act.append(a[rows])
                        done_ret.append(won[rows].float() * sign * 0.97 ** d)
                    wins += int(won.sum())
                    finished += int(end.sum())
                    games.reset(end)
                    length[end] = 0
        loss_v = ent_v = float("nan")
        with stage("update"):
            if done_obs:
                obs = torch.cat(done_obs)
                legal = torch.cat(done_legal)
                act = torch.cat(done_act)
                ret = torch.cat(done_ret)
                adv = ret - ret.mean()
                with stage("forward"):
                    logits = policy(obs).float().masked_fill(~legal, -1e9)
                    logp = torch.log_softmax(logits, -1)
                    ent = -(logp.exp() * logp).sum(-1).mean()
                    loss = -(logp.gather(-1, act[:, None]).squeeze(-1) * adv).mean() - 0.01 * ent
                with stage("backward"):
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                loss_v, ent_v = float(loss), float(ent)
                if rlktop is not None:
                    rlktop.log(loss=loss_v, entropy=ent_v)
            with stage("optimizer"):
                opt.step()  # a step even with no finished game: steps stay regular
        dt = time.perf_counter() - t0
        # Iterations count from 0, as rlktop numbers steps (its step k is
        # iteration k; iteration 0 ends before the first step it measures).
        if finished:
            print(f"iter {it} loss {loss_v:.4f} entropy {ent_v:.3f} finished {finished} "
                  f"win_rate {wins / finished:.2f} step_ms {dt * 1e3:.1f}", flush=True)
        else:
            print(f"iter {it} no game finished step_ms {dt * 1e3:.1f}", flush=True)
        it += 1


if __name__ == "__main__":
    main()
