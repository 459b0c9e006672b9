package rocprof

import "github.com/rlktop/rlktop/tracer"

// TagMemory entries carry the SDK's memory allocation record
// (ROCPROFILER_BUFFER_TRACING_MEMORY_ALLOCATION, rocprofiler-sdk 0.6.0 and
// later: hsa_amd_memory_pool_allocate / free and the vmem calls, i.e. what
// HIP's and PyTorch's caching allocators reserve).
const TagMemory = 7

// rocprofiler_buffer_tracing_memory_allocation_record_t: size, kind,
// operation, correlation id (16 bytes), thread, start, end, agent,
// address, allocation size: 80 bytes, the memory copy record's shape.
// Pinned to rocprofiler-sdk 0.6.0's buffer_tracing.h; a free's
// allocation_size is 0 there (the SDK pairs frees with allocations by
// address), so the decoder takes the size from the allocation it saw.
const (
	MemOffOperation = 12
	MemOffCorr      = 16
	MemOffThreadID  = 32
	MemOffStart     = 40
	MemOffAgent     = 56
	MemOffAddress   = 64
	MemOffSize      = 72
	MemMin          = 80
)

// rocprofiler_memory_allocation_operation_t.
const (
	memAllocate     = 1
	memVMemAllocate = 2
	memFree         = 3
	memVMemFree     = 4
)

// memSizesKept bounds the address → size map of live allocations.
const memSizesKept = 1 << 16

// memory decodes a memory allocation record into the batch's Memory: an
// allocation +size, a free −(the size allocated at that address; 0 when
// the allocation was not seen), at the start time, on the agent's GPU
// index; totals unknown (-1).
func (d *Decoder) memory(p []byte) {
	if !d.recordOK(p, MemMin) {
		return
	}
	addr, size := u64(p, MemOffAddress), int64(u64(p, MemOffSize))
	switch u32(p, MemOffOperation) {
	case memAllocate, memVMemAllocate:
		if d.sizes == nil || len(d.sizes) >= memSizesKept {
			d.sizes = map[uint64]int64{}
		}
		d.sizes[addr] = size
	case memFree, memVMemFree:
		if s, ok := d.sizes[addr]; ok {
			size = s
			delete(d.sizes, addr)
		}
		size = -size
	default:
		d.stats.Unknown++
		return
	}
	start, _ := span(u64(p, MemOffStart), u64(p, MemOffStart))
	d.mem = append(d.mem, tracer.MemEvent{TS: start, Bytes: size, Addr: addr, Allocated: -1, Reserved: -1,
		PID: d.pid, TID: int32(u64(p, MemOffThreadID)), Device: d.device(u64(p, MemOffAgent))})
}

// TakeMemory returns and clears the decoded allocations and frees.
func (d *Decoder) TakeMemory() []tracer.MemEvent {
	m := d.mem
	d.mem = nil
	return m
}
