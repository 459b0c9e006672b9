#!/usr/bin/env python3
"""Independent check of rlktop's memory model (report JSON "memory").

Usage: check_memory.py TRACE.json[.gz] REPORT.json

Recomputes, from the Kineto trace alone and the rules as written in
rlktop's documentation (tracer/attrib/memory.go's header, ARCHITECTURE.md's
attribution rule), the per-step peaks, the temporaries and the bytes per
operator and stage, and compares them with what `rlktop report --format
json` wrote. Standard library only; prints "OK ..." or the differences.

The rules, restated:
  * [memory] instant events: args Bytes (+ alloc, - free), Addr, Total
    Allocated, Total Reserved, Device Type (0 = host, device -1), Device Id.
  * Steps: user_annotation events named ProfilerStep#N, per process; an
    event's step is the innermost (latest start) window of its process
    containing it. An interval [s, e) contains t when s <= t < e, or t == s
    for a zero-length one.
  * Operators (cpu_op) and ranges (user_annotation other than steps, and
    python_function "nn.Module: Name_N" as "nn.Module: Name") open on the
    event's thread, outermost first (by start, longer first on ties). The
    stage is the innermost range on the thread, else on the process's step
    thread (the thread with most step events, lowest id on ties). The
    operator is the innermost one that is not an allocator helper, else the
    innermost.
  * Pairing by (process, device, address) in time order; level = Total
    Allocated; temporaries: freed in the step they were allocated in.
"""
import gzip
import json
import sys
from collections import defaultdict
from decimal import ROUND_HALF_EVEN, Decimal

HELPERS = {
    "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
    "aten::new_empty_strided", "aten::resize_", "aten::empty.memory_format",
}


