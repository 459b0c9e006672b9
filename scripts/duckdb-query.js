// Runs SQL queries with DuckDB (npm @duckdb/node-api, installed by
// scripts/setup-duckdb.sh into RLKTOP_DUCKDB_DIR) and prints each result as
// one line of JSON: an array of row objects, numbers of BIGINT columns as
// decimal strings (DuckDB's JSON conversion; they can exceed 2^53).
//
//   RLKTOP_DUCKDB_DIR=DIR node scripts/duckdb-query.js "SELECT ..." ...
const { createRequire } = require("module");
const dir = process.env.RLKTOP_DUCKDB_DIR;
if (!dir) {
  console.error("duckdb-query: set RLKTOP_DUCKDB_DIR (scripts/setup-duckdb.sh prints it)");
  process.exit(2);
}
const { DuckDBInstance } = createRequire(dir + "/package.json")("@duckdb/node-api");
(async () => {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  for (const q of process.argv.slice(2)) {
    const r = await conn.runAndReadAll(q);
    console.log(JSON.stringify(r.getRowObjectsJson()));
  }
})().catch((e) => {
  console.error("duckdb-query:", e.message);
  process.exit(1);
});
