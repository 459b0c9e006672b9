package tracer

import (
	"math/rand/v2"
	"testing"
)

// TestLaunchIDs: ids put in increasing order, then in random order (runs
// merged several times, the recent map flushed part way; runs kept in
// memory, then moved to disk from 2*launchRecent ids) are all found with
// their contexts; ids never put are not, below, between and above them;
// nothing is found after reset.
func TestLaunchIDs(t *testing.T) {
	for _, diskMin := range []int{0, 2 * launchRecent} {
		testLaunchIDs(t, diskMin)
	}
}

// testLaunchIDs is TestLaunchIDs with runs of diskMin ids going to disk
// (0: launchDiskMin, none here).
func testLaunchIDs(t *testing.T, diskMin int) {
	disk := diskMin > 0
	m := launchIDs{diskMin: diskMin}
	want := map[uint64]ctxKey{}
	const n = 5*launchRecent + 77
	for i := uint64(0); i < n; i++ {
		id := 10 + 3*i // 10, 13, 16, …
		m.put(id, ctxKey{int32(i % 7), int64(i) << 33})
		want[id] = ctxKey{int32(i % 7), int64(i) << 33}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range r.Perm(3 * launchRecent) {
		id := 10 + 3*n + 2*uint64(k) // above, in random order
		m.put(id, ctxKey{int32(k%5 + 1), -int64(k)})
		want[id] = ctxKey{int32(k%5 + 1), -int64(k)}
	}
	if disk && len(m.disk) < 2 || !disk && (len(m.disk) > 0 || len(m.runs) == 0 || len(m.runs[0].ids) <= launchRecent) || len(m.recent) == 0 {
		t.Fatalf("%d runs, %d on disk, %d recent: the merge (or disk) path is not exercised", len(m.runs), len(m.disk), len(m.recent))
	}
	for id := uint64(0); id < 10+3*n+2*3*launchRecent+5; id++ {
		ctx, ok := m.get(id)
		w, in := want[id]
		if ok != in || ctx != w {
			t.Fatalf("id %d: got %v, %v; want %v, %v", id, ctx, ok, w, in)
		}
	}
	m.reset()
	if _, ok := m.get(10); ok {
		t.Error("found after reset")
	}
}
