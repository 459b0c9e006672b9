#!/usr/bin/env python3
"""Independent reference totals for the rocprof / nsys importers' tests.

Reads the real third-party traces under ../shared/traces/{rocprof,nsys}
with the Python standard library only (csv, sqlite3, json) and prints, per
file, the totals the Go importers must reproduce exactly:

  kernels:  count, summed ns, per-name [count, ns]
  memcpy / memset: count, summed ns, summed bytes
  ranges:   count, summed ns, per-name [count, ns]   (annotation ranges)
  instants: count
  runtime:  count of API calls (nsys: one per (globalTid, correlationId);
            rows with correlationId 0/NULL each count once)
  summary:  per-name [count, total ns]  (summary-only inputs)

Durations are End - Start in ns, exactly as the file gives them (integers).
Usage: scripts/ref_rocprof_nsys.py [TRACES_DIR] > tracer/tracefile/testdata/rocprof_nsys_ref.json
"""
import csv
import json
import os
import sqlite3
import sys
from decimal import Decimal, ROUND_HALF_EVEN


def blank():
    return {
        "kernels": {"count": 0, "ns": 0, "by_name": {}},
        "memcpy": {"count": 0, "ns": 0, "bytes": 0},
        "memset": {"count": 0, "ns": 0, "bytes": 0},
        "ranges": {"count": 0, "ns": 0, "by_name": {}},
        "instants": 0,
        "runtime": 0,
        "summary": {},
    }


def add(group, name, dur):
    group["count"] += 1
    group["ns"] += dur
    if "by_name" in group:
        c = group["by_name"].setdefault(name, [0, 0])
        c[0] += 1
        c[1] += dur


def rows(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        for row in r:
            if not row:
                continue
            yield dict(zip(header, row))


def rocprof_csv(path):
    out = blank()
    with open(path, newline="") as f:
        header = next(csv.reader(f))
    h = set(header)
    if "Kernel_Name" in h:
        for d in rows(path):
            add(out["kernels"], d["Kernel_Name"], int(d["End_Timestamp"]) - int(d["Start_Timestamp"]))
    elif "Direction" in h:
        for d in rows(path):
            out["memcpy"]["count"] += 1
            out["memcpy"]["ns"] += int(d["End_Timestamp"]) - int(d["Start_Timestamp"])
    elif "Domain" in h:
        for d in rows(path):
            s, e = int(d["Start_Timestamp"]), int(d["End_Timestamp"])
            if "MARKER" in d["Domain"]:
                if s == e:
                    out["instants"] += 1
                else:
                    add(out["ranges"], d["Function"], e - s)
            else:
                out["runtime"] += 1
    elif "TotalDurationNs" in h:
        for d in rows(path):
            out["summary"][d["Name"]] = [int(d["Calls"]), int(Decimal(d["TotalDurationNs"]).to_integral_value(ROUND_HALF_EVEN))]
    else:
        raise SystemExit("unknown layout: %s" % path)
    return out


def nsys_stats_csv(path):
    out = blank()
    for d in rows(path):
        if "Start (ns)" in d:
            s, e = int(d["Start (ns)"]), int(d["End (ns)"])
            assert int(d["Duration (ns)"]) == e - s
            add(out["ranges"], d["Name"], e - s)
    return out


def nsys_sqlite(path):
    out = blank()
    c = sqlite3.connect("file:%s?mode=ro&immutable=1" % path, uri=True)
    tables = {r[0] for r in c.execute("select name from sqlite_master where type in ('table','view')")}
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        q = """select k.start, k.end, coalesce(d.value, s.value) from CUPTI_ACTIVITY_KIND_KERNEL k
               left join StringIds d on d.id = k.demangledName left join StringIds s on s.id = k.shortName"""
        for s, e, name in c.execute(q):
            add(out["kernels"], name, e - s)
    for t, key in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if t in tables:
            for s, e, b in c.execute("select start, end, bytes from %s" % t):
                out[key]["count"] += 1
                out[key]["ns"] += e - s
                out[key]["bytes"] += b
    if "NVTX_EVENTS" in tables:
        q = """select n.start, n.end, n.eventType, coalesce(n.text, s.value) from NVTX_EVENTS n
               left join StringIds s on s.id = n.textId"""
        for s, e, typ, name in c.execute(q):
            if typ in (59, 60, 70, 71) and e is not None:
                add(out["ranges"], name, e - s)
            elif typ == 34:
                out["instants"] += 1
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        seen = set()
        for tid, corr in c.execute("select globalTid, correlationId from CUPTI_ACTIVITY_KIND_RUNTIME"):
            if not corr:
                out["runtime"] += 1
            elif (tid, corr) not in seen:
                seen.add((tid, corr))
                out["runtime"] += 1
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces")
    res = {}
    for sub in ("rocprof", "nsys"):
        d = os.path.join(root, sub)
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            key = sub + "/" + name
            if sub == "rocprof":
                res[key] = rocprof_csv(p)
            elif name.endswith(".sqlite"):
                res[key] = nsys_sqlite(p)
            else:
                res[key] = nsys_stats_csv(p)
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
