package opmodel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Compute returns the work of one call of operator name with shape args
// args (tracer.OpCall.Args); ok is false when name has no model. An error
// says what the recorded shapes lack for the formula.
func (m *Model) Compute(name, args string) (w tracer.Work, ok bool, err error) {
	e := m.byName[name]
	if e == nil {
		return tracer.Work{}, false, nil
	}
	in, err := ParseArgs(args)
	if err != nil {
		return tracer.Work{}, true, err
	}
	w, err = e.fn(e, name, in)
	if err != nil {
		return tracer.Work{}, true, err
	}
	if e.Backward {
		w.Flops *= 2
	}
	return w, true, nil
}

// Stats says what Assign did.
type Stats struct {
	Kernels    int // kernels given work (modelled, unmodelled or covered)
	Modelled   int // of them, with the work of a modelled call
	Covered    int // of them, launched by a modelled call that holds modelled calls (counted through those: 0 work)
	Unmodelled int // of them, launched by calls none of which is modelled, or whose shapes the formula could not use
}

// Assign gives every kernel of a linked trace (Event.Call set by
// tracer.Trace.Link) the work of the innermost modelled operator call
// open at its launch, packed in its Event.Value (tracer.PackWork):
//
//   - Counted once: a call's work is split over the kernels that take it
//     (those it launched with no modelled call between), in proportion to
//     their durations (equally when all are 0 ns). A modelled call that
//     encloses modelled calls is covered — counts 0 itself, its work being
//     counted by the calls inside it — when it launched no kernel of its
//     own, or when the calls inside it count at least half its FLOPs (half
//     its bytes for a call of 0 FLOPs): the math attention fallback's bmm
//     and softmax, not the SDPA operator around them; addmm, not the
//     linear around it; but addmm's own GEMM, not the bias copy inside it.
//   - A kernel none of whose calls is modelled, or whose call's shapes the
//     formula cannot use, is marked unmodelled (its time is reported,
//     never taken as 0 FLOPs); one warning names the operators whose
//     shapes were not understood.
//   - A kernel with no call (launched outside every recorded operator)
//     keeps Value 0.
//
// It does nothing to a trace without calls.
func (m *Model) Assign(t *tracer.Trace) Stats {
	var st Stats
	if len(t.Calls) < 2 {
		return st
	}
	entry := make([]int8, t.Strings.Len()) // per name: 0 unknown, 1 modelled, -1 not
	modelled := func(c tracer.CallID) bool {
		n := t.Calls[c].Name
		if int(n) >= len(entry) {
			return m.byName[t.Strings.Get(n)] != nil
		}
		if entry[n] == 0 {
			entry[n] = -1
			if m.byName[t.Strings.Get(n)] != nil {
				entry[n] = 1
			}
		}
		return entry[n] > 0
	}
	// up returns the nearest modelled call enclosing c (0: none).
	up := func(c tracer.CallID) tracer.CallID {
		for p := t.Calls[c].Parent; p != 0; p = t.Calls[p].Parent {
			if modelled(p) {
				return p
			}
		}
		return 0
	}
	type inst struct {
		durNs   int64
		kernels int // kernels it launched with no modelled call between
		up      tracer.CallID
		depth   int
		w       tracer.Work
		err     error
		below   tracer.Work // counted work of the modelled calls inside it
		covered bool
	}
	// The calls reached from kernels, in slot order; slot[c] is c's index
	// + 1 (0: not reached).
	var insts []inst
	var order []tracer.CallID
	slot := make([]int32, len(t.Calls))
	get := func(c tracer.CallID) (*inst, bool) {
		if j := slot[c]; j != 0 {
			return &insts[j-1], false
		}
		insts = append(insts, inst{up: up(c)})
		order = append(order, c)
		slot[c] = int32(len(insts))
		return &insts[len(insts)-1], true
	}
	at := func(c tracer.CallID) *inst { return &insts[slot[c]-1] }
	take := make([]tracer.CallID, 0, 1024) // per kernel with a call, in order: its modelled call (0 none)
	var idx []int32
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind != tracer.KindKernel || e.Call == 0 || int(e.Call) >= len(t.Calls) {
			continue
		}
		c := e.Call
		for c != 0 && !modelled(c) {
			c = t.Calls[c].Parent
		}
		idx = append(idx, int32(i))
		take = append(take, c)
		if c == 0 {
			continue
		}
		in, _ := get(c)
		in.durNs += max(e.Dur, 0)
		in.kernels++
		for p := in.up; p != 0; {
			pi, fresh := get(p)
			if !fresh {
				break
			}
			p = pi.up
		}
	}
	// Each call's work, once per distinct (name, shapes).
	type key struct{ name, args tracer.StrID }
	type result struct {
		w   tracer.Work
		err error
	}
	cache := map[key]result{}
	bad := map[string]string{}
	for _, c := range order {
		call := &t.Calls[c]
		k := key{call.Name, call.Args}
		r, ok := cache[k]
		if !ok {
			name := t.Strings.Get(call.Name)
			r.w, _, r.err = m.Compute(name, t.Strings.Get(call.Args))
			cache[k] = r
			if r.err != nil && bad[name] == "" {
				bad[name] = r.err.Error()
			}
		}
		in := at(c)
		in.w, in.err = r.w, r.err
		for p := in.up; p != 0; p = at(p).up {
			in.depth++
		}
	}
	// Innermost first: what the calls inside a call count decides
	// whether it is covered, and what it passes up.
	slices.SortStableFunc(order, func(a, b tracer.CallID) int { return at(b).depth - at(a).depth })
	for _, c := range order {
		in := at(c)
		counted := in.below
		switch {
		case in.kernels == 0:
			in.covered = true
		case in.err != nil:
		case in.w.Flops > 0:
			in.covered = in.below.Flops >= in.w.Flops/2
		case in.w.Bytes > 0:
			in.covered = in.below.Bytes >= in.w.Bytes/2
		}
		if !in.covered && in.err == nil {
			counted.Flops += in.w.Flops
			counted.Bytes += in.w.Bytes
		}
		if in.up != 0 {
			u := at(in.up)
			u.below.Flops += counted.Flops
			u.below.Bytes += counted.Bytes
		}
	}
	for j, i := range idx {
		e := &t.Events[i]
		st.Kernels++
		c := take[j]
		if c == 0 {
			e.Value = tracer.PackWork(tracer.Work{})
			st.Unmodelled++
			continue
		}
		in := at(c)
		switch {
		case in.covered:
			e.Value = tracer.PackWork(tracer.Work{Modelled: true, DType: in.w.DType})
			st.Covered++
		case in.err != nil:
			e.Value = tracer.PackWork(tracer.Work{})
			st.Unmodelled++
		default:
			f := 1 / float64(in.kernels)
			if in.durNs > 0 {
				f = float64(max(e.Dur, 0)) / float64(in.durNs)
			}
			w := in.w
			w.Flops *= f
			w.Bytes *= f
			e.Value = tracer.PackWork(w)
			st.Modelled++
		}
	}
	if len(bad) > 0 {
		names := make([]string, 0, len(bad))
		for n := range bad {
			names = append(names, n)
		}
		slices.Sort(names)
		t.Warn(fmt.Sprintf("operator model: the recorded shapes of %s do not fit their formulas (%s: %s); their kernels count as unmodelled", strings.Join(names, ", "), names[0], bad[names[0]]))
	}
	return st
}

// Retype gives each modelled kernel of evs the dtype tracer.KernelDType
// reads from its name (names holds evs' names): FP32 work in a TF32
// tensor-core kernel runs at the TF32 peak. Every caller of Assign calls
// it after, with the table its kernels' names are in (the live session's
// windows keep their calls' names in a table of their own).
func Retype(evs []tracer.Event, names *tracer.Strings) {
	// KernelDType changes only FP32, and by the name alone: the name is
	// read once per name, not per kernel (two substring searches over
	// every kernel's name were half of this import step's time). A map of
	// the kernels' names, not an array over all names: a streamed
	// window's table holds every name of the trace (shapes too).
	retypes := map[tracer.StrID]bool{}
	for i := range evs {
		e := &evs[i]
		if e.Kind != tracer.KindKernel || e.Value == 0 {
			continue
		}
		r, ok := retypes[e.Name]
		if !ok {
			r = tracer.KernelDType(names.Get(e.Name), tracer.DTypeFP32) != tracer.DTypeFP32
			retypes[e.Name] = r
		}
		if r {
			e.Value = tracer.RetypeWork(e.Value, names.Get(e.Name))
		}
	}
}
