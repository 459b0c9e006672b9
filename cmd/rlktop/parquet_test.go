package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// needDuckDB returns the folder scripts/setup-duckdb.sh installed DuckDB's
// Node.js client into (RLKTOP_DUCKDB_DIR, else its default). It skips the
// test, saying how to install it, when node or the package is missing;
// with RLKTOP_REQUIRE_DUCKDB=1 (scripts/test.sh, CI) that is a failure.
func needDuckDB(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RLKTOP_DUCKDB_DIR")
	if dir == "" {
		dir = "/var/cache/rlktop/duckdb-npm"
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH (apt-get install nodejs npm)"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		missing = fmt.Sprintf("DuckDB's Node.js client is not in %s (run scripts/setup-duckdb.sh)", dir)
	}
	if missing != "" {
		if os.Getenv("RLKTOP_REQUIRE_DUCKDB") == "1" {
			t.Fatalf("RLKTOP_REQUIRE_DUCKDB=1 but %s", missing)
		}
		t.Skipf("no independent Parquet reader: %s", missing)
	}
	return dir
}

// duckQuery runs SQL queries with DuckDB (scripts/duckdb-query.js) and
// returns each one's rows.
func duckQuery(t *testing.T, dir string, queries ...string) [][]map[string]any {
	t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join(testutil.RepoRoot(t), "scripts", "duckdb-query.js")}, queries...)...)
	cmd.Env = append(os.Environ(), "RLKTOP_DUCKDB_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("duckdb: %v\n%s", err, stderr)
	}
	var res [][]map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var rows []map[string]any
		if err := dec.Decode(&rows); err != nil {
			t.Fatalf("duckdb output: %v\n%s", err, out)
		}
		res = append(res, rows)
	}
	if len(res) != len(queries) {
		t.Fatalf("duckdb answered %d of %d queries:\n%s", len(res), len(queries), out)
	}
	return res
}

// num reads a DuckDB JSON value (BIGINT as a decimal string, INTEGER as a
// number) as int64.
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			t.Fatalf("duckdb value %q: %v", x, err)
		}
		return n
	case float64:
		return int64(x)
	}
	t.Fatalf("duckdb value %v (%T) is not a number", v, v)
	return 0
}

// TestExportParquetReadByDuckDB: two real
// Kineto traces (an A100 rank 3 of 8 and a sampled rank 0) exported
// together as Parquet and read back by DuckDB, an engine that shares no
// code with the Go writer, give per source and category the same op count
// and summed dur_ns as `rlktop report --format json` of that file alone,
// the same rank, and the same steps (number, start, duration, GPU ns and
// ops), and each source's rows name its file.
func TestExportParquetReadByDuckDB(t *testing.T) {
	duck := needDuckDB(t)
	bin := needRecordBin(t)
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	files := []string{filepath.Join(dir, "hta_diff_control_a100.json.gz"), filepath.Join(dir, "hta_sampled_rank0.json.gz")}
	out := filepath.Join(t.TempDir(), "ops.parquet")
	if b, err := exec.Command(bin, append([]string{"export", "--format", "parquet", "-o", out}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("rlktop export --format parquet: %v\n%s", err, b)
	}
	steps := filepath.Join(filepath.Dir(out), "ops.steps.parquet")
	res := duckQuery(t, duck,
		fmt.Sprintf("SELECT source, category, count(*) AS n, sum(dur_ns) AS ns FROM '%s' GROUP BY ALL ORDER BY ALL", out),
		fmt.Sprintf("SELECT source, file, min(rank) AS lo, max(rank) AS hi, count(*) AS n, count(*) FILTER (WHERE end_ns - start_ns <> dur_ns) AS bad FROM '%s' GROUP BY ALL ORDER BY ALL", out),
		fmt.Sprintf("SELECT source, file, rank, step, start_ns, dur_ns, end_ns, gpu_ns, gpu_ops FROM '%s' ORDER BY source, start_ns", steps))
	type cat struct{ n, ns int64 }
	gotCats := map[int64]map[string]cat{}
	for _, r := range res[0] {
		s := num(t, r["source"])
		if gotCats[s] == nil {
			gotCats[s] = map[string]cat{}
		}
		gotCats[s][r["category"].(string)] = cat{num(t, r["n"]), num(t, r["ns"])}
	}
	for i, f := range files {
		b, err := exec.Command(bin, "report", f, "--format", "json", "--top", "0").Output()
		if err != nil {
			t.Fatalf("rlktop report %s: %v", f, err)
		}
		var doc struct {
			Rank       int
			Categories []struct {
				Category string
				Count    int64
				TotalNs  int64 `json:"total_ns"`
			}
			Steps []struct {
				Step    int64
				StartNs int64 `json:"start_ns"`
				DurNs   int64 `json:"dur_ns"`
				GPUNs   int64 `json:"gpu_ns"`
				GPUOps  int64 `json:"gpu_ops"`
			}
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string]cat{}
		var ops int64
		for _, c := range doc.Categories {
			want[c.Category] = cat{c.Count, c.TotalNs}
			ops += c.Count
		}
		if fmt.Sprint(gotCats[int64(i)]) != fmt.Sprint(want) {
			t.Errorf("%s: DuckDB per category (count, ns) %v\nreport %v", filepath.Base(f), gotCats[int64(i)], want)
		}
		found := false
		for _, r := range res[1] {
			if num(t, r["source"]) != int64(i) {
				continue
			}
			found = true
			if r["file"] != f {
				t.Errorf("source %d: file column %v, want %s (one value per source)", i, r["file"], f)
			}
			if lo, hi := num(t, r["lo"]), num(t, r["hi"]); lo != int64(doc.Rank) || hi != int64(doc.Rank) {
				t.Errorf("%s: rank column %d..%d, report says rank %d", filepath.Base(f), lo, hi, doc.Rank)
			}
			if n := num(t, r["n"]); n != ops {
				t.Errorf("%s: %d op rows, report counts %d GPU ops over its categories", filepath.Base(f), n, ops)
			}
			if bad := num(t, r["bad"]); bad != 0 {
				t.Errorf("%s: %d rows with end_ns - start_ns != dur_ns", filepath.Base(f), bad)
			}
		}
		if !found || len(doc.Steps) == 0 {
			t.Errorf("%s: no rows in the export (found %v) or no steps in the report (%d)", filepath.Base(f), found, len(doc.Steps))
		}
		var gotSteps, wantSteps []string
		for _, r := range res[2] {
			if num(t, r["source"]) == int64(i) {
				gotSteps = append(gotSteps, fmt.Sprint(num(t, r["step"]), num(t, r["start_ns"]), num(t, r["dur_ns"]), num(t, r["gpu_ns"]), num(t, r["gpu_ops"])))
				if num(t, r["end_ns"]) != num(t, r["start_ns"])+num(t, r["dur_ns"]) || num(t, r["rank"]) != int64(doc.Rank) || r["file"] != f {
					t.Errorf("%s: step row %v: end_ns, rank or file wrong", filepath.Base(f), r)
				}
			}
		}
		for _, s := range doc.Steps {
			wantSteps = append(wantSteps, fmt.Sprint(s.Step, s.StartNs, s.DurNs, s.GPUNs, s.GPUOps))
		}
		if fmt.Sprint(gotSteps) != fmt.Sprint(wantSteps) {
			t.Errorf("%s: DuckDB steps\n%v\nreport steps\n%v", filepath.Base(f), gotSteps, wantSteps)
		}
	}
}
