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

// TestRocpdDanglingEventAndCategoryIDs: the fixture run plus rows whose
// event_id is not in rocpd_event, or whose event's category_id is not in
// rocpd_string (the released schema's category table):
//
//	dispatch 14, event_id 99        → kept, attn_fwd 3000–3100, no correlation id
//	memory copy 2, event_id 98      → kept, 3200–3300, 64 bytes, no correlation id
//	region 4, event_id 97           → kept as an API call (roctxRangePushA 3400–3500)
//	region 5, event 8 (category 77) → kept as an API call (hipLaunchKernel 3600–3700)
//	sample 2, event_id 96           → dropped
//	sample 3, event 8 (category 77) → dropped
//
// Each kind is counted in one warning (1 each). Before, all of it was
// silent.
func TestRocpdDanglingEventAndCategoryIDs(t *testing.T) {
	const sfx = "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e"
	p := buildRocpdFixture(t, false, sfx)
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	tbl := func(n string) string { return "`" + n + "_" + sfx + "`" }
	execAll(t, db,
		`INSERT INTO `+tbl("rocpd_timestamp")+` (id, guid, value) VALUES (30,'guid-a',3000),(31,'guid-a',3100),(32,'guid-a',3200),(33,'guid-a',3300),
			(34,'guid-a',3400),(35,'guid-a',3500),(36,'guid-a',3600),(37,'guid-a',3700),(38,'guid-a',3800)`,
		`INSERT INTO `+tbl("rocpd_event")+` (id, guid, category_id, correlation_id, extdata) VALUES (8,'guid-a',77,0,'{}')`,
		`INSERT INTO `+tbl("rocpd_kernel_dispatch")+` (id, guid, track_id, kernel_id, dispatch_id, start_id, end_id, workgroup_size_x, grid_size_x, event_id) VALUES
			(14,'guid-a',2,1,14,30,31,256,1024,99)`,
		`INSERT INTO `+tbl("rocpd_memory_copy")+` (id, guid, track_id, start_id, end_id, name_id, dst_agent_id, src_agent_id, size, event_id) VALUES
			(2,'guid-a',2,32,33,3,2,1,64,98)`,
		`INSERT INTO `+tbl("rocpd_region")+` (id, guid, track_id, name_id, start_id, end_id, event_id) VALUES (4,'guid-a',1,2,34,35,97),(5,'guid-a',1,1,36,37,8)`,
		`INSERT INTO `+tbl("rocpd_sample")+` (id, guid, track_id, name_id, timestamp_id, event_id) VALUES (2,'guid-a',1,15,38,96),(3,'guid-a',1,15,38,8)`)
	db.Close()

	tr, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		kind       tracer.Kind
		name       string
		start, dur int64
		corr       uint64
	}
	got := map[ev]int{}
	for i := range tr.Events {
		e := &tr.Events[i]
		got[ev{e.Kind, tr.Name(e), e.Start, e.Dur, e.Corr}]++
	}
	for _, w := range []ev{
		{tracer.KindKernel, "attn_fwd", 3000, 100, 0},
		{tracer.KindMemcpy, "MEMORY_COPY_HOST_TO_DEVICE", 3200, 100, 0},
		{tracer.KindRuntime, "roctxRangePushA", 3400, 100, 0},
		{tracer.KindRuntime, "hipLaunchKernel", 3600, 100, 0},
	} {
		if got[w] != 1 {
			t.Errorf("want one %+v; events %+v", w, got)
		}
	}
	var instants, kernels int
	for i := range tr.Events {
		switch tr.Events[i].Kind {
		case tracer.KindInstant:
			instants++
		case tracer.KindKernel:
			kernels++
		}
	}
	if instants != 1 || kernels != 3 {
		t.Errorf("%d instants, %d kernels; want the fixture's 1 and 2+1", instants, kernels)
	}
	for _, w := range []string{
		"1 kernel dispatches name an event_id not in rocpd_event; kept with no correlation id",
		"1 memory copies name an event_id not in rocpd_event; kept with no correlation id",
		"1 rocpd_region rows name an event_id not in rocpd_event; kept as API calls",
		"1 rocpd_region rows have an event whose category_id is not in rocpd_string; kept as API calls",
		"1 rocpd_sample rows name an event_id not in rocpd_event",
		"1 rocpd_sample rows have an event whose category_id is not in rocpd_string",
	} {
		found := false
		for _, x := range tr.Warnings {
			found = found || (strings.Contains(x, w) && strings.HasPrefix(x, p+": "))
		}
		if !found {
			t.Errorf("no warning %q (naming the file) in %q", w, tr.Warnings)
		}
	}
}
