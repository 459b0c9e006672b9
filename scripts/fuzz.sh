#!/usr/bin/env bash
# Runs every fuzz target of the project for FUZZTIME each (default 30s).
# -fuzzminimizetime is bounded (FUZZMINTIME, default 100x: at most 100
# runs per new corpus entry): without it the budget of targets whose
# inputs are large goes to minimizing new corpus entries (four
# targets barely ran under -fuzztime 60s). A time bound is not enough for
# the SQLite target: under FUZZMINTIME=5s it ran 8 inputs in 20 s (each new
# one minimized for the whole 5 s), under 100x 3,465.
#   scripts/fuzz.sh                 all targets
#   scripts/fuzz.sh ./tracer/wire   the targets of one package
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
mintime=${FUZZMINTIME:-100x}
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
fi
for p in "${pkgs[@]}"; do
  for f in $(go test -list '^Fuzz' "$p" | grep '^Fuzz' || true); do
    echo "== $p $f ($fuzztime, minimize $mintime)"
    go test "$p" -run '^$' -fuzz "^$f\$" -fuzztime "$fuzztime" -fuzzminimizetime "$mintime"
  done
done
