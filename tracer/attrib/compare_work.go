package attrib

// ArmWork is a category's modelled work in one arm of a comparison, per
// step, with its achieved rates (over the time of its modelled kernels).
type ArmWork struct {
	FlopsPerStep float64 `json:"flops_per_step"`
	BytesPerStep float64 `json:"bytes_per_step"`
	FlopsPerS    float64 `json:"achieved_flops_per_s"`
	BytesPerS    float64 `json:"achieved_bytes_per_s"`
}

// addWork adds a step's per-category work to the arm.
func (a *ArmSteps) addWork(s *Snapshot) {
	if !s.HasWork() {
		return
	}
	if a.Work == nil {
		a.Work = map[string]Work{}
	}
	for _, c := range s.Categories {
		w := a.Work[c.Key]
		w.add(&c.Work)
		a.Work[c.Key] = w
	}
}

// armWork is category key's work in arm x per step (nil: none).
func armWork(x *ArmSteps, key string) *ArmWork {
	w, ok := x.Work[key]
	if !ok || !w.Known() || len(x.StepNs) == 0 {
		return nil
	}
	n := float64(len(x.StepNs))
	r := RatesOf(w, nil)
	return &ArmWork{FlopsPerStep: w.Flops / n, BytesPerStep: w.Bytes / n, FlopsPerS: r.FlopsPerS, BytesPerS: r.BytesPerS}
}

// setWork sets a category row's per-arm work.
func (rc *RowComparison) setWork(a, b ArmSteps) {
	if rc.Group != GroupCategory {
		return
	}
	rc.AWork, rc.BWork = armWork(&a, rc.Key), armWork(&b, rc.Key)
}
