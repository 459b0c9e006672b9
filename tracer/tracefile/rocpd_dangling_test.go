package tracefile

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestRocpdDanglingIDs: the fixture run (2 kernels, counted by hand in
// rocpdRun) plus four dispatches whose ids point at nothing:
//
//	id 10: kernel_id 99 (no symbol)      → kept as "<unnamed kernel>", 2000–2100
//	id 11: track 3, whose agent_id 77 is not an agent → kept, attn_fwd on device -1, 2200–2300
//	id 12: start_id 98 (no timestamp)    → dropped
//	id 13: end_id 97 (no timestamp)      → dropped
//
// Each choice is counted in one warning. Before, the first was kept with
// a warning per row, the second silently put on GPU 0, and the last two
// silently dropped by the inner join.
func TestRocpdDanglingIDs(t *testing.T) {
	const sfx = "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e"
	p := buildRocpdFixture(t, false, sfx)
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	tbl := func(n string) string { return "`" + n + "_" + sfx + "`" }
	execAll(t, db,
		`INSERT INTO `+tbl("rocpd_track")+` VALUES (3,'guid-a',1,4242,4243,77,1,3,NULL)`,
		`INSERT INTO `+tbl("rocpd_timestamp")+` (id, guid, value) VALUES (20,'guid-a',2000),(21,'guid-a',2100),(22,'guid-a',2200),(23,'guid-a',2300),(24,'guid-a',2400)`,
		`INSERT INTO `+tbl("rocpd_kernel_dispatch")+` (id, guid, track_id, kernel_id, dispatch_id, start_id, end_id, workgroup_size_x, grid_size_x) VALUES
			(10,'guid-a',2,99,10,20,21,256,1024),(11,'guid-a',3,1,11,22,23,256,1024),(12,'guid-a',2,1,12,98,24,256,1024),(13,'guid-a',2,2,13,24,97,256,1024)`)
	db.Close()

	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type k struct {
		name       string
		start, dur int64
		dev        int32
	}
	var got []k
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind == tracer.KindKernel {
			got = append(got, k{tr.Name(e), e.Start, e.Dur, e.Device})
		}
	}
	want := map[k]bool{
		{"attn_fwd", 400, 500, 0}: true, {"Cijk_Alik_Bljk_HHS_BH", 950, 200, 0}: true, // the fixture's two
		{"<unnamed kernel>", 2000, 100, 0}: true, {"attn_fwd", 2200, 100, -1}: true,
	}
	if len(got) != len(want) {
		t.Errorf("kernels %+v, want %d", got, len(want))
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected kernel %+v (want %v)", g, want)
		}
	}
	for _, w := range []string{
		`1 kernel dispatches name a kernel_id not in rocpd_info_kernel_symbol; kept, named "<unnamed kernel>"`,
		"1 kernel dispatches name an agent_id not in rocpd_info_agent; kept on device -1",
		"2 rocpd_kernel_dispatch rows have no start or end time",
	} {
		found := false
		for _, x := range tr.Warnings {
			found = found || strings.Contains(x, w)
		}
		if !found {
			t.Errorf("no warning %q in %q", w, tr.Warnings)
		}
	}
}
