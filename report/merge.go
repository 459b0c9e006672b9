package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/internal/interval"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// IsDoc reports whether head (the start of a file) is a JSON report
// written by `rlktop report --format json` rather than a trace: a JSON
// object whose first keys are "format", "source" and "summary_only", in
// Doc's field order (no trace format rlktop reads starts so).
func IsDoc(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	f := bytes.Index(head, []byte(`"format"`))
	s := bytes.Index(head, []byte(`"source"`))
	so := bytes.Index(head, []byte(`"summary_only"`))
	return f > 0 && s > f && so > s
}

// ParseDoc decodes one JSON report (IsDoc). name is for the error.
func ParseDoc(data []byte, name string) (*Doc, error) {
	var d Doc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: not a JSON report of rlktop report --format json: %w", name, err)
	}
	return &d, nil
}

// MergeDocs merges JSON reports of separate sources (each the `rlktop
// report --format json` output of one rank's trace, in input order) into
// the snapshot that reporting the traces together gives
// (attrib.CombineSources), so that every --by view and --format can be
// written from it:
//
//   - totals, category, stage and transfer sums, kernel counts, totals,
//     min, max and mean are sums / extremes of the inputs' (exact); busy
//     time is per source and device, so it sums too; the span is the
//     longest source's own;
//   - steps stay per (source, step); sources are the inputs' sources,
//     ranked as attrib.Ranks ranks them, with step spreads
//     (attrib.MergeSources);
//   - a kernel row met in several inputs has approximate percentiles
//     (PercentilesApprox; mergedQuantile: the exact ones need every
//     duration), the stage
//     of the input where its total is largest (exact when one input has
//     most of its time in that stage) and the launch context of the first
//     input that has it (exact: the first occurrence's);
//   - collective matching (late arrival, waits) needs the events: those
//     fields stay empty, and a warning says so.
//
// Inputs written with --top N lose kernel rows: a warning names them.
// Inputs that are themselves merges of several sources are refused (their
// steps' sources cannot be told apart again).
func MergeDocs(docs []*Doc, names []string) (*attrib.Snapshot, error) {
	s := &attrib.Snapshot{Rank: -1}
	var (
		sources, formats, stepRules []string
		rows                        []attrib.SourceRow
		steps                       []map[int64]int64
		kernels                     = map[kernelKey]*mergedKernel{}
		cats, stages                = map[string]*attrib.GroupRow{}, map[string]*attrib.GroupRow{}
		summaryOnly, cpuOps         = true, true
	)
	for i, d := range docs {
		name := fmt.Sprint(i)
		if i < len(names) {
			name = names[i]
		}
		if len(d.Sources) > 1 {
			return nil, fmt.Errorf("%s: a report of %d sources; merge the reports of single sources (one per rank) instead", name, len(d.Sources))
		}
		sources = append(sources, d.Source)
		for _, f := range strings.Split(d.Format, "+") {
			if !slices.Contains(formats, f) {
				formats = append(formats, f)
			}
		}
		for _, r := range strings.Split(d.StepRule, "; ") {
			if r != "" && !slices.Contains(stepRules, r) {
				stepRules = append(stepRules, r)
			}
		}
		summaryOnly = summaryOnly && d.SummaryOnly
		cpuOps = cpuOps && d.CPUOps
		if len(docs) == 1 {
			s.Rank = d.Rank
		}
		for _, dv := range d.Devices {
			s.Devices = append(s.Devices, tracer.Device{ID: dv.ID, Name: dv.Name, Vendor: dv.Vendor, TotalMemory: dv.TotalMemory, ComputeCap: dv.ComputeCap})
			s.DeviceSource = append(s.DeviceSource, i)
		}
		t, dt := &s.Totals, d.Totals
		t.KernelCount += dt.KernelCount
		t.KernelTotalNs = addSat(t.KernelTotalNs, dt.KernelTotalNs)
		t.KernelBusyNs = addSat(t.KernelBusyNs, dt.KernelBusyNs)
		t.GPUBusyNs = addSat(t.GPUBusyNs, dt.GPUBusyNs)
		t.TransferCount += dt.TransferCount
		t.TransferNs = addSat(t.TransferNs, dt.TransferNs)
		t.GPUTotalNs = addSat(t.GPUTotalNs, dt.GPUTotalNs)
		span := dt.SpanNs
		if len(d.Sources) == 1 && len(docs) > 1 {
			span = d.Sources[0].SpanNs // CombineSources: the longest source's own span
		}
		t.SpanNs = max(t.SpanNs, span)
		var n int64
		for _, k := range append(slices.Clip(d.Kernels), d.Transfers...) {
			n += k.Count
			addKernel(kernels, k)
		}
		if n != dt.KernelCount+dt.TransferCount {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: its kernel and transfer rows count %d ops of %d (written with --top?): the merged kernel table lacks the rest; totals, categories and stages are whole", name, n, dt.KernelCount+dt.TransferCount))
		}
		addGroups(cats, d.Categories, func(g GroupDoc) (string, int64, int64, attrib.Work) { return g.Category, g.Count, g.TotalNs, g.work() })
		addGroups(stages, d.Stages, func(g StageDoc) (string, int64, int64, attrib.Work) { return g.Stage, g.Count, g.TotalNs, g.work() })
		mergeWork(s, d)
		durs := map[int64]int64{}
		s.StepsForgotten += d.StepsForgotten
		for _, st := range d.Steps {
			s.Steps = append(s.Steps, attrib.StepRow{Step: st.Step, StartNs: st.StartNs, DurNs: st.DurNs, KernelNs: st.KernelNs, Count: st.Count, Source: i,
				Work: WorkDoc{Flops: st.Flops, Bytes: st.Bytes, WorkNs: st.WorkNs, UnmodelledNs: st.UnmodelledNs, FlopsByDType: st.FlopsByDType}.work()})
			if _, ok := durs[st.Step]; !ok {
				durs[st.Step] = st.DurNs
			}
		}
		steps = append(steps, durs)
		s.Dropped += d.Dropped
		s.Warnings = append(s.Warnings, d.Warnings...)
		rows = append(rows, sourceRow(d, i))
	}
	s.Source = strings.Join(sources, ", ")
	s.Format = strings.Join(formats, "+")
	s.StepRule = strings.Join(stepRules, "; ")
	s.SummaryOnly = summaryOnly && len(docs) > 0
	if cpuOps && len(docs) > 0 {
		// Every report's rows were CPU operators: the merge's are too
		// (Snapshot.CPUOps reads the devices that ran work).
		s.WorkDevices = []int32{-1}
	}
	for _, k := range kernels {
		r := k.row
		r.MeanNs = r.TotalNs / max(r.Count, 1)
		if len(k.parts) > 1 {
			r.P50Ns, r.P99Ns = mergedQuantile(k.parts, 0.50), mergedQuantile(k.parts, 0.99)
			r.PercentilesApprox = true
		}
		if r.Kind == tracer.KindKernel {
			r.Share = ratio(r.TotalNs, s.Totals.KernelTotalNs)
			s.Kernels = append(s.Kernels, r)
		} else {
			r.Share = ratio(r.TotalNs, s.Totals.TransferNs)
			s.Transfers = append(s.Transfers, r)
		}
	}
	byTotal := func(x, y attrib.KernelRow) int {
		return cmp.Or(cmp.Compare(y.TotalNs, x.TotalNs), strings.Compare(x.Name, y.Name))
	}
	slices.SortFunc(s.Kernels, byTotal)
	slices.SortFunc(s.Transfers, byTotal)
	s.Categories = groupRows(cats, s.Totals.GPUTotalNs)
	s.Stages = groupRows(stages, s.Totals.GPUTotalNs)
	if len(docs) > 1 {
		s.Ranks = attrib.MergeSources(rows, steps)
		s.Warnings = append(s.Warnings, fmt.Sprintf("merged from %d JSON reports: collectives are not matched across sources (late arrivals and waits need the traces); kernel rows found in several reports have approximate p50/p99", len(docs)))
	} else if len(docs) == 1 {
		s.Ranks = attrib.MergeSources(rows, steps)
		if len(s.Steps) > 0 {
			slices.SortFunc(s.Steps, func(x, y attrib.StepRow) int { return cmp.Compare(x.Step, y.Step) })
		}
	}
	return s, nil
}

