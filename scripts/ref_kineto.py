#!/usr/bin/env python3
"""Independent reference totals for Kineto / Chrome trace-event JSON files.

Used by tracer/tracefile's tests (TestKinetoSharedTraces): it reads each
trace itself with the standard json module (floats parsed as
decimal.Decimal, so microseconds with three fraction digits stay exact) and
computes, per file:

  * per kernel name: count and total ns,
  * kernel_count, kernel_total_ns (sum of kernel durations),
  * memcpy/memset count and total ns,
  * busy_ns: the union of kernel + memcpy + memset intervals per device,
    summed over devices.

Only "X" events count. Categories are matched case-insensitively:
kernel; gpu_memcpy or memcpy; gpu_memset or memset. The device is
args.device, else the pid. µs -> ns is Decimal(ts) * 1000 rounded half to
even (only matters for more than three fraction digits).

Regenerate the committed expectations with:

  python3 scripts/ref_kineto.py ../shared/traces/kineto/* \
      > tracer/tracefile/testdata/kineto_expected.json
"""
import decimal
import gzip
import json
import os
import sys

KERNEL = {"kernel"}
MEMCPY = {"gpu_memcpy", "memcpy"}
MEMSET = {"gpu_memset", "memset"}


def ns(v):
    d = v if isinstance(v, decimal.Decimal) else decimal.Decimal(str(v))
    return int((d * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_EVEN))


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union_len(ivs):
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(ivs):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def summarize(path):
    kernels = {}
    out = {"kernel_count": 0, "kernel_total_ns": 0, "memcpy_count": 0, "memcpy_total_ns": 0,
           "memset_count": 0, "memset_total_ns": 0}
    per_dev = {}
    for e in load(path):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat not in KERNEL | MEMCPY | MEMSET:
            continue
        ts = ns(e["ts"])
        dur = ns(e.get("dur", 0))
        args = e.get("args") or {}
        dev = args.get("device", e.get("pid"))
        per_dev.setdefault(str(dev), []).append((ts, ts + dur))
        if cat in KERNEL:
            k = kernels.setdefault(e.get("name", ""), [0, 0])
            k[0] += 1
            k[1] += dur
            out["kernel_count"] += 1
            out["kernel_total_ns"] += dur
        elif cat in MEMCPY:
            out["memcpy_count"] += 1
            out["memcpy_total_ns"] += dur
        else:
            out["memset_count"] += 1
            out["memset_total_ns"] += dur
    out["busy_ns"] = sum(union_len(v) for v in per_dev.values())
    out["kernels"] = [{"name": n, "count": c, "total_ns": t} for n, (c, t) in sorted(kernels.items())]
    return out


def main():
    res = {os.path.basename(p): summarize(p) for p in sorted(sys.argv[1:])}
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
