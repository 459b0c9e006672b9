package tracer

// CallID indexes Trace.Calls; 0 is no call.
type CallID uint32

// OpCall is one operator call whose input shapes the source recorded:
// Kineto's record_shapes args of a cpu_op event of an operator the
// operator model knows (tracer/opmodel: calls of others would only be
// passed over on the way to the innermost modelled call, so they are not
// kept). The shapes are kept as
// the source wrote them (tracer/opmodel parses them once per distinct
// text): most calls of a training loop repeat a few hundred signatures,
// so one interned string per signature is all a call costs.
type OpCall struct {
	Name StrID // the operator, as its KindCPUOp event names it ("aten::mm")
	// Args holds the call's "Input Dims", "Input type", "Input Strides"
	// and "Concrete Inputs" JSON values, in that order, each ended by
	// ArgSep; a missing one is empty (Kineto's importer leaves "Input
	// Strides" empty: no formula needs them).
	Args StrID
	// Parent is the innermost call enclosing this one on its thread
	// (0: none). Link fills it for the calls open at a GPU op's launch
	// and CPUOpKernels for the operators it turns into kernels; other
	// calls keep 0.
	Parent CallID
}

// ArgSep ends each of the four shape values in OpCall.Args: the unit
// separator, which JSON cannot hold unescaped.
const ArgSep = '\x1f'

// AddCall appends a call of operator name with shape args args
// (OpCall.Args) and returns its ID, making Calls[0] first.
func (t *Trace) AddCall(name, args StrID) CallID {
	if len(t.Calls) == 0 {
		t.Calls = append(t.Calls, OpCall{})
	}
	t.Calls = append(t.Calls, OpCall{Name: name, Args: args})
	return CallID(len(t.Calls) - 1)
}
