package cupti

// CUpti_ActivityKind values (cupti_activity.h; stable across versions).
const (
	KindMemcpy           = 1
	KindMemset           = 2
	KindKernel           = 3
	KindDriver           = 4
	KindRuntime          = 5
	KindConcurrentKernel = 10
	KindMarker           = 12
	KindOverhead         = 17
	KindSynchronization  = 38
)

// CUpti_CallbackDomain values used to name API records.
const (
	DomainDriver  = 1
	DomainRuntime = 2
)

// Marker flags (CUpti_ActivityFlag).
const (
	markerInstant = 1 << 0
	markerStart   = 1 << 1
	markerEnd     = 1 << 2
)

const objectThread = 2 // CUPTI_ACTIVITY_OBJECT_THREAD

// LayoutKernel holds byte offsets of the fields rlktop reads from a
// CUPTI_ACTIVITY_KIND_(CONCURRENT_)KERNEL record (CUpti_ActivityKernel8
// prefix; kernel records of CUDA 12 and 13 append to it).
var LayoutKernel = struct {
	LayoutGPUOp
	Registers                                   int // registersPerThread is uint16
	GridX, GridY, GridZ, BlockX, BlockY, BlockZ int // int32
	StaticShared, DynamicShared, Name           int
}{
	LayoutGPUOp: LayoutGPUOp{
		Start: 16, End: 24, Device: 40, Context: 44, Stream: 48, Correlation: 92, GraphNodeID: 144, GraphID: 156,
		Min:      112, // through name
		MinGraph: 160, // through graphId
	},
	GridX: 52, GridY: 56, GridZ: 60, BlockX: 64, BlockY: 68, BlockZ: 72,
	Registers: 6, StaticShared: 76, DynamicShared: 80, Name: 104,
}

// LayoutGPUOp holds the offsets of the fields that kernel, memcpy and memset
// records share (at different offsets in each): the CUPTI start and end
// times, device, context, stream, correlation id and CUDA graph ids, and
// the record lengths needed (Min: every field read but the graph ids;
// MinGraph: the graph ids too).
type LayoutGPUOp struct {
	Start, End, Device, Context, Stream, Correlation int
	GraphNodeID, GraphID, Min, MinGraph              int
}

// LayoutMemcpy: CUpti_ActivityMemcpy5 prefix (also Memcpy4/6).
var LayoutMemcpy = struct {
	LayoutGPUOp
	CopyKind, SrcKind, DstKind, Bytes int
}{
	LayoutGPUOp: LayoutGPUOp{
		Start: 16, End: 24, Device: 32, Context: 36, Stream: 40, Correlation: 44, GraphNodeID: 64, GraphID: 72,
		Min: 48, MinGraph: 76,
	},
	CopyKind: 4, SrcKind: 5, DstKind: 6, Bytes: 8,
}

// LayoutMemset: CUpti_ActivityMemset4 prefix.
var LayoutMemset = struct {
	LayoutGPUOp
	Bytes, MemoryKind int
}{
	LayoutGPUOp: LayoutGPUOp{
		Start: 16, End: 24, Device: 32, Context: 36, Stream: 40, Correlation: 44, GraphNodeID: 64, GraphID: 72,
		Min: 52, MinGraph: 76,
	},
	Bytes: 8, MemoryKind: 50,
}

// LayoutAPI: CUpti_ActivityAPI (runtime and driver API records).
var LayoutAPI = struct{ Cbid, Start, End, Process, Thread, Correlation, Min int }{4, 8, 16, 24, 28, 32, 36}

// LayoutSync: CUpti_ActivitySynchronization.
var LayoutSync = struct{ Type, Start, End, Correlation, Context, Stream, Min int }{4, 8, 16, 24, 28, 32, 36}

// LayoutOverhead: CUpti_ActivityOverhead.
var LayoutOverhead = struct{ OverheadKind, ObjectKind, ThreadID, Start, End, Min int }{4, 8, 16, 24, 32, 40}

// LayoutMarker: CUpti_ActivityMarker2.
var LayoutMarker = struct{ Flags, Timestamp, ID, ObjectKind, ThreadID, Name, Min int }{4, 8, 16, 20, 28, 40, 48}
