"""Overhead of the Python sampler on a training step (stdlib only).

The main thread runs steps of pure-Python work (about STEP_MS ms each,
below a stack about DEPTH frames deep, beside THREADS idle threads) in
blocks, alternately with rlktop's sampler running at HZ and without it
(A B A B ...); while the sampler runs, a sender thread calls its flush()
every FLUSH_EVERY s, as the agent's sender does (encoding takes the
interpreter lock from the step too). Prints one JSON line:

  off_ms, on_ms       the median step (wall, perf_counter) of each arm
  ratio               on_ms / off_ms
  pair_ratio          the median over adjacent off/on block pairs of the
                      ratio of their median steps (drifts in the
                      machine's load cancel within a pair)
  cpu_ratio           the same for the main thread's CPU time a step
                      (time.thread_time_ns): work the step itself does
                      more (cache misses, the lock's hand-over)
  stall_share         the step's time off the CPU (wall - CPU time, the
                      interpreter lock waited for, or preempted) on minus
                      off, over the off arm's step, paired as pair_ratio:
                      the step's CPU-time noise cancels, which wall time
                      keeps
  ticks_per_s         grid ticks sampled a second of the on arm (each
                      thread's sample goes in once a tick)
  sampler_us_per_tick the sampler thread's CPU time (its whole loop, the
                      wait included) per wake-up (a wake-up samples once,
                      for one tick or more), µs
  sample_us_per_tick  the part of it in sample()
  flush_us_per_tick   the sender's flush() CPU time per wake-up, µs
  held_share          (sampler + flush CPU) over the on arm's wall time:
                      the time the sampler's side holds the interpreter
                      lock, which the step cannot run

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

STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
BLOCKS = int(sys.argv[3]) if len(sys.argv) > 3 else 30
HZ = float(sys.argv[4]) if len(sys.argv) > 4 else 100
STEP_MS = float(sys.argv[5]) if len(sys.argv) > 5 else 50
DEPTH, THREADS = 24, 3


class Agent:
    dead = False
    tracing = True
    step_n = 0
    step_ident = threading.get_ident()


class Sampler(_sampler.Sampler):
    run_cpu_ns = 0

    def _run(self, *args):
        t0 = time.thread_time_ns()
        try:
            super()._run(*args)
        finally:
            self.run_cpu_ns += time.thread_time_ns() - t0


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
        if dt > 0.05:
            return int(n * STEP_MS / 1e3 / dt)
        n *= 2


flush_cpu = [0]


def sender(s, done):
    ids = {}
    while not done.wait(_sampler.FLUSH_EVERY):
        t0 = time.thread_time_ns()
        s.flush(ids, os.getpid())
        flush_cpu[0] += time.thread_time_ns() - t0
    t0 = time.thread_time_ns()
    s.flush(ids, os.getpid(), force=True)
    flush_cpu[0] += time.thread_time_ns() - t0


stop = threading.Event()
for _ in range(THREADS):
    threading.Thread(target=stop.wait, daemon=True).start()
n = calibrate()
agent = Agent()
sampler = Sampler(agent, HZ)  # one for the run, as the agent's
wall = {"off": [], "on": []}
cpu = {"off": [], "on": []}
blocks = []  # (arm, median wall, median cpu)
on_wall = 0
for b in range(2 * BLOCKS):
    arm = "on" if b % 2 else "off"
    s = done = snd = None
    if arm == "on":
        s = sampler.start()
        done = threading.Event()
        snd = threading.Thread(target=sender, args=(s, done), name="rlktop-agent-send", daemon=True)
        snd.start()
    bw, bc = [], []
    tb = time.perf_counter_ns()
    for _ in range(STEPS):
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        nested(DEPTH, n)
        bc.append(time.thread_time_ns() - c0)
        bw.append(time.perf_counter_ns() - t0)
        agent.step_n += 1
    if s is not None:
        on_wall += time.perf_counter_ns() - tb
        s.stop()
        done.set()
        snd.join()
    wall[arm] += bw
    cpu[arm] += bc
    blocks.append((statistics.median(bw), statistics.median(bc), statistics.median(w - c for w, c in zip(bw, bc))))
stop.set()
med = statistics.median
ticks = max(getattr(sampler, "wakes", sampler.ticks), 1)
pairs = [(blocks[i + 1][0] / blocks[i][0], blocks[i + 1][1] / blocks[i][1]) for i in range(0, len(blocks) - 1, 2)]
print(json.dumps({
    "python": sys.version.split()[0], "hz": HZ, "steps": len(wall["on"]),
    "off_ms": med(wall["off"]) / 1e6, "on_ms": med(wall["on"]) / 1e6, "ratio": med(wall["on"]) / med(wall["off"]),
    "pair_ratio": med(p[0] for p in pairs), "cpu_ratio": med(p[1] for p in pairs),
    "stall_share": med((blocks[i + 1][2] - blocks[i][2]) / blocks[i][0] for i in range(0, len(blocks) - 1, 2)),
    "ticks": sampler.ticks, "ticks_per_s": sampler.ticks / (on_wall / 1e9),
    "sampler_us_per_tick": sampler.run_cpu_ns / ticks / 1e3, "sample_us_per_tick": sampler.cpu_ns / ticks / 1e3,
    "flush_us_per_tick": flush_cpu[0] / ticks / 1e3,
    "held_share": (sampler.run_cpu_ns + flush_cpu[0]) / on_wall,
}))
