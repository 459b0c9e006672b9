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

With --attrib it computes instead, per file, the GPU time (kernel + memcpy +
memset, ns) per step and per stage by the attribution rule (innermost at launch), written here from
the rule's words and not from rlktop's code (TestKinetoSharedAttribution):

  * launch point: the cuda_runtime / cuda_driver event with the same
    correlation id (args.correlation, else "correlation id", else
    "External id"), on whatever thread; GPU ops without one are left out
    of steps and count under stage "(none)";
  * steps: user_annotation ranges named like a step
    (^(train[_ ]?)?(step|iteration|iter)\b, case-insensitive) when the file
    has any, else ProfilerStep#N; the value is the last integer of the
    name, else a per-thread count from 0 in start order; a GPU op's step is
    the innermost step window of the launching
    process (pid) containing the launch time, on any thread;
  * ranges: the other user_annotation events, and python_function events
    named "nn.Module: Name_N" (with_modules=True), as "nn.Module: Name";
  * stage: the innermost range (latest start; on a tie the shorter) open at
    the launch on the launching thread, else on the process's step thread
    (the one with most steps, the lowest tid on a tie), else "(none)".

An interval [s, e) contains t when s <= t < e, or t == s when e == s.

  python3 scripts/ref_kineto.py --attrib ../shared/traces/kineto/* \
      > tracer/tracefile/testdata/kineto_attrib_expected.json
"""
import decimal
import gzip
import json
import os
import re
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


STEP_LIKE = re.compile(r"^(train[_ ]?)?(step|iteration|iter)\b", re.I)
PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")
MODULE = re.compile(r"^nn\.Module: (.*?)(_\d+)?$")
LAUNCH = {"cuda_runtime", "runtime", "cuda_driver", "driver"}


def corr_of(e):
    a = e.get("args") or {}
    for k in ("correlation", "correlation id", "External id", "external id"):
        if k in a:
            return a[k]
    return None


def contains(s, e, t):
    return s <= t < e or (s == e == t)


def attribution(path):
    evs = [e for e in load(path) if isinstance(e, dict) and e.get("ph") == "X"]
    cat = lambda e: str(e.get("cat", "")).lower()
    annos = [e for e in evs if cat(e) == "user_annotation"]
    step_like = any(STEP_LIKE.search(str(e.get("name", ""))) for e in annos)
    steps = {}   # pid -> [(s, e, value)]
    per_tid = {}  # pid -> {tid: steps}
    ranges = {}  # (pid, tid) -> [(s, e, name)]
    unnumbered = {}  # tid -> steps counted so far (start order)
    for e in sorted(annos, key=lambda e: ns(e["ts"])):
        name = str(e.get("name", ""))
        s = ns(e["ts"])
        end = s + ns(e.get("dur", 0))
        m = PROFILER_STEP.match(name)
        is_step = bool(STEP_LIKE.search(name)) if step_like else bool(m)
        if is_step:
            num = re.search(r"(\d+)\s*$", name)
            if num:
                value = int(num.group(1))
            else:
                value = unnumbered.get(e["tid"], 0)
                unnumbered[e["tid"]] = value + 1
            steps.setdefault(e["pid"], []).append((s, end, value))
            c = per_tid.setdefault(e["pid"], {})
            c[e["tid"]] = c.get(e["tid"], 0) + 1
        else:
            ranges.setdefault((e["pid"], e["tid"]), []).append((s, end, name))
    for e in evs:
        if cat(e) == "python_function":
            m = MODULE.match(str(e.get("name", "")))
            if m:
                s = ns(e["ts"])
                ranges.setdefault((e["pid"], e["tid"]), []).append((s, s + ns(e.get("dur", 0)), "nn.Module: " + m.group(1)))
    step_tid = {}
    for pid, c in per_tid.items():
        step_tid[pid] = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    launches = {}
    for e in evs:
        if cat(e) in LAUNCH:
            c = corr_of(e)
            if c is not None and c != 0 and c not in launches:
                launches[c] = (e["pid"], e["tid"], ns(e["ts"]))

    def innermost(key, t):
        best = None
        for s, end, name in ranges.get(key, ()):
            if contains(s, end, t):
                if best is None or s > best[0] or (s == best[0] and end < best[1]):
                    best = (s, end, name)
        return best

    step_ns, stage_ns = {}, {}
    for e in evs:
        if cat(e) not in KERNEL | MEMCPY | MEMSET:
            continue
        dur = ns(e.get("dur", 0))
        c = corr_of(e)
        stage, step = "(none)", None
        if c is not None and c in launches:
            pid, tid, t = launches[c]
            inner = None
            for s, end, v in steps.get(pid, ()):
                if contains(s, end, t) and (inner is None or s > inner[0] or (s == inner[0] and end < inner[1])):
                    inner = (s, end, v)
            if inner is not None:
                step = inner[2]
            r = innermost((pid, tid), t)
            if r is None and pid in step_tid and step_tid[pid] != tid:
                r = innermost((pid, step_tid[pid]), t)
            if r is not None:
                stage = r[2]
        if step is not None:
            step_ns[str(step)] = step_ns.get(str(step), 0) + dur
        stage_ns[stage] = stage_ns.get(stage, 0) + dur
    return {"step_ns": step_ns, "stage_ns": stage_ns}


def main():
    args = sys.argv[1:]
    fn = summarize
    if args and args[0] == "--attrib":
        fn, args = attribution, args[1:]
    res = {os.path.basename(p): fn(p) for p in sorted(args)}
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
