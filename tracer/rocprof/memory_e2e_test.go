package rocprof_test

import "testing"

// TestMemoryAllocationRecords: the tool asks for MEMORY_ALLOCATION and
// relays its records as wire Memory frames. The stand-in host
// (FAKE_MEMORY=1) delivers 10 allocations of (i+1) MiB on agent A (GPU 1)
// at 0x7f0000000000 + i MiB, each freed 500 ns later with
// allocation_size 0 as the SDK writes frees: 20 events, each free
// carrying −(its allocation's size) (hand count).
func TestMemoryAllocationRecords(t *testing.T) {
	h := runHost(t, true, "FAKE_MEMORY=1")
	if h.summary["memory_records"] != "20" {
		t.Fatalf("host delivered %s memory records, want 20 (did the tool configure MEMORY_ALLOCATION?)", h.summary["memory_records"])
	}
	ms := h.recv.Memory
	if len(ms) != 20 {
		t.Fatalf("received %d memory events, want 20", len(ms))
	}
	for i, m := range ms {
		k := int64(i / 2)
		want := (k + 1) << 20
		if i%2 == 1 {
			want = -want
		}
		if m.Bytes != want || m.Addr != 0x7f0000000000+uint64(k)<<20 || m.Device != 1 || m.TID != 5001 || m.Allocated != -1 {
			t.Errorf("memory event %d: %+v, want %d bytes at %#x on device 1, thread 5001", i, m, want, 0x7f0000000000+uint64(k)<<20)
		}
	}
	if ms[1].TS-ms[0].TS != 500 {
		t.Errorf("free %d ns after its allocation, want 500", ms[1].TS-ms[0].TS)
	}
}
