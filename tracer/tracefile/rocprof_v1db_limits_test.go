package tracefile

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRocprofV1DBTimeLimit: rocprof v1's results.db reader runs its
// queries (count(*) and the row scans) under the same per-import deadline
// as the nsys and rocpd readers. A KERN table of 200,000 kernels in
// reverse time order: with RLKTOP_SQLITE_TIMEOUT=1ns the import stops
// with an error naming the limit, and with 10m it reads every row. (10 ms
// was tried first: a quiet CI machine read the file within it.)
func TestRocprofV1DBTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200,000-row database")
	}
	db, p := newDB(t, "results.db")
	execAll(t, db,
		`CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT, "gpu-id" INTEGER, "queue-id" INTEGER, "pid" INTEGER, "tid" INTEGER, "BeginNs" INTEGER, "EndNs" INTEGER, "DurationNs" INTEGER)`,
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 200000)
		 INSERT INTO KERN SELECT x, '"k"', 0, 0, 1, 1, 2000000000 - 10*x, 2000000000 - 10*x + 5, 5 FROM c`)
	db.Close()
	t.Setenv(SQLiteTimeoutEnv, "1ns")
	_, err := openWithin(t, p, 60*time.Second)
	var fe *Error
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "RLKTOP_SQLITE_TIMEOUT=1ns") || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want an *Error naming the 1ns limit", err)
	}
	t.Setenv(SQLiteTimeoutEnv, "10m")
	tr, err := openWithin(t, p, 120*time.Second)
	if err != nil {
		t.Fatalf("with 10m: %v", err)
	}
	if tr.Format != "rocprof-v1-sqlite" || len(tr.Events) != 200000 {
		t.Fatalf("format %s, %d events; want rocprof-v1-sqlite, 200000", tr.Format, len(tr.Events))
	}
}
