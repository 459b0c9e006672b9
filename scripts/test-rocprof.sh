#!/usr/bin/env bash
# test-rocprof.sh — compile-check rlktop's rocprofiler-sdk tool library
# (build tag rocm, cgo, c-shared) and run its tests: the ABI layout check
# (the declared rocprofiler-sdk 0.5.0 subset compiled with gcc), the
# decoder, and the end-to-end test through the stand-in rocprofiler-sdk
# host (tracer/rocprof/testdata/standin/host.c). No GPU or ROCm needed;
# gcc is (the tests skip, saying so, without it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v gcc >/dev/null 2>&1; then
	echo "test-rocprof: gcc not found; skipping the rocprofiler-sdk tool library build and tests (they need a C compiler)"
	exit 0
fi
echo "== go vet -tags rocm"
go vet -tags rocm ./tracer/rocprof/...
echo "== build the tool library"
scripts/build-rocprof.sh
echo "== tests"
# Every indented line is kept: a failing end-to-end test prints the stand-in
# host's whole stderr (a Go panic in the tool library, say) on them.
go test -count=1 -v -run 'ABI|Decode|EndToEnd|Declines|RingFull|PauseResume|LateSocket|Nobody|Fork' ./tracer/rocprof/ 2>&1 |
	grep -E '^(--- |ok|FAIL|\s+)'
echo "== attaching the tool library to a running process (stand-in rocprofiler-register)"
scripts/rocprof-attach-standin.sh build/librlktop_rocprof.so
