"""Overhead of the Python sampler on a training step (stdlib only).

The main thread runs steps of pure-Python work (about STEP_MS ms each,
below a stack about DEPTH frames deep, beside THREADS idle threads) in
blocks, alternately with rlktop's sampler running at HZ and without it
(A B A B ...). Prints one JSON line: the median step time of each arm,
their ratio, and the sampler's own CPU time per tick (time.thread_time_ns
of its thread), which bounds the time it holds the interpreter lock.

usage: python3 sampler_bench.py AGENT_DIR [STEPS_PER_BLOCK BLOCKS HZ STEP_MS]
"""
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, sys.argv[1])
from rlktop import _sampler  # noqa: E402

STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
BLOCKS = int(sys.argv[3]) if len(sys.argv) > 3 else 8
HZ = float(sys.argv[4]) if len(sys.argv) > 4 else 100
STEP_MS = float(sys.argv[5]) if len(sys.argv) > 5 else 50
DEPTH, THREADS = 24, 3


class Agent:
    dead = False
    tracing = True
    step_n = 0
    step_ident = threading.get_ident()


def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def nested(d, n):
    if d:
        return nested(d - 1, n)
    return work(n)


def calibrate():
    n = 20000
    while True:
        t0 = time.perf_counter()
        nested(DEPTH, n)
        dt = time.perf_counter() - t0
        if dt > 0.01:
            return int(n * STEP_MS / 1e3 / dt)
        n *= 2


stop = threading.Event()
for _ in range(THREADS):
    threading.Thread(target=stop.wait, daemon=True).start()
n = calibrate()
agent = Agent()
sampler = _sampler.Sampler(agent, HZ)  # one for the run, as the agent's
times = {"off": [], "on": []}
for b in range(2 * BLOCKS):
    arm = "on" if b % 2 else "off"
    s = None
    if arm == "on":
        s = sampler.start()
    for _ in range(STEPS):
        t0 = time.perf_counter_ns()
        nested(DEPTH, n)
        times[arm].append(time.perf_counter_ns() - t0)
        agent.step_n += 1
        if s is not None:
            s.flush({}, os.getpid(), force=True)  # the sender's share of the work
    if s is not None:
        s.stop()
stop.set()
ticks, cpu_ns = sampler.ticks, sampler.cpu_ns
off, on = statistics.median(times["off"]), statistics.median(times["on"])
print(json.dumps({"hz": HZ, "steps": len(times["on"]), "off_ms": off / 1e6, "on_ms": on / 1e6, "ratio": on / off,
                  "ticks": ticks, "sampler_cpu_us_per_tick": cpu_ns / max(ticks, 1) / 1e3,
                  "sampler_cpu_share": cpu_ns / max(ticks, 1) * HZ / 1e9}))
