#!/usr/bin/env python3
"""Independent figures for the findings of a Kineto trace, for the findings tests.

Reads a Kineto / Chrome trace JSON (.json or .json.gz) with the standard
library only and prints, as JSON:

* per ProfilerStep#N step (the CPU range, cat user_annotation or cpu_op):
  its wall time and the part of it no GPU op (cat kernel, gpu_memcpy,
  gpu_memset; every device and stream) covered: the union of the ops'
  intervals clipped to [ts, ts+dur), idle = dur - union;
* the total time of the GPU ops whose name matches a regex (argv[2],
  case-insensitive; default nccl) and of all GPU ops;
* communication exposure: per device (args.device), the union of the
  matching kernels' intervals (communication), the union of the other
  kernels' (compute), and the part of the first not under the second
  (exposed); the span from the first GPU op's start to the last one's end.

Times are kept as exact decimals of µs (Kineto writes up to 3 fractional
digits) and printed as integer ns.

usage: findings_oracle.py TRACE [REGEX]
"""
import gzip
import json
import re
import sys
from decimal import Decimal


def ns(v):
    return int(Decimal(str(v)) * 1000)


def union(ivs):
    out = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap(u, v):
    """Total length of the intersection of two sorted disjoint unions."""
    i = j = tot = 0
    while i < len(u) and j < len(v):
        lo, hi = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        if hi > lo:
            tot += hi - lo
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return tot


def main():
    path = sys.argv[1]
    pat = re.compile(sys.argv[2] if len(sys.argv) > 2 else "nccl", re.I)
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu, steps = [], []
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = ns(e["ts"])
            dev = (e.get("args") or {}).get("device", e.get("pid"))
            gpu.append((s, s + ns(e.get("dur", 0)), e.get("name", ""), cat, dev))
        elif cat in ("user_annotation", "cpu_op") and re.fullmatch(r"ProfilerStep#\d+", e.get("name", "")):
            steps.append((int(e["name"].split("#")[1]), ns(e["ts"]), ns(e["dur"])))
    gpu.sort()
    out = {"steps": [], "match_ns": 0, "gpu_ns": 0}
    for s, e, n, _, _ in gpu:
        out["gpu_ns"] += e - s
        if pat.search(n):
            out["match_ns"] += e - s
    out["comm_ns"] = out["exposed_ns"] = 0
    for dev in sorted({g[4] for g in gpu}, key=str):
        comm = union([(a, b) for a, b, n, c, d in gpu if d == dev and c == "kernel" and pat.search(n)])
        comp = union([(a, b) for a, b, n, c, d in gpu if d == dev and c == "kernel" and not pat.search(n)])
        out["comm_ns"] += sum(b - a for a, b in comm)
        out["exposed_ns"] += sum(b - a for a, b in comm) - overlap(comm, comp)
    out["span_ns"] = max(b for _, b, _, _, _ in gpu) - min(a for a, _, _, _, _ in gpu) if gpu else 0
    for num, s0, d in sorted(steps):
        s1 = s0 + d
        ivs = sorted((max(a, s0), min(b, s1)) for a, b, _, _, _ in gpu if a < s1 and b > s0)
        busy, cur = 0, s0
        for a, b in ivs:
            if b <= cur:
                continue
            a = max(a, cur)
            busy += b - a
            cur = b
        out["steps"].append({"step": num, "start_ns": s0, "dur_ns": d, "idle_ns": d - busy})
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
