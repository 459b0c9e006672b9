"""A small PyTorch loop whose torch.compile'd function recompiles every
step when its flag says so (an arm that recompiles is invalid).

Flag it declares: shapes=fixed|vary. fixed: the compiled function always
sees an 8x8 input (compiled once, in the first step); vary: an input of
4+step rows, a new shape each step, so dynamo's shape guard fails and the
frame is compiled again (dynamic=False: no dynamic shapes; backend
"eager": dynamo only, no C++ compiler needed; cache_size_limit raised so
that recompiling never stops).
"""
import sys

import torch
import torch._dynamo

import rlktop

torch.set_num_threads(1)
torch._dynamo.config.cache_size_limit = 1000
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
shapes = rlktop.flag("shapes", "fixed", ["fixed", "vary"])


@torch.compile(backend="eager", dynamic=False)
def f(x):
    return (x * 2 + 1).sin().sum()


w = torch.nn.Parameter(torch.ones(8))
opt = torch.optim.SGD([w], lr=0.01)
for step in range(steps):
    n = 8 if shapes.value == "fixed" else 4 + step
    loss = f(torch.ones(n, 8) * w)
    opt.zero_grad()
    loss.backward()
    opt.step()
