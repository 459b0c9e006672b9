package wire

import "github.com/rlktop/rlktop/tracer"

// Relay forwards event batches whose names are ids of a tracer's own string
// table (id 0 is "", ids in order of definition) through an AsyncSender:
// it defines each new name on the stream once, rewrites the batch's name
// ids to the stream's in place, and sends it in chunks of at most Chunk
// events, so that a full sender ring drops a chunk rather than a whole
// decoded buffer. The CUPTI and rocprofiler libraries use it (the built-in
// loop needs none: its tracer names with the sender, gotrace.NameWith).
// Not safe for concurrent use.
type Relay struct {
	s     *AsyncSender
	chunk int
	ids   []tracer.StrID // tracer id → stream id
}

// NewRelay returns a relay over s; chunk <= 0 sends each batch whole.
func NewRelay(s *AsyncSender, chunk int) *Relay {
	return &Relay{s: s, chunk: chunk, ids: []tracer.StrID{0}}
}

// Known returns how many of the tracer's names (the empty one included)
// the relay has defined: the tracer's next new name has this id.
func (r *Relay) Known() int { return len(r.ids) }

// Send defines newNames (the tracer's names with ids Known(), Known()+1, …)
// and sends evs, rewriting their Name fields. It never blocks (see
// AsyncSender.Send); events naming an id that was never defined keep id 0.
func (r *Relay) Send(newNames []string, evs []tracer.Event) {
	for _, n := range newNames {
		r.ids = append(r.ids, r.s.Name(n))
	}
	for i := range evs {
		if id := evs[i].Name; int(id) < len(r.ids) {
			evs[i].Name = r.ids[id]
		} else {
			evs[i].Name = 0
		}
	}
	for len(evs) > 0 {
		n := len(evs)
		if r.chunk > 0 {
			n = min(n, r.chunk)
		}
		r.s.Send(evs[:n])
		evs = evs[n:]
	}
}
