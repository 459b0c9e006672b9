"""The Python sampler's independent check (cmd/rlktop/python_torch_test.go).

usage: pysample_check.py MODE OUT STEPS N

Each step runs two pure-Python functions in two stages: work_three
(3*N loop iterations, stage "three") and work_one (N, stage "one"), and
times each with time.perf_counter; with MODE "torch" a third stage
"matmul" runs torch.mm on 384x384 matrices for about as long as
work_three. The timings of the steps the agent counts (every one but the
first: the agent's first measured step starts at the first
rlktop.step()) go to OUT as JSON, with whether torch was imported.
"""
import json
import sys
import time

import rlktop


def work_three(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def work_one(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


mode, out, steps, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if mode == "torch":
    import torch

    torch.set_num_threads(1)
    a, b = torch.randn(384, 384), torch.randn(384, 384)
t = {"three": 0.0, "one": 0.0, "matmul": 0.0}
for step in range(steps):
    with rlktop.stage("three"):
        t0 = time.perf_counter()
        work_three(3 * n)
        d3 = time.perf_counter() - t0
    with rlktop.stage("one"):
        t0 = time.perf_counter()
        work_one(n)
        d1 = time.perf_counter() - t0
    dm = 0.0
    if mode == "torch":
        with rlktop.stage("matmul"):
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < d3:
                torch.mm(a, b)
            dm = time.perf_counter() - t0
    if step > 0:
        t["three"] += d3
        t["one"] += d1
        t["matmul"] += dm
    rlktop.step()
t["torch_imported"] = "torch" in sys.modules
with open(out, "w") as f:
    json.dump(t, f)
