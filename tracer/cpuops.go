package tracer

import (
	"cmp"
	"slices"
)

// IsCPUOpKernel reports whether e is a kernel CPUOpKernels made from a CPU
// operator (the only kernels on Device -1).
func (e *Event) IsCPUOpKernel() bool { return e.Kind == KindKernel && e.Device == -1 }

// CPUOpKernels makes a trace without GPU work readable in rlktop's kernel
// terms: for every CPU operator (KindCPUOp) with self time it appends a
// KindKernel event named after the operator, on Device -1 and Stream =
// the operator's thread, starting at the operator's start, lasting its
// self time (its duration minus the durations of the CPU operators nested
// directly inside it on the same thread), launched by that thread (TID),
// so Link gives it the operator stack open there — an
// aten::_softmax under aten::scaled_dot_product_attention is attention.
// Summed, these "kernels" are the operators' CPU time without double
// counting; their busy time is approximate (a self time is placed at the
// operator's start, not in the gaps between its children).
//
// It does nothing when the trace already holds GPU work (kernels, memcpy,
// memset) and returns the number of events appended. Call Link afterwards.
func (t *Trace) CPUOpKernels() int {
	var ops []int32
	for i := range t.Events {
		e := &t.Events[i]
		switch {
		case e.Kind == KindKernel || e.Kind == KindMemcpy || e.Kind == KindMemset:
			return 0
		case e.Kind == KindCPUOp && e.Dur > 0:
			ops = append(ops, int32(i))
		}
	}
	// Per thread, outermost first: earlier start, then longer.
	slices.SortFunc(ops, func(a, b int32) int {
		x, y := &t.Events[a], &t.Events[b]
		return cmp.Or(cmp.Compare(x.PID, y.PID), cmp.Compare(x.TID, y.TID),
			cmp.Compare(x.Start, y.Start), cmp.Compare(y.Dur, x.Dur), cmp.Compare(a, b))
	})
	self := make([]int64, len(ops))
	var stack []int // positions in ops
	for p, i := range ops {
		e := &t.Events[i]
		self[p] = e.Dur
		for len(stack) > 0 {
			top := &t.Events[ops[stack[len(stack)-1]]]
			if top.PID == e.PID && top.TID == e.TID && e.Start < top.End() {
				break
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			// Directly nested: the parent's self time loses this op's time
			// (clipped to the parent's end: children that overrun a
			// parent by a rounding error do not make it negative).
			parent := stack[len(stack)-1]
			pe := &t.Events[ops[parent]]
			self[parent] -= min(e.End(), pe.End()) - e.Start
			t.setParent(e.Call, pe.Call)
		}
		stack = append(stack, p)
	}
	n := 0
	for p, i := range ops {
		if self[p] <= 0 {
			continue
		}
		e := t.Events[i]
		t.Events = append(t.Events, Event{Start: e.Start, Dur: self[p], Name: e.Name, PID: e.PID, TID: e.TID,
			Device: -1, Stream: e.TID, Kind: KindKernel, Call: e.Call})
		n++
	}
	return n
}

// setParent makes parent the enclosing call of c when c has none yet.
func (t *Trace) setParent(c, parent CallID) {
	if c != 0 && int(c) < len(t.Calls) && t.Calls[c].Parent == 0 && c != parent {
		t.Calls[c].Parent = parent
	}
}
