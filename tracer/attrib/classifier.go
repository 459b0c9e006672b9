package attrib

import "github.com/rlktop/rlktop/tracer"

// Classifier is Rules.Classify for the GPU ops of one linked trace,
// memoised as the Aggregator does: the rules' name conditions are matched
// once per name id and the context conditions once per operator and range
// stack (tracer.Stacks; contexts differing only in step share one), so a
// trace of millions of ops with a few hundred names and a few thousand
// contexts costs a few hundred thousand regexp matches, not one set per
// op. Category(k, name, ctx) equals Classify(k, strs.Get(name),
// LaunchOf(strs, the context)). Not safe for concurrent use.
type Classifier struct {
	r     *Rules
	strs  *tracer.Strings
	ctxs  []tracer.Context
	names map[tracer.StrID][]uint64
	stack tracer.Stacks
	ctxm  [][]uint64 // per stack (tracer.Stacks): the context masks
}

// NewClassifier returns a Classifier over a trace's strings and contexts
// (tracer.Trace.Strings, Contexts); r nil means DefaultRules.
func NewClassifier(r *Rules, strs *tracer.Strings, ctxs []tracer.Context) *Classifier {
	if r == nil {
		r = DefaultRules()
	}
	return &Classifier{r: r, strs: strs, ctxs: ctxs, names: map[tracer.StrID][]uint64{}}
}

// Category returns the category of a GPU op of kind k named name launched
// in context ctx (0 or out of range: no context).
func (c *Classifier) Category(k tracer.Kind, name tracer.StrID, ctx tracer.CtxID) string {
	nm, ok := c.names[name]
	if !ok {
		nm = c.r.nameMasks(c.strs.Get(name))
		c.names[name] = nm
	}
	if int(ctx) >= len(c.ctxs) {
		ctx = 0
	}
	var cm []uint64
	if len(c.ctxs) == 0 {
		cm = c.r.ctxMasks(Launch{})
	} else {
		st := c.stack.Of(c.ctxs, ctx)
		if int(st) >= len(c.ctxm) {
			c.ctxm = append(c.ctxm, make([][]uint64, int(st)+1-len(c.ctxm))...)
		}
		if cm = c.ctxm[st]; cm == nil {
			var l Launch
			if ctx != 0 {
				l = LaunchOf(c.strs, &c.ctxs[ctx])
			}
			cm = c.r.ctxMasks(l)
			c.ctxm[st] = cm
		}
	}
	return c.r.cats[c.r.pick(k, nm, cm)]
}

// SetContexts replaces the contexts with ctxs, new ones whose IDs restart
// (each window and part of a streamed trace has its own,
// tracefile.Capture.Contexts): what was learnt per stack stays.
func (c *Classifier) SetContexts(ctxs []tracer.Context) {
	c.ctxs = ctxs
	c.stack.Forget()
}
