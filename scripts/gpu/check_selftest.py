#!/usr/bin/env python3
"""Self-test of check.py on synthetic outputs with known verdicts (no GPU).

Synthetic loop: 10 profiled steps (rlktop sees 11: one warm-up step).
Per step: gemm<1> twice (0.3 us, 0.7 us -> median 0.5 us) and gemm<2> once
(1.0 us), i.e. group "gemm" = 2 x 500 + 1 x 1000 = 2000 ns/step; the flash
arm adds flash_fwd_kernel 500 ns/step. The first gemm<1> of each step is
launched inside aten::scaled_dot_product_attention: 300 ns/step of
attention. Verdicts worked out by hand: case "good" passes everything;
case "bad" has traced steps 5% slower than untraced (overhead FAIL) and
rlktop's gemm group 10% high (kernels FAIL).
"""
import io
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402


def write(out, traced_step_ns, gemm_p50):
    steps = 10
    json.dump({"steps": steps, "warmup": 1, "repeats": 2}, open(os.path.join(out, "config.json"), "w"))
    for arm in ("math", "flash"):
        kern = [{"name": "_Z4gemmv", "display_name": "gemm", "count": 2 * (steps + 1), "p50_ns": gemm_p50}]
        if arm == "flash":
            kern.append({"name": "pytorch_flash::flash_fwd_kernel", "display_name": "pytorch_flash::flash_fwd_kernel",
                         "count": steps + 1, "p50_ns": 500})
        rep = {"steps": {"count": steps + 1}, "kernels": kern,
               "categories": [{"category": "attention", "total_ns": 300 * (steps + 1)}],
               "stages": [{"stage": s} for s in ("data", "forward", "optimizer")], "dropped": 0}
        for n in ("traced_%s_1" % arm, "sdpa_%s" % arm):
            json.dump(rep, open(os.path.join(out, "report_%s.json" % n), "w"))
        ev = []
        for i in range(steps):
            t = i * 100.0
            ev += [
                {"ph": "X", "cat": "cpu_op", "name": "aten::scaled_dot_product_attention", "tid": 1, "ts": t, "dur": 10.0},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": t + 1, "dur": 1.0, "args": {"correlation": i * 10 + 1}},
                {"ph": "X", "cat": "kernel", "name": "void gemm<1>(int)", "ts": t + 20, "dur": 0.3, "args": {"correlation": i * 10 + 1}},
                {"ph": "X", "cat": "kernel", "name": "void gemm<2>(int, float)", "ts": t + 30, "dur": 1.0, "args": {"correlation": i * 10 + 2}},
                {"ph": "X", "cat": "kernel", "name": "void gemm<1>(int)", "ts": t + 40, "dur": 0.7, "args": {"correlation": i * 10 + 3}},
            ]
            if arm == "flash":
                ev.append({"ph": "X", "cat": "kernel", "name": "void pytorch_flash::flash_fwd_kernel<x>(p)", "ts": t + 50, "dur": 0.5,
                           "args": {"correlation": i * 10 + 4}})
        json.dump({"traceEvents": ev}, open(os.path.join(out, "kineto_%s.json" % arm), "w"))
        for r in (1, 2):
            json.dump({"steps_ns": [1000000] * steps}, open(os.path.join(out, "times_untraced_%s_%d.json" % (arm, r)), "w"))
            json.dump({"steps_ns": [traced_step_ns] * steps}, open(os.path.join(out, "times_traced_%s_%d.json" % (arm, r)), "w"))
        json.dump({"steps_ns": [1100000] * steps}, open(os.path.join(out, "times_shim_%s.json" % arm), "w"))


def run(traced_step_ns, gemm_p50):
    with tempfile.TemporaryDirectory() as out:
        write(out, traced_step_ns, gemm_p50)
        buf = io.StringIO()
        with redirect_stdout(buf):
            rc = check.main(out)
        return rc, json.load(open(os.path.join(out, "check.json"))), buf.getvalue()


def main():
    ok = True
    rc, res, txt = run(1010000, 1000)  # 2 x 1000 = 2000 ns/step: equal to the profiler
    if rc != 0 or any(v != "PASS" for a in res.values() for v in a["checks"].values()):
        print("good case did not pass:\n" + txt)
        ok = False
    if abs(res["math"]["overhead_pct"] - 1.0) > 1e-9 or abs(res["math"]["attention_rlktop_ns_per_step"] - 300) > 1e-9:
        print("good case figures:", res["math"])
        ok = False
    rc, res, txt = run(1050000, 1100)  # +5% step time; gemm 2 x 1100 = 2200 (+10%)
    m = res["math"]["checks"]
    if rc != 1 or not m["overhead"].startswith("FAIL") or not m["kernels"].startswith("FAIL") or m["flash"] != "PASS":
        print("bad case verdicts wrong:\n" + txt)
        ok = False
    print("check_selftest:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
