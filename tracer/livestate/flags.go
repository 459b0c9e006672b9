package livestate

// FlagState is a live run's flags: the one value the TUI reads and its
// flags panel draws. loop.Live.FlagState produces it from rlktop's
// settings, the newest child's last acknowledgement (Child.Flags) and
// the requests rlktop sent (their refusals are State.Refusals).
type FlagState struct {
	// InForce maps every flag known to its value: rlktop's settings (start
	// flags, flips, a comparison's arm) overlaid with the newest child's
	// last acknowledgement (the built-in loop and the Python agent list
	// every flag they apply; a value may be none of the flag's choices:
	// "not used", "?").
	InForce map[string]string
	// Pending maps a flag rlktop asked to change to the value asked for,
	// until that value is in force, the child refuses it or the request
	// fails; absent when none.
	Pending map[string]string
}

// Wanted is the value key will have once its pending request lands: the
// pending value, else the one in force ("" when neither).
func (s FlagState) Wanted(key string) string {
	if v, ok := s.Pending[key]; ok {
		return v
	}
	return s.InForce[key]
}

// FlagSpec is a flag and its values in order: one --flag K=V1,V2[,…]
// argument, or a flag the flags panel offers with the values a flip
// cycles through (loop.PanelFlags).
type FlagSpec struct {
	Key    string
	Values []string
}

// Next returns the value after cur in s.Values (wrapping), or the first
// value when cur is not one of them (cur with no values).
func (s FlagSpec) Next(cur string) string {
	for i, v := range s.Values {
		if v == cur {
			return s.Values[(i+1)%len(s.Values)]
		}
	}
	if len(s.Values) == 0 {
		return cur
	}
	return s.Values[0]
}

// Arm is one setting of a comparison: a name and the complete set of
// flags applied together (loop.Arms builds them from FlagSpecs; a run
// record lists them under these JSON names).
type Arm struct {
	Name  string            `json:"name"`  // "attention=fused" or "A"/"B" style names
	Flags map[string]string `json:"flags"` // key → value
}
