#!/usr/bin/env bash
# build-rocprof.sh — build rlktop's rocprofiler-sdk tool library.
#
#   scripts/build-rocprof.sh     build build/librlktop_rocprof.so
#
# Needs cgo and a C compiler only: the rocprofiler-sdk ABI subset the tool
# uses is declared in tracer/rocprof/include (rocprofiler-sdk 0.5.0
# layouts), and every SDK function is found with dlsym in the process the
# SDK loaded the tool into, so nothing links against librocprofiler-sdk.
# Checks after building: rocprofiler_configure is exported and
# librocprofiler-sdk is not NEEDED.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p build
out=build/librlktop_rocprof.so
# The same -trimpath as build-cupti.sh: one build configuration, so the
# standard library compiled for c-shared by one build serves the other.
CGO_ENABLED=1 go build -tags rocm -buildmode=c-shared -trimpath -o "$out" ./tracer/rocprof/lib
rm -f build/librlktop_rocprof.h
if ! nm -D --defined-only "$out" | grep -q ' T rocprofiler_configure$'; then
	echo "build-rocprof: rocprofiler_configure is not exported from $out" >&2
	exit 1
fi
if readelf -d "$out" | grep NEEDED | grep -q rocprofiler; then
	echo "build-rocprof: $out must not link against librocprofiler-sdk" >&2
	exit 1
fi
echo "$out"
