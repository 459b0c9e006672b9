package tracefile

import (
	"bytes"
	"fmt"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/opmodel"
)

// Shapes of operator calls: torch.profiler with record_shapes=True writes
// in each cpu_op's args
//
//	"Input Dims":[[16,559,1024],[1024,1024],[]], "Input type":["c10::BFloat16",…],
//	"Input Strides":[[…],…], "Concrete Inputs":["","","1"]
//
// (torch 2.x; checked on the shared TraceLens traces and on torch 2.6's
// own output). The importer keeps the dims, types and concrete inputs'
// bytes as written, joined into one interned string per distinct
// signature (tracer.OpCall.Args), and parses nothing else: tracer/opmodel
// reads them once per signature. A cpu_op's args are skipped whole as
// before; the keys are then found by a byte search in what was skipped,
// so a trace without them costs one search per cpu_op.

// kWorkArg is the kernel arg in which rlktop's Chrome export keeps a
// kernel's modelled work (tracer.PackWork), so that a report of the
// export has the recording's FLOPs and bytes.
const kWorkArg = "rlktop work"

// kShapeArgs are the spans of a cpu_op's shape args (kind 0: absent).
// "Input Strides" are not kept: no formula needs them.
type kShapeArgs struct {
	dims, types, concrete kspan
}

// scan finds the shape args in a cpu_op's args object, w.b[a:b] (just
// skipped whole, as cpu_op args are), in one pass over its 'I' bytes
// (memchr-fast; an 'I' is rare outside the keys "Input Dims", "Input
// type", "Input Strides", "Concrete Inputs" and "Ev Idx"): a key as JSON
// writes it cannot occur inside a string value, whose quotes are escaped.
// A key's value is an array, read up to its closing bracket.
func (s *kShapeArgs) scan(w *kwin, a, b int) {
	obj := w.b[a:b]
	for i := 0; ; {
		k := bytes.IndexByte(obj[i:], 'I')
		if k < 0 {
			return
		}
		k += i
		i = k + 1
		var dst *kspan
		rest := obj[k:]
		switch {
		case k > 0 && obj[k-1] == '"' && bytes.HasPrefix(rest, []byte(`Input Dims"`)):
			dst, i = &s.dims, k+len(`Input Dims"`)
		case k > 0 && obj[k-1] == '"' && bytes.HasPrefix(rest, []byte(`Input type"`)):
			dst, i = &s.types, k+len(`Input type"`)
		case k >= 10 && bytes.HasPrefix(rest, []byte(`Inputs"`)) && string(obj[k-10:k]) == `"Concrete `:
			dst, i = &s.concrete, k+len(`Inputs"`)
		default: // "Input Strides" (unkept: numbers hold no 'I'), "Ev Idx", …
			continue
		}
		for i < len(obj) && (obj[i] == ' ' || obj[i] == ':' || obj[i] == '\n' || obj[i] == '\t' || obj[i] == '\r') {
			i++
		}
		if i >= len(obj) || obj[i] != '[' {
			continue
		}
		end, ok := kArrayEnd(obj, i)
		if !ok {
			return
		}
		if dst != nil {
			*dst = kspan{a: w.base + int64(a+i), b: w.base + int64(a+end), kind: kvArray}
		}
		i = end
	}
}

// wantShapes reports whether the shapes of the event being parsed are
// wanted: its operator has a model (calls of others would only be
// skipped over on the way to the innermost modelled one), or its name
// is not read yet (it may come after args).
func (d *kdec) wantShapes() bool {
	if d.noShapes {
		return false
	}
	n := d.ev.name
	return n.kind == 0 || n.esc || d.model.Has(d.s.bytes(n.a, n.b))
}

// kArrayEnd returns the index just past the array opening at b[i] ('[').
func kArrayEnd(b []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return 0, false
}

func (s *kShapeArgs) any() bool {
	return s.dims.kind|s.types.kind|s.concrete.kind != 0
}

// addCall records e's call with its shape args (tracer.OpCall) and sets
// e.Call.
func (d *kdec) addCall(e *tracer.Event) {
	sh := &d.ev.shapes
	b := d.scratch2[:0]
	for _, sp := range [...]kspan{sh.dims, sh.types, {}, sh.concrete} {
		if sp.kind != 0 {
			b = append(b, d.s.bytes(sp.a, sp.b)...)
		}
		b = append(b, tracer.ArgSep)
	}
	d.scratch2 = b
	args := d.t.Strings.InternBytes(b)
	if d.stream != nil {
		if d.ev.ph != 'X' {
			return // a B event is added at its E, after others
		}
		// The window this event belongs to is known only once the
		// stream takes it (a CPU event can close the previous one).
		d.stream.work.pend, d.stream.work.pending = tracer.OpCall{Name: e.Name, Args: args}, true
		return
	}
	if d.t.Calls == nil {
		d.t.Calls = make([]tracer.OpCall, 0, 1024)
	}
	e.Call = d.t.AddCall(e.Name, args)
}

// streamWork is a streamed trace's operator calls: each window's own
// (Event.Call IDs restart per window, as contexts do), linked and
// modelled with the window; a window read in parts (past PartWindow
// events) with recorded shapes is not streamed, so that every report of
// the file carries the same modelled work.
type streamWork struct {
	model   *opmodel.Model
	calls   []tracer.OpCall
	pend    tracer.OpCall
	pending bool
	warned  map[string]bool
}

// take gives e (just taken into the window) its pending call.
func (w *streamWork) take(ks *kstream, d *kdec, e *tracer.Event) {
	if !w.pending || e.Kind != tracer.KindCPUOp || e.Name != w.pend.Name {
		return
	}
	w.pending = false
	if ks.inc.on {
		w.calls = append(w.calls[:0], tracer.OpCall{}, w.pend)
		w.refuseParts(ks, d)
		return
	}
	if len(w.calls) == 0 {
		w.calls = append(w.calls, tracer.OpCall{})
	}
	w.calls = append(w.calls, w.pend)
	e.Call = tracer.CallID(len(w.calls) - 1)
}

// refuseParts fails the stream when a window to be read in parts has
// recorded shapes, reporting whether it did.
func (w *streamWork) refuseParts(ks *kstream, d *kdec) bool {
	if len(w.calls) < 2 {
		return false
	}
	ks.fail(fmt.Errorf("%s: a torch.profiler window of more than %d events with recorded shapes (modelled work is computed on whole windows): %w", d.path, ks.partWindow, ErrNotStreamable))
	return true
}

// assign models the linked window wt's kernels (opmodel.Model.Assign)
// and starts the next window's calls.
func (w *streamWork) assign(d *kdec, wt *tracer.Trace) {
	if len(w.calls) < 2 {
		return
	}
	wt.Calls = w.calls
	m := w.model
	if m == nil {
		m = opmodel.Default()
	}
	m.Assign(wt)
	opmodel.Retype(wt.Events, wt.Strings)
	for _, msg := range wt.Warnings {
		if !w.warned[msg] {
			if w.warned == nil {
				w.warned = map[string]bool{}
			}
			w.warned[msg] = true
			d.t.Warn(msg)
		}
	}
	wt.Warnings = nil
	w.calls = w.calls[:1]
}
