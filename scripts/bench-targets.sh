#!/usr/bin/env bash
# Runs rlktop's speed benchmarks and prints each figure next to its target,
# so a regression shows before it lands. Not part of CI's test run: it
# takes several minutes (the peers alone a few, HTA most). Quote the load
# (uptime, printed first and last); on a busy machine the CPU-time figures
# (cpu-ms, per cpu-s) move much less than the wall-clock ones.
#
#   scripts/bench-targets.sh [frame] [parse] [peers] [ingest] [agent]
#
# With no argument all run. Environment:
#   SRC      the trace replicated for the parse and peer runs
#            (default ../shared/traces/kineto/hta_diff_control_a100.json.gz)
#   COPIES   copies of SRC (default 10: 281 MB)
#   HTA_DIR  a folder holding HTA's hta/ package (from its source, e.g.
#            git archive HEAD hta | tar -x -C DIR); the HTA peer runs when set
#            (Debian's python3-pandas python3-plotly python3-networkx
#            python3-pydot python3-psutil on /usr/bin/python3)
#   RLKTOP_DUCKDB_DIR  DuckDB's Node client (scripts/setup-duckdb.sh); the
#            DuckDB peer runs when set
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${*:-frame parse peers ingest agent}
SRC=${SRC:-../shared/traces/kineto/hta_diff_control_a100.json.gz}
COPIES=${COPIES:-10}
TMP=${TMPDIR:-/tmp}/rlktop-bench-targets
mkdir -p "$TMP"
want() { [[ " $WHAT " == *" $1 "* ]]; }
# verdict FIGURE TARGET OP: "meets" when FIGURE OP TARGET (OP <= or >=).
verdict() { awk -v f="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? f <= t : f >= t; print (ok ? "meets" : "MISSES") }'; }
row() { printf '%-52s %12s   target %s %-8s %s\n' "$1" "$2" "$4" "$3" "$(verdict "$2" "$3" "$4")"; }
# timed CMD...: runs CMD under /usr/bin/time, sets WALL (s), CPU (s), RSS (MiB).
timed() {
	/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$@" > "$TMP/out" 2> "$TMP/err"
	read -r WALL U S K < "$TMP/time"
	CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { print u + s }')
	RSS=$(awk -v k="$K" 'BEGIN { printf "%.1f", k / 1024 }')
}
echo "load: $(uptime)"

if want frame; then
	# BenchmarkFrame: a new snapshot to every view and a frame, 200x50.
	go test ./tui -run XXX -bench 'BenchmarkFrame/' -benchtime 20x -count 1 > "$TMP/frame.txt"
	while read -r name _ ns _ cpu _; do
		n=${name#BenchmarkFrame/}
		n=${n%-*}
		case $n in
		*/2k) target=2 ;;
		*/100k) target=16 ;;
		*) target=1e9 ;;
		esac
		[ "$target" = 1e9 ] && continue
		row "frame $n cpu-ms (snapshot + render)" "$cpu" "$target" "<="
		row "frame $n wall-ms" "$(awk -v n="$ns" 'BEGIN { printf "%.2f", n / 1e6 }')" "$target" "<="
	done < <(grep '^BenchmarkFrame/' "$TMP/frame.txt")
fi

OUT=$TMP/a100x$COPIES.json
if want parse || want peers; then
	[ -s "$OUT" ] || go run ./scripts/kinetorepl -copies "$COPIES" "$SRC" "$OUT" >&2
	SIZE=$(stat -c %s "$OUT")
	go build -o "$TMP/rlktop" ./cmd/rlktop
	go build -o "$TMP/importbench" ./scripts/importbench
fi

if want parse; then
	best=0
	for _ in 1 2 3; do
		timed env GOMAXPROCS=2 "$TMP/importbench" "$OUT"
		mbs=$(awk -v s="$SIZE" -v w="$WALL" 'BEGIN { printf "%.0f", s / 1e6 / w }')
		best=$(awk -v a="$best" -v b="$mbs" 'BEGIN { print (b > a) ? b : a }')
	done
	row "parse ${SIZE} B, 2 cores: MB/s (best of 3, wall)" "$best" 1000 ">="
	row "  same: MB per cpu-s (last run)" "$(awk -v s="$SIZE" -v c="$CPU" 'BEGIN { printf "%.0f", s / 1e6 / c }')" 500 ">="
	timed env GOMAXPROCS=2 "$TMP/rlktop" report "$OUT" --format json
	row "report (streamed windows): peak RSS MiB" "$RSS" 100 "<="
	REPORT_WALL=$WALL
fi

if want peers; then
	[ -n "${REPORT_WALL:-}" ] || { timed "$TMP/rlktop" report "$OUT" --format json; REPORT_WALL=$WALL; }
	if [ -n "${HTA_DIR:-}" ]; then
		mkdir -p "$TMP/hta-trace"
		ln -sf "$OUT" "$TMP/hta-trace/rank-0.json"
		cat > "$TMP/hta_kernels.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[2], include_last_profiler_step=True)
kt, km = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**6, duration_ratio=1.0, include_memory_kernels=True)
print(len(km), km["sum (us)"].sum())
PY
		timed /usr/bin/python3 "$TMP/hta_kernels.py" "$HTA_DIR" "$TMP/hta-trace"
		row "HTA kernel breakdown / rlktop report (wall)" "$(awk -v a="$WALL" -v b="$REPORT_WALL" 'BEGIN { printf "%.0f", a / b }')" 100 ">="
	fi
	if [ -n "${RLKTOP_DUCKDB_DIR:-}" ]; then
		timed node scripts/duckdb-query.js "SELECT e.name AS name, count(*) AS n, sum(e.dur) AS us FROM (SELECT unnest(traceEvents) AS e FROM read_json('$OUT', maximum_object_size=1000000000)) WHERE e.cat = 'kernel' GROUP BY 1"
		row "DuckDB read_json+unnest+sum / rlktop report (wall)" "$(awk -v a="$WALL" -v b="$REPORT_WALL" 'BEGIN { printf "%.0f", a / b }')" 30 ">="
	fi
fi

if want ingest; then
	go test ./tracer/session -run XXX -bench 'BenchmarkIngest$' -benchtime 3x -count 1 > "$TMP/ingest.txt"
	v=$(awk '/^BenchmarkIngest/ { for (i = 1; i < NF; i++) if ($(i+1) == "events/cpu-s") print $i }' "$TMP/ingest.txt" | tail -1)
	row "session ingest with linking: events per cpu-s" "${v:-0}" 10000000 ">="
fi

if want agent; then
	go run ./scripts/pyagentfiles "$TMP/agent"
	/usr/bin/python3 scripts/pyagent_sendbench.py "$TMP/agent" > "$TMP/agent.json"
	echo "python agent sender (no target; stated): $(cat "$TMP/agent.json")"
fi
echo "load: $(uptime)"
