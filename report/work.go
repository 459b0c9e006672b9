package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/opmodel"
)

// Modelled work in reports: every row of a source that carries work
// (attrib.Snapshot.HasWork: recorded shapes, or the built-in loop) gets
// its FLOPs, bytes, achieved rates and roofline bound; reports of other
// sources are unchanged.

// WorkDoc is a row's modelled work in JSON (kernel, category and stage
// rows; absent when the source carries none). FLOPs follow the
// convention in Doc.Work.
type WorkDoc struct {
	Flops *float64 `json:"flops,omitempty"`
	Bytes *float64 `json:"bytes,omitempty"`
	// Intensity is FLOPs per byte.
	Intensity         *float64 `json:"arithmetic_intensity,omitempty"`
	AchievedFlopsPerS *float64 `json:"achieved_flops_per_s,omitempty"`
	AchievedBytesPerS *float64 `json:"achieved_bytes_per_s,omitempty"`
	// Bound ("compute" or "memory") and OfPeak (the share of that roof
	// reached) need the device's peak (Doc.Work.Device).
	Bound  string   `json:"bound,omitempty"`
	OfPeak *float64 `json:"of_peak,omitempty"`
	// WorkNs: time of the row's kernels with modelled work (the rates'
	// denominator); UnmodelledNs: time of those without.
	WorkNs       *int64 `json:"work_ns,omitempty"`
	UnmodelledNs *int64 `json:"unmodelled_ns,omitempty"`
	// FlopsByDType splits flops by the dtype they run at ("bf16", …), so
	// that merged reports weigh them by their own peaks (MergeDocs).
	FlopsByDType map[string]float64 `json:"flops_by_dtype,omitempty"`
}

// flopsByDType is w's FLOPs by dtype name (nil when all are unknown).
func flopsByDType(w attrib.Work) map[string]float64 {
	var m map[string]float64
	for i, f := range w.FlopsByDType {
		if f == 0 {
			continue
		}
		if m == nil {
			m = map[string]float64{}
		}
		name := tracer.DType(i).String()
		if name == "" {
			name = "unknown"
		}
		m[name] = f
	}
	return m
}

// work is the attrib.Work a row's JSON describes (MergeDocs).
func (d WorkDoc) work() attrib.Work {
	var w attrib.Work
	if d.Flops != nil {
		w.Flops = *d.Flops
	}
	if d.Bytes != nil {
		w.Bytes = *d.Bytes
	}
	if d.WorkNs != nil {
		w.Ns = *d.WorkNs
	}
	if d.UnmodelledNs != nil {
		w.UnmodelledNs = *d.UnmodelledNs
	}
	for k, f := range d.FlopsByDType {
		dt, _ := tracer.ParseDType(k)
		w.FlopsByDType[dt] += f
	}
	return w
}

// WorkSummaryDoc is Doc.Work: the totals, the convention, the device's
// limits and the steps' FLOPs and MFU.
type WorkSummaryDoc struct {
	Convention string `json:"convention"`
	// Device is the device table row the peaks come from, PeakSource its
	// datasheet (or the measurement), PeakNote why there is none.
	Device        string  `json:"device,omitempty"`
	PeakSource    string  `json:"peak_source,omitempty"`
	PeakMeasured  bool    `json:"peak_measured,omitempty"`
	PeakNote      string  `json:"peak_note,omitempty"`
	DType         string  `json:"dtype,omitempty"` // the dtype most FLOPs run at
	PeakFlopsPerS float64 `json:"peak_flops_per_s,omitempty"`
	PeakBytesPerS float64 `json:"peak_bytes_per_s,omitempty"`
	WorkDoc
	// FlopsMedian and MFU: the median over steps of their FLOPs and of
	// their model FLOPs utilisation (FLOPs at peak over the step's wall
	// time).
	FlopsMedian *float64 `json:"flops_median,omitempty"`
	MFU         *float64 `json:"mfu,omitempty"`
	// Unmodelled: kernel time without modelled work by the innermost
	// operator open at launch.
	Unmodelled []OpTimeDoc `json:"unmodelled"`
}

