package attrib

import (
	"cmp"
	"slices"

	"github.com/rlktop/rlktop/tracer"
)

// Work is the modelled work of a row — kernel, category, stage, step or
// the whole snapshot: the FLOPs and bytes its kernels carry
// (tracer.Work, from the operator model or the built-in loop), the time
// of those kernels, and the time of the kernels that carry none. Zero
// when the source recorded no shapes.
type Work struct {
	Flops float64 // FLOPs (multiply-add = 2: opmodel.Convention)
	Bytes float64 // bytes read + written, a lower bound of traffic
	// FlopsByDType splits Flops by the dtype they run at (the device's
	// peak differs per dtype), indexed by tracer.DType.
	FlopsByDType [8]float64
	// Ns is the summed time of the kernels with modelled work, ns: the
	// time achieved rates divide by.
	Ns int64
	// UnmodelledNs is the summed time of kernels whose launching
	// operators have no model, or that no recorded operator launched,
	// ns; only counted in sources that carry work.
	UnmodelledNs int64
	kernels      int64 // kernels with modelled work (for OpTime.Count)
}

// Known reports whether any kernel of the row carried modelled work.
func (w *Work) Known() bool { return w.Ns > 0 || w.Flops > 0 || w.Bytes > 0 }

// add adds x to w.
func (w *Work) add(x *Work) {
	w.Flops += x.Flops
	w.Bytes += x.Bytes
	for i := range w.FlopsByDType {
		w.FlopsByDType[i] += x.FlopsByDType[i]
	}
	w.Ns = addSat(w.Ns, x.Ns)
	w.UnmodelledNs = addSat(w.UnmodelledNs, x.UnmodelledNs)
	w.kernels += x.kernels
}

// Add adds x to w (rows of several sources combined).
func (w *Work) Add(x Work) { w.add(&x) }

// DType returns the dtype most of w's FLOPs run at (DTypeUnknown when none).
func (w *Work) DType() tracer.DType {
	best, bestF := tracer.DTypeUnknown, 0.0
	for i, f := range w.FlopsByDType {
		if f > bestF {
			best, bestF = tracer.DType(i), f
		}
	}
	return best
}

// addPacked adds one kernel's packed work (Event.Value) of duration d ns.
func (w *Work) addPacked(v int64, d int64) {
	x, ok := tracer.UnpackWork(v)
	if !ok || !x.Modelled {
		return
	}
	w.Flops += x.Flops
	w.Bytes += x.Bytes
	w.FlopsByDType[x.DType&7] += x.Flops
	w.Ns = addSat(w.Ns, d)
	w.kernels++
}

// OpTime is an operator's kernel time without modelled work.
type OpTime struct {
	Op    string // the innermost operator open at launch; "(no operator)" when none
	Count int64
	Ns    int64
}

// NoOperator names kernels launched outside every recorded operator.
const NoOperator = "(no operator)"

// unmodelledRows returns the operators of m sorted by time, largest first.
func unmodelledRows(m map[string]*OpTime) []OpTime {
	out := make([]OpTime, 0, len(m))
	for _, o := range m {
		out = append(out, *o)
	}
	slices.SortFunc(out, func(x, y OpTime) int { return cmp.Or(cmp.Compare(y.Ns, x.Ns), cmp.Compare(x.Op, y.Op)) })
	return out
}

// flushWork adds r's open cell's work (d ns of kernels in context cx) to
// the row, its category, stage and step, and the cell's time without work
// to the unmodelled time of its innermost operator.
func (a *Aggregator) flushWork(r *rowAcc, b *binding, cx *ctxInfo, n, d int64) {
	w := &r.pw
	w.UnmodelledNs = max(d-w.Ns, 0)
	r.w.add(w)
	for len(a.catWork) <= int(r.cat) {
		a.catWork = append(a.catWork, Work{})
	}
	a.catWork[r.cat].add(w)
	for len(a.stageWork) <= int(cx.stage) {
		a.stageWork = append(a.stageWork, Work{})
	}
	a.stageWork[cx.stage].add(w)
	if cx.step >= 0 && cx.stepAcc != nil {
		cx.stepAcc.work.add(w)
	}
	if w.UnmodelledNs > 0 {
		op := NoOperator
		if cx.innerOp != 0 {
			op = b.strs.Get(cx.innerOp)
		}
		if a.unmod == nil {
			a.unmod = map[string]*OpTime{}
		}
		o := a.unmod[op]
		if o == nil {
			o = &OpTime{Op: op}
			a.unmod[op] = o
		}
		o.Ns = addSat(o.Ns, w.UnmodelledNs)
		o.Count += max(n-w.kernels, 0)
	}
	*w = Work{}
}

func workAt(ws []Work, id int) Work {
	if id < len(ws) {
		return ws[id]
	}
	return Work{}
}

// snapshotWork sets the snapshot's total work and unmodelled operators.
func (a *Aggregator) snapshotWork(s *Snapshot) {
	if !a.hasWork {
		return
	}
	for i := range s.Kernels {
		s.Work.add(&s.Kernels[i].Work)
	}
	s.Unmodelled = unmodelledRows(a.unmod)
}

