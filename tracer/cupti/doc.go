// Package cupti turns CUPTI activity records into rlktop events.
//
// It is the Go half of rlktop's CUPTI injection library (tracer/cupti/lib,
// built with -buildmode=c-shared and the build tag cupti). The C half owns
// everything CUPTI and the CUDA driver call into and hands completed
// activity buffers to one Go goroutine; this package decodes those buffers
// in place through its own pinned prefix layouts (Layout*), pairs NVTX
// marker START/END records into ranges, and maps CUPTI timestamps to host
// CLOCK_MONOTONIC nanoseconds through periodic (cuptiGetTimestamp,
// CLOCK_MONOTONIC) pairs (Clock).
//
// Record layouts are those of the CUPTI 11.8 headers
// (CUpti_ActivityKernel8, CUpti_ActivityMemcpy5, CUpti_ActivityMemset4,
// CUpti_ActivityAPI, CUpti_ActivitySynchronization, CUpti_ActivityOverhead,
// CUpti_ActivityMarker2). Newer CUPTI versions only append fields, so the
// prefixes read here stay valid from CUDA 11.8 to 13; a record shorter than
// the prefix is skipped and counted (Stats.Short). The offsets are checked
// against offsetof in the real headers by the tests under the cupti tag.
//
// Names are sent raw: kernel names stay mangled and classification happens
// in rlktop, not in the traced process.
//
// Nothing here needs cgo; the decoder reads C memory only through the
// Memory interface, which tests replace with a table.
package cupti
