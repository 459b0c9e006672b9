package tracefile

import (
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// Kernel rows with a NULL start or end are skipped and counted in a
// warning (they became kernels at ts 0).
func TestNsysSQLiteNullTimesSkipped(t *testing.T) {
	db, p := newDB(t, "nulls.sqlite")
	execAll(t, db,
		`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO StringIds VALUES (1,'k')`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
			streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500,600,0,1,7,10,NULL,1,1),(NULL,700,0,1,7,11,NULL,1,1),(800,NULL,0,1,7,12,NULL,1,1),(900,950,0,1,7,13,NULL,1,1)`,
	)
	db.Close()
	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ns int64
	for _, e := range tr.Events {
		if e.Kind == tracer.KindKernel {
			n++
			ns += e.Dur
			if e.Start == 0 {
				t.Errorf("a kernel at ts 0 came back: %+v", e)
			}
		}
	}
	if n != 2 || ns != 150 {
		t.Errorf("%d kernels, %d ns; want the 2 whole rows, 100+50 ns", n, ns)
	}
	if !strings.Contains(strings.Join(tr.Warnings, "\n"), "2 kernel/memcpy/memset rows have a NULL start or end; skipped") {
		t.Errorf("warnings %q", tr.Warnings)
	}
}
