// Package tracer holds rlktop's event model: the records every source
// (trace-file importers, the wire protocol from a traced process, the
// in-process Go tracer) produces, the string table they share, and the
// linking of GPU work to the CPU context that launched it.
//
// All times are int64 nanoseconds. Sources map their own clocks to one
// timebase per trace (Kineto: the trace's own µs clock scaled to ns; live
// sources: host CLOCK_REALTIME via the clock offset sent in the hello).
package tracer

import "fmt"

// Kind says what an Event records.
type Kind uint8

// Event kinds. GPU kinds (Kernel, Memcpy, Memset, GPURange) run on a device
// stream; the others run on a CPU thread.
const (
	KindUnknown  Kind = iota
	KindKernel        // a GPU kernel execution
	KindMemcpy        // a GPU memory copy; Value is bytes
	KindMemset        // a GPU memory set; Value is bytes
	KindRuntime       // a CUDA runtime / HIP API call; Corr links it to what it launched
	KindDriver        // a CUDA driver API call (Triton launches); Corr as Runtime
	KindSync          // a synchronization wait (cudaStreamSynchronize, events)
	KindOverhead      // tracer overhead reported by the tracer itself
	KindCPUOp         // a framework operator (aten::mm, …) on a CPU thread
	KindRange         // a user annotation / NVTX / roctx range on a CPU thread: a stage
	KindGPURange      // an annotation projected onto a GPU stream (gpu_user_annotation)
	KindStep          // a training step (ProfilerStep#N, the loop's step); Value is the step number
	KindPython        // a Python function frame (python_function)
	KindInstant       // a zero-length marker
	kindCount
)

var kindNames = [...]string{
	KindUnknown:  "unknown",
	KindKernel:   "kernel",
	KindMemcpy:   "memcpy",
	KindMemset:   "memset",
	KindRuntime:  "runtime",
	KindDriver:   "driver",
	KindSync:     "sync",
	KindOverhead: "overhead",
	KindCPUOp:    "cpu_op",
	KindRange:    "range",
	KindGPURange: "gpu_range",
	KindStep:     "step",
	KindPython:   "python",
	KindInstant:  "instant",
}

// String returns the kind's lower-case name ("kernel", "memcpy", …).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind is the inverse of Kind.String; ok is false for unknown names.
func ParseKind(s string) (k Kind, ok bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return KindUnknown, false
}

// IsGPU reports whether events of this kind execute on a device stream.
func (k Kind) IsGPU() bool {
	return k == KindKernel || k == KindMemcpy || k == KindMemset || k == KindGPURange
}

// IsLaunch reports whether events of this kind are API calls that launch GPU
// work (and so carry the correlation id of what they launched).
func (k Kind) IsLaunch() bool { return k == KindRuntime || k == KindDriver }

// StrID indexes a Strings table. 0 is the empty string.
type StrID uint32

// CtxID indexes Trace.Contexts. 0 is the empty context (nothing known).
type CtxID uint32

// Event is one record: a GPU operation, an API call, an operator, a range.
// It is a flat value (72 bytes) so that millions fit in a slice.
type Event struct {
	Start  int64  // ns, trace timebase
	Dur    int64  // ns, >= 0
	Corr   uint64 // correlation id linking a launch call to its GPU work; 0 = none
	Value  int64  // kind-specific: bytes for Memcpy/Memset, step number for Step
	Name   StrID  // exactly as the source wrote it (mangled kernel names stay mangled)
	PID    int32  // process (importers map string pids to small ints)
	TID    int32  // CPU thread for CPU kinds; for GPU kinds the launching thread when known, else -1
	Device int32  // GPU index for GPU kinds; -1 for CPU events
	Stream int32  // stream / queue id for GPU kinds
	Ctx    CtxID  // for GPU kinds, filled by Link: what was open at launch
	Kind   Kind
}

// End returns Start+Dur in ns.
func (e *Event) End() int64 { return e.Start + e.Dur }

// Counter is one sample of a numeric track (GPU utilisation, power, a
// Chrome-trace "C" event).
type Counter struct {
	TS     int64 // ns
	Name   StrID // track name, e.g. "gpu_util_pct"
	Device int32 // -1 for host-wide tracks
	Value  float64
}

// Context is what was open when GPU work was launched (Linker has the
// rule): the operator stack of the launching thread and the annotation
// ranges, outermost first, and the step.
type Context struct {
	Ops    []StrID // CPU operators (aten::…) open on the launching thread, outermost first
	Ranges []StrID // user annotation / NVTX / roctx ranges, outermost first; the last is the stage
	Step   int64   // step number; -1 when the launch was in no step window of its process
	// StageFrom says which thread Ranges come from.
	StageFrom StageRule
	// AfterAttention is true when, on the launching thread, an attention
	// operator (IsAttentionOp) ended before the launch while the range
	// that was innermost around it is still open: in a transformer's
	// attention module the output projection comes after its
	// scaled_dot_product_attention, the q/k/v projections before it.
	AfterAttention bool
}

// Device describes one GPU as the source reported it.
type Device struct {
	ID          int32
	Name        string // "NVIDIA A100-SXM4-40GB"
	Vendor      string // "nvidia", "amd", "cpu"
	TotalMemory int64  // bytes; 0 unknown
	SMs         int    // multiprocessors / compute units; 0 unknown
	ComputeCap  string // "8.0", "gfx942"; "" unknown
	// Props keeps every property the source gave, verbatim as text.
	Props map[string]string
}
