package tracer

import "testing"

// TestLaunchIDs: ids put in increasing order (across chunk boundaries)
// and out of order (the map) are all found with their contexts; ids never
// put are not, below, between and above them.
func TestLaunchIDs(t *testing.T) {
	var m launchIDs
	want := map[uint64]CtxID{}
	for i := uint64(0); i < 3*launchChunk+5; i++ {
		id := 10 + 3*i // 10, 13, 16, …
		m.put(id, CtxID(i%7))
		want[id] = CtxID(i % 7)
	}
	for _, id := range []uint64{11, 14, 200} { // back in time: the map
		m.put(id, 99)
		want[id] = 99
	}
	for id := uint64(0); id < 10+3*(3*launchChunk+6); id++ {
		ctx, ok := m.get(id)
		w, in := want[id]
		if ok != in || ctx != w {
			t.Fatalf("id %d: got %d, %v; want %d, %v", id, ctx, ok, w, in)
		}
	}
	m.reset()
	if _, ok := m.get(10); ok {
		t.Error("found after reset")
	}
}
