#!/usr/bin/env bash
# Runs every test of the project: the one test command README.md gives, and
# what .ci/run runs. Installs what the tests need (CUPTI headers for the
# injection-library tests, python3 for reference scripts) through the project's
# own scripts; GPU tests skip, saying so, on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi

# go-nvml's cgo wrappers call NVML functions its header marks deprecated;
# the same flags as scripts/setup.sh, so both share Go's build cache.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"

echo "== go vet"
go vet ./...

echo "== build without cgo (cgo only in the tracer/telemetry bindings)"
CGO_ENABLED=0 go build ./...

echo "== PyTorch root for the real-PyTorch tests (scripts/torch-root.sh; cached)"
# Built once (about 2 GB, a few minutes) and reused; the tests chroot into it
# with a CGO_ENABLED=0 rlktop. A missing root is a failure here, a skip in a
# plain `go test`.
t0=$(date +%s)
RLKTOP_TORCH_ROOT=$(scripts/torch-root.sh)
export RLKTOP_TORCH_ROOT RLKTOP_REQUIRE_TORCH=1
echo "PyTorch root ready at $RLKTOP_TORCH_ROOT in $(( $(date +%s) - t0 )) s"

echo "== DuckDB (npm) for the Parquet read-back test (scripts/setup-duckdb.sh; cached)"
if command -v npm >/dev/null; then
	RLKTOP_DUCKDB_DIR=$(scripts/setup-duckdb.sh)
	export RLKTOP_DUCKDB_DIR RLKTOP_REQUIRE_DUCKDB=1
else
	echo "no npm: TestExportParquetReadByDuckDB will skip (apt-get install nodejs npm)"
fi

echo "== go test"
go test -count=1 -timeout 25m ./... 2>&1 | tee /tmp/rlktop-test.log
echo "== CUPTI injection library: real headers, build, exported symbols, tagged tests, stand-in end to end"
scripts/ci-cupti.sh
echo "== rocprofiler-sdk tool library: build, ABI layout, stand-in end to end"
scripts/test-rocprof.sh
