#!/usr/bin/env python3
"""FLOPs and bytes per operator from AMD TraceLens's own perf model, the
independent reference of rlktop's operator model on the shared traces
(tracer/tracefile/testdata/tracelens_ref.json, read by
TestTraceLensPerfModel).

TraceLens is not part of rlktop: fetch its public source
(github.com/AMD-AGI/TraceLens) and point this script at it; it needs
pandas (Debian's python3-pandas). Never commit TraceLens.

usage: ref_tracelens.py TRACELENS_SRC TRACE.json.gz [TRACE…] > out.json

For each trace, for every operator TraceLens has a perf model for that
occurs in the trace (cpu_op events): the number of calls and the sums of
TraceLens's forward FLOPs (GFLOPS × 1e9) and bytes ("Data Moved (MB)" ×
2^20) over the calls. TRACELENS_COMMIT names the TraceLens commit when
TRACELENS_SRC is no git checkout.
"""
import contextlib
import json
import os
import subprocess
import sys
import warnings

src = sys.argv[1]
sys.path.insert(0, src)
warnings.filterwarnings("ignore")

from TraceLens import TreePerfAnalyzer  # noqa: E402
from TraceLens.PerfModel.torch_op_mapping import op_to_perf_model_class_map  # noqa: E402


def commit(path):
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def analyse(trace):
    a = TreePerfAnalyzer.from_file(trace)
    ops = {}
    cpu = [e for e in a.tree.events if e.get("cat") == "cpu_op"]
    for name in sorted({e["name"] for e in cpu if e["name"] in op_to_perf_model_class_map}):
        df = a.build_df_perf_metrics([e for e in cpu if e["name"] == name], bwd=False)
        if df is None or df.empty or "GFLOPS" not in df:
            continue
        row = {"calls": int(len(df)), "flops": float(df["GFLOPS"].fillna(0).sum()) * 1e9}
        if "Data Moved (MB)" in df:
            row["bytes"] = float(df["Data Moved (MB)"].fillna(0).sum()) * 1024 * 1024
        ops[name] = row
    return ops


out = {"tracelens": os.environ.get("TRACELENS_COMMIT") or commit(src), "traces": {}}
# TraceLens prints its progress on stdout: it goes to stderr here.
with contextlib.redirect_stdout(sys.stderr):
    for trace in sys.argv[2:]:
        out["traces"][os.path.basename(trace)] = analyse(trace)
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
