package attrib

import (
	"fmt"
	"slices"

	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/opmodel"
)

// Findings over modelled work (Snapshot.Work) and the device's limits
// (Snapshot.Peak); neither fires without both.
const (
	// FindRooflineBound: the share of a category's modelled kernel time
	// spent in memory-bound kernels (each kernel row's roofline bound),
	// with how far below the memory roof they run.
	FindRooflineBound = "roofline-bound"
	// FindMFU: the step's FLOP rate and MFU, and the share of the modelled
	// kernel time in memory-bound kernels.
	FindMFU = "mfu"
)

// boundTally is the modelled work of some kernel rows and of the
// memory-bound ones among them (each row's roofline bound at the
// snapshot's peaks), with the three memory-bound rows of most modelled
// time, earlier rows first among equals.
type boundTally struct {
	all, mem Work
	top      []int // row indexes into Snapshot.Kernels
}

func (t *boundTally) add(s *Snapshot, i int, memory bool) {
	k := &s.Kernels[i]
	t.all.add(&k.Work)
	if !memory {
		return
	}
	t.mem.add(&k.Work)
	// Kept while scanning: half of 100k rows can be memory-bound, and
	// sorting them all cost more than the scan.
	if n := len(t.top); n < 3 || k.Work.Ns > s.Kernels[t.top[n-1]].Work.Ns {
		at := n
		for at > 0 && k.Work.Ns > s.Kernels[t.top[at-1]].Work.Ns {
			at--
		}
		t.top = slices.Insert(t.top, at, i)
		t.top = t.top[:min(len(t.top), 3)]
	}
}

// boundScan tallies a snapshot's kernel rows with modelled work, all of
// them and per category, in one pass made the first time a rule asks:
// the roofline rules of one evaluation share it.
type boundScan struct {
	s     *Snapshot
	all   *boundTally
	byCat map[string]*boundTally
}

// of is the tally of the rows of category cat ("": every row).
func (b *boundScan) of(cat string) *boundTally {
	if b.all == nil {
		b.all, b.byCat = &boundTally{}, map[string]*boundTally{}
		p := b.s.Peak
		roofs := p != nil && p.BytesPerS > 0 && p.FlopsFor(tracer.DTypeFP32) > 0
		var last string
		var lastT *boundTally
		for i := range b.s.Kernels {
			k := &b.s.Kernels[i]
			if k.Work.Ns <= 0 {
				continue
			}
			if lastT == nil || k.Category != last {
				last, lastT = k.Category, b.byCat[k.Category]
				if lastT == nil {
					lastT = &boundTally{}
					b.byCat[k.Category] = lastT
				}
			}
			memory := roofs && boundOf(&k.Work, p) == BoundMemory
			b.all.add(b.s, i, memory)
			lastT.add(b.s, i, memory)
		}
	}
	if cat == "" {
		return b.all
	}
	if t := b.byCat[cat]; t != nil {
		return t
	}
	return &boundTally{}
}

// memoryBound is the modelled work of category cat's rows ("": every
// row's) and of the memory-bound ones, with the three longest of those
// described.
func memoryBound(b *boundScan, cat string, labels *kernelLabelSet) (all, mem Work, top []string) {
	t := b.of(cat)
	for _, i := range t.top {
		k := &b.s.Kernels[i]
		rt := RatesOf(k.Work, b.s.Peak)
		top = append(top, fmt.Sprintf("%s %s, %s at %s of the memory roof", labels.of(i), units.Duration(k.Work.Ns), units.SI(rt.BytesPerS, "B/s"), units.Share(rt.OfPeak)))
	}
	return t.all, t.mem, top
}

