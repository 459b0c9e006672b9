package loop

import (
	"cmp"
	"slices"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// armMemory builds each arm's memory over its counted steps from the
// comparison's recording (attrib.TraceMemory: the recording's memory
// events resolved against its operators, stages and steps); nil when it
// holds none.
func (r *runner) armMemory(t *tracer.Trace) []livestate.ArmMemory {
	recs, wins := attrib.TraceMemory(t, 0)
	if len(recs) == 0 {
		return nil
	}
	rules := r.o.Rules
	if rules == nil {
		rules = attrib.DefaultRules()
	}
	var out []livestate.ArmMemory
	for _, a := range r.arms {
		want := map[stepKey]bool{}
		for _, s := range a.steps {
			want[stepKey{s.pid, s.step}] = true
		}
		var mine []attrib.MemRecord
		for _, rec := range recs {
			if want[stepKey{rec.PID, rec.Step}] {
				mine = append(mine, rec)
			}
		}
		am := livestate.ArmMemory{Arm: a.name, Categories: []livestate.ArmMemCategory{}, Temporaries: []livestate.ArmMemTemp{}}
		if len(mine) > 0 {
			armMemoryOf(&am, attrib.BuildMemory(mine, wins), rules)
		}
		out = append(out, am)
	}
	return out
}

// armMemoryOf fills am from the model m of one arm's steps.
func armMemoryOf(am *livestate.ArmMemory, m *attrib.Memory, rules *attrib.Rules) {
	// The device with the highest peak.
	dev, best := int32(0), int64(-1)
	for _, d := range m.Devices {
		if d.PeakAllocatedBytes > best {
			dev, best = d.Device, d.PeakAllocatedBytes
		}
	}
	var peaks, res []int64
	steps := map[int64]bool{}
	var temp int64
	for _, s := range m.Steps {
		steps[s.Step] = true
		temp += s.TempBytes
		if s.Device == dev {
			peaks = append(peaks, s.PeakAllocatedBytes)
			res = append(res, s.PeakReservedBytes)
		}
	}
	am.Steps = len(steps)
	am.PeakAllocatedBytes, am.PeakReservedBytes = median(peaks), median(res)
	if am.Steps > 0 {
		am.TempBytesPerStep = temp / int64(am.Steps)
	}
	cats := map[string]*livestate.ArmMemCategory{}
	for _, t := range m.Temporaries { // largest first
		l := attrib.Launch{Ops: t.Ops}
		if t.Stage != "" {
			l.Ranges = []string{t.Stage}
		}
		cat := rules.Classify(tracer.KindKernel, t.Op, l)
		c := cats[cat]
		if c == nil {
			c = &livestate.ArmMemCategory{Category: cat, LargestBytes: t.Bytes, LargestOperator: t.Op}
			cats[cat] = c
		}
		c.TempBytesPerStep += t.Bytes * int64(t.Count)
		if len(am.Temporaries) < 5 {
			am.Temporaries = append(am.Temporaries, livestate.ArmMemTemp{Operator: t.Op, Stage: t.Stage, Category: cat, FreedBy: t.FreedBy,
				Bytes: t.Bytes, Count: t.Count, LifetimeNs: t.LifetimeNs})
		}
	}
	for _, c := range cats {
		if am.Steps > 0 {
			c.TempBytesPerStep /= int64(am.Steps)
		}
		am.Categories = append(am.Categories, *c)
	}
	slices.SortFunc(am.Categories, func(a, b livestate.ArmMemCategory) int {
		return cmp.Or(cmp.Compare(b.TempBytesPerStep, a.TempBytesPerStep), cmp.Compare(a.Category, b.Category))
	})
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
