package rocprof

// The rocprofiler-sdk ABI subset rlktop reads, pinned to rocprofiler-sdk
// 0.5.0 (ROCm 6.3) on x86-64 Linux, as declared in include/rlk_rocprofiler.h
// from the SDK's public headers. Offsets are bytes from the start of each
// record; the ...Min constants are the shortest record (its leading uint64
// size field) that holds every field rlktop reads. Later SDK versions
// append fields, so a longer record is read the same way; a shorter one is
// skipped and counted (Stats.Short), except for the 0.7.0 correlation-id
// change (VersionAncestor). The 1.x layouts used here were compared with
// the headers in ROCm/rocm-systems (projects/rocprofiler-sdk, VERSION
// 1.0.0): kernel dispatch and agent prefixes unchanged, memory copy and
// kernel symbol records appended to, API and callback records widened.
// TestABILayout checks every constant against offsetof/sizeof of the C
// declarations.

// SDKVersion is the rocprofiler-sdk release whose layouts are pinned here.
const SDKVersion = "0.5.0"

// rocprofiler_buffer_tracing_kind_t values.
const (
	BufferKindHIPRuntimeAPI  = 5
	BufferKindMemoryCopy     = 10
	BufferKindKernelDispatch = 11
)

// rocprofiler_callback_tracing_kind_t values.
const (
	CallbackKindMarkerCoreAPI = 7
	CallbackKindCodeObject    = 10
)

// Callback phases (rocprofiler_callback_phase_t).
const (
	PhaseEnter = 1
	PhaseExit  = 2
)

// rocprofiler_marker_core_api_id_t values.
const (
	MarkerMarkA       = 0
	MarkerRangePushA  = 1
	MarkerRangePop    = 2
	MarkerRangeStartA = 3
	MarkerRangeStop   = 4
)

// rocprofiler_memory_copy_operation_t names, indexed by value.
var memcpyOpNames = [...]string{"MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
	"MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"}

// rocprofiler_buffer_tracing_kernel_dispatch_record_t (184 bytes in 0.5.0).
const (
	DispatchOffSize       = 0
	DispatchOffKind       = 8
	DispatchOffOperation  = 12
	DispatchOffCorr       = 16 // correlation_id.internal
	DispatchOffThreadID   = 32
	DispatchOffStart      = 40
	DispatchOffEnd        = 48
	DispatchOffInfo       = 56 // rocprofiler_kernel_dispatch_info_t (128 bytes)
	DispatchOffAgent      = 64 // dispatch_info.agent_id.handle
	DispatchOffQueue      = 72 // dispatch_info.queue_id.handle
	DispatchOffKernelID   = 80
	DispatchOffDispatchID = 88
	DispatchOffWorkgroup  = 104 // rocprofiler_dim3_t
	DispatchOffGrid       = 116 // rocprofiler_dim3_t
	DispatchSize          = 184
	DispatchMin           = 96
)

// rocprofiler_buffer_tracing_memory_copy_record_t (80 bytes in 0.5.0).
const (
	CopyOffSize      = 0
	CopyOffKind      = 8
	CopyOffOperation = 12
	CopyOffCorr      = 16
	CopyOffThreadID  = 32
	CopyOffStart     = 40
	CopyOffEnd       = 48
	CopyOffDstAgent  = 56
	CopyOffSrcAgent  = 64
	CopyOffBytes     = 72
	CopySize         = 80
	CopyMin          = 80
)

// VersionAncestor is the first rocprofiler-sdk version (0.7.0, released as
// 1.0.0 in ROCm 7.0; major*10000+minor*100+patch) whose
// rocprofiler_correlation_id_t carries "ancestor" (24 bytes), moving the
// fields after it in API and callback records (the APIV1 and CallbackV1
// offsets). Asynchronous records (dispatch, copy) are unaffected.
const VersionAncestor = 700

// rocprofiler_buffer_tracing_hip_api_record_t since 0.7.0 (64 bytes).
const (
	APIV1OffCorr     = 16
	APIV1OffStart    = 40
	APIV1OffEnd      = 48
	APIV1OffThreadID = 56
	APIV1Size        = 64
	APIV1Min         = 64

	CallbackV1OffKind    = 40
	CallbackV1OffOp      = 44
	CallbackV1OffPhase   = 48
	CallbackV1OffPayload = 56
	CallbackV1Size       = 64
)

// rocprofiler_buffer_tracing_hip_api_record_t before 0.7.0 (56 bytes).
const (
	APIOffSize      = 0
	APIOffKind      = 8
	APIOffOperation = 12
	APIOffCorr      = 16
	APIOffStart     = 32
	APIOffEnd       = 40
	APIOffThreadID  = 48
	APISize         = 56
	APIMin          = 56
)

// Callback-side layouts, read by the C layer (lib/rlkroc.c) and checked
// here so that the one declaration serves both.
const (
	CallbackRecordOffThreadID = 8
	CallbackRecordOffCorr     = 16
	CallbackRecordOffKind     = 32
	CallbackRecordOffOp       = 36
	CallbackRecordOffPhase    = 40
	CallbackRecordOffPayload  = 48
	CallbackRecordSize        = 56

	SymbolOffKernelID   = 8
	SymbolOffKernelName = 24
	SymbolSize          = 72

	MarkerOffArgs   = 8
	MarkerOffRetval = 24
	MarkerSize      = 32

	RecordHeaderOffKind    = 4
	RecordHeaderOffPayload = 8
	RecordHeaderSize       = 16

	ConfigureResultSize = 32

	// rocprofiler_agent_v0_t (296 bytes in 0.5.0).
	AgentOffID                = 8
	AgentOffType              = 16
	AgentOffCUCount           = 72
	AgentOffName              = 248
	AgentOffProductName       = 264
	AgentOffLogicalNodeTypeID = 288
	AgentSize                 = 296
)

// Tags of the entries the C layer appends to a chunk (lib/rlkroc.h). Each
// entry is: tag u32, len u32, len payload bytes, zero padding to 8 bytes.
const (
	TagDispatch = 1 // payload: the SDK's kernel dispatch record, size bytes as its size field says
	TagCopy     = 2 // payload: the SDK's memory copy record
	TagSymbol   = 3 // payload: kernel_id u64, then the kernel name
	TagMarker   = 4 // payload: op u32, phase u32, thread u64, timestamp u64, corr u64, range id u64, then the message
	TagDrops    = 5 // payload: u64 records the SDK dropped (a buffer callback's drop_count)
	TagAPI      = 6 // payload: the SDK's HIP API record
)

// MarkerEntryFixed is the fixed part of a TagMarker payload.
const MarkerEntryFixed = 40