func (r *FindingRule) rooflineBound(s *Snapshot, labels *kernelLabelSet, bounds *boundScan) *Finding {
	if s.Peak == nil || !s.HasWork() {
		return nil
	}
	all, mem, top := memoryBound(bounds, r.Category, labels)
	if all.Ns <= 0 || mem.Ns <= 0 {
		return nil
	}
	share := float64(mem.Ns) / float64(all.Ns)
	if share < r.MinShare {
		return nil
	}
	// A rule that names a math fallback fires only on it: a fused kernel
	// below the ridge (flash at short sequences, bytes being a lower
	// bound) has no better backend to try.
	// And only when the fallback is a real part of the memory-bound time
	// (min_share of it): a stray math call (798 µs beside 890 ms of flash
	// in a CPU run) does not make "switch to flash" the advice.
	math := r.mathKernels(s)
	if (r.kernel != nil || r.context != nil) && float64(math) < r.MinShare*float64(mem.Ns) {
		return nil
	}
	mr, ar := RatesOf(mem, s.Peak), RatesOf(all, s.Peak)
	dt := all.DType()
	f := &Finding{Share: share, ShareOf: "its modelled kernel time, in memory-bound kernels", Top: top, Numbers: map[string]float64{
		"memory_bound_ns": float64(mem.Ns), "modelled_ns": float64(all.Ns), "memory_bound_share": share,
		"of_memory_roof": mr.OfPeak, "bytes": all.Bytes, "flops": all.Flops, "intensity": ar.Intensity,
		"ridge": s.Peak.Ridge(dt), "bytes_per_s": mr.BytesPerS, "peak_bytes_per_s": s.Peak.BytesPerS,
		"key:" + r.Category: 1, // the category, as the dominant rules name theirs
	}}
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("%s: %s of its modelled kernel time (%s of %s) in memory-bound kernels, at %s of the memory roof (%s of %s, %s)",
			r.Category, units.ShareWhole(share), units.Duration(mem.Ns), units.Duration(all.Ns), units.Share(mr.OfPeak),
			units.SI(mr.BytesPerS, "B/s"), units.SI(s.Peak.BytesPerS, "B/s"), s.Peak.Device),
		fmt.Sprintf("%s moves %s for %s: %s FLOP/B against the ridge point's %s (%s)", r.Category, units.SI(all.Bytes, "B"),
			units.SI(all.Flops, "FLOP"), units.Sig3(ar.Intensity), units.Sig3(s.Peak.Ridge(dt)), opmodel.Convention))
	if math > 0 {
		f.Numbers["math_ns"] = float64(math)
		f.Evidence = append(f.Evidence, fmt.Sprintf("the math fallback (%s of it) writes and reads the [batch, heads, T, T] scores that a fused kernel keeps on chip", units.Duration(math)))
	}
	return f
}

// mathKernels is the time of the rule's category's kernels that its
// kernel / context regexes name as the math fallback (0 without them).
func (r *FindingRule) mathKernels(s *Snapshot) int64 {
	if r.kernel == nil && r.context == nil {
		return 0
	}
	var ns int64
	for i := range s.Kernels {
		k := &s.Kernels[i]
		if k.Category != r.Category || (r.fused != nil && (r.fused.MatchString(k.Name) || slices.ContainsFunc(k.Ops, r.fused.MatchString))) {
			continue
		}
		if (r.kernel != nil && (r.kernel.MatchString(k.Name) || r.kernel.MatchString(k.DisplayName))) ||
			(r.context != nil && (slices.ContainsFunc(k.Ops, r.context.MatchString) || slices.ContainsFunc(k.Ranges, r.context.MatchString))) {
			ns += k.TotalNs
		}
	}
	return ns
}

func (r *FindingRule) mfu(s *Snapshot, labels *kernelLabelSet, bounds *boundScan) *Finding {
	if s.Peak == nil || !s.HasWork() {
		return nil
	}
	all, mem, top := memoryBound(bounds, "", labels)
	if all.Ns <= 0 {
		return nil
	}
	share := float64(mem.Ns) / float64(all.Ns)
	if share < r.MinShare {
		return nil
	}
	// Ranked by the memory-bound part of all the kernel time, not of the
	// modelled part alone: a trace whose operators were mostly not
	// modelled (a decode step of 9.8 ms with 75 µs modelled) would rank
	// first at "100%" on a sliver.
	rank := float64(mem.Ns) / float64(max(all.Ns, s.Totals.KernelTotalNs))
	f := &Finding{Share: rank, ShareOf: "the kernel time, in modelled memory-bound kernels", Top: top, Numbers: map[string]float64{
		"memory_bound_share": share, "flops": s.Work.Flops, "bytes": s.Work.Bytes,
	}}
	sw := s.StepWork()
	fm, mfu, n := sw.FlopsMedian, sw.MFUMedian, sw.N
	var wall int64
	var fl float64
	for i := range s.Steps { // the steps StepWork counts
		if st := &s.Steps[i]; StepHasWork(st) {
			wall += st.DurNs
			fl += st.Work.Flops
		}
	}
	if n > 0 && wall > 0 {
		rate := fl / (float64(wall) / 1e9)
		f.Numbers["flops_per_s"], f.Numbers["mfu"], f.Numbers["flops_median"] = rate, mfu, fm
		f.Evidence = append(f.Evidence, fmt.Sprintf("the step reaches %s over its wall time, %s MFU against %s's %s (median of %s; %s)",
			units.SI(rate, "FLOP/s"), units.Share(mfu), s.Peak.Device, units.SI(s.Peak.FlopsFor(s.Work.DType()), "FLOP/s"), units.Plural(int64(n), "step"), opmodel.Convention))
	} else {
		rt := RatesOf(s.Work, s.Peak)
		f.Evidence = append(f.Evidence, fmt.Sprintf("the kernels reach %s over their %s, %s of %s's %s (no steps: no MFU)",
			units.SI(rt.FlopsPerS, "FLOP/s"), units.Duration(all.Ns), units.Share(RatesOf(all, s.Peak).OfPeak), s.Peak.Device, units.SI(s.Peak.FlopsFor(s.Work.DType()), "FLOP/s")))
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s of the modelled kernel time (%s of %s) is in memory-bound kernels", units.ShareWhole(share), units.Duration(mem.Ns), units.Duration(all.Ns)))
	return f
}
