package cupti_test

import "testing"

// TestInjectionMemoryRecords: the library enables MEMORY2 and relays its
// records as wire Memory frames. The stand-in (FAKE_MEMORY=1) allocates
// (step+1) MiB at 0x7f0000000000 + step MiB at the start of each round's
// "forward" and releases it at its end: 10 rounds give 10 allocations
// and 10 releases with those sizes and addresses (hand count), each
// release after its allocation, on device 0, in the host's process.
func TestInjectionMemoryRecords(t *testing.T) {
	h := runHost(t, readAll, 0, "HOST_ROUNDS=10", "HOST_KERNELS=2", "FAKE_MEMORY=1")
	if n := num(t, h.summary, "memory_records"); n != 20 {
		t.Fatalf("stand-in placed %d memory records, want 20", n)
	}
	ms := h.recv.Memory
	if len(ms) != 20 {
		t.Fatalf("received %d memory events, want 20: %+v", len(ms), ms)
	}
	alloc := map[uint64]int64{}
	at := map[uint64]int64{}
	for _, m := range ms {
		if m.Device != 0 || int64(m.PID) != h.recv.Hello.PID || m.Allocated != -1 {
			t.Errorf("memory event %+v: want device 0, pid %d, totals unknown", m, h.recv.Hello.PID)
		}
		step := (m.Addr - 0x7f0000000000) >> 20
		want := int64(step+1) << 20
		switch {
		case m.Bytes == want:
			alloc[m.Addr]++
			at[m.Addr] = m.TS
		case m.Bytes == -want:
			alloc[m.Addr]--
			if ts, ok := at[m.Addr]; !ok || m.TS < ts {
				t.Errorf("release of %#x at %d before its allocation (%d, seen %v)", m.Addr, m.TS, ts, ok)
			}
		default:
			t.Errorf("memory event %+v: want ±%d bytes", m, want)
		}
	}
	if len(at) != 10 {
		t.Errorf("%d addresses allocated, want 10", len(at))
	}
	for a, n := range alloc {
		if n != 0 {
			t.Errorf("address %#x: allocations minus releases %d", a, n)
		}
	}
}
