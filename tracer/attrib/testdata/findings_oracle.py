#!/usr/bin/env python3
"""Independent figures for the findings of a Kineto trace (issue 18 tests).

Reads a Kineto / Chrome trace JSON (.json or .json.gz) with the standard
library only and prints, as JSON:

* per ProfilerStep#N step (the CPU range, cat user_annotation or cpu_op):
  its wall time and the part of it no GPU op (cat kernel, gpu_memcpy,
  gpu_memset; every device and stream) covered: the union of the ops'
  intervals clipped to [ts, ts+dur), idle = dur - union;
* the total time of the GPU ops whose name matches a regex (argv[2],
  case-insensitive; default nccl) and of all GPU ops.

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
            gpu.append((s, s + ns(e.get("dur", 0)), e.get("name", "")))
        elif cat in ("user_annotation", "cpu_op") and re.fullmatch(r"ProfilerStep#\d+", e.get("name", "")):
            steps.append((int(e["name"].split("#")[1]), ns(e["ts"]), ns(e["dur"])))
    gpu.sort()
    out = {"steps": [], "match_ns": 0, "gpu_ns": 0}
    for s, e, n in gpu:
        out["gpu_ns"] += e - s
        if pat.search(n):
            out["match_ns"] += e - s
    for num, s0, d in sorted(steps):
        s1 = s0 + d
        ivs = sorted((max(a, s0), min(b, s1)) for a, b, _ in gpu if a < s1 and b > s0)
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
