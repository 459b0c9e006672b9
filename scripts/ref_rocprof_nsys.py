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

With --real DIR it reads instead the real ROCm files fetched from public
repositories into DIR (rocpd *.db from rocprofv3, rocprof v1 results.db and
results.json; see
tracer/tracefile/rocm_real_test.go for where each comes from) and adds
  linked: GPU ops joined to the API call that launched them
(rocpd: kernel/copy events whose rocpd_event.stack_id, else correlation_id,
is also a non-marker region's; rocprof v1 results.db: OPS/COPY rows whose
(pid, Index) is a HIP row's; rocprof v1 JSON: DataFlow flows whose "t" end is
exactly one kept GPU op at the same section, lane and ts and whose "s" end
lies inside an API call on its thread).
Usage: scripts/ref_rocprof_nsys.py --real /tmp/rlktop-real-rocm > tracer/tracefile/testdata/rocm_real_ref.json
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


def rocpd_source(c, names, base):
    """The bare-name view/table, else the UNION ALL of GUID-suffixed tables."""
    if base in names:
        return '"%s"' % base
    parts = sorted(n for n, t in names.items() if t == "table" and n.startswith(base + "_")
                   and all(ch in "0123456789abcdefABCDEF_-" for ch in n[len(base) + 1:]) and len(n) - len(base) > 4)
    if not parts:
        return None
    return "(" + " UNION ALL ".join('SELECT * FROM "%s"' % p for p in parts) + ")"


def rocpd_cols(c, names, base):
    if base in names:
        return {r[1] for r in c.execute('pragma table_info("%s")' % base)}
    parts = sorted(n for n, t in names.items() if t == "table" and n.startswith(base + "_"))
    return {r[1] for r in c.execute('pragma table_info("%s")' % parts[0])} if parts else set()


def rocpd_sqlite(path):
    """rocpd from released rocprofv3 (start/end columns) or the development
    schema (start_id/end_id into rocpd_timestamp)."""
    out = blank()
    out["linked"] = 0
    c = sqlite3.connect("file:%s?mode=ro&immutable=1" % path, uri=True)
    names = dict(c.execute("select name, type from sqlite_master where type in ('table','view')"))
    src = {b: rocpd_source(c, names, "rocpd_" + b) for b in
           ("kernel_dispatch", "memory_copy", "region", "sample", "string", "event", "timestamp", "info_kernel_symbol", "track")}
    cols = {b: rocpd_cols(c, names, "rocpd_" + b) for b in src}
    ts = {}
    if src["timestamp"]:
        ts = {(g, i): v for i, g, v in c.execute("select id, guid, value from %s" % src["timestamp"])}
    strings = {(g, i): v for i, g, v in c.execute("select id, guid, string from %s" % src["string"])}
    events = {}
    for row in c.execute("select * from %s" % src["event"]):
        d = dict(zip([x[0] for x in c.execute("select * from %s limit 0" % src["event"]).description], row))
        key = d.get("stack_id") or d.get("correlation_id")
        msg = None
        try:
            msg = json.loads(d.get("extdata") or "{}").get("message")
        except ValueError:
            pass
        events[(d["guid"], d["id"])] = (strings.get((d["guid"], d["category_id"]), ""), key, msg)

    def rows(b):
        cur = c.execute("select * from %s" % src[b])
        hdr = [x[0] for x in cur.description]
        for r in cur:
            yield dict(zip(hdr, r))

    def span(d):
        if "start" in d:
            return d["start"], d["end"]
        return ts[(d["guid"], d["start_id"])], ts[(d["guid"], d["end_id"])]

    syms = {(d["guid"], d["id"]): (d.get("display_name") or d.get("kernel_name")) for d in rows("info_kernel_symbol")}
    launch_keys = set()
    for d in rows("region"):
        cat, key, msg = events.get((d["guid"], d["event_id"]), ("", None, None))
        s, e = span(d)
        if "marker" in cat.lower():
            add(out["ranges"], msg or strings[(d["guid"], d["name_id"])], e - s)
        else:
            out["runtime"] += 1
            if key:
                launch_keys.add((d["guid"], key))
    for d in rows("kernel_dispatch"):
        s, e = span(d)
        add(out["kernels"], syms[(d["guid"], d["kernel_id"])], e - s)
        key = events.get((d["guid"], d["event_id"]), ("", None, None))[1]
        if key and (d["guid"], key) in launch_keys:
            out["linked"] += 1
    if src["memory_copy"]:
        for d in rows("memory_copy"):
            s, e = span(d)
            out["memcpy"]["count"] += 1
            out["memcpy"]["ns"] += e - s
            out["memcpy"]["bytes"] += d["size"]
            key = events.get((d["guid"], d["event_id"]), ("", None, None))[1]
            if key and (d["guid"], key) in launch_keys:
                out["linked"] += 1
    if src["sample"]:
        for d in rows("sample"):
            cat = events.get((d["guid"], d["event_id"]), ("", None, None))[0]
            if "marker" in cat.lower():
                out["instants"] += 1
    return out


