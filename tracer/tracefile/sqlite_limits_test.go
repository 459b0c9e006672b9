package tracefile

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
)

// openWithin runs Open in a goroutine and fails the test if it has not
// returned after limit (a hang is the defect under test).
func openWithin(t *testing.T, p string, limit time.Duration) (*tracer.Trace, error) {
	t.Helper()
	type res struct {
		tr  *tracer.Trace
		err error
	}
	c := make(chan res, 1)
	go func() { tr, err := Open(p, Options{}); c <- res{tr, err} }()
	select {
	case r := <-c:
		return r.tr, r.err
	case <-time.After(limit):
		t.Fatalf("Open(%s) still running after %s", p, limit)
		return nil, nil
	}
}

// TestSQLiteRecursiveViewNotRun: a rocpd database whose bare-name view
// rocpd_kernel_dispatch — the one rocprofv3 writes as SELECT * FROM the
// run's table — is instead a recursive CTE that never ends. rlktop must
// not run it: it reads the run's suffixed tables (the fixture's hand
// counts, checkRocpdRun) and warns that it left the view out.
func TestSQLiteRecursiveViewNotRun(t *testing.T) {
	const sfx = "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e"
	p := buildRocpdFixture(t, false, sfx)
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, db, // The table's columns, so that the reader would query it, joined
		// with an endless count that no row passes.
		"CREATE VIEW `rocpd_kernel_dispatch` AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "+
			"SELECT k.* FROM c, `rocpd_kernel_dispatch_"+sfx+"` k WHERE c.x < 0",
		"CREATE VIEW `rocpd_string` AS SELECT * FROM `rocpd_string_"+sfx+"`") // a plain one: kept
	db.Close()
	tr, err := openWithin(t, p, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkRocpdRun(t, tr, 1)
	var warned, plainWarned bool
	for _, w := range tr.Warnings {
		warned = warned || strings.Contains(w, `view "rocpd_kernel_dispatch" is not a plain SELECT *`)
		plainWarned = plainWarned || strings.Contains(w, `"rocpd_string"`)
	}
	if !warned || plainWarned {
		t.Errorf("warnings %q: want one for rocpd_kernel_dispatch only", tr.Warnings)
	}
}

// TestSQLiteTimeLimit: with RLKTOP_SQLITE_TIMEOUT at 1ns every query is
// past its deadline: the import fails with an error that names the limit
// and the variable, instead of running on.
func TestSQLiteTimeLimit(t *testing.T) {
	p := buildRocpdFixture(t, true, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e")
	t.Setenv(SQLiteTimeoutEnv, "1ns")
	_, err := openWithin(t, p, 60*time.Second)
	var fe *Error
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "RLKTOP_SQLITE_TIMEOUT=1ns") || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want an *Error naming the 1ns limit", err)
	}
	t.Setenv(SQLiteTimeoutEnv, "1m")
	if _, err := openWithin(t, p, 60*time.Second); err != nil {
		t.Fatalf("with 1m: %v", err)
	}
}

// TestPlainView checks the view filter on the shapes rocprofv3 writes and
// on ones it does not.
func TestPlainView(t *testing.T) {
	types := map[string]string{"t_1": "table", "t_2": "table", "v": "view"}
	for def, want := range map[string]bool{
		"CREATE VIEW `a` AS SELECT * FROM `t_1`":                                  true,
		"CREATE VIEW \"a\" AS SELECT * FROM t_1 UNION ALL SELECT * FROM [t_2]":    true,
		"CREATE VIEW a AS SELECT * FROM v":                                        false, // a view over a view
		"CREATE VIEW a AS SELECT * FROM t_3":                                      false, // no such table
		"CREATE VIEW a AS SELECT id FROM t_1":                                     false,
		"CREATE VIEW a AS SELECT * FROM t_1 JOIN t_2":                             false,
		"CREATE VIEW a AS WITH RECURSIVE c(x) AS (SELECT 1) SELECT * FROM t_1":    false,
		"CREATE VIEW a AS SELECT * FROM t_1 WHERE (SELECT count(*) FROM t_2) > 0": false,
	} {
		if got := plainView(def, types); got != want {
			t.Errorf("plainView(%q) = %v, want %v", def, got, want)
		}
	}
}
