#!/usr/bin/env python3
"""Hand count of the work inside a transformer's attention modules, for
rlktop's category rules (tracer/attrib/rules.toml) to be checked against.

Written from the rule as the rules file states it, not from rlktop's code:
for every GPU kernel whose launch (the cuda_runtime/cuda_driver event with
the same args.correlation) falls inside an "nn.Module: …Attention_N" event
on the launching thread (Kineto with_modules=True; python_function
events), with the operators (cpu_op) open on that thread at the launch:

  * inside an SDPA operator (aten::scaled_dot_product_attention, its
    backends _scaled_dot_product_*, _flash_attention_forward,
    _efficient_attention_forward)             -> attention
  * under aten::linear, and an SDPA operator of the same module instance
    (started inside it) ended before the launch -> gemm (output projection)
  * under aten::linear otherwise              -> qkv (q, k, v projections)
  * a copy: kernel name direct_copy / CatArrayBatchedCopy / copy_kernel,
    or under aten::copy_, aten::cat, aten::_to_copy, aten::contiguous
                                              -> copy
  * any other kernel                          -> elementwise (the RoPE
    mul/neg/add of these traces), its name printed so a reader can check

Prints one line per category: count and total ns (durations parsed from
the decimal µs exactly). Usage: ref_attention_split.py TRACE.json[.gz]
"""
import bisect
import gzip
import json
import re
import sys
from collections import defaultdict
from decimal import Decimal

SDPA = re.compile(r"scaled_dot_product|_flash_attention|_efficient_attention")
COPY_KERNEL = re.compile(r"direct_copy|CatArrayBatchedCopy|copy_kernel")
COPY_OP = {"aten::copy_", "aten::cat", "aten::_to_copy", "aten::contiguous"}
ATTN_MODULE = re.compile(r"^nn\.Module: \w*Attention_\d+$")


def ns(v):
    return int(Decimal(str(v)) * 1000)


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    by_thread = defaultdict(list)  # (pid, tid) -> [(start, end, name, kind)]
    launches = {}
    kernels = []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, name = e.get("cat"), e.get("name", "")
        if cat == "cpu_op":
            kind = "op"
        elif cat == "python_function" and ATTN_MODULE.match(name):
            kind = "module"
        elif cat in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None and corr not in launches:
                launches[corr] = (e["pid"], e["tid"], ns(e["ts"]))
            continue
        elif cat == "kernel":
            kernels.append(e)
            continue
        else:
            continue
        s = ns(e["ts"])
        by_thread[(e["pid"], e["tid"])].append((s, s + ns(e["dur"]), name, kind))
    starts = {}
    for k, ivs in by_thread.items():
        ivs.sort()
        starts[k] = [iv[0] for iv in ivs]

    totals = defaultdict(lambda: [0, 0])
    others = defaultdict(int)
    for k in kernels:
        corr = k.get("args", {}).get("correlation")
        if corr not in launches:
            continue
        pid, tid, t = launches[corr]
        ivs = by_thread.get((pid, tid), [])
        i = bisect.bisect_right(starts.get((pid, tid), []), t)
        open_ = [iv for iv in ivs[:i] if iv[0] <= t < iv[1]]
        mods = [iv for iv in open_ if iv[3] == "module"]
        if not mods:
            continue
        mod = max(mods)  # innermost: the latest start
        ops = [iv[2] for iv in open_ if iv[3] == "op"]
        name = k["name"]
        if any(SDPA.search(o) for o in ops):
            cat = "attention"
        elif "aten::linear" in ops:
            after = any(iv[3] == "op" and SDPA.search(iv[2]) and iv[0] >= mod[0] and iv[1] <= t for iv in ivs[:i])
            cat = "gemm" if after else "qkv"
        elif COPY_KERNEL.search(name) or COPY_OP & set(ops):
            cat = "copy"
        else:
            cat = "elementwise"
            others[name[:60]] += 1
        totals[cat][0] += 1
        totals[cat][1] += ns(k["dur"])
    for cat in sorted(totals):
        print(f"{cat} {totals[cat][0]} {totals[cat][1]}")
    for name, n in sorted(others.items()):
        print(f"#   elementwise: {n} × {name}")


if __name__ == "__main__":
    main(sys.argv[1])