// OpTimeDoc is an operator's kernel time without modelled work.
type OpTimeDoc struct {
	Op    string `json:"op"`
	Count int64  `json:"count"`
	Ns    int64  `json:"ns"`
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// workDoc returns w's JSON fields (the zero WorkDoc when s carries no work).
func workDoc(s *attrib.Snapshot, w attrib.Work) WorkDoc {
	if !s.HasWork() {
		return WorkDoc{}
	}
	r := attrib.RatesOf(w, s.Peak)
	d := WorkDoc{Flops: f64(w.Flops), Bytes: f64(w.Bytes), WorkNs: i64(w.Ns), UnmodelledNs: i64(w.UnmodelledNs), FlopsByDType: flopsByDType(w)}
	if w.Bytes > 0 {
		d.Intensity = f64(r.Intensity)
	}
	if w.Ns > 0 {
		d.AchievedFlopsPerS, d.AchievedBytesPerS = f64(r.FlopsPerS), f64(r.BytesPerS)
	}
	if r.Bound != "" {
		d.Bound, d.OfPeak = string(r.Bound), f64(r.OfPeak)
	}
	return d
}

// workSummary returns Doc.Work (nil when s carries no work).
func workSummary(s *attrib.Snapshot) *WorkSummaryDoc {
	if !s.HasWork() {
		return nil
	}
	d := &WorkSummaryDoc{Convention: opmodel.Convention, WorkDoc: workDoc(s, s.Work), Unmodelled: []OpTimeDoc{}, PeakNote: s.PeakNote}
	dt := s.Work.DType()
	d.DType = dt.String()
	if p := s.Peak; p != nil {
		d.Device, d.PeakSource, d.PeakMeasured = p.Device, p.Source, p.Measured
		d.PeakFlopsPerS, d.PeakBytesPerS = p.FlopsFor(dt), p.BytesPerS
	}
	if sw := s.StepWork(); sw.N > 0 {
		d.FlopsMedian = f64(sw.FlopsMedian)
		if sw.NMFU > 0 {
			d.MFU = f64(sw.MFUMedian)
		}
	}
	for _, o := range s.Unmodelled {
		d.Unmodelled = append(d.Unmodelled, OpTimeDoc{Op: o.Op, Count: o.Count, Ns: o.Ns})
	}
	return d
}

// workHeader is the table and md header's work lines: the totals with
// their convention, the device's limits (or why none), the steps' MFU and
// the largest unmodelled operators.
func workHeader(b *strings.Builder, s *attrib.Snapshot, prefix string) {
	if !s.HasWork() {
		return
	}
	w := s.Work
	r := attrib.RatesOf(w, s.Peak)
	fmt.Fprintf(b, "%swork: %s, %s moved", prefix, units.SI(w.Flops, "FLOP"), units.SI(w.Bytes, "B"))
	// A trace without GPU work has CPU operators for rows, not kernels.
	rowsName, timeName := "kernels", "kernel time"
	if s.CPUOps() {
		rowsName, timeName = "CPU operators", "CPU op time"
	}
	if w.Ns > 0 {
		fmt.Fprintf(b, "; over its %s' %s: %s, %s", rowsName, Duration(w.Ns), units.SI(r.FlopsPerS, "FLOP/s"), units.SI(r.BytesPerS, "B/s"))
	}
	fmt.Fprintf(b, " (%s)\n", opmodel.Convention)
	if p := s.Peak; p != nil {
		dt := w.DType()
		label := "datasheet"
		if p.Measured {
			label = "measured"
		}
		fmt.Fprintf(b, "%speak: %s, %s %s, %s (%s: %s)\n", prefix, escape.Control(p.Device), units.SI(p.FlopsFor(dt), "FLOP/s"), dtName(dt), units.SI(p.BytesPerS, "B/s"), label, escape.Control(p.Source))
		stepsLine(b, s, prefix)
		switch {
		case p.Measured && s.PeakNote != "":
			fmt.Fprintf(b, "%snote: %s\n", prefix, escape.Control(s.PeakNote))
		case p.Measured && aboveRoof(s):
			fmt.Fprintf(b, "%snote: some rows run above the measured roof: the run's own kernels (a vendor BLAS) outpace the microbenchmark, so its shares of peak overstate\n", prefix)
		}
	} else {
		note := s.PeakNote
		if note == "" {
			note = "unknown device"
		}
		fmt.Fprintf(b, "%speak: none (%s): FLOPs and bytes without shares of peak\n", prefix, escape.Control(note))
		if s.SourcePeaks != nil {
			stepsLine(b, s, prefix)
		}
	}
	if n := len(s.Unmodelled); n > 0 {
		var total int64
		var parts []string
		for i, o := range s.Unmodelled {
			total += o.Ns
			if i < 3 {
				parts = append(parts, fmt.Sprintf("%s %s", escape.Control(o.Op), Duration(o.Ns)))
			}
		}
		more := ""
		if n > 3 {
			more = fmt.Sprintf(", %d more", n-3)
		}
		fmt.Fprintf(b, "%sunmodelled: %s of %s (%s%s)\n", prefix, Duration(total), timeName, strings.Join(parts, ", "), more)
	}
}

// stepsLine writes the steps' median FLOPs and MFU (each step against
// its own peak: attrib.Snapshot.StepPeak), when some step carries work.
func stepsLine(b *strings.Builder, s *attrib.Snapshot, prefix string) {
	sw := s.StepWork()
	fm, mfu, n, nm := sw.FlopsMedian, sw.MFUMedian, sw.N, sw.NMFU
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "%ssteps: median %s per step", prefix, units.SI(fm, "FLOP"))
	if all := len(s.Steps); n < all {
		// A Python command's agent profiles some steps only: the median
		// is over those, not the run.
		fmt.Fprintf(b, " (over the %d of %d steps with kernels)", n, all)
	}
	if nm > 0 {
		fmt.Fprintf(b, ", MFU %s", units.Share(mfu))
		if s.SourcePeaks != nil {
			b.WriteString(" (each step against its own source's device)")
		}
	}
	// A median far below the total reads as a contradiction unless it
	// says the steps cover only part of the work.
	var in float64
	for _, st := range s.Steps {
		in += st.Work.Flops
	}
	if w := s.Work; in < 0.99*w.Flops {
		verb := "hold"
		if n == 1 {
			verb = "holds"
		}
		fmt.Fprintf(b, " (%s %s %s of the %s; the rest ran outside steps)", plural(n, "step"), verb, units.SI(in, "FLOP"), units.SI(w.Flops, "FLOP"))
	}
	b.WriteByte('\n')
}

