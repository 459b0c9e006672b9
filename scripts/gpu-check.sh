#!/usr/bin/env bash
# gpu-check.sh — the CUPTI tracer on a real NVIDIA GPU, end to end.
#
#   scripts/gpu-check.sh [RLKTOP_BINARY]
#
# For a machine with an NVIDIA GPU and PyTorch but no Go: build here with
#   scripts/build-cupti.sh --rlktop        (build/rlktop embeds the tracer)
# and carry the repository with build/. Runs scripts/gpu/train_small.py (a
# small bf16 transformer with NVTX stages) with SDPA forced to math and to
# flash: untraced and under `rlktop run --headless` (interleaved, REPEATS
# each), once with `--torch-ranges` wrapping only SDPA (attribution), once
# with the full shim (its overhead), and once under torch.profiler (the
# reference); then `rlktop compare --flag sdpa=math,flash` on
# examples/selfplay_connect4.py (the Python agent). scripts/gpu/check.py
# prints one table and the script exits 1 when a check fails. Raw outputs: $OUT (default gpu-check-out/).
#
# Environment: OUT, STEPS (measured steps, default 100), WARMUP (5),
# REPEATS (2), PY (python3). Exit 77 when there is no CUDA PyTorch.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rlktop=${1:-$root/build/rlktop}
out=${OUT:-$root/gpu-check-out}
steps=${STEPS:-100}
warmup=${WARMUP:-5}
repeats=${REPEATS:-2}
py=${PY:-python3}
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.err

if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "gpu-check: skipped: no PyTorch with a CUDA device here ($py)"
	exit 77
fi
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' | tee "$out/env.txt"
if [[ ! -x "$rlktop" ]]; then
	echo "gpu-check: $rlktop not found: build it with scripts/build-cupti.sh --rlktop and carry build/" >&2
	exit 2
fi
printf '{"steps": %d, "warmup": %d, "repeats": %d}\n' "$steps" "$warmup" "$repeats" >"$out/config.json"

train=("$py" "$root/scripts/gpu/train_small.py" --steps "$steps" --warmup "$warmup")
fails=0
traced() { # traced NAME ARM [rlktop run flags...]
	local name=$1 arm=$2
	shift 2
	"$rlktop" run --headless --steps 0 --format json --top 0 --flag "RLK_SDPA=$arm" "$@" -- \
		"${train[@]}" --times "$out/times_$name.json" >"$out/report_$name.json" 2>"$out/report_$name.err"
	local rc=$?
	if [[ $rc != 0 ]] || grep -q "untraced" "$out/report_$name.err"; then
		echo "gpu-check: rlktop run ($name) exit $rc:" >&2
		tail -n 5 "$out/report_$name.err" >&2
		fails=1
	fi
}
untraced() { # untraced NAME ARM [train args...]
	local name=$1 arm=$2
	shift 2
	RLK_SDPA=$arm "${train[@]}" --times "$out/times_$name.json" "$@" >"$out/$name.err" 2>&1 || {
		echo "gpu-check: $name failed:" >&2
		tail -n 5 "$out/$name.err" >&2
		fails=1
	}
}

for arm in math flash; do
	for r in $(seq 1 "$repeats"); do # interleaved: untraced, traced, untraced, traced
		echo "gpu-check: $arm run $r/$repeats" >&2
		untraced "untraced_${arm}_$r" "$arm"
		traced "traced_${arm}_$r" "$arm"
	done
	RLKTOP_TORCH_RANGES_MODULES=0 traced "sdpa_$arm" "$arm" --torch-ranges
	traced "shim_$arm" "$arm" --torch-ranges
	untraced "profiler_$arm" "$arm" --profile "$out/kineto_$arm.json"
done
# The PyTorch example under the Python agent: sdpa switched inside one
# process, both arms valid (exit 0), with the agent's probe and checks.
# (Added without a GPU to run it on: unverified until a device run.)
echo "gpu-check: examples/selfplay_connect4.py, compare sdpa=math,flash" >&2
if ! "$rlktop" compare --flag sdpa=math,flash --steps 10 --format json -- \
	"$py" "$root/examples/selfplay_connect4.py" >"$out/example_compare.json" 2>"$out/example_compare.err"; then
	echo "gpu-check: FAIL: the example's comparison (see $out/example_compare.err)" >&2
	fails=1
fi
"$py" "$root/scripts/gpu/check.py" "$out" | tee "$out/table.txt"
rc=${PIPESTATUS[0]}
[[ $fails == 0 ]] || rc=1
exit "$rc"
