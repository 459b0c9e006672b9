package cupti

import "github.com/rlktop/rlktop/tracer"

// KindMemory2 is CUPTI_ACTIVITY_KIND_MEMORY2 (CUDA 11.2+): one record per
// device memory allocation and release through the runtime or driver
// (cudaMalloc, cudaFree, cuMemAlloc, pools), i.e. what PyTorch's caching
// allocator reserves, not its tensor-level allocations.
const KindMemory2 = 49

// CUpti_ActivityMemoryOperationType values.
const (
	memAllocation = 1
	memRelease    = 2
)

// LayoutMemory: the CUpti_ActivityMemory3 prefix rlktop reads
// (CUpti_ActivityMemory4 of CUDA 12.x appends to it).
var LayoutMemory = struct {
	OperationType, MemoryKind, Correlation, Address, Bytes, Timestamp, Process, Device, Min int
}{4, 8, 12, 16, 24, 32, 48, 52, 56}

// memCorrKept bounds the correlation id → thread map the memory records
// are resolved with (their records carry no thread).
const memCorrKept = 1 << 14

// memory decodes a MEMORY2 record into Batch.Memory: an allocation gives
// +bytes, a release −bytes, at the record's address, on its device. The
// thread is the one of the runtime/driver call with the record's
// correlation id when the decoder has seen it (-1 otherwise); totals are
// unknown (-1): the model sums the sizes.
func (d *Decoder) memory(r []byte) {
	L := &LayoutMemory
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	bytes := int64(u64(r, L.Bytes))
	switch u32(r, L.OperationType) {
	case memAllocation:
	case memRelease:
		bytes = -bytes
	default:
		d.stats.Unknown++
		return
	}
	tid := int32(-1)
	if t, ok := d.corrTID[u32(r, L.Correlation)]; ok {
		tid = t
	}
	d.b.Memory = append(d.b.Memory, tracer.MemEvent{
		TS: d.Clock.Host(int64(u64(r, L.Timestamp))), Bytes: bytes, Addr: u64(r, L.Address),
		Allocated: -1, Reserved: -1, PID: d.PID, TID: tid, Device: int32(u32(r, L.Device)),
	})
}

// noteCall remembers the thread of an API call for the memory records
// that share its correlation id; the map is cleared when it is full.
func (d *Decoder) noteCall(corr uint32, tid int32) {
	if corr == 0 {
		return
	}
	if d.corrTID == nil || len(d.corrTID) >= memCorrKept {
		d.corrTID = make(map[uint32]int32, 64)
	}
	d.corrTID[corr] = tid
}
