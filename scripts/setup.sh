#!/usr/bin/env bash
# Installs what rlktop needs on a fresh Debian machine and builds it into bin/.
#   * Go modules (through the Go module proxy);
#   * the CUPTI headers from Debian non-free (libcupti-dev) when running as root
#     with apt, so that the CUPTI injection library can be built and embedded;
#     without them rlktop still builds and `rlktop run` says it has no CUPTI tracer.
# Idempotent: a second run only rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'setup: %s\n' "$*" >&2; }

command -v go >/dev/null || { log "Go is not installed (need Go 1.26: https://go.dev/dl)"; exit 1; }

go mod download

# The CUPTI tracer: headers + library (scripts/build-cupti.sh installs headers itself).
tags=""
if [ -x scripts/build-cupti.sh ]; then
  if scripts/build-cupti.sh >&2; then
    tags="embedcupti"
  else
    log "CUPTI injection library not built; rlktop will run without the CUPTI tracer"
  fi
fi

mkdir -p bin
# The revision for --version also where GOFLAGS=-buildvcs=false keeps Go
# from stamping it (this project's CI machines set that).
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
if [ -n "$rev" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  rev="$rev, modified"
fi
go build ${tags:+-tags "$tags"} -ldflags "-X 'main.revision=$rev'" -o bin/rlktop ./cmd/rlktop
log "built bin/rlktop${tags:+ (with $tags)}"

# The rocprofiler-sdk tool library (AMD): rlktop finds it next to its binary.
if command -v gcc >/dev/null && lib=$(scripts/build-rocprof.sh 2>/dev/null | tail -n 1) && [ -f "$lib" ]; then
  cp "$lib" bin/
  log "built bin/$(basename "$lib")"
else
  log "rocprofiler-sdk tool library not built (needs gcc); rlktop run on ROCm would run commands untraced"
fi
