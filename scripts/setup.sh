#!/usr/bin/env bash
# Installs what rlktop needs on a fresh Debian machine and builds it into bin/.
#   * Go modules (through the Go module proxy);
#   * the CUPTI headers from Debian non-free (libcupti-dev) when running as root
#     with apt, so that the CUPTI injection library can be built and embedded;
#     without them rlktop still builds and `rlktop run` says it has no CUPTI tracer;
#   * the CUPTI injection library and the rocprofiler-sdk tool library, each
#     rebuilt only when the sources it is built from changed (a hash of them
#     is kept beside the library in build/);
#   * bin/rlktop.
# One line per step with its time; apt's and the compilers' output goes to
# build/setup.log, which a failing step names (with its last lines).
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "setup: Go is not installed (need Go 1.26: https://go.dev/dl)" >&2; exit 1; }

mkdir -p build bin
logf=build/setup.log
: >"$logf"
t0=$(date +%s.%N)

# go-nvml's cgo wrappers call NVML functions its bundled header marks
# deprecated (CUDA 13); the calls are deliberate, the warnings are noise.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"

secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }

# step LABEL CMD…: runs CMD with its output in the log; prints one line.
# Returns CMD's status; the caller decides whether a failure is fatal.
step() {
	local label=$1 s rc=0
	shift
	s=$(date +%s.%N)
	printf '\n== %s: %s\n' "$label" "$*" >>"$logf"
	"$@" >>"$logf" 2>&1 || rc=$?
	if [ "$rc" = 0 ]; then
		printf 'setup: %-34s ok (%s)\n' "$label" "$(secs "$s")"
	else
		printf 'setup: %-34s FAILED (%s, exit %d)\n' "$label" "$(secs "$s")" "$rc"
	fi
	return "$rc"
}

fatal() {
	echo "setup: the last lines of $logf:" >&2
	tail -n 15 "$logf" | sed 's/^/  /' >&2
	echo "setup: stopped; the whole log is $logf" >&2
	exit 1
}

# srchash PKG TAGS: a hash of every file of this module that PKG is built
# from with TAGS, and of the Go version, so a library is rebuilt when its
# sources (Go, C, headers) change and only then.
srchash() {
	{
		go version
		cat go.sum
		go list -tags "$2" -deps -f '{{if not .Standard}}{{.Dir}}{{end}}' "$1" |
			grep "^$PWD" | while read -r d; do
				find "$d" -maxdepth 1 -type f \( -name '*.go' -o -name '*.c' -o -name '*.h' \) -print0 |
					sort -z | xargs -0 cat
			done
		find tracer/pump/include tracer/cupti tracer/rocprof -type f -name "*.h" -print0 2>/dev/null | sort -z | xargs -0 cat
		cat /usr/include/cupti_activity.h 2>/dev/null || true
	} | sha256sum | cut -d' ' -f1
}

# cached LIB PKG TAGS CMD…: runs CMD unless LIB exists with the hash of
# PKG's sources beside it.
cached() {
	local lib=$1 pkg=$2 tags=$3 h
	shift 3
	h=$(srchash "$pkg" "$tags")
	if [ -f "$lib" ] && [ "$(cat "$lib.srchash" 2>/dev/null)" = "$h" ]; then
		echo "$lib is up to date with its sources ($h)"
		return 0
	fi
	"$@" && echo "$h" >"$lib.srchash"
}

step "Go modules" go mod download || fatal

tags=""
cupti="no CUPTI tracer"
if step "CUPTI headers (libcupti-dev)" scripts/setup-cupti-headers.sh; then
	if step "CUPTI injection library" cached build/librlktop_cupti.so ./tracer/cupti/lib cupti scripts/build-cupti.sh; then
		# build-cupti.sh copies the library beside the embedding package; a
		# cached build may predate that copy (it is git-ignored).
		cp build/librlktop_cupti.so tracer/cupti/launch/librlktop_cupti.so
		tags="embedcupti"
		cupti="CUPTI tracer embedded"
	fi
fi

rocprof="no rocprofiler-sdk tool"
if command -v gcc >/dev/null &&
	step "rocprofiler-sdk tool library" cached build/librlktop_rocprof.so ./tracer/rocprof/lib rocm scripts/build-rocprof.sh; then
	cp build/librlktop_rocprof.so bin/
	rocprof="bin/librlktop_rocprof.so"
fi

# The revision for --version also where GOFLAGS=-buildvcs=false keeps Go
# from stamping it (this project's CI machines set that).
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
if [ -n "$rev" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	rev="$rev, modified"
fi
step "bin/rlktop" go build ${tags:+-tags "$tags"} -ldflags "-X 'main.revision=$rev'" -o bin/rlktop ./cmd/rlktop || fatal

echo "setup: built bin/rlktop ($cupti; $rocprof) in $(secs "$t0"); log: $logf"
echo "setup: run bin/rlktop (the built-in training loop, no GPU needed)"
