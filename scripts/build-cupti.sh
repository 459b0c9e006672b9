#!/usr/bin/env bash
# build-cupti.sh — build rlktop's CUPTI injection library and make it
# embeddable in the rlktop binary.
#
#   scripts/build-cupti.sh            build build/librlktop_cupti.so
#   scripts/build-cupti.sh --rlktop   also build build/rlktop with it embedded
#                                     (go build -tags embedcupti ./cmd/rlktop)
#
# Headers: scripts/setup-cupti-headers.sh (CUDA_HOME, else Debian non-free
# libcupti-dev, installed when missing). With a toolkit in CUDA_HOME the
# build uses its cuda.h (tag cudahome); otherwise tracer/cupti's minimal
# cuda.h. libcupti itself is opened with dlopen at run time, so the library
# links against neither libcupti nor libcuda and one build serves CUDA
# 11.8 to 13.
#
# Checks after building: InitializeInjection and InitializeInjectionNvtx2
# are exported; libcupti/libcuda are not NEEDED; prints the newest GLIBC
# symbol version required (the library must load on the GPU machine).
# The library is copied to tracer/cupti/launch/ (git-ignored) for go:embed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

inc=$(scripts/setup-cupti-headers.sh | tail -n 1) || {
	echo "build-cupti: no CUPTI headers; rlktop builds without the tracer (rlktop run then runs commands untraced)" >&2
	exit 1
}
tags=cupti
if [[ "$inc" != /usr/include ]]; then
	tags=cupti,cudahome
	export CGO_CFLAGS="-I$inc -I${CUDA_HOME:?}/include ${CGO_CFLAGS:-}"
fi
command -v gcc >/dev/null || { echo "build-cupti: gcc is needed (cgo)" >&2; exit 1; }

mkdir -p build
lib=build/librlktop_cupti.so
CGO_ENABLED=1 go build -tags "$tags" -buildmode=c-shared -trimpath -ldflags "-s -w" -o "$lib" ./tracer/cupti/lib
rm -f build/librlktop_cupti.h

fail=0
for sym in InitializeInjection InitializeInjectionNvtx2; do
	if ! nm -D --defined-only "$lib" | awk '{print $NF}' | grep -qx "$sym"; then
		echo "build-cupti: $lib does not export $sym" >&2
		fail=1
	fi
done
if readelf -d "$lib" | grep NEEDED | grep -Eq 'libcupti|libcuda\.'; then
	echo "build-cupti: $lib links libcupti/libcuda directly; it must dlopen them" >&2
	fail=1
fi
[[ $fail == 0 ]] || exit 1
glibc=$(objdump -T "$lib" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
echo "build-cupti: $lib ($(du -h "$lib" | cut -f1)), exports InitializeInjection, InitializeInjectionNvtx2; needs $glibc; tags $tags" >&2

cp "$lib" tracer/cupti/launch/librlktop_cupti.so
if [[ "${1:-}" == --rlktop ]]; then
	CGO_ENABLED=0 go build -tags embedcupti -trimpath -o build/rlktop ./cmd/rlktop
	echo "build-cupti: build/rlktop embeds the CUPTI tracer" >&2
fi
