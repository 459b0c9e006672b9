#!/usr/bin/env python3
# usage (in the PyTorch root, with examples/selfplay_connect4.py copied to /tmp/rf):
#   chroot ROOT /usr/bin/env -C /tmp/rf python3 shapes_cost.py
# Cost of record_shapes per torch.profiler window: a 2-step window of the
# example's policy (selfplay_connect4.Policy at the tests' size, forward
# and backward of a batch of 16 boards), alternately recorded with
# record_shapes False and True, 9 windows each; prints the median window
# time of each and the difference per window and per operator call.
import statistics, sys, time
import importlib.util
import torch
from torch.profiler import ProfilerActivity, profile
torch.set_num_threads(1); torch.manual_seed(0)
spec = importlib.util.spec_from_file_location("ex", "/tmp/rf/selfplay_connect4.py")
ex = importlib.util.module_from_spec(spec); spec.loader.exec_module(ex)
net = ex.Policy(32, 2, 4)
obs = torch.randint(0, 3, (16, 42))
def step():
    net(obs).square().mean().backward()
for _ in range(3): step()
res = {False: [], True: []}
calls = 0
for i in range(18):
    shapes = bool(i % 2)
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes) as p:
        step(); step()
    res[shapes].append(time.perf_counter() - t0)
    if shapes:
        calls = len(p.events())
off, on = statistics.median(res[False]), statistics.median(res[True])
print(f"window without shapes {off*1e3:.2f} ms, with {on*1e3:.2f} ms: +{(on-off)*1e3:.2f} ms per window ({(on/off-1)*100:.1f}%), {calls} operator calls, {(on-off)/max(calls,1)*1e6:.2f} µs per call")
