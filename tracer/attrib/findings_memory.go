package attrib

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rlktop/rlktop/internal/units"
)

// The memory findings (findings.toml kinds), over Snapshot.Memory.
const (
	// FindMemTemporary: the largest temporary (allocated and freed inside
	// one step) is at least min_share of its device's peak and at least
	// threshold bytes.
	FindMemTemporary = "memory-temporary"
	// FindMemPeak: a step's peak is reached inside an operator matching
	// context (and none matching fused); the live allocations made
	// inside it are min_share of the peak.
	FindMemPeak = "memory-peak"
	// FindMemGrowth: what is held at step end grows at least threshold
	// bytes a step, rising in at least min_share of the steps (3 or more).
	FindMemGrowth = "memory-growth"
)

// memory evaluates the memory kinds; nil when m is nil or nothing fires.
func (r *FindingRule) memory(m *Memory, s *Snapshot) *Finding {
	if m == nil {
		return nil
	}
	switch r.Kind {
	case FindMemTemporary:
		return r.memTemporary(m, s)
	case FindMemPeak:
		return r.memPeak(m)
	case FindMemGrowth:
		return r.memGrowth(m)
	}
	return nil
}

func (m *Memory) devicePeak(dev int32) int64 {
	var p int64
	for _, d := range m.Devices {
		if d.Device == dev {
			p = max(p, d.PeakAllocatedBytes)
		}
	}
	return p
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "(no operator)"
	}
	return s
}

func (r *FindingRule) memTemporary(m *Memory, s *Snapshot) *Finding {
	for _, t := range m.Temporaries { // largest first
		peak := m.devicePeak(t.Device)
		if peak <= 0 || t.Bytes < int64(r.Threshold) {
			return nil
		}
		share := float64(t.Bytes) / float64(peak)
		if share < r.MinShare {
			continue
		}
		f := &Finding{Share: share, ShareOf: "the device's peak allocated memory", Numbers: map[string]float64{
			"bytes": float64(t.Bytes), "count": float64(t.Count), "lifetime_ns": float64(t.LifetimeNs), "peak_bytes": float64(peak),
			"steps": float64(t.Steps), "device": float64(t.Device),
		}}
		where := ""
		if t.Stage != "" {
			where = " in stage " + t.Stage
		}
		ev := fmt.Sprintf("a %s temporary allocated by %s%s lives %s and is freed by %s", units.Bytes(t.Bytes), noneIfEmpty(t.Op), where,
			units.Duration(t.LifetimeNs), noneIfEmpty(t.FreedBy))
		if med := medianStepNs(s.Steps); med > 0 {
			ev += fmt.Sprintf(" (%s of a %s step)", units.Share(float64(t.LifetimeNs)/float64(med)), units.Duration(med))
			f.Numbers["step_ns"] = float64(med)
		}
		f.Evidence = append(f.Evidence, ev)
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s in %s, %s of the peak of %s on %s", units.Plural(int64(t.Count), "time"), units.Plural(int64(t.Steps), "step"), units.ShareWhole(share), units.Bytes(peak), memDeviceName(t.Device)))
		f.Top = append(f.Top, fmt.Sprintf("%s → %s %s", noneIfEmpty(t.Op), noneIfEmpty(t.FreedBy), units.Bytes(t.Bytes)))
		return f
	}
	return nil
}

func memDeviceName(dev int32) string {
	if dev < 0 {
		return "host memory"
	}
	return fmt.Sprintf("gpu %d", dev)
}

func (r *FindingRule) memPeak(m *Memory) *Finding {
	var best *Finding
	for _, st := range m.Steps {
		if st.PeakAllocatedBytes <= 0 || r.context == nil || !slices.ContainsFunc(st.AtPeak.Ops, r.context.MatchString) {
			continue
		}
		if r.fused != nil && slices.ContainsFunc(st.AtPeak.Ops, r.fused.MatchString) {
			continue
		}
		var inside int64
		var n int
		for _, a := range st.AtPeak.Live {
			if slices.ContainsFunc(a.Ops, r.context.MatchString) {
				inside += a.Bytes
				n++
			}
		}
		share := float64(inside) / float64(st.PeakAllocatedBytes)
		if inside == 0 || inside < int64(r.Threshold) || share < r.MinShare || (best != nil && share <= best.Share) {
			continue
		}
		outer := ""
		for _, o := range st.AtPeak.Ops {
			if r.context.MatchString(o) {
				outer = o
				break
			}
		}
		f := &Finding{Share: share, ShareOf: "the step's peak allocated memory", Numbers: map[string]float64{
			"step": float64(st.Step), "peak_bytes": float64(st.PeakAllocatedBytes), "inside_bytes": float64(inside), "device": float64(st.Device),
		}}
		where := ""
		if st.AtPeak.Stage != "" {
			where = " in stage " + st.AtPeak.Stage
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("step %d's peak of %s on %s is set inside %s (at %s%s): %s in %d allocations made inside it are live then (%s)",
			st.Step, units.Bytes(st.PeakAllocatedBytes), memDeviceName(st.Device), outer, noneIfEmpty(st.AtPeak.Op), where, units.Bytes(inside), n, units.ShareWhole(share)))
		f.Top = append(f.Top, fmt.Sprintf("%s %s", outer, units.Bytes(inside)))
		best = f
	}
	return best
}

func (r *FindingRule) memGrowth(m *Memory) *Finding {
	for _, d := range m.Devices {
		if d.StepPairs < 2 || d.GrowthBytesPerStep < r.Threshold || float64(d.RisingSteps) < r.MinShare*float64(d.StepPairs) {
			continue
		}
		share := float64(d.RisingSteps) / float64(d.StepPairs)
		f := &Finding{Share: share, ShareOf: "steps", Numbers: map[string]float64{
			"growth_bytes_per_step": d.GrowthBytesPerStep, "steps": float64(d.Steps), "rising_steps": float64(d.RisingSteps), "step_pairs": float64(d.StepPairs), "device": float64(d.Device),
		}}
		f.Evidence = append(f.Evidence, fmt.Sprintf("memory held at step end grows %s a step on %s (rising in %d of %d pairs of consecutive steps)",
			units.Bytes(int64(d.GrowthBytesPerStep)), memDeviceName(d.Device), d.RisingSteps, d.StepPairs))
		held := slices.Clone(m.Operators)
		slices.SortStableFunc(held, func(a, b MemOpRow) int { return cmp.Compare(b.HeldBytes, a.HeldBytes) })
		for _, o := range held {
			if o.Device == d.Device && o.HeldBytes > 0 && len(f.Top) < 3 {
				f.Top = append(f.Top, fmt.Sprintf("%s in %s: %s held at step end over %d steps", noneIfEmpty(o.Op), orNoneStage(o.Stage), units.Bytes(o.HeldBytes), o.Steps))
			}
		}
		return f
	}
	return nil
}

func orNoneStage(s string) string {
	if s == "" {
		return "no stage"
	}
	return "stage " + s
}
