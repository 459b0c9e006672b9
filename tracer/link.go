package tracer

import (
	"encoding/binary"
	"slices"
)

// Link fills Event.Ctx for every GPU event: the operators, annotation ranges
// and step open on the launching CPU thread at the moment of launch.
//
// The launch point of a GPU event is the start of the Runtime/Driver call
// carrying the same correlation id; a GPU event with no such call but a
// known launching thread (TID >= 0; the built-in loop's CPU "kernels") is
// launched at its own start on that thread. Others get context 0.
// An interval contains a launch at t when Start <= t < End, or t == Start
// for zero-length intervals. Link may be called again after more events
// were appended; it recomputes every context.
func (t *Trace) Link() {
	type tkey struct{ pid, tid int32 }
	type query struct {
		t   int64
		gpu int32 // index into Events
	}
	// Correlation id → launch event index. Sized up front: growing a map
	// of a few hundred thousand launches was most of Link's time.
	nLaunch := 0
	for i := range t.Events {
		if t.Events[i].Kind.IsLaunch() {
			nLaunch++
		}
	}
	launch := make(map[uint64]int32, nLaunch)
	threads := make(map[tkey][]int32) // interval event indices per thread
	for i := range t.Events {
		e := &t.Events[i]
		switch {
		case e.Kind.IsLaunch() && e.Corr != 0:
			if _, dup := launch[e.Corr]; !dup {
				launch[e.Corr] = int32(i)
			}
		case e.Kind == KindCPUOp || e.Kind == KindRange || e.Kind == KindStep:
			k := tkey{e.PID, e.TID}
			threads[k] = append(threads[k], int32(i))
		}
	}
	queries := make(map[tkey][]query)
	for i := range t.Events {
		e := &t.Events[i]
		if !e.Kind.IsGPU() || e.Kind == KindGPURange {
			continue
		}
		e.Ctx = 0
		if e.Corr != 0 {
			if li, ok := launch[e.Corr]; ok {
				l := &t.Events[li]
				k := tkey{l.PID, l.TID}
				queries[k] = append(queries[k], query{l.Start, int32(i)})
				continue
			}
		}
		if e.TID >= 0 {
			k := tkey{e.PID, e.TID}
			queries[k] = append(queries[k], query{e.Start, int32(i)})
		}
	}

	t.Contexts = t.Contexts[:0]
	t.Contexts = append(t.Contexts, Context{Step: -1})
	intern := map[string]CtxID{}
	var keyBuf []byte
	var active []int32
	var ctx Context

	for k, qs := range queries {
		ivs := threads[k]
		if len(ivs) == 0 {
			continue
		}
		// Outermost first: earlier start, then longer.
		slices.SortFunc(ivs, func(a, b int32) int {
			ea, eb := &t.Events[a], &t.Events[b]
			if ea.Start != eb.Start {
				return cmp64(ea.Start, eb.Start)
			}
			return cmp64(eb.Dur, ea.Dur)
		})
		slices.SortFunc(qs, func(a, b query) int { return cmp64(a.t, b.t) })
		active = active[:0]
		next := 0
		for _, q := range qs {
			for next < len(ivs) && t.Events[ivs[next]].Start <= q.t {
				active = append(active, ivs[next])
				next++
			}
			// Drop intervals that no longer contain q.t.
			w := 0
			for _, a := range active {
				ea := &t.Events[a]
				if q.t < ea.End() || (ea.Dur == 0 && q.t == ea.Start) {
					active[w] = a
					w++
				}
			}
			active = active[:w]
			if len(active) == 0 {
				continue
			}
			ctx.Ops, ctx.Ranges, ctx.Step = ctx.Ops[:0], ctx.Ranges[:0], -1
			keyBuf = keyBuf[:0]
			for _, a := range active {
				ea := &t.Events[a]
				switch ea.Kind {
				case KindCPUOp:
					ctx.Ops = append(ctx.Ops, ea.Name)
				case KindRange:
					ctx.Ranges = append(ctx.Ranges, ea.Name)
				case KindStep:
					ctx.Step = ea.Value
				}
				keyBuf = append(keyBuf, byte(ea.Kind))
				keyBuf = binary.LittleEndian.AppendUint32(keyBuf, uint32(ea.Name))
			}
			keyBuf = binary.LittleEndian.AppendUint64(keyBuf, uint64(ctx.Step))
			id, ok := intern[string(keyBuf)]
			if !ok {
				id = CtxID(len(t.Contexts))
				t.Contexts = append(t.Contexts, Context{
					Ops:    slices.Clone(ctx.Ops),
					Ranges: slices.Clone(ctx.Ranges),
					Step:   ctx.Step,
				})
				intern[string(keyBuf)] = id
			}
			t.Events[q.gpu].Ctx = id
		}
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
