#!/usr/bin/env bash
# cupti-standin-run.sh — `rlktop run` end to end through the CUPTI path on a
# machine without a GPU: rlktop (with the tracer embedded) launches the
# stand-in host program of tracer/cupti/testdata/standin, which loads the
# injection library as the CUDA driver would and feeds it records from a
# stand-in libcupti. Checks the headless JSON report against counts worked
# out from the host's parameters: ROUNDS steps, ROUNDS×(KERNELS+1) kernels
# (KERNELS launches + one CUDA-graph kernel per round), ROUNDS memcpys,
# the "forward" stage.
#
#   scripts/cupti-standin-run.sh [RLKTOP_BINARY]   (default build/rlktop from build-cupti.sh --rlktop)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rlktop=${1:-$root/build/rlktop}
inc=$("$root/scripts/setup-cupti-headers.sh" | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cflags=(-I"$root/tracer/cupti/include/mincuda")
[[ "$inc" == /usr/include ]] || cflags=(-I"$inc" -I"${CUDA_HOME:?}/include")
gcc -O1 -shared -fPIC "${cflags[@]}" -o "$work/libcupti.so.12" "$root/tracer/cupti/testdata/standin/fakecupti.c" -lpthread
gcc -O1 -o "$work/host" "$root/tracer/cupti/testdata/standin/host.c" -ldl -lpthread
rounds=25 kernels=6
RLKTOP_ASSUME_DRIVER=1 FAKE_CUPTI="$work/libcupti.so.12" HOST_SUMMARY="$work/summary" \
	HOST_ROUNDS=$rounds HOST_KERNELS=$kernels HOST_GAP_US=5000 \
	"$rlktop" run --headless --steps 0 --format json --top 0 -- "$work/host" >"$work/report.json" 2>"$work/stderr"
python3 - "$work/report.json" "$rounds" "$kernels" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rounds, kernels = int(sys.argv[2]), int(sys.argv[3])
got = {
    "steps": r["steps"]["count"],
    "kernels": sum(k["count"] for k in r["kernels"]),
    "memcpy": sum(k["count"] for k in r["transfers"]),
    "forward stage": any(s["stage"] == "forward" for s in r["stages"]),
}
want = {"steps": rounds, "kernels": rounds * (kernels + 1), "memcpy": rounds, "forward stage": True}
bad = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
print("cupti-standin-run:", "PASS" if not bad else "FAIL", got)
sys.exit(1 if bad else 0)
PY
