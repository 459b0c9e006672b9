#!/usr/bin/env bash
# The GPU path of `rlktop attach`, end to end without a GPU: a Python
# process that loaded the CUPTI stand-in (tracer/cupti/testdata/standin/
# fakecupti.c, as libcupti.so.12, RTLD_GLOBAL, the way libtorch maps the
# real one) makes rounds of kernel launches through it; `rlktop record
# --attach PID` injects the agent, which loads rlktop's CUPTI library into
# the process; after rlktop detaches the recording must hold exactly the
# kernels and copies the stand-in placed (its manifest: it places records
# only while a kind is enabled), the stand-in must place none any more, and
# CUPTI must have been finalized with no kind left enabled.
#
# Runs inside the PyTorch root (scripts/torch-root.sh: Python 3.13 and gdb
# 16; an older gdb cannot call into processes on some CPUs). Without the
# root it skips, saying so.
#
#   scripts/cupti-attach-standin.sh [build/rlktop]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rlktop=${1:-$root/build/rlktop}
lib=$(dirname "$rlktop")/librlktop_cupti.so
tr=${RLKTOP_TORCH_ROOT:-/var/cache/rlktop/torch-root-trixie}
if [[ ! -f "$tr/.rlktop-ready" || $(id -u) != 0 ]]; then
	echo "cupti-attach-standin: SKIP: needs the PyTorch root at $tr (scripts/torch-root.sh) and root to chroot into it"
	exit 0
fi
mountpoint -q "$tr/proc" || mount -t proc proc "$tr/proc"
inc=$("$root/scripts/setup-cupti-headers.sh" | tail -n 1)
cflags=(-I"$root/tracer/cupti/include/mincuda")
[[ "$inc" == /usr/include ]] || cflags=(-I"$inc" -I"${CUDA_HOME:?}/include")

