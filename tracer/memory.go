package tracer

// MemEvent is one allocation or free as an allocator reported it: a Kineto
// `[memory]` instant event (torch.profiler profile_memory=True: args
// Bytes, Addr, Total Allocated, Total Reserved, Device Type, Device Id), a
// recording's memory frame, or a tracer's allocation record. Trace.Memory
// holds them in source order; they are not Events, so the event array and
// everything that walks it stay as they are for traces without them.
//
// A free carries the negative size of what it frees at the same address;
// attrib pairs them (memory.go).
type MemEvent struct {
	TS    int64  // ns, the trace's timebase
	Bytes int64  // > 0: allocated; < 0: freed; bytes
	Addr  uint64 // the block's address, as the allocator gave it
	// Allocated and Reserved are the allocator's totals on Device just
	// after this event (bytes): what tensors hold, and what the caching
	// allocator holds from the driver (0 for host memory, where torch
	// reports none). -1: the source gave none.
	Allocated int64
	Reserved  int64
	PID, TID  int32
	Device    int32 // GPU index; -1 for host (CPU) memory
}

// Host reports whether m is host (CPU) memory.
func (m *MemEvent) Host() bool { return m.Device < 0 }