def ns(v):
    return int((Decimal(str(v)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def module(name):
    p = "nn.Module: "
    if not name.startswith(p) or len(name) <= len(p):
        return None
    i = len(name)
    while i > len(p) and name[i - 1].isdigit():
        i -= 1
    if i < len(name) and i > len(p) + 1 and name[i - 1] == "_":
        return name[: i - 1]
    return name


def main(trace, report):
    evs = load(trace)
    steps = defaultdict(list)  # pid -> [(s, e, n)]
    step_tids = defaultdict(lambda: defaultdict(int))
    ivs = defaultdict(list)  # (pid, tid) -> [(s, e, kind, name, order)]
    mem = []
    for order, e in enumerate(evs):
        if not isinstance(e, dict):
            continue
        ph, cat, name = e.get("ph"), str(e.get("cat", "")).lower(), e.get("name", "")
        if ph == "i" and name == "[memory]":
            a = e.get("args", {})
            if "Bytes" not in a or "Addr" not in a:
                continue
            dev = -1 if int(a.get("Device Type", 0)) == 0 else int(a["Device Id"])
            mem.append(dict(t=ns(e["ts"]), b=int(a["Bytes"]), addr=int(a["Addr"]), alloc=int(a.get("Total Allocated", -1)),
                            res=int(a.get("Total Reserved", -1)), pid=e.get("pid"), tid=e.get("tid"), dev=dev, order=order))
            continue
        if ph != "X" or "ts" not in e:
            continue
        s = ns(e["ts"])
        en = s + ns(e.get("dur", 0))
        key = (e.get("pid"), e.get("tid"))
        if cat == "user_annotation" and name.startswith("ProfilerStep#") and name[13:].isdigit():
            steps[e.get("pid")].append((s, en, int(name[13:])))
            step_tids[e.get("pid")][e.get("tid")] += 1
        elif cat == "user_annotation":
            ivs[key].append((s, en, "range", name, order))
        elif cat == "python_function" and module(name):
            ivs[key].append((s, en, "range", module(name), order))
        elif cat in ("cpu_op", "operator"):
            ivs[key].append((s, en, "op", name, order))

    def contains(s, e, t):
        return s <= t < e or (s == e == t)

    for k in ivs:
        ivs[k].sort(key=lambda x: (x[0], -x[1], x[4]))

    def open_at(key, t):
        return [x for x in ivs.get(key, ()) if contains(x[0], x[1], t)]

    def step_thread(pid):
        c = step_tids.get(pid)
        if not c:
            return None
        return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]

    def step_of(pid, t):
        best = None
        for s, e, n in steps.get(pid, ()):
            if contains(s, e, t) and (best is None or s >= best[0]):
                best = (s, n)
        return -1 if best is None else best[1]

    def attribute(m):
        here = open_at((m["pid"], m["tid"]), m["t"])
        ops = [x[3] for x in here if x[2] == "op"]
        ranges = [x[3] for x in here if x[2] == "range"]
        if not ranges:
            st = step_thread(m["pid"])
            if st is not None and st != m["tid"]:
                ranges = [x[3] for x in open_at((m["pid"], st), m["t"]) if x[2] == "range"]
        op = ""
        for o in reversed(ops):
            if o not in HELPERS:
                op = o
                break
        else:
            op = ops[-1] if ops else ""
        return op, (ranges[-1] if ranges else ""), step_of(m["pid"], m["t"])

    mem.sort(key=lambda m: (m["t"], m["order"]))
    for m in mem:
        m["op"], m["stage"], m["step"] = attribute(m)

    # Pairing.
    opened, free_of = {}, {}
    for i, m in enumerate(mem):
        k = (m["pid"], m["dev"], m["addr"])
        if m["b"] > 0:
            opened[k] = i
        elif m["b"] < 0 and k in opened:
            free_of[opened.pop(k)] = i
    step_end = {}
    step_start = {}
    for pid, ws in steps.items():
        for s, e, n in ws:
            step_end[(pid, n)] = max(step_end.get((pid, n), e), e)
            step_start.setdefault((pid, n), s)

    # Per step and device.
    exp_steps = {}
    last = {}
    for i, m in enumerate(mem):
        lv = m["alloc"]
        if m["step"] >= 0:
            k = (m["step"], m["dev"])
            st = exp_steps.get(k)
            if st is None:
                carried = mem[last[(m["pid"], m["dev"])]]["alloc"] if (m["pid"], m["dev"]) in last else -1
                st = exp_steps[k] = dict(peak=-1, idx=-1, res=0, alloc_bytes=0, allocs=0, temp_bytes=0, temps=0, carried=carried, pid=m["pid"])
            if lv > st["peak"]:
                st["peak"], st["idx"] = lv, i
            st["res"] = max(st["res"], m["res"])
            if m["b"] > 0:
                st["alloc_bytes"] += m["b"]
                st["allocs"] += 1
                f = free_of.get(i)
                if f is not None and mem[f]["step"] == m["step"]:
                    st["temp_bytes"] += m["b"]
                    st["temps"] += 1
        last[(m["pid"], m["dev"])] = i
    for (n, dev), st in exp_steps.items():
        if st["carried"] > st["peak"]:
            st["peak"], st["idx"] = st["carried"], -1
        end = step_end.get((st["pid"], n))
        held = 0
        for m in mem:
            if m["pid"] == st["pid"] and m["dev"] == dev and (end is None or m["t"] < end):
                held = m["alloc"]
        st["held"] = held
        st["at_op"] = mem[st["idx"]]["op"] if st["idx"] >= 0 else ""
        st["at_stage"] = mem[st["idx"]]["stage"] if st["idx"] >= 0 else ""

    # Temporaries and operator rows.
    temps = defaultdict(list)
    ops = defaultdict(lambda: [0, 0, 0, 0, 0])
    for i, m in enumerate(mem):
        if m["b"] <= 0:
            continue
        f = free_of.get(i)
        temp = m["step"] >= 0 and f is not None and mem[f]["step"] == m["step"]
        held = False
        if m["step"] >= 0 and not temp:
            end = step_end.get((m["pid"], m["step"]))
            held = end is None or f is None or mem[f]["t"] >= end
        row = ops[(m["dev"], m["op"], m["stage"])]
        row[0] += m["b"]
        row[1] += 1
        if temp:
            row[2] += m["b"]
            row[3] += 1
            temps[(m["dev"], m["op"], m["stage"], mem[f]["op"], m["b"])].append(mem[f]["t"] - m["t"])
        if held:
            row[4] += m["b"]

    with open(report) as f:
        doc = json.load(f)
    got = doc.get("memory")
    errs = []
    if got is None:
        print("FAIL: the report has no \"memory\" while the trace has %d memory events" % len(mem))
        return 1
    if got["events"] != len(mem):
        errs.append("events: report %d, trace %d" % (got["events"], len(mem)))
    gs = {(s["step"], s["device"]): s for s in got["steps"]}
    if set(gs) != set(exp_steps):
        errs.append("steps: report %s, trace %s" % (sorted(gs), sorted(exp_steps)))
    for k, st in exp_steps.items():
        g = gs.get(k)
        if g is None:
            continue
        for gk, ev in (("peak_allocated_bytes", st["peak"]), ("peak_reserved_bytes", max(st["res"], 0)), ("held_bytes", st["held"]),
                       ("alloc_bytes", st["alloc_bytes"]), ("allocs", st["allocs"]), ("temp_bytes", st["temp_bytes"]), ("temps", st["temps"])):
            if g[gk] != ev:
                errs.append("step %s device %s %s: report %s, trace %s" % (k[0], k[1], gk, g[gk], ev))
        if g["at_peak"]["operator"] != st["at_op"] or g["at_peak"]["stage"] != st["at_stage"]:
            errs.append("step %s device %s at peak: report %r/%r, trace %r/%r" % (k[0], k[1], g["at_peak"]["operator"], g["at_peak"]["stage"], st["at_op"], st["at_stage"]))
    gt = {(t["device"], t["operator"], t["stage"], t["freed_by"], t["bytes"]): t for t in got["temporaries"]}
    if set(gt) != set(temps):
        errs.append("temporaries: %d in the report, %d from the trace; only in report %s; only in trace %s" % (
            len(gt), len(temps), sorted(set(gt) - set(temps))[:5], sorted(set(temps) - set(gt))[:5]))
    for k, lives in temps.items():
        g = gt.get(k)
        if g is None:
            continue
        lives.sort()
        if g["count"] != len(lives) or g["lifetime_ns"] != lives[(len(lives) - 1) // 2]:
            errs.append("temporary %s: report count %d lifetime %d, trace %d, %d" % (k, g["count"], g["lifetime_ns"], len(lives), lives[(len(lives) - 1) // 2]))
    go = {(o["device"], o.get("operator", ""), o["stage"]): o for o in got["operators"]}
    if set(go) != set(ops):
        errs.append("operators: only in report %s; only in trace %s" % (sorted(set(go) - set(ops))[:5], sorted(set(ops) - set(go))[:5]))
    for k, r in ops.items():
        g = go.get(k)
        if g is None:
            continue
        exp = dict(alloc_bytes=r[0], allocs=r[1], temp_bytes=r[2], temps=r[3], held_bytes=r[4])
        for gk, ev in exp.items():
            if g[gk] != ev:
                errs.append("operator %s %s: report %s, trace %s" % (k, gk, g[gk], ev))
    if errs:
        print("FAIL\n" + "\n".join(errs[:40]))
        return 1
    peaks = ", ".join("step %d %s peak %d" % (k[0], "cpu" if k[1] < 0 else "gpu %d" % k[1], st["peak"]) for k, st in sorted(exp_steps.items()))
    print("OK %d memory events, %d temporaries groups, %d operator rows; %s" % (len(mem), len(temps), len(ops), peaks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