type kernelKey struct{ kind, name, cat string }

type mergedKernel struct {
	row      attrib.KernelRow
	inputs   int
	parts    []KernelDoc // each input's row, for the percentiles
	topTotal int64       // total of the input the stage came from
}

// mergedQuantile estimates the q-quantile (0 < q < 1) of the union of the
// inputs' durations from each input's count, min, p50, p99 and max: each
// input's distribution is taken as linear between those points (at
// cumulative shares 0, 0.5, 0.99, 1), and the union's share below x,
// Σ count_i F_i(x) / Σ count_i, is solved for q by bisection over ns.
// It lies between the smallest and largest of the inputs' own q-quantiles
// when those are 0.5 or 0.99 (the union's median is between the inputs'
// medians); exact when one input has every duration.
func mergedQuantile(parts []KernelDoc, q float64) int64 {
	var n float64
	lo, hi := int64(1<<63-1), int64(0)
	for _, p := range parts {
		n += float64(p.Count)
		lo, hi = min(lo, p.MinNs), max(hi, p.MaxNs)
	}
	below := func(x int64) float64 {
		var c float64
		for _, p := range parts {
			c += float64(p.Count) * piecewise(x, []int64{p.MinNs, p.P50Ns, p.P99Ns, p.MaxNs}, []float64{0, 0.5, 0.99, 1})
		}
		return c / n
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if below(mid) >= q {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// piecewise is the linear interpolation through (xs[i], ys[i]), xs
// ascending: ys[0] below xs[0], the last y above the last x.
func piecewise(x int64, xs []int64, ys []float64) float64 {
	if x < xs[0] {
		return 0
	}
	for i := 1; i < len(xs); i++ {
		if x < xs[i] {
			return ys[i-1] + (ys[i]-ys[i-1])*float64(x-xs[i-1])/float64(xs[i]-xs[i-1])
		}
	}
	return 1
}

func addKernel(m map[kernelKey]*mergedKernel, k KernelDoc) {
	key := kernelKey{k.Kind, k.Name, k.Category}
	kind, _ := tracer.ParseKind(k.Kind)
	mk := m[key]
	if mk == nil {
		mk = &mergedKernel{row: attrib.KernelRow{Name: k.Name, DisplayName: k.DisplayName, Kind: kind, Category: k.Category,
			MinNs: k.MinNs, MaxNs: k.MaxNs, P50Ns: k.P50Ns, P99Ns: k.P99Ns, PercentilesApprox: k.PercentilesApprox}}
		m[key] = mk
	}
	r := &mk.row
	mk.inputs++
	r.Count += k.Count
	r.TotalNs = addSat(r.TotalNs, k.TotalNs)
	r.MinNs, r.MaxNs = min(r.MinNs, k.MinNs), max(r.MaxNs, k.MaxNs)
	r.Work.Add(k.WorkDoc.work())
	r.PercentilesApprox = r.PercentilesApprox || k.PercentilesApprox
	mk.parts = append(mk.parts, k)
	if mk.inputs == 1 {
		// The context is the first occurrence's (attrib.KernelRow): in
		// the first input that has the kernel, as AddTrace in input order.
		r.Ops, r.Ranges, r.StageRule = k.Ops, k.Ranges, k.StageRule
	}
	if mk.inputs == 1 || k.TotalNs > mk.topTotal {
		mk.topTotal = k.TotalNs
		r.Stage = k.Stage
	}
}

func addGroups[G any](m map[string]*attrib.GroupRow, gs []G, kv func(G) (string, int64, int64, attrib.Work)) {
	for _, g := range gs {
		key, n, ns, w := kv(g)
		r := m[key]
		if r == nil {
			r = &attrib.GroupRow{Key: key}
			m[key] = r
		}
		r.Count += n
		r.TotalNs = addSat(r.TotalNs, ns)
		r.Work.Add(w)
	}
}

// groupRows sorts as the aggregator does: total descending, then key.
func groupRows(m map[string]*attrib.GroupRow, gpuTotal int64) []attrib.GroupRow {
	var out []attrib.GroupRow
	for _, r := range m {
		r.Share = ratio(r.TotalNs, gpuTotal)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y attrib.GroupRow) int {
		return cmp.Or(cmp.Compare(y.TotalNs, x.TotalNs), strings.Compare(x.Key, y.Key))
	})
	return out
}

// sourceRow is a single-source report's source row (its "sources" entry;
// reports written before sources existed: from its totals and steps).
func sourceRow(d *Doc, i int) attrib.SourceRow {
	if len(d.Sources) == 1 {
		x := d.Sources[0]
		r := attrib.SourceRow{Index: i, Rank: x.Rank, RankFrom: x.RankFrom, World: x.World, Path: x.Path, Format: x.Format,
			StartNs: x.StartNs, EndNs: x.EndNs, SpanNs: x.SpanNs, KernelCount: x.KernelCount, KernelNs: x.KernelNs,
			BusyNs: x.BusyNs, IdleNs: x.IdleNs, ComputeNs: x.ComputeNs, CommNs: x.CommNs, CommExposedNs: x.CommExposedNs,
			CommOverlapNs: x.CommOverlapNs, Steps: x.Steps, StepMedianNs: x.StepMedianNs}
		r.Name = filepath.Base(x.Path)
		if x.Path == "" {
			r.Name = x.Format
		}
		return r
	}
	r := attrib.SourceRow{Index: i, Rank: d.Rank, RankFrom: attrib.RankFromTrace, Path: d.Source, Name: filepath.Base(d.Source), Format: d.Format,
		SpanNs: d.Totals.SpanNs, KernelCount: d.Totals.KernelCount, KernelNs: d.Totals.KernelTotalNs, Steps: len(d.Steps)}
	if d.Rank < 0 {
		r.RankFrom = attrib.RankFromOrder
	}
	return r
}

// ratio is a/b, 0 when b is 0 (the aggregator's shares).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// addSat adds ns sums saturating at 2^63-1, as the aggregator does.
func addSat(a, b int64) int64 { return interval.AddSat(a, b) }
