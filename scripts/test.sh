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

echo "== go vet"
go vet ./...

echo "== build without cgo (cgo only in the tracer/telemetry bindings)"
CGO_ENABLED=0 go build ./...

echo "== go test"
go test -count=1 -timeout 12m ./... 2>&1 | tee /tmp/rlktop-test.log
echo "== CUPTI injection library: real headers, build, exported symbols, tagged tests, stand-in end to end"
scripts/ci-cupti.sh
echo "== rocprofiler-sdk tool library: build, ABI layout, stand-in end to end"
scripts/test-rocprof.sh
