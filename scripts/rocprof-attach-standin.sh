#!/usr/bin/env bash
# The AMD GPU path of `rlktop attach`, end to end without a GPU: a Python
# process that loaded the rocprofiler-register stand-in
# (tracer/rocprof/testdata/standin/register.c, as
# librocprofiler-register.so.0, RTLD_GLOBAL, the way HIP maps the real one)
# dispatches rounds of kernels through it; `rlktop record --attach PID`
# injects the agent, which attaches rlktop's rocprofiler-sdk tool library
# through the register's attach entry. With ROCP_TOOL_ATTACH=1 in the
# process's start environment the recording must hold exactly the kernels
# the stand-in placed (its manifest: it places records only while the tool
# is attached and its context started), the tool's context must be stopped
# after rlktop detached, and the register's detach entry called. Without
# it the register refuses (9, ROCP_REG_ATTACHMENT_NOT_AVAILABLE) and rlktop
# says why, records no kernel, and the process runs on.
#
# Runs inside the PyTorch root (scripts/torch-root.sh: Python 3.13, gdb 16)
# with the tool library built (scripts/build-rocprof.sh). Without either it
# skips, saying so.
#
#   scripts/rocprof-attach-standin.sh [build/librlktop_rocprof.so]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$root/build/librlktop_rocprof.so}
tr=${RLKTOP_TORCH_ROOT:-/var/cache/rlktop/torch-root-trixie}
if [[ ! -f "$tr/.rlktop-ready" || $(id -u) != 0 ]]; then
	echo "rocprof-attach-standin: SKIP: needs the PyTorch root at $tr (scripts/torch-root.sh) and root to chroot into it"
	exit 0
fi
if [[ ! -f "$lib" ]]; then
	echo "rocprof-attach-standin: SKIP: no tool library at $lib (scripts/build-rocprof.sh builds it)"
	exit 0
fi
mountpoint -q "$tr/proc" || mount -t proc proc "$tr/proc"

work=$(mktemp -d "$tr/tmp/rocprof-attach.XXXXXX")
in=/tmp/$(basename "$work") # the same folder, seen from inside the root
target=
cleanup() {
	[[ -n "$target" ]] && kill "$target" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
gcc -O1 -Wall -Werror -shared -fPIC -I"$root/tracer/rocprof/include" -o "$work/librocprofiler-register.so.0" \
	"$root/tracer/rocprof/testdata/standin/register.c" -ldl -lpthread
(cd "$root" && CGO_ENABLED=0 go build -o "$work/rlktop" ./cmd/rlktop)
cp "$lib" "$work/librlktop_rocprof.so" # found next to rlktop (rocprof/launch.FindLibrary)
cat >"$work/target.py" <<'PY'
# Knows nothing of rlktop: loads the register stand-in and dispatches until
# the stop file appears, then writes the stand-in's summary.
import ctypes, os, sys, time
folder = sys.argv[1]
reg = ctypes.CDLL(folder + "/librocprofiler-register.so.0", mode=os.RTLD_NOW | os.RTLD_GLOBAL)
reg.fake_set_manifest((folder + "/manifest").encode())
print("ready", flush=True)
step = 0
while not os.path.exists(folder + "/stop"):
    reg.fake_round(step, 4)
    step += 1
    time.sleep(0.01)
reg.fake_summary((folder + "/summary").encode())
print("rounds", step, flush=True)
PY
in_root() { chroot "$tr" /usr/bin/env -C /tmp PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "$@"; }

# run CASE ENV...: the target started with ENV, `record --attach` for 3 s,
# the target stopped; leaves record.err, summary, manifest and rec.rlk.
run() {
	local case=$1
	shift
	rm -f "$work/stop" "$work/manifest" "$work/summary" "$work/target.out" "$work/rec.rlk"
	in_root env "$@" python3 "$in/target.py" "$in" >"$work/target.out" 2>"$work/target.err" &
	target=$!
	for _ in $(seq 100); do grep -q ready "$work/target.out" 2>/dev/null && break; sleep 0.1; done
	local pid
	pid=$(pgrep -f "$in/target.py" | head -n 1)
	RLKTOP_KINETO=0 in_root "$in/rlktop" record --attach "$pid" -o "$in/rec.rlk" --seconds 3 >"$work/record.out" 2>"$work/record.err" || {
		echo "rocprof-attach-standin: FAIL ($case): record --attach exited $?"
		cat "$work/record.out" "$work/record.err" "$work/target.err"
		exit 1
	}
	sleep 0.5 # rounds go on, detached: nothing more is placed
	touch "$work/stop"
	wait "$target" || true
	target=
	in_root "$in/rlktop" report "$in/rec.rlk" --format json --top 0 >"$work/report.json"
}

run attach ROCP_TOOL_ATTACH=1
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
man = [l.split("|") for l in open(work + "/manifest").read().splitlines()]
want = sum(1 for m in man if m[0] == "kernel")
r = json.load(open(work + "/report.json"))
got = sum(k["count"] for k in r["kernels"])
summ = dict(l.split("=", 1) for l in open(work + "/summary").read().split())
checks = {
    "register attach returned": (summ["attach_rc"], "0"),
    "kernels recorded = placed": (got, want),
    "register detach called": (summ["detaches"], "1"),
    "tool context stopped after detach": (summ["started"], "0"),
}
bad = {k: v for k, v in checks.items() if v[0] != v[1] or want == 0}
print("rocprof-attach-standin:", "PASS" if not bad else "FAIL", {k: v[0] for k, v in checks.items()}, "placed", want)
if bad:
    print("  wanted:", {k: v[1] for k, v in bad.items()})
    for f in ("record.err", "target.err"):
        print("  %s:" % f, open(work + "/" + f).read().strip().replace("\n", "\n    "))
    sys.exit(1)
PY
grep -h "attached to pid" "$work/record.err" || true

# Without ROCP_TOOL_ATTACH=1 the register refuses the tool: rlktop says
# why, the recording holds no kernel, the process runs on.
run refused
refused=$(grep -c "rocprofiler-register refused rlktop's tool library.*never loaded" "$work/record.err" || true)
kernels=$(python3 -c 'import json,sys; print(sum(k["count"] for k in json.load(open(sys.argv[1]))["kernels"]))' "$work/report.json")
if grep -q "^attach_rc=9$" "$work/summary" && [[ $refused -ge 1 && $kernels == 0 ]] && grep -q "^rounds" "$work/target.out"; then
	echo "rocprof-attach-standin: PASS: without ROCP_TOOL_ATTACH=1 the register refuses (9), rlktop says so, no kernel recorded, the process ran on"
	grep -h "ROCP_TOOL_ATTACH=1" "$work/record.err" | sed 's/^/  /'
else
	echo "rocprof-attach-standin: FAIL: without ROCP_TOOL_ATTACH=1: want the refusal (9) said, no kernel, the process running on (kernels $kernels)"
	cat "$work/record.err" "$work/summary" "$work/target.out"
	exit 1
fi
