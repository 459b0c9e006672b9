#!/usr/bin/env python3
"""Analysis half of scripts/gpu-check.sh: reads its raw outputs in OUT and
prints one table; exit 0 when every check passes, 1 otherwise.

Checks, per SDPA arm (math, flash):
  flash      flash kernels (FLASH_RE) in the flash arm only — in rlktop's
             report and, independently, in torch.profiler's trace
  stages     NVTX stages data/forward/optimizer in rlktop's report (whether
             "backward" holds kernels is reported, see STAGES)
  kernels    per-kernel per-step totals vs torch.profiler on the same loop:
             for each kernel name, round(count/steps) x median duration,
             summed per normalised name (template arguments and parameters
             cut, so Kineto's and rlktop's demanglers agree); every group in
             the top 90% of torch.profiler's time within 5%
  attention  (math arm) rlktop's "attention" category per step, with the
             --torch-ranges shim wrapping only SDPA, vs torch.profiler's
             kernels launched inside aten::scaled_dot_product_attention
             (by correlation id and launching thread), within 10%
  overhead   median step time traced (rlktop run, no shim) vs untraced
             (plain python), medians of interleaved runs, within 3%
Figures reported without a pass/fail: the --torch-ranges shim's overhead
(full shim vs traced without it).
"""
import glob
import json
import math
import os
import re
import statistics
import sys

FLASH_RE = re.compile(r"flash_fwd|flash_bwd|pytorch_flash|flash::|fmha_|flash_attn")
# Stages whose kernels are launched on the thread that opened the range.
# "backward" is reported, not required: PyTorch runs the backward pass of
# CUDA tensors on the autograd engine's device thread, so its kernels are
# launched outside the "backward" range of the main thread and a stage
# attribution by launching thread (rlktop's rule) cannot see them there.
STAGES = ["data", "forward", "optimizer"]


def load(path):
    with open(path) as f:
        return json.load(f)


