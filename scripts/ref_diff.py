#!/usr/bin/env python3
"""Independent reference for `rlktop diff A B` on two Kineto trace files.

Reads each trace with the standard json module (floats parsed as
decimal.Decimal, so microseconds with three fraction digits stay exact),
keeps the complete ("ph": "X") events whose category is "kernel"
(case-insensitive), converts each duration µs -> ns with Decimal(dur) * 1000
rounded half to even, and sums count and ns per kernel name. Then it diffs
B against A by exact name: per name count_a, count_b, total_a_ns,
total_b_ns, delta_ns = total_b_ns - total_a_ns; the names only in A and only
in B. No display-name matching here: that is rlktop's extra, tested by hand.

Used by cmd/rlktop's TestDiffSharedPair. Regenerate the committed
expectation with:

  python3 scripts/ref_diff.py ../shared/traces/kineto/hta_diff_control_a100.json.gz \
      ../shared/traces/kineto/hta_diff_test_v100.json.gz \
      > cmd/rlktop/testdata/diff_hta_a100_v100.json
"""
import json
import os
import sys

# The reader and the µs -> ns rule are ref_kineto.py's (same folder), so
# both references read a trace the same way.
from ref_kineto import load, ns


def kernels(path):
    out = {}
    for e in load(path):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        if str(e.get("cat", "")).lower() != "kernel":
            continue
        k = out.setdefault(e.get("name", ""), [0, 0])
        k[0] += 1
        k[1] += ns(e.get("dur", 0))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: ref_diff.py A B")
    a, b = kernels(sys.argv[1]), kernels(sys.argv[2])
    rows = []
    for name in sorted(set(a) | set(b)):
        ca, ta = a.get(name, [0, 0])
        cb, tb = b.get(name, [0, 0])
        rows.append({"name": name, "count_a": ca, "count_b": cb,
                     "total_a_ns": ta, "total_b_ns": tb, "delta_ns": tb - ta})
    res = {
        "a": os.path.basename(sys.argv[1]),
        "b": os.path.basename(sys.argv[2]),
        "kernel_total_a_ns": sum(t for _, t in a.values()),
        "kernel_total_b_ns": sum(t for _, t in b.values()),
        "kernels": rows,
        "only_a": sorted(set(a) - set(b)),
        "only_b": sorted(set(b) - set(a)),
    }
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