func dtName(d fmt.Stringer) string {
	if n := d.String(); n != "" {
		return n
	}
	return "fp32"
}

// workColumns are the work columns a grid gets when s carries work.
func workColumns(s *attrib.Snapshot, human bool) []string {
	if !s.HasWork() {
		return nil
	}
	if human {
		return []string{"FLOPs", "FLOP/s", "B/s", "FLOP/B", "bound", "of peak"}
	}
	return []string{"flops", "bytes", "achieved_flops_per_s", "achieved_bytes_per_s", "bound", "of_peak"}
}

// workCells are w's cells under workColumns.
func workCells(s *attrib.Snapshot, w attrib.Work, human bool) []string {
	if !s.HasWork() {
		return nil
	}
	r := attrib.RatesOf(w, s.Peak)
	if human {
		if !w.Known() {
			return []string{"-", "-", "-", "-", "-", "-"}
		}
		ai, of := "-", "-"
		if w.Bytes > 0 {
			ai = units.Sig3(r.Intensity)
		}
		if r.Bound != "" {
			of = units.Share(r.OfPeak)
		}
		bound := string(r.Bound)
		if bound == "" {
			bound = "-"
		}
		return []string{units.SI(w.Flops, ""), units.SI(r.FlopsPerS, ""), units.SI(r.BytesPerS, ""), ai, bound, of}
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) } // CSV: exact, as JSON
	of := ""
	if r.Bound != "" {
		of = g(r.OfPeak)
	}
	return []string{g(w.Flops), g(w.Bytes), g(r.FlopsPerS), g(r.BytesPerS), string(r.Bound), of}
}

// stepWorkColumns are the step grid's work columns.
func stepWorkColumns(s *attrib.Snapshot, human bool) []string {
	if !s.HasWork() {
		return nil
	}
	if human {
		return []string{"FLOPs", "FLOP/s", "MFU"}
	}
	return []string{"flops", "bytes", "mfu"}
}

