#!/usr/bin/env bash
# Installs DuckDB's Node.js client (npm package @duckdb/node-api, pinned) into a
# cache folder, once, and prints that folder. The Parquet export test
# (cmd/rlktop parquet_test.go) reads `rlktop export --format parquet` files back
# with it: an engine independent of the Go Parquet library that wrote them.
#
#   RLKTOP_DUCKDB_DIR=$(scripts/setup-duckdb.sh)
#
# Needs node and npm (Debian: apt-get install nodejs npm). About 70 MB, ~20 s
# the first time; later calls only check the folder.
set -euo pipefail
DIR=${RLKTOP_DUCKDB_DIR:-/var/cache/rlktop/duckdb-npm}
VERSION=1.5.6-r.1
if [ -f "$DIR/node_modules/@duckdb/node-api/package.json" ] &&
	grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/@duckdb/node-api/package.json"; then
	echo "$DIR"
	exit 0
fi
command -v npm >/dev/null || { echo "setup-duckdb: npm not found (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$DIR"
cd "$DIR"
[ -f package.json ] || echo '{"name":"rlktop-duckdb-reader","private":true}' > package.json
npm install --no-audit --no-fund --silent "@duckdb/node-api@$VERSION" >&2
echo "$DIR"
