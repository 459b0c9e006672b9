#!/usr/bin/env bash
# ci-cupti.sh — the CUPTI tracer's CI steps, for .ci/run (no GPU needed):
#   1. install the CUPTI headers if missing (scripts/setup-cupti-headers.sh);
#   2. build the injection library and check its exported symbols
#      (scripts/build-cupti.sh: InitializeInjection, InitializeInjectionNvtx2;
#      libcupti/libcuda not linked);
#   3. vet and test tracer/cupti with the cupti tag: record layouts against
#      offsetof in the real headers, decoding of buffers built from the real
#      structs, and the end-to-end runs through a stand-in libcupti;
#   4. `rlktop run --headless` (tracer embedded) on the stand-in host program
#      (scripts/cupti-standin-run.sh);
#   5. the GPU check's analysis on synthetic outputs (scripts/gpu/check_selftest.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cupti-headers.sh >/dev/null
scripts/build-cupti.sh --rlktop
tags=cupti
if [[ -n "${CUDA_HOME:-}" && ! -f /usr/include/cupti_activity.h ]]; then
	tags=cupti,cudahome
	export CGO_CFLAGS="-I$CUDA_HOME/extras/CUPTI/include -I$CUDA_HOME/include ${CGO_CFLAGS:-}"
fi
CGO_ENABLED=1 go vet -tags "$tags" ./tracer/cupti/...
CGO_ENABLED=1 go test -count=1 -tags "$tags" ./tracer/cupti/...
scripts/cupti-standin-run.sh build/rlktop
scripts/cupti-attach-standin.sh build/rlktop
python3 scripts/gpu/check_selftest.py
