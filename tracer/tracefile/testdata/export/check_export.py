#!/usr/bin/env python3
"""Independent reader for rlktop's Chrome trace export (used by export_test.go).

Loads the file with Python's json module (gzip when it ends in .gz), keeping
every ts/dur as decimal.Decimal, checks the document's shape and prints, as
JSON on stdout:
  kernels:  {name: [count, total_ns]}   from "X" events with cat "kernel"
  first_ts: {name: ts_ns of the first such event}
  flows:    number of "s" and "f" events with cat "ac2g"
  unmatched_f: "f" ids with no "s" of the same id
  counters: number of "C" events
  device_ids: ids in deviceProperties
Exit status 1 with a message on stderr when the shape is wrong.
"""
import decimal
import gzip
import json
import sys


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)
    if not isinstance(doc, dict) or "traceEvents" not in doc:
        sys.exit("no traceEvents object")
    if doc.get("schemaVersion") != 1:
        sys.exit("schemaVersion is not 1")
    kernels = {}
    first = {}
    s_ids, f_ids = set(), []
    counters = 0
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        for k in ("ph", "pid", "tid"):
            if k not in ev:
                sys.exit("event without %s: %r" % (k, ev))
        if ph == "X":
            if "ts" not in ev or "dur" not in ev or "name" not in ev:
                sys.exit("X event without ts/dur/name: %r" % ev)
            if ev.get("cat") == "kernel":
                ns_dur = ev["dur"] * 1000
                ns_ts = ev["ts"] * 1000
                if ns_dur != int(ns_dur) or ns_ts != int(ns_ts):
                    sys.exit("sub-nanosecond value in %r" % ev)
                c = kernels.setdefault(ev["name"], [0, 0])
                c[0] += 1
                c[1] += int(ns_dur)
                first.setdefault(ev["name"], int(ns_ts))
        elif ph == "s":
            s_ids.add(ev["id"])
        elif ph == "f":
            if ev.get("bp") != "e":
                sys.exit("f event without bp e: %r" % ev)
            f_ids.append(ev["id"])
        elif ph == "C":
            counters += 1
            if not ev.get("args"):
                sys.exit("C event without args: %r" % ev)
    out = {
        "kernels": kernels,
        "first_ts": first,
        "flows": [len(s_ids), len(f_ids)],
        "unmatched_f": sorted(int(i) for i in f_ids if i not in s_ids),
        "counters": counters,
        "device_ids": [int(d["id"]) for d in doc.get("deviceProperties", [])],
    }
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