def demangle_all(names):
    """Raw (mangled) kernel names -> demangled, through c++filt (binutils);
    None when c++filt is not there."""
    import subprocess

    mangled = [n for n in names if n.startswith("_Z")]
    out = {n: n for n in names}
    if not mangled:
        return out
    try:
        r = subprocess.run(["c++filt"], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = r.stdout.split("\n")
    if r.returncode != 0 or len(lines) < len(mangled):
        return None
    for m, d in zip(mangled, lines):
        out[m] = d
    return out


def norm(name):
    """A kernel's base function name: no return type, namespaces, template
    arguments or parameters. Applied to both sides, so different
    demanglers (Kineto's, c++filt) meet; kernels sharing a base name are
    compared as one group."""
    n = name.strip().replace("(anonymous namespace)::", "")
    if n.startswith("void "):
        n = n[5:]
    for i, c in enumerate(n):
        if c in "<(":
            n = n[:i]
            break
    n = n.strip()
    return n.rsplit("::", 1)[-1]


def per_step_groups(rows, steps):
    """rows: (name, count, p50_ns) -> {normalised name: ns per step}."""
    g = {}
    for name, count, p50 in rows:
        per = round(count / steps)
        if per == 0:
            continue
        k = norm(name)
        g[k] = g.get(k, 0) + per * p50
    return g


def kineto(path, steps):
    tr = load(path)
    evs = tr["traceEvents"] if isinstance(tr, dict) else tr
    kernels = {}
    flash = 0
    launches = {}
    sdpa_ops = {}
    kern_by_corr = []
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        args = e.get("args", {})
        if cat == "kernel":
            d = float(e["dur"]) * 1000.0
            kernels.setdefault(e["name"], []).append(d)
            if FLASH_RE.search(e["name"]):
                flash += 1
            kern_by_corr.append((args.get("correlation"), d))
        elif cat in ("cuda_runtime", "cuda_driver"):
            launches[args.get("correlation")] = (e.get("tid"), float(e["ts"]))
        elif cat == "cpu_op" and e["name"] == "aten::scaled_dot_product_attention":
            sdpa_ops.setdefault(e.get("tid"), []).append((float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    rows = [(n, len(d), statistics.median(d)) for n, d in kernels.items()]
    attn = 0.0
    for corr, d in kern_by_corr:
        l = launches.get(corr)
        if l is None:
            continue
        tid, ts = l
        if any(a <= ts < b for a, b in sdpa_ops.get(tid, [])):
            attn += d
    return {"groups": per_step_groups(rows, steps), "flash": flash, "attention_per_step": attn / steps}


def report(path):
    r = load(path)
    steps = r.get("steps", {}).get("count", 0)
    dm = demangle_all([k["name"] for k in r.get("kernels", [])])
    # rlktop's display names are shortened (and may be cut with "..."), so
    # demangle the raw names when c++filt is available.
    rows = [(dm[k["name"]] if dm else (k.get("display_name") or k["name"]), k["count"], k["p50_ns"]) for k in r.get("kernels", [])]
    flash = sum(k["count"] for k in r.get("kernels", []) if FLASH_RE.search(k["name"]) or FLASH_RE.search(k.get("display_name", "")))
    cats = {c["category"]: c["total_ns"] for c in r.get("categories", [])}
    stages = {s["stage"] for s in r.get("stages", [])}
    return {"steps": steps, "groups": per_step_groups(rows, steps) if steps else {}, "flash": flash,
            "attention_per_step": cats.get("attention", 0) / steps if steps else 0.0, "stages": stages,
            "kernel_rows": len(rows), "dropped": r.get("dropped", 0)}


def step_median(path, warm=0):
    t = load(path)["steps_ns"]
    return statistics.median(t[warm:]) if t else float("nan")


def pct(a, b):
    return 100.0 * (a / b - 1.0) if b else float("nan")


def main(out):
    cfg = load(os.path.join(out, "config.json"))
    steps = cfg["steps"]
    results = {}
    ok_all = True
    lines = []
    for arm in ("math", "flash"):
        res = {"checks": {}}
        checks = res["checks"]

        def fail(name, why):
            checks[name] = "FAIL: " + why

        try:
            traced = report(os.path.join(out, "report_traced_%s_1.json" % arm))
            sdpa = report(os.path.join(out, "report_sdpa_%s.json" % arm))
            prof = kineto(os.path.join(out, "kineto_%s.json" % arm), steps)
        except (OSError, ValueError, KeyError) as e:
            results[arm] = {"checks": {"inputs": "FAIL: %r" % (e,)}}
            ok_all = False
            continue
        res["steps_seen"] = traced["steps"]
        res["dropped"] = traced["dropped"]
        # flash
        if arm == "flash":
            checks["flash"] = "PASS" if traced["flash"] > 0 and prof["flash"] > 0 else \
                "FAIL: flash kernels rlktop %d, torch.profiler %d" % (traced["flash"], prof["flash"])
        else:
            checks["flash"] = "PASS" if traced["flash"] == 0 and prof["flash"] == 0 else \
                "FAIL: flash kernels in the math arm: rlktop %d, torch.profiler %d" % (traced["flash"], prof["flash"])
        res["flash_kernels"] = traced["flash"]
        # stages
        missing = [s for s in STAGES if s not in traced["stages"]]
        checks["stages"] = "PASS" if not missing else "FAIL: missing %s (have %s)" % (missing, sorted(traced["stages"]))
        res["backward_stage"] = "backward" in traced["stages"]
        # per-kernel totals
        pg, rg = prof["groups"], traced["groups"]
        total = sum(pg.values())
        acc, worst, bad, n = 0.0, (0.0, "(all equal)"), [], 0
        for k, v in sorted(pg.items(), key=lambda kv: -kv[1]):
            if total and acc / total >= 0.9:
                break
            acc += v
            n += 1
            got = rg.get(k, 0.0)
            d = abs(pct(got, v))
            if d > abs(worst[0]):
                worst = (pct(got, v), k)
            if d > 5.0:
                bad.append("%s %+.1f%%" % (k[:40], pct(got, v)))
        res["kernels_compared"] = n
        res["kernel_worst"] = "%+.1f%% %s" % worst if n else "-"
        checks["kernels"] = "PASS" if n and not bad else "FAIL: %d of %d outside 5%%: %s" % (len(bad), n, "; ".join(bad[:4]))
        # attention attribution
        res["attention_rlktop_ns_per_step"] = sdpa["attention_per_step"]
        res["attention_profiler_ns_per_step"] = prof["attention_per_step"]
        if arm == "math":
            ref = prof["attention_per_step"]
            got = sdpa["attention_per_step"]
            checks["attention"] = "PASS" if ref > 0 and abs(pct(got, ref)) <= 10.0 else \
                "FAIL: rlktop %.0f ns/step, torch.profiler %.0f ns/step (%+.1f%%)" % (got, ref, pct(got, ref))
        # overhead
        un = [step_median(p) for p in sorted(glob.glob(os.path.join(out, "times_untraced_%s_*.json" % arm)))]
        tr = [step_median(p) for p in sorted(glob.glob(os.path.join(out, "times_traced_%s_*.json" % arm)))]
        shim = [step_median(p) for p in sorted(glob.glob(os.path.join(out, "times_shim_%s.json" % arm)))]
        if un and tr:
            res["step_untraced_ns"] = statistics.median(un)
            res["step_traced_ns"] = statistics.median(tr)
            res["overhead_pct"] = pct(res["step_traced_ns"], res["step_untraced_ns"])
            checks["overhead"] = "PASS" if res["overhead_pct"] <= 3.0 else "FAIL: %+.2f%% (limit 3%%)" % res["overhead_pct"]
        else:
            fail("overhead", "missing timing files")
        if shim and tr:
            res["shim_overhead_pct"] = pct(statistics.median(shim), res["step_traced_ns"])
        results[arm] = res
        ok_all = ok_all and all(v == "PASS" for v in checks.values())

    hdr = "%-6s %6s %12s %12s %8s %8s %6s %14s %14s %9s  %s" % (
        "arm", "steps", "untraced", "traced", "ovh%", "shim%", "flash", "attn rlktop", "attn prof", "kernels", "checks")
    print(hdr)
    print("-" * len(hdr))
    for arm, r in results.items():
        def ms(x):
            if not isinstance(x, (int, float)) or math.isnan(x):
                return "-"
            return "%.3f ms" % (x / 1e6) if x >= 1e6 else "%.1f us" % (x / 1e3)

        def f(x, spec):
            return spec % x if isinstance(x, (int, float)) else "-"

        print("%-6s %6s %12s %12s %8s %8s %6s %14s %14s %9s  %s" % (
            arm, r.get("steps_seen", "-"), ms(r.get("step_untraced_ns")), ms(r.get("step_traced_ns")),
            f(r.get("overhead_pct"), "%+.2f"), f(r.get("shim_overhead_pct"), "%+.2f"), r.get("flash_kernels", "-"),
            ms(r.get("attention_rlktop_ns_per_step")), ms(r.get("attention_profiler_ns_per_step")),
            r.get("kernels_compared", "-"),
            ", ".join("%s %s" % (k, v) for k, v in r["checks"].items())))
    for arm, r in results.items():
        if "kernel_worst" in r:
            print("%s: worst kernel group vs torch.profiler: %s; backward stage attributed: %s" % (
                arm, r["kernel_worst"], r.get("backward_stage")))
    print("RESULT:", "PASS" if ok_all else "FAIL")
    with open(os.path.join(out, "check.json"), "w") as fh:
        json.dump(results, fh, indent=2, default=str)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "gpu-check-out"))
