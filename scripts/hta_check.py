"""HTA (facebookresearch/HolisticTraceAnalysis, run from source) against
`rlktop report` on an rlktop export: per kernel name, HTA's
get_gpu_kernel_breakdown sum (µs; HTA rounds ns events to µs) and rlktop's
(ns, summed over the name's category rows), every step included
(include_last_profiler_step=True; by default HTA drops the last step).

Never commit HTA. Set up (Debian packages, HTA from its source):

  apt-get install python3-pandas python3-plotly python3-networkx python3-pydot python3-psutil
  # HTA's hta/ folder, e.g. from a clone: git archive HEAD hta | tar -x -C /tmp/hta
  mkdir -p /tmp/x && rlktop export REC -o /tmp/x/rank-0.json.gz
  rlktop report /tmp/x/rank-0.json.gz --format json --top 0 > /tmp/ours.json
  /usr/bin/python3 scripts/hta_check.py /tmp/hta /tmp/x /tmp/ours.json
"""
import json, sys
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[2], include_last_profiler_step=True)
kt, km = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**6, duration_ratio=1.0, include_memory_kernels=True)
ours = json.load(open(sys.argv[3]))
per = {}
for k in ours["kernels"] + ours["transfers"]:
    c, t = per.get(k["name"], (0, 0))
    per[k["name"]] = (c + k["count"], t + k["total_ns"])
hta = {r["name"]: r["sum (us)"] for r in km.to_dict("records")}
worst, bad = 0.0, []
for n, us in hta.items():
    c, ns = per.get(n, (0, 0))
    d = abs(us * 1000 - ns)
    if d > 2000 * c:  # beyond HTA's rounding of ns events to µs (start and end: < 2 µs per execution)
        bad.append((n[:60], us, ns, c))
    worst = max(worst, d / max(c, 1))
print("HTA kernel types:", kt.to_dict("records"))
print("names: HTA", len(hta), "rlktop", len(per), "only in rlktop:", len(set(per) - set(hta)), "only in HTA:", len(set(hta) - set(per)))
print("HTA total %.0f us, rlktop total %d ns" % (sum(hta.values()), sum(v[1] for v in per.values())))
print("max |HTA - rlktop| per execution: %.1f ns; names beyond rounding: %d %s" % (worst, len(bad), bad[:3]))
