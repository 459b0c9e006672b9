package report

import (
	"encoding/json"
	"io"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// JSON shapes. The keys of Doc.Totals, Doc.Kernels, Doc.Categories and
// Doc.Stages are a contract: other tools read them, so they
// are never renamed or retyped; times are integer nanoseconds.
type (
	// Doc is the whole JSON report.
	Doc struct {
		Format      string `json:"format"` // source trace format
		Source      string `json:"source"`
		SummaryOnly bool   `json:"summary_only"`
		// CPUOps: the kernel rows are CPU operators by self time (a trace
		// without GPU work: attrib.Snapshot.CPUOps), so that a merge of
		// such reports says so too; absent otherwise.
		CPUOps      bool        `json:"cpu_ops,omitempty"`
		Unavailable []string    `json:"unavailable,omitempty"` // views the input cannot give
		Rank        int         `json:"rank"`
		Devices     []DeviceDoc `json:"devices"`
		Totals      TotalsDoc   `json:"totals"`
		Kernels     []KernelDoc `json:"kernels"`
		Transfers   []KernelDoc `json:"transfers"`
		Categories  []GroupDoc  `json:"categories"`
		Stages      []StageDoc  `json:"stages"`
		Steps       []StepDoc   `json:"steps"`
		// StepsForgotten: steps older than Steps a live session no longer
		// lists (attrib.Snapshot.StepsForgotten).
		StepsForgotten int64    `json:"steps_forgotten,omitempty"`
		StepRule       string   `json:"step_rule,omitempty"` // which rule cut the steps (file inputs)
		Dropped        uint64   `json:"dropped"`
		Warnings       []string `json:"warnings"`
		// Sources: one per input file or live process (attrib.SourceRow),
		// in rank order; StepSpreads and the collective counts only with
		// several sources.
		Sources              []SourceDoc     `json:"sources,omitempty"`
		StepSpreads          []StepSpreadDoc `json:"step_spreads,omitempty"`
		CollectivesMatched   int             `json:"collectives_matched,omitempty"`
		CollectivesUnmatched int             `json:"collectives_unmatched,omitempty"`
		// Work: modelled FLOPs and bytes, the device's limits, the
		// steps' FLOPs and MFU (work.go); absent when no source carries
		// work.
		Work *WorkSummaryDoc `json:"work,omitempty"`
		// Memory: the memory model (memory.go); absent when the input
		// recorded no allocations.
		Memory *MemoryDoc `json:"memory,omitempty"`
		// Python: the Python agent's stack samples (python.go); absent
		// without them.
		Python *PythonDoc `json:"python,omitempty"`
	}
	// SourceDoc is one source (attrib.SourceRow; times ns on its own clock).
	SourceDoc struct {
		Index         int    `json:"index"` // input order, from 0; StepDoc.Source
		Rank          int    `json:"rank"`
		RankFrom      string `json:"rank_from"` // "trace" (distributedInfo, hello) or "order"
		World         int    `json:"world,omitempty"`
		Path          string `json:"path"`
		Format        string `json:"format"`
		StartNs       int64  `json:"start_ns"`
		EndNs         int64  `json:"end_ns"`
		SpanNs        int64  `json:"span_ns"`
		KernelCount   int64  `json:"kernel_count"`
		KernelNs      int64  `json:"kernel_ns"`
		BusyNs        int64  `json:"busy_ns"`
		IdleNs        int64  `json:"idle_ns"`
		ComputeNs     int64  `json:"compute_ns"`
		CommNs        int64  `json:"comm_ns"`
		CommExposedNs int64  `json:"comm_exposed_ns"`
		CommOverlapNs int64  `json:"comm_overlap_ns"`
		Steps         int    `json:"steps"`
		StepMedianNs  int64  `json:"step_median_ns"`
		// RunNs: a live process's whole run so far (attrib.SourceRow.RunNs),
		// which its steps and step_median_ns then cover; its span_ns is
		// then the time of its traced steps (those with operators) in the
		// session's window, over which the other figures are; absent for
		// files.
		RunNs        int64 `json:"run_ns,omitempty"`
		CollWaitNs   int64 `json:"coll_wait_ns"`
		LastArrivals int   `json:"last_arrivals"`
		// With modelled work: the median FLOPs and MFU of this source's
		// steps that carry work (attrib.Snapshot.StepWork), the MFU
		// against peak_device, the device table's row for its device.
		FlopsMedian *float64 `json:"flops_median,omitempty"`
		MFU         *float64 `json:"mfu,omitempty"`
		PeakDevice  string   `json:"peak_device,omitempty"`
	}
	// StepSpreadDoc is one step every source has (attrib.StepSpread), with
	// sources named by rank (SourceDoc.Rank); late_rank -1: no collective.
	StepSpreadDoc struct {
		Step        int64 `json:"step"`
		SlowRank    int   `json:"slow_rank"`
		SlowNs      int64 `json:"slow_ns"`
		FastRank    int   `json:"fast_rank"`
		FastNs      int64 `json:"fast_ns"`
		SpreadNs    int64 `json:"spread_ns"`
		LateRank    int   `json:"late_rank"`
		Collectives int   `json:"collectives"`
		WaitNs      int64 `json:"wait_ns"`
	}
	// TotalsDoc: kernel_count, kernel_total_ns, busy_ns are the contract.
	TotalsDoc struct {
		KernelCount   int64 `json:"kernel_count"`
		KernelTotalNs int64 `json:"kernel_total_ns"`
		// KernelBusyNs is the JSON contract's busy time: the union of kernel
		// intervals per device, summed over devices.
		KernelBusyNs int64 `json:"busy_ns"`
		// GPUBusyNs is the same union over kernels, memcpy and memset.
		GPUBusyNs     int64 `json:"gpu_busy_ns"`
		TransferCount int64 `json:"transfer_count"`
		TransferNs    int64 `json:"transfer_ns"`
		GPUTotalNs    int64 `json:"gpu_total_ns"`
		SpanNs        int64 `json:"span_ns"`
	}
	// KernelDoc is one kernel (or, in "transfers", memcpy/memset) row.
	KernelDoc struct {
		Name        string  `json:"name"` // exactly as in the trace
		DisplayName string  `json:"display_name"`
		Category    string  `json:"category"`
		Count       int64   `json:"count"`
		TotalNs     int64   `json:"total_ns"`
		MeanNs      int64   `json:"mean_ns"`
		MinNs       int64   `json:"min_ns"`
		MaxNs       int64   `json:"max_ns"`
		P50Ns       int64   `json:"p50_ns"`
		P99Ns       int64   `json:"p99_ns"`
		Share       float64 `json:"share"`
		Kind        string  `json:"kind"`
		// PercentilesApprox: p50/p99 from a histogram (live sessions with
		// a percentile cap; see attrib.Aggregator.SetPercentileCap).
		PercentilesApprox bool     `json:"percentiles_approx,omitempty"`
		Stage             string   `json:"stage,omitempty"`
		Ops               []string `json:"ops,omitempty"`
		Ranges            []string `json:"ranges,omitempty"`
		StageRule         string   `json:"stage_rule,omitempty"` // where ranges came from: launching thread, step thread
		WorkDoc
	}
	// GroupDoc is one category row.
	GroupDoc struct {
		Category string  `json:"category"`
		Count    int64   `json:"count"`
		TotalNs  int64   `json:"total_ns"`
		Share    float64 `json:"share"`
		WorkDoc
	}
	// StageDoc is one stage row.
	StageDoc struct {
		Stage   string  `json:"stage"`
		Count   int64   `json:"count"`
		TotalNs int64   `json:"total_ns"`
		Share   float64 `json:"share"`
		WorkDoc
	}
	// StepDoc is one step.
	StepDoc struct {
		Step     int64 `json:"step"`
		StartNs  int64 `json:"start_ns"`
		DurNs    int64 `json:"dur_ns"`
		KernelNs int64 `json:"gpu_ns"`
		Count    int64 `json:"gpu_ops"`
		// Source is SourceDoc.Index of the step's source; absent with one
		// source.
		Source *int `json:"source,omitempty"`
		// Flops, Bytes and MFU: the modelled work of the step's kernels
		// and its model FLOPs utilisation (absent without work; MFU
		// without a device peak).
		Flops *float64 `json:"flops,omitempty"`
		Bytes *float64 `json:"bytes,omitempty"`
		MFU   *float64 `json:"mfu,omitempty"`
		// WorkNs, UnmodelledNs and FlopsByDType as in WorkDoc (MergeDocs).
		WorkNs       *int64             `json:"work_ns,omitempty"`
		UnmodelledNs *int64             `json:"unmodelled_ns,omitempty"`
		FlopsByDType map[string]float64 `json:"flops_by_dtype,omitempty"`
	}
	// DeviceDoc is one device.
	DeviceDoc struct {
		ID          int32  `json:"id"`
		Name        string `json:"name"`
		Vendor      string `json:"vendor,omitempty"`
		TotalMemory int64  `json:"total_memory_bytes,omitempty"`
		ComputeCap  string `json:"compute_capability,omitempty"`
	}
)

// NewDoc converts s into the JSON document; top limits kernels and
// transfers (0 = all).
// totalsDoc is t in the JSON contract: busy_ns kernels only,
// gpu_busy_ns with memcpy and memset. report's and diff's JSON both use it.
func totalsDoc(t attrib.Totals) TotalsDoc {
	return TotalsDoc{
		KernelCount: t.KernelCount, KernelTotalNs: t.KernelTotalNs, KernelBusyNs: t.KernelBusyNs, GPUBusyNs: t.GPUBusyNs,
		TransferCount: t.TransferCount, TransferNs: t.TransferNs,
		GPUTotalNs: t.GPUTotalNs, SpanNs: t.SpanNs,
	}
}

func NewDoc(s *attrib.Snapshot, topN int) *Doc {
	d := &Doc{
		Format:      s.Format,
		Source:      s.Source,
		SummaryOnly: s.SummaryOnly,
		CPUOps:      s.CPUOps(),
		Unavailable: UnavailableViews(s),
		Rank:        s.Rank,
		Devices:     []DeviceDoc{},
		Totals:      totalsDoc(s.Totals),
		Kernels:     []KernelDoc{},
		Transfers:   []KernelDoc{},
		Categories:  []GroupDoc{},
		Stages:      []StageDoc{},
		Steps:       []StepDoc{},
		StepRule:    s.StepRule,
		Dropped:     s.Dropped,
		Warnings:    append([]string{}, s.Warnings...),
		Memory:      NewMemoryDoc(s.Memory, 0),
	}
	for _, dv := range s.Devices {
		d.Devices = append(d.Devices, DeviceDoc{ID: dv.ID, Name: dv.Name, Vendor: dv.Vendor, TotalMemory: dv.TotalMemory, ComputeCap: dv.ComputeCap})
	}
	for _, k := range top(s.Kernels, topN) {
		kd := kernelDoc(k)
		kd.WorkDoc = workDoc(s, k.Work)
		d.Kernels = append(d.Kernels, kd)
	}
	for _, k := range top(s.Transfers, topN) {
		d.Transfers = append(d.Transfers, kernelDoc(k))
	}
	for _, g := range s.Categories {
		d.Categories = append(d.Categories, GroupDoc{Category: g.Key, Count: g.Count, TotalNs: g.TotalNs, Share: g.Share, WorkDoc: workDoc(s, g.Work)})
	}
	for _, g := range s.Stages {
		d.Stages = append(d.Stages, StageDoc{Stage: g.Key, Count: g.Count, TotalNs: g.TotalNs, Share: g.Share, WorkDoc: workDoc(s, g.Work)})
	}
	multi := multiSource(s)
	for _, st := range s.Steps {
		sd := StepDoc{Step: st.Step, StartNs: st.StartNs, DurNs: st.DurNs, KernelNs: st.KernelNs, Count: st.Count}
		if multi {
			sd.Source = &st.Source
		}
		if s.HasWork() {
			sd.Flops, sd.Bytes = f64(st.Work.Flops), f64(st.Work.Bytes)
			sd.WorkNs, sd.UnmodelledNs, sd.FlopsByDType = i64(st.Work.Ns), i64(st.Work.UnmodelledNs), flopsByDType(st.Work)
			if p := s.StepPeak(st.Source); p != nil && attrib.StepHasWork(&st) {
				sd.MFU = f64(attrib.MFU(st.Work, p, st.DurNs))
			}
		}
		d.Steps = append(d.Steps, sd)
	}
	d.StepsForgotten = s.StepsForgotten
	if s.Ranks != nil {
		rank := func(i int) int {
			if r := s.Ranks.Source(i); r != nil {
				return r.Rank
			}
			return -1
		}
		bySource := s.StepWorkBySource()
		for _, r := range s.Ranks.Sources {
			d.Sources = append(d.Sources, SourceDoc{Index: r.Index, Rank: r.Rank, RankFrom: r.RankFrom, World: r.World, Path: r.Path, Format: r.Format,
				StartNs: r.StartNs, EndNs: r.EndNs, SpanNs: r.SpanNs, KernelCount: r.KernelCount, KernelNs: r.KernelNs,
				BusyNs: r.BusyNs, IdleNs: r.IdleNs, ComputeNs: r.ComputeNs, CommNs: r.CommNs, CommExposedNs: r.CommExposedNs, CommOverlapNs: r.CommOverlapNs,
				Steps: r.Steps, StepMedianNs: r.StepMedianNs, RunNs: r.RunNs, CollWaitNs: r.CollWaitNs, LastArrivals: r.LastArrivals})
			if !s.HasWork() {
				continue
			}
			sd := &d.Sources[len(d.Sources)-1]
			if sw, ok := bySource[r.Index]; ok {
				sd.FlopsMedian = f64(sw.FlopsMedian)
				if sw.NMFU > 0 {
					sd.MFU = f64(sw.MFUMedian)
				}
			}
			if p := s.StepPeak(r.Index); p != nil {
				sd.PeakDevice = p.Device
			}
		}
		for _, sp := range s.Ranks.Steps {
			d.StepSpreads = append(d.StepSpreads, StepSpreadDoc{Step: sp.Step, SlowRank: rank(sp.SlowSource), SlowNs: sp.SlowNs,
				FastRank: rank(sp.FastSource), FastNs: sp.FastNs, SpreadNs: sp.SpreadNs, LateRank: rank(sp.LateSource),
				Collectives: sp.Collectives, WaitNs: sp.WaitNs})
		}
		d.CollectivesMatched, d.CollectivesUnmatched = s.Ranks.Collectives, s.Ranks.CollectivesUnmatched
	}
	d.Work = workSummary(s)
	d.Python = pythonDoc(s.Python, topN)
	return d
}

func kernelDoc(k attrib.KernelRow) KernelDoc {
	kind := k.Kind.String()
	if k.Kind == tracer.KindUnknown {
		kind = ""
	}
	return KernelDoc{
		Name: k.Name, DisplayName: k.DisplayName, Category: k.Category,
		Count: k.Count, TotalNs: k.TotalNs, MeanNs: k.MeanNs, MinNs: k.MinNs, MaxNs: k.MaxNs,
		P50Ns: k.P50Ns, P99Ns: k.P99Ns, Share: k.Share, Kind: kind, Stage: k.Stage, PercentilesApprox: k.PercentilesApprox,
		Ops: k.Ops, Ranges: k.Ranges, StageRule: k.StageRule,
	}
}

// writeJSON writes every view (the JSON document is one object whatever
// --by says); Top limits kernels and transfers.
// encodeJSON writes v as every JSON document of report is written:
// indented two spaces, names raw ('<', '>' and '&' not escaped as \u003c:
// kernel names are C++), one trailing newline.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeJSON(w io.Writer, s *attrib.Snapshot, o Options) error {
	d := NewDoc(s, o.Top)
	if len(o.Outputs) == 0 {
		return encodeJSON(w, d)
	}
	// "metrics" and "checks": the Python agent's outputs (attrib.Outputs).
	out := struct {
		*Doc
		Metrics []attrib.OutputRow `json:"metrics,omitempty"`
		Checks  []attrib.OutputRow `json:"checks,omitempty"`
		// Compiles: frames torch.compile compiled per step (one row).
		Compiles []attrib.OutputRow `json:"compiles,omitempty"`
		// InputWait: ns per step waiting in DataLoader next() (one row).
		InputWait []attrib.OutputRow `json:"input_wait,omitempty"`
		// MemoryCounters: the agent's per-step allocator counters
		// (attrib.MemoryCounterPrefix), bytes.
		MemoryCounters []attrib.OutputRow `json:"memory_counters,omitempty"`
	}{Doc: d}
	for _, r := range o.Outputs {
		switch r.Kind {
		case "metric":
			out.Metrics = append(out.Metrics, r)
		case "compile":
			out.Compiles = append(out.Compiles, r)
		case "input":
			out.InputWait = append(out.InputWait, r)
		case "memory":
			out.MemoryCounters = append(out.MemoryCounters, r)
		default:
			out.Checks = append(out.Checks, r)
		}
	}
	return encodeJSON(w, out)
}
