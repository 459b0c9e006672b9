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
	Registers, Start, End, Device, Context, Stream              int // registersPerThread is uint16
	GridX, GridY, GridZ, BlockX, BlockY, BlockZ                 int // int32
	StaticShared, DynamicShared, Correlation, Name, GraphNodeID int
	GraphID, Min, MinGraph                                      int
}{
	Registers: 6, Start: 16, End: 24, Device: 40, Context: 44, Stream: 48,
	GridX: 52, GridY: 56, GridZ: 60, BlockX: 64, BlockY: 68, BlockZ: 72,
	StaticShared: 76, DynamicShared: 80, Correlation: 92, Name: 104, GraphNodeID: 144,
	GraphID:  156,
	Min:      112, // through name
	MinGraph: 160, // through graphId
}

// LayoutMemcpy: CUpti_ActivityMemcpy5 prefix (also Memcpy4/6).
var LayoutMemcpy = struct {
	CopyKind, SrcKind, DstKind, Bytes, Start, End, Device, Context, Stream, Correlation int
	GraphNodeID, GraphID, Min, MinGraph                                                 int
}{4, 5, 6, 8, 16, 24, 32, 36, 40, 44, 64, 72, 48, 76}

// LayoutMemset: CUpti_ActivityMemset4 prefix.
var LayoutMemset = struct {
	Bytes, Start, End, Device, Context, Stream, Correlation, MemoryKind int
	GraphNodeID, GraphID, Min, MinGraph                                 int
}{8, 16, 24, 32, 36, 40, 44, 50, 64, 72, 52, 76}

// LayoutAPI: CUpti_ActivityAPI (runtime and driver API records).
var LayoutAPI = struct{ Cbid, Start, End, Process, Thread, Correlation, Min int }{4, 8, 16, 24, 28, 32, 36}

// LayoutSync: CUpti_ActivitySynchronization.
var LayoutSync = struct{ Type, Start, End, Correlation, Context, Stream, Min int }{4, 8, 16, 24, 28, 32, 36}

// LayoutOverhead: CUpti_ActivityOverhead.
var LayoutOverhead = struct{ OverheadKind, ObjectKind, ThreadID, Start, End, Min int }{4, 8, 16, 24, 32, 40}

// LayoutMarker: CUpti_ActivityMarker2.
var LayoutMarker = struct{ Flags, Timestamp, ID, ObjectKind, ThreadID, Name, Min int }{4, 8, 16, 20, 28, 40, 48}
