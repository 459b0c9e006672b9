// Package attrib attributes GPU time to kernels, kernel categories, stages
// and steps, and holds the comparison statistics. It reads tracer events and
// produces immutable Snapshots of raw numbers; formatting belongs to views
// and report writers.
package attrib

import (
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Snapshot is an immutable view of everything aggregated so far. Views and
// report writers read it; nothing mutates it after Aggregator.Snapshot
// returns it.
type Snapshot struct {
	Source  string // file path, or "live: <command>"
	Format  string // tracer.Trace.Format of the source
	Devices []tracer.Device
	// WorkDevices are the ids of the devices that ran at least one GPU op
	// (kernel, memcpy or memset), ascending; a trace lists every visible
	// device, and headers name only these.
	WorkDevices []int32
	// DeviceWork, when it has one entry per Devices entry, says which of
	// them ran work; CombineSources sets it, since several sources (ranks,
	// files) list the same device ids for different devices, so that
	// WorkDevices cannot tell them apart. nil: WorkDevices decides.
	DeviceWork []bool
	// DeviceSource, when it has one entry per Devices entry, is the
	// source index (StepRow.Source) each device belongs to; set with
	// DeviceWork.
	DeviceSource []int
	Rank         int // -1 unknown
	Totals       Totals
	// Kernels holds one row per distinct kernel name (Kind == KindKernel),
	// sorted by TotalNs descending, then name.
	Kernels []KernelRow
	// Transfers holds memcpy and memset rows (by name), sorted like Kernels.
	Transfers []KernelRow
	// Categories and Stages are sorted by TotalNs descending, then key.
	Categories []GroupRow
	Stages     []GroupRow
	// Steps in step-number order; with several sources (CombineSources),
	// in source order, then step order (StepRow.Source).
	Steps []StepRow
	// StepsForgotten counts the steps older than Steps that an aggregator
	// with a step cap (Aggregator.SetStepCap, a live session's) no longer
	// lists: the run has had StepsForgotten + len(Steps) steps.
	StepsForgotten int64
	// Ranks holds each source's own numbers (per rank or file: kernel
	// time, busy, idle, communication exposed and overlapped, step median)
	// and, with several sources, the step spreads and late arrivals
	// (ranks.go); nil when the snapshot did not come from CombineSources.
	Ranks *RankSummary
	// StepRule says which rule cut the steps of file inputs
	// (tracer.Trace.StepRule, e.g. "torch.profiler ProfilerStep#N
	// ranges"); "" for live sources.
	StepRule string
	Dropped  uint64
	// Warnings copied from the source.
	Warnings []string
	// SummaryOnly: the source had sums but no events (no busy time, steps,
	// stages or percentiles).
	SummaryOnly bool
	// Work is the modelled work of every kernel (work.go); Unmodelled
	// the kernel time without it by innermost operator, largest first.
	// Both empty when no source carried work.
	Work       Work
	Unmodelled []OpTime
	// Peak is the device's limits the rates are read against
	// (roofline.go); nil until a caller sets it, and PeakNote then says
	// why there is none ("device \"X\" is not in the device table").
	Peak     *Peak
	PeakNote string
	// SourcePeaks, when several sources ran on devices with different
	// limits, is each source's peak by source index (nil entry: its
	// device is unknown); Peak is nil then, since kernel, category and
	// stage rows mix the sources, and each step's MFU is read against its
	// own source's peak (StepPeak). nil: every step uses Peak.
	SourcePeaks []*Peak
	// Memory is the memory model (memory.go) of the sources' allocations
	// and frees; nil when they recorded none.
	Memory *Memory
	// Python is where the Python side of the steps went (the Python
	// agent's stack samples, python.go); nil without samples.
	Python *PyProfile
}

// Totals over the whole snapshot.
type Totals struct {
	KernelCount   int64 // kernel executions (KindKernel only)
	KernelTotalNs int64 // summed kernel durations, ns
	TransferCount int64 // memcpy + memset operations
	TransferNs    int64 // summed memcpy + memset durations, ns
	// GPUTotalNs = KernelTotalNs + TransferNs: the denominator of category
	// and stage shares.
	GPUTotalNs int64
	// GPUBusyNs is the union of kernel, memcpy and memset intervals per device,
	// summed over devices, ns. It is less than GPUTotalNs when streams
	// overlap.
	GPUBusyNs int64
	// KernelBusyNs is the same union over kernels only (the JSON
	// contract's busy_ns), ns.
	KernelBusyNs int64
	// SpanNs is last GPU end minus first GPU start, ns (0 when no GPU events).
	SpanNs int64
}

// KernelRow is the statistics of one kernel (or transfer) name in one
// category: categories are decided per launch (name and launch context), so
// a name whose launches fall in several categories has one row per
// category, and the rows' totals add up to the name's. All times ns.
type KernelRow struct {
	Name string // exactly as in the trace
	// NameID is Name's id in the string table of the source whose event
	// made the row (0: none, as for rows from per-kernel sums): the same
	// in every snapshot of a live session, whose sources share one table,
	// so a view that follows rows from one snapshot to the next can find
	// each row's name in an array rather than compare every row. Rows of
	// different tables can share an id: it is a hint, checked against Name.
	NameID      tracer.StrID
	DisplayName string      // demangled and shortened
	Kind        tracer.Kind // KindKernel, KindMemcpy or KindMemset
	Category    string
	Count       int64
	TotalNs     int64
	MeanNs      int64 // TotalNs / Count, truncated
	MinNs       int64
	MaxNs       int64
	P50Ns       int64 // nearest-rank percentile of the durations
	P99Ns       int64
	// PercentilesApprox is true when the row had more executions than the
	// aggregator's PercentileCap: P50Ns and P99Ns then come from a
	// log-linear histogram (relative error < 1/64).
	PercentilesApprox bool
	// Share is TotalNs / Totals.KernelTotalNs for kernels and
	// TotalNs / Totals.TransferNs for transfers; 0 when the denominator is 0.
	Share float64
	// Stage is the stage most of this kernel's time was launched in ("" none).
	Stage string
	// Context is the launch context of this kernel's first occurrence:
	// operator stack then ranges, outermost first.
	Ops    []string
	Ranges []string
	// StageRule says where Ranges (and so the stage) of that occurrence
	// came from: "launching thread", "step thread" (autograd's launches
	// take the main thread's ranges) or "no range open" (tracer.StageRule);
	// "" when no context was recorded.
	StageRule string
	// Launches: every launch of this row by launch context, stage and
	// step (KernelLaunches); nil for summary-only rows.
	Launches *KernelLaunches
	// Work is the row's modelled FLOPs and bytes (zero when the source
	// recorded no shapes).
	Work Work
}

// GroupRow is one category's or stage's total.
type GroupRow struct {
	Key     string // category or stage name; "(none)" for kernels outside every stage
	Count   int64
	TotalNs int64
	Share   float64 // TotalNs / Totals.GPUTotalNs
	Work    Work    // modelled FLOPs and bytes of its kernels
}

// StepRow is one training step.
type StepRow struct {
	Step     int64 // step number as the source numbered it
	StartNs  int64
	DurNs    int64 // wall time of the step range
	KernelNs int64 // summed GPU op time launched in this step
	Count    int64 // GPU ops launched in this step
	// Source is the index (input order) of the source the step belongs
	// to: steps of different sources are never merged (ranks.go).
	Source int
	// Work is the modelled FLOPs and bytes of the kernels launched in
	// the step.
	Work Work
}

// WorkingDevices returns the devices of s that ran GPU work
// (WorkDevices), in Devices order; all of Devices when none is known to
// have (no work yet, or a snapshot built without WorkDevices).
func (s *Snapshot) WorkingDevices() []tracer.Device {
	var out []tracer.Device
	if len(s.DeviceWork) == len(s.Devices) && len(s.Devices) > 0 {
		for i, d := range s.Devices {
			if s.DeviceWork[i] {
				out = append(out, d)
			}
		}
		return out
	}
	for _, d := range s.Devices {
		if slices.Contains(s.WorkDevices, d.ID) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return s.Devices
	}
	return out
}

// CPUOnly reports whether every device that ran work is the host CPU:
// device -1 (CPU operators by self time, a trace without GPU work:
// tracer.Trace.CPUOpKernels) or a device whose Vendor is "cpu" (the
// built-in loop on CPU); false when no device ran work.
func (s *Snapshot) CPUOnly() bool {
	if len(s.WorkDevices) == 0 {
		return false
	}
	for _, id := range s.WorkDevices {
		if id < 0 {
			continue
		}
		i := slices.IndexFunc(s.Devices, func(d tracer.Device) bool { return d.ID == id })
		if i < 0 || !strings.EqualFold(s.Devices[i].Vendor, "cpu") {
			return false
		}
	}
	return true
}

// CPUOps reports whether the kernel rows are CPU operators by self time:
// every device that ran work is device -1 (a trace without GPU work,
// tracer.Trace.CPUOpKernels); false when no device ran work. The
// built-in loop on CPU (Vendor "cpu") runs kernels, not operators.
func (s *Snapshot) CPUOps() bool {
	return len(s.WorkDevices) > 0 && !slices.ContainsFunc(s.WorkDevices, func(id int32) bool { return id >= 0 })
}

// TimeName names what Totals.GPUTotalNs sums, for "x of y …" and shares:
// "GPU time"; for work on the host CPU only (CPUOnly), never said to be
// GPU time, "CPU op time" when its rows are CPU operators (CPUOps) and
// "kernel time" when a tracer on the CPU device recorded kernels (the
// built-in loop), as the header and report name them.
func (s *Snapshot) TimeName() string {
	switch {
	case s.CPUOps():
		return "CPU op time"
	case s.CPUOnly():
		return "kernel time"
	}
	return "GPU time"
}