work=$(mktemp -d "$tr/tmp/cupti-attach.XXXXXX")
in=/tmp/$(basename "$work") # the same folder, seen from inside the root
target=
cleanup() {
	[[ -n "$target" ]] && kill "$target" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
gcc -O1 -shared -fPIC "${cflags[@]}" -o "$work/libcupti.so.12" "$root/tracer/cupti/testdata/standin/fakecupti.c" -lpthread
cp "$rlktop" "$work/rlktop"
cp "$lib" "$work/librlktop_cupti.so"
cat >"$work/target.py" <<'PY'
# Knows nothing of rlktop: loads the stand-in libcupti and launches until
# the stop file appears, then writes the stand-in's summary.
import ctypes, os, sys, time
folder = sys.argv[1]
fake = ctypes.CDLL(folder + "/libcupti.so.12", mode=os.RTLD_NOW | os.RTLD_GLOBAL)
if len(sys.argv) > 2:
    ctypes.CDLL(sys.argv[2])  # a Go shared library of the program's own
fake.fake_set_manifest((folder + "/manifest").encode())
fake.fake_set_records_per_buffer(8)
fake.fake_summary.argtypes = [ctypes.c_void_p]
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fclose.argtypes = [ctypes.c_void_p]
print("ready", flush=True)
step = 0
while not os.path.exists(folder + "/stop"):
    fake.fake_round(step, 4, 0)
    fake.fake_api_exit()
    fake.fake_flush_manifest()
    step += 1
    time.sleep(0.01)
f = libc.fopen((folder + "/summary").encode(), b"w")
fake.fake_summary(f)
libc.fclose(f)
print("rounds", step, flush=True)
PY
in_root() { chroot "$tr" /usr/bin/env -C /tmp PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "$@"; }
# RLKTOP_CUPTI_DEBUG: the library says on stderr when rlktop's DETACH
# reached it.
in_root RLKTOP_CUPTI_DEBUG=1 python3 "$in/target.py" "$in" >"$work/target.out" 2>"$work/target.err" &
target=$!
for _ in $(seq 100); do grep -q ready "$work/target.out" 2>/dev/null && break; sleep 0.1; done
pid=$(pgrep -f "$in/target.py" | head -n 1)
t0=$(date +%s%N)
RLKTOP_KINETO=0 in_root "$in/rlktop" record --attach "$pid" -o "$in/rec.rlk" --seconds 3 >"$work/record.out" 2>"$work/record.err" || {
	echo "cupti-attach-standin: FAIL: record --attach exited $?"
	cat "$work/record.out" "$work/record.err" "$work/target.err"
	exit 1
}
took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
n1=$(grep -c '^kernel|' "$work/manifest" || true)
sleep 1 # rounds go on, detached: the stand-in must place nothing more
n2=$(grep -c '^kernel|' "$work/manifest" || true)
touch "$work/stop"
wait "$target" || true
target=
in_root "$in/rlktop" report "$in/rec.rlk" --format json --top 0 >"$work/report.json"
python3 - "$work" "$n1" "$n2" "$took_ms" <<'PY'
import json, sys
work, n1, n2, took = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
man = [l.split("|") for l in open(work + "/manifest").read().splitlines()]
want_k = sum(1 for m in man if m[0] == "kernel")
want_c = sum(1 for m in man if m[0] == "memcpy")
r = json.load(open(work + "/report.json"))
got_k = sum(k["count"] for k in r["kernels"])
got_c = sum(k["count"] for k in r["transfers"])
summ = dict(l.split("=", 1) for l in open(work + "/summary").read().split())
checks = {
    "kernels recorded = placed": (got_k, want_k),
    "copies recorded = placed": (got_c, want_c),
    "placed after detach": (n2 - n1, 0),
    "kinds enabled at the end": (summ["enabled_mask"], "0"),
    "CUPTI finalized": (summ["finalize_calls"] != "0", True),
    "the library detached": ("detached: CUPTI tracing switched off" in open(work + "/target.err").read(), True),
}
bad = {k: v for k, v in checks.items() if v[0] != v[1] or (k.startswith("kernels") and want_k == 0)}
print("cupti-attach-standin:", "PASS" if not bad else "FAIL", {k: v[0] for k, v in checks.items()}, "record --attach --seconds 3 took %d ms" % took)
if bad:
    print("  wanted:", {k: v[1] for k, v in bad.items()})
    for f in ("record.err", "target.err"):
        print("  %s:" % f, open(work + "/" + f).read().strip().replace("\n", "\n    "))
    sys.exit(1)
PY
grep -h "attached to pid" "$work/record.err" || true
if grep -v "^rlktop cupti\[" "$work/target.err" | grep -q .; then echo "cupti-attach-standin: the process wrote to stderr:"; sed "s/^/  /" "$work/target.err"; fi

# A process that maps a Go shared library of its own (here a copy of
# rlktop's, never started) must not get a second Go runtime: rlktop says
# so and loads nothing; the stand-in sees no CUPTI client.
rm -f "$work/stop" "$work/manifest" "$work/summary" "$work/target.out"
cp "$lib" "$work/libother_go.so"
in_root python3 "$in/target.py" "$in" "$in/libother_go.so" >"$work/target.out" 2>"$work/target.err" &
target=$!
for _ in $(seq 100); do grep -q ready "$work/target.out" 2>/dev/null && break; sleep 0.1; done
pid=$(pgrep -f "$in/target.py" | head -n 1)
RLKTOP_KINETO=0 in_root "$in/rlktop" record --attach "$pid" -o "$in/rec2.rlk" --seconds 1 >"$work/record.out" 2>"$work/record.err" || true
touch "$work/stop"
wait "$target" || true
target=
if grep -q "would be a second Go runtime" "$work/record.err" && grep -q "^register_calls=0$" "$work/summary"; then
	echo "cupti-attach-standin: PASS: a process with a Go shared library of its own gets no CUPTI library"
else
	echo "cupti-attach-standin: FAIL: a process with a Go shared library: want the refusal and no CUPTI client"
	cat "$work/record.err" "$work/summary"
	exit 1
fi