def rocprof_v1_json(path):
    """rocprof v1 results.json (bin/tblextr.py): sections named by
    process_name; time from args BeginNs/EndNs; marks stored as
    EndNs = BeginNs + 1; "Unknown command type" / "<barrier packet>" GPU
    packets and "GPU Barriers" sections are not kernels; COPY ops whose name
    holds "Fill" are memsets."""
    out = blank()
    out["linked"] = 0
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"]
    labels = {int(e["pid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    ops, calls = {}, {}
    for e in ev:
        if e.get("ph") != "X":
            continue
        sec = int(e["pid"])
        label = labels.get(sec, "")
        a = e.get("args", {})
        b, en = int(a["BeginNs"]), int(a["EndNs"])
        key = (sec, int(e["tid"]), int(e["ts"]))
        if label.startswith("GPU Barriers"):
            continue
        if label.startswith("GPU"):
            name = a.get("KernelName", e["name"])
            if name in ("Unknown command type", "<barrier packet>"):
                continue
            add(out["kernels"], name, en - b)
            ops.setdefault(key, []).append(e)
        elif label == "COPY":
            g = out["memset"] if "Fill" in e["name"] else out["memcpy"]
            g["count"] += 1
            g["ns"] += en - b
            ops.setdefault(key, []).append(e)
        elif label in ("CPU HIP API", "CPU HSA API"):
            out["runtime"] += 1
            calls.setdefault((sec, int(e["tid"])), []).append((int(e["ts"]), int(e["ts"]) + int(e["dur"])))
        elif label == "Markers and Ranges":
            if en == b + 1:
                out["instants"] += 1
            else:
                add(out["ranges"], e["name"], en - b)
    fs = {e["id"]: e for e in ev if e.get("ph") == "s"}
    ft = {e["id"]: e for e in ev if e.get("ph") == "t"}
    for i, s in fs.items():
        t = ft.get(i)
        if t is None or len(ops.get((t["pid"], t["tid"], t["ts"]), [])) != 1:
            continue
        if any(a <= s["ts"] <= z for a, z in calls.get((s["pid"], s["tid"]), [])):
            out["linked"] += 1
    return out


def rocprof_v1_db(path):
    """rocprof v1 results.db (bin/tblextr.py): KERN/OPS rows are kernels
    (KernelName without the writer's double quotes), COPY rows copies or
    fills, HIP/HSA rows calls, rocTX rows ranges or marks (EndNs = BeginNs
    + 1); a HIP call and an OPS/COPY op with the same (pid, Index) are
    linked. Tables without BeginNs/EndNs are not read."""
    out = blank()
    out["linked"] = 0
    c = sqlite3.connect("file:%s?mode=ro&immutable=1" % path, uri=True)
    tables = {r[0] for r in c.execute("select name from sqlite_master where type='table'")}

    def rows(t):
        cols = [r[1] for r in c.execute('pragma table_info("%s")' % t)]
        if "BeginNs" not in cols or "EndNs" not in cols:
            return
        for r in c.execute('select * from "%s"' % t):
            yield dict(zip(cols, r))

    calls = set()
    for t in ("HIP", "HSA"):
        if t in tables:
            for d in rows(t):
                out["runtime"] += 1
                if t == "HIP":
                    calls.add((d["pid"], d["Index"]))
    if "rocTX" in tables:
        for d in rows("rocTX"):
            if d["EndNs"] == d["BeginNs"] + 1:
                out["instants"] += 1
            else:
                add(out["ranges"], d["Name"], d["EndNs"] - d["BeginNs"])
    for t in ("OPS", "KERN", "COPY"):
        if t not in tables:
            continue
        for d in rows(t):
            name = (d.get("KernelName") if t == "KERN" else d.get("Name")) or ""
            if name.startswith('"') and name.endswith('"') and len(name) >= 2:
                name = name[1:-1]
            if name in ("Unknown command type", "<barrier packet>"):
                continue
            dur = d["EndNs"] - d["BeginNs"]
            if t == "COPY":
                g = out["memset"] if "Fill" in name else out["memcpy"]
                g["count"] += 1
                g["ns"] += dur
            else:
                add(out["kernels"], name, dur)
            if t != "KERN" and (d.get("pid"), d.get("Index")) in calls:
                out["linked"] += 1
    return out


def real(root):
    res = {}
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        if name.endswith(".db"):
            c = sqlite3.connect("file:%s?mode=ro&immutable=1" % p, uri=True)
            rocpd = any(r[0].startswith("rocpd_") for r in c.execute("select name from sqlite_master"))
            res[name] = rocpd_sqlite(p) if rocpd else rocprof_v1_db(p)
            res[name]["format"] = "rocpd-sqlite" if rocpd else "rocprof-v1-sqlite"
        elif name.endswith(".json"):
            res[name] = rocprof_v1_json(p)
            res[name]["format"] = "rocprof-v1-json"
    return res


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--real":
        json.dump(real(sys.argv[2]), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return
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