func stepWorkCells(s *attrib.Snapshot, st attrib.StepRow, human bool) []string {
	if !s.HasWork() {
		return nil
	}
	p := s.StepPeak(st.Source)
	mfu := attrib.MFU(st.Work, p, st.DurNs)
	ok := p != nil && attrib.StepHasWork(&st)
	if human {
		m := "-"
		if ok {
			m = units.Share(mfu)
		}
		rate := "-"
		if st.DurNs > 0 {
			rate = units.SI(st.Work.Flops/(float64(st.DurNs)/1e9), "")
		}
		return []string{units.SI(st.Work.Flops, ""), rate, m}
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) } // CSV: exact, as JSON
	m := ""
	if ok {
		m = g(mfu)
	}
	return []string{g(st.Work.Flops), g(st.Work.Bytes), m}
}

// writeCompareWork writes, for a comparison whose category rows carry
// modelled work (attrib.RowComparison.AWork/BWork), each such category's
// bytes and FLOPs per step and achieved rates in both arms: a flip of the
// attention backend moves the bytes, not the FLOPs.
func writeCompareWork(b *strings.Builder, c *attrib.Comparison, md bool) {
	if len(c.Arms) < 2 {
		return
	}
	an, bn := c.Arms[0].Name, c.Arms[1].Name
	header := []string{"category", an + " bytes/step", bn + " bytes/step", "bytes " + bn + "/" + an, an + " FLOPs/step", bn + " FLOPs/step", an + " FLOP/s", bn + " FLOP/s", an + " B/s", bn + " B/s"}
	var rows [][]string
	cell := func(w *attrib.ArmWork, f func(*attrib.ArmWork) float64, unit string) string {
		if w == nil {
			return "-"
		}
		return units.SI(f(w), unit)
	}
	for _, r := range c.Rows {
		if r.AWork == nil && r.BWork == nil {
			continue
		}
		ratio := "-"
		if r.AWork != nil && r.BWork != nil && r.AWork.BytesPerStep > 0 {
			ratio = units.Times(r.BWork.BytesPerStep / r.AWork.BytesPerStep)
		}
		bytes := func(w *attrib.ArmWork) float64 { return w.BytesPerStep }
		flops := func(w *attrib.ArmWork) float64 { return w.FlopsPerStep }
		fps := func(w *attrib.ArmWork) float64 { return w.FlopsPerS }
		bps := func(w *attrib.ArmWork) float64 { return w.BytesPerS }
		rows = append(rows, []string{r.Key, cell(r.AWork, bytes, "B"), cell(r.BWork, bytes, "B"), ratio,
			cell(r.AWork, flops, "FLOP"), cell(r.BWork, flops, "FLOP"), cell(r.AWork, fps, "FLOP/s"), cell(r.BWork, fps, "FLOP/s"),
			cell(r.AWork, bps, "B/s"), cell(r.BWork, bps, "B/s")})
	}
	if len(rows) == 0 {
		return
	}
	writeSmallTable(b, "modelled work per category and arm ("+opmodel.Convention+")", header, rows, md)
}

// aboveRoof reports whether a category of s reaches more than its roof.
func aboveRoof(s *attrib.Snapshot) bool {
	for _, g := range s.Categories {
		if r := attrib.RatesOf(g.Work, s.Peak); r.Bound != "" && r.OfPeak > 1 {
			return true
		}
	}
	return false
}

// mergeWork adds a report's work totals and unmodelled operators to s
// (MergeDocs), keeping the operators sorted as attrib does.
func mergeWork(s *attrib.Snapshot, d *Doc) {
	if d.Work == nil {
		return
	}
	s.Work.Add(d.Work.WorkDoc.work())
	for _, o := range d.Work.Unmodelled {
		i := slices.IndexFunc(s.Unmodelled, func(x attrib.OpTime) bool { return x.Op == o.Op })
		if i < 0 {
			s.Unmodelled = append(s.Unmodelled, attrib.OpTime{Op: o.Op})
			i = len(s.Unmodelled) - 1
		}
		s.Unmodelled[i].Count += o.Count
		s.Unmodelled[i].Ns += o.Ns
	}
	slices.SortFunc(s.Unmodelled, func(x, y attrib.OpTime) int { return cmp.Or(cmp.Compare(y.Ns, x.Ns), strings.Compare(x.Op, y.Op)) })
}
