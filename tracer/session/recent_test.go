package session

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestRecentDrops checks the window's two bounds across chunk edges: by
// age (events starting before the newest end minus RecentNs leave) and by
// count (the oldest beyond RecentMaxEvents leave), counted by hand.
func TestRecentDrops(t *testing.T) {
	var w recent
	// Events i = 0…n-1 start at 10·i ns and last 5 ns, added in batches
	// of 1000: the newest end after all is 10·(n-1)+5.
	const n = 3*chunkN + 777
	o := &Options{RecentNs: 20_000, RecentMaxEvents: 1 << 20}
	add := func(o *Options) {
		var batch []tracer.Event
		for i := range n {
			batch = append(batch, tracer.Event{Kind: tracer.KindKernel, Start: int64(10 * i), Dur: 5})
			if len(batch) == 1000 || i == n-1 {
				w.addGPU(batch, o)
				batch = batch[:0]
			}
		}
	}
	add(o)
	// Kept: Start >= 10·(n-1)+5-20000, i.e. i >= n-1-1999.5 → the last 2000.
	if got := w.gpu.len(); got != 2000 {
		t.Fatalf("by age: %d kept, want 2000", got)
	}
	if got, want := w.gpu.front().Start, int64(10*(n-2000)); got != want {
		t.Fatalf("by age: front starts at %d, want %d", got, want)
	}
	w.forget()
	o = &Options{RecentNs: 1 << 62, RecentMaxEvents: chunkN + 5}
	add(o)
	if got := w.gpu.len(); got != chunkN+5 {
		t.Fatalf("by count: %d kept, want %d", got, chunkN+5)
	}
	if got, want := w.gpu.front().Start, int64(10*(n-chunkN-5)); got != want {
		t.Fatalf("by count: front starts at %d, want %d", got, want)
	}
	var seen int
	w.gpu.each(func(evs []tracer.Event) {
		for i := range evs {
			if want := int64(10 * (n - chunkN - 5 + seen)); evs[i].Start != want {
				t.Fatalf("event %d starts at %d, want %d", seen, evs[i].Start, want)
			}
			seen++
		}
	})
	if seen != chunkN+5 {
		t.Fatalf("each saw %d events", seen)
	}
}
