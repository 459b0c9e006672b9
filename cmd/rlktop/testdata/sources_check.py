"""Per file: the span of its GPU work and its steps, from the raw Kineto JSON.

For each file given (.json or .json.gz) prints one JSON line
{"span_ns": last end - first start of its kernel, gpu_memcpy and gpu_memset
events, "steps": number of distinct ProfilerStep#N, "kernels": kernel events},
times as exact integer ns (µs decimals × 1000). Standard library only; for
cmd/rlktop/ddp_test.go's TestReportSourcesApart.
"""
import decimal
import gzip
import json
import re
import sys

for path in sys.argv[1:]:
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    first = last = None
    steps = set()
    kernels = 0
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = int(decimal.Decimal(str(e["ts"])) * 1000)
            t = s + int(decimal.Decimal(str(e.get("dur", 0))) * 1000)
            first = s if first is None else min(first, s)
            last = t if last is None else max(last, t)
            kernels += cat == "kernel"
        m = re.fullmatch(r"ProfilerStep#(\d+)", e.get("name", ""))
        if m:
            steps.add(int(m.group(1)))
    print(json.dumps({"span_ns": last - first, "steps": len(steps), "kernels": kernels}))
