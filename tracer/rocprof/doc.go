// Package rocprof turns the records of rlktop's rocprofiler-sdk tool
// library into rlktop events.
//
// The tool library itself (tracer/rocprof/lib, built with
// -buildmode=c-shared and the build tag rocm) is a small C layer that
// rocprofiler-sdk loads through ROCP_TOOL_LIBRARIES (rocprofiler_configure)
// plus one Go goroutine that drains its chunks and sends wire frames. The C
// layer subscribes to buffered tracing of kernel dispatches, memory copies
// and HIP runtime API calls, and to callback tracing of code objects
// (kernel_id → kernel name) and roctx markers; it copies every record, by
// the size field the record carries, into chunks of tagged entries that Go
// decodes here.
//
// Record layouts are those of rocprofiler-sdk 0.5.0 (abi.go,
// include/rlk_rocprofiler.h); newer SDK versions append fields, except
// that 0.7.0 (released as 1.0.0) widened the correlation id of API and
// callback records, which both layers handle by the SDK version the tool
// was configured with. Timestamps
// are rocprofiler's, CLOCK_BOOTTIME ns (rocprofiler_get_timestamp); the
// library's hello gives the offset to CLOCK_REALTIME. roctx push/pop pairs
// are matched per thread, start/stop by range id.
//
// Device numbers are the GPU agents' logical_node_type_id (their index
// among GPUs) from rocprofiler_query_available_agents, which the tool calls
// in initialize; without that answer, agents are numbered in order of first
// appearance. Streams are per-process ordinals of queue handles.
//
// Nothing here needs cgo.
package rocprof