// ExpectWork tells the Aggregator that its source carries work (a
// streamed trace with recorded shapes, before its first window), so that
// kernels without work are counted as unmodelled from the first one on,
// as AddTrace does for a trace with operator calls.
func (a *Aggregator) ExpectWork() { a.hasWork = true }

// ExpectWork is Aggregator.ExpectWork for the stream's aggregator and
// its current source.
func (s *SourceStream) ExpectWork() {
	s.agg.ExpectWork()
	s.source().work = true
}

// HasWork reports whether a source of s carried modelled work (recorded
// shapes, or a source that counts its own): the FLOP and byte columns,
// rates and MFU are shown only then.
func (s *Snapshot) HasWork() bool { return s.Work.Known() || len(s.Unmodelled) > 0 }

// StepWorkSummary is the work of some steps: the median of their FLOPs and
// of their MFU, each step against its own peak (StepPeak), over the steps
// that carry work (StepHasWork; a Python command's agent profiles 2 steps
// of every 10: the others have no kernels). N counts those steps, NMFU
// those with a peak (MFUMedian is over them; 0 when none).
type StepWorkSummary struct {
	FlopsMedian, MFUMedian float64
	N, NMFU                int
}

// StepWork summarises every source's steps together.
func (s *Snapshot) StepWork() StepWorkSummary {
	var fl, mf []float64
	for i := range s.Steps {
		fl, mf = s.addStepWork(&s.Steps[i], fl, mf)
	}
	return StepWorkSummary{medianF(fl), medianF(mf), len(fl), len(mf)}
}

// StepWorkBySource is StepWork of each source's steps apart, by source
// index, in one pass (sources without a step that carries work are
// absent).
func (s *Snapshot) StepWorkBySource() map[int]StepWorkSummary {
	fl, mf := map[int][]float64{}, map[int][]float64{}
	for i := range s.Steps {
		st := &s.Steps[i]
		fl[st.Source], mf[st.Source] = s.addStepWork(st, fl[st.Source], mf[st.Source])
	}
	out := make(map[int]StepWorkSummary, len(fl))
	for src, f := range fl {
		if len(f) > 0 {
			out[src] = StepWorkSummary{medianF(f), medianF(mf[src]), len(f), len(mf[src])}
		}
	}
	return out
}

// addStepWork appends st's FLOPs and MFU (when it has a peak) to fl and
// mf when st carries work.
func (s *Snapshot) addStepWork(st *StepRow, fl, mf []float64) ([]float64, []float64) {
	if !StepHasWork(st) {
		return fl, mf
	}
	fl = append(fl, st.Work.Flops)
	if p := s.StepPeak(st.Source); p != nil {
		mf = append(mf, MFU(st.Work, p, st.DurNs))
	}
	return fl, mf
}

// StepHasWork reports whether st has a wall time and kernels of a source
// that carries work, modelled or not: a step with neither has no FLOPs
// to count and no MFU.
func StepHasWork(st *StepRow) bool {
	return st.DurNs > 0 && (st.Work.Ns > 0 || st.Work.UnmodelledNs > 0)
}

// StepPeak is the peak the steps of source are read against: that
// source's own when the sources ran on different devices
// (SourcePeaks), else Peak; nil when unknown.
func (s *Snapshot) StepPeak(source int) *Peak {
	if s.SourcePeaks != nil {
		if source >= 0 && source < len(s.SourcePeaks) {
			return s.SourcePeaks[source]
		}
		return nil
	}
	return s.Peak
}

// HasStepPeak reports whether some step has a peak to be read against.
func (s *Snapshot) HasStepPeak() bool {
	return s.Peak != nil || slices.ContainsFunc(s.SourcePeaks, func(p *Peak) bool { return p != nil })
}

// medianF returns the median of v (the mean of the middle two for an
// even count; 0 for none). It sorts v.
func medianF(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// addWork adds GPU op e to the step's work as the Aggregator's flushWork
// does: a modelled kernel's work and time, another kernel's time as
// unmodelled (transfers: neither).
func (st *StepRow) addWork(e *tracer.Event) {
	if e.Kind != tracer.KindKernel {
		return
	}
	d := max(e.Dur, 0)
	if isModelled(e.Value) {
		st.Work.addPacked(e.Value, d)
	} else {
		st.Work.UnmodelledNs = addSat(st.Work.UnmodelledNs, d)
	}
}

// isModelled reports whether a kernel's packed work is modelled.
func isModelled(v int64) bool {
	w, ok := tracer.UnpackWork(v)
	return ok && w.Modelled
}

// traceHasWork reports whether a kernel of t carries work (a source that
// counts its own: the built-in loop's recordings and their exports).
func traceHasWork(t *tracer.Trace) bool {
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == tracer.KindKernel && e.Value != 0 {
			return true
		}
	}
	return false
}
