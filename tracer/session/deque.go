package session

import "github.com/rlktop/rlktop/tracer"

const chunkN = 4096

// deque is a FIFO of events in fixed chunks: appending never moves what is
// already stored, and chunks leaving the front are reused.
type deque struct {
	chunks []*[chunkN]tracer.Event
	head   int // index of the front event in chunks[0]
	n      int
	free   []*[chunkN]tracer.Event
}

func (d *deque) len() int { return d.n }

func (d *deque) push(e *tracer.Event) {
	end := d.head + d.n
	if end == len(d.chunks)*chunkN {
		var c *[chunkN]tracer.Event
		if k := len(d.free); k > 0 {
			c, d.free = d.free[k-1], d.free[:k-1]
		} else {
			c = new([chunkN]tracer.Event)
		}
		d.chunks = append(d.chunks, c)
	}
	d.chunks[end/chunkN][end%chunkN] = *e
	d.n++
}

// pushAll appends evs, a chunk at a time.
func (d *deque) pushAll(evs []tracer.Event) {
	for len(evs) > 0 {
		end := d.head + d.n
		if end == len(d.chunks)*chunkN {
			d.push(&evs[0])
			evs = evs[1:]
			continue
		}
		k := copy(d.chunks[end/chunkN][end%chunkN:], evs)
		d.n += k
		evs = evs[k:]
	}
}

func (d *deque) front() *tracer.Event { return &d.chunks[0][d.head] }

func (d *deque) popFront() { d.dropFront(1) }

// dropFront drops the k front events, k <= len(d.firstChunk()).
func (d *deque) dropFront(k int) {
	d.head += k
	d.n -= k
	if d.head == chunkN || d.n == 0 {
		if len(d.free) < 4 {
			d.free = append(d.free, d.chunks[0])
		}
		d.chunks[0] = nil
		d.chunks = d.chunks[1:]
		d.head = 0
		if d.n == 0 {
			for _, c := range d.chunks {
				if len(d.free) < 4 {
					d.free = append(d.free, c)
				}
			}
			d.chunks = d.chunks[:0]
		}
	}
}

// firstChunk returns the stored events of the first chunk, in order.
func (d *deque) firstChunk() []tracer.Event {
	if d.n == 0 {
		return nil
	}
	return d.chunks[0][d.head:min(chunkN, d.head+d.n)]
}

// each calls f with the stored events in order, a chunk at a time.
func (d *deque) each(f func([]tracer.Event)) {
	left := d.n
	for i, c := range d.chunks {
		if left == 0 {
			return
		}
		from := 0
		if i == 0 {
			from = d.head
		}
		to := min(chunkN, from+left)
		f(c[from:to])
		left -= to - from
	}
}
