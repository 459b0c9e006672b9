"""Independent per-rank numbers of Kineto traces of a CPU DDP job (gloo).

Reads the JSON files given (one per rank) with the standard library only and
prints one JSON object: {"sources": [...], "step_spreads": [...],
"collectives_matched": N}, with the same keys as `rlktop report --format json`
but computed here from the raw events, for cmd/rlktop/ddp_test.go. Rules
(written from the rule, not from rlktop's code):

* times: Kineto µs as exact decimals → integer ns;
* kernels: every cpu_op's self time (its duration minus its direct children
  on the same thread, clipped to it), counted when > 0;
* communication: user_annotation ranges whose name is a collective (the
  regex below); compute: every other cpu_op, whole duration; busy = |union
  of both|, span = last end − first start of both, idle = span − busy,
  overlap = |comm ∩ compute|, exposed = comm − overlap;
* steps: ProfilerStep#N ranges; median = lower median;
* collectives matched across ranks by (name, step containing its start,
  n-th of that name in that step); the shortest arrived last (ties: lower
  rank); a rank's wait in one = its first (own − shortest) ns; its total
  wait = |union of its waits|; per step the wait is the largest such union.
"""
import decimal
import json
import re
import sys

COMM = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|cross_device_reduce|^(gloo|mpi|ucc):|c10d::|record_param_comms", re.I)


def ns(v):
    return int(decimal.Decimal(str(v)) * 1000)


def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def inter(a, b):
    n = 0
    for s, e in a:
        for t, f in b:
            n += max(0, min(e, f) - max(s, t))
    return n


def load(path, index):
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    evs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    rank = doc.get("distributedInfo", {}).get("rank", index)
    ops = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"], e["tid"]) for e in evs if e.get("cat") == "cpu_op"]
    anns = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in evs if e.get("cat") == "user_annotation"]
    # Self times, per thread, outermost first.
    kcount = kns = 0
    by_tid = {}
    for o in ops:
        by_tid.setdefault(o[3], []).append(o)
    for tid, lst in by_tid.items():
        lst.sort(key=lambda o: (o[0], -(o[1] - o[0])))
        self_t = [o[1] - o[0] for o in lst]
        stack = []
        for i, o in enumerate(lst):
            while stack and not o[0] < lst[stack[-1]][1]:
                stack.pop()
            if stack:
                p = stack[-1]
                self_t[p] -= min(o[1], lst[p][1]) - o[0]
            stack.append(i)
        for st in self_t:
            if st > 0:
                kcount += 1
                kns += st
    compute = [(s, e) for s, e, n, _ in ops if not COMM.search(n)]
    comm_evs = [(s, e, n) for s, e, n in anns if COMM.search(n)]
    comm = [(s, e) for s, e, _ in comm_evs]
    allw = compute + comm
    first, last = min(s for s, _ in allw), max(e for _, e in allw)
    cu, mu = union(compute), union(comm)
    busy = length(union(compute + comm))
    steps = {}
    wins = []
    for s, e, n in anns:
        m = re.fullmatch(r"ProfilerStep#(\d+)", n)
        if m and int(m.group(1)) not in steps:
            steps[int(m.group(1))] = e - s
            wins.append((s, e, int(m.group(1))))
    durs = sorted(steps.values())

    def step_at(ts):
        for s, e, n in wins:
            if s <= ts < e:
                return n
        return -1
    colls, nth = {}, {}
    for s, e, n in sorted(comm_evs, key=lambda c: c[0]):
        k = (n, step_at(s))
        colls[k + (nth.get(k, 0),)] = (s, e)
        nth[k] = nth.get(k, 0) + 1
    overlap = inter(mu, cu)
    src = {"index": index, "rank": rank, "path": path, "kernel_count": kcount, "kernel_ns": kns,
           "span_ns": last - first, "busy_ns": busy, "idle_ns": max(last - first - busy, 0), "compute_ns": length(cu),
           "comm_ns": length(mu), "comm_overlap_ns": overlap, "comm_exposed_ns": length(mu) - overlap,
           "steps": len(durs), "step_median_ns": durs[(len(durs) - 1) // 2] if durs else 0,
           "coll_wait_ns": 0, "last_arrivals": 0}
    return src, steps, colls


def main(paths):
    loaded = [load(p, i) for i, p in enumerate(paths)]
    srcs = [l[0] for l in loaded]
    common = set(loaded[0][2])
    for l in loaded[1:]:
        common &= set(l[2])
    waits = [[] for _ in loaded]

    def dur(i, k):
        s, e = loaded[i][2][k]
        return e - s

    def late_of(k):
        return min(range(len(loaded)), key=lambda i: (dur(i, k), srcs[i]["rank"]))
    for k in common:
        late = late_of(k)
        srcs[late]["last_arrivals"] += 1
        for i in range(len(loaded)):
            s, e = loaded[i][2][k]
            if dur(i, k) > dur(late, k):
                waits[i].append((s, e - dur(late, k)))
    for i, w in enumerate(waits):
        srcs[i]["coll_wait_ns"] = length(union(w))
    spreads = []
    for n in sorted(set.intersection(*[set(l[1]) for l in loaded])):
        d = [l[1][n] for l in loaded]
        slow = max(range(len(d)), key=lambda i: (d[i], -i))
        fast = min(range(len(d)), key=lambda i: (d[i], i))
        ks = [k for k in common if k[1] == n]
        lasts = [0] * len(loaded)
        worst = [0] * len(loaded)
        w = [[] for _ in loaded]
        for k in ks:
            late = late_of(k)
            lasts[late] += 1
            worst[late] = max(worst[late], max(dur(i, k) for i in range(len(loaded))) - dur(late, k))
            for i in range(len(loaded)):
                s, e = loaded[i][2][k]
                if dur(i, k) > dur(late, k):
                    w[i].append((s, e - dur(late, k)))
        late = -1
        if ks:
            late = max(range(len(loaded)), key=lambda i: (lasts[i], worst[i], -i))
        spreads.append({"step": n, "slow_rank": srcs[slow]["rank"], "slow_ns": d[slow], "fast_rank": srcs[fast]["rank"],
                        "fast_ns": d[fast], "spread_ns": d[slow] - d[fast],
                        "late_rank": srcs[late]["rank"] if late >= 0 else -1, "collectives": len(ks),
                        "wait_ns": max(length(union(x)) for x in w) if ks else 0})
    json.dump({"sources": sorted(srcs, key=lambda s: s["rank"]), "step_spreads": spreads,
               "collectives_matched": len(common)}, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
