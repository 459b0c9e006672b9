package gotrace

import (
	"sync"
	"sync/atomic"

	"github.com/rlktop/rlktop/tracer"
)

// MaxMemory bounds the memory events waiting for TakeMemory; past it
// they are dropped (MemoryDropped).
const MaxMemory = 1 << 14

// memLog holds memory events apart from the ring: they are few (a
// workspace per layer and forward), and the ring is tracer.Event only.
type memLog struct {
	mu      sync.Mutex
	evs     []tracer.MemEvent
	dropped atomic.Uint64
}

// Memory records that the block at addr of bytes bytes was allocated
// (bytes > 0) or freed (bytes < 0) now, on the tracer's thread, in host
// memory (device -1, as torch.profiler marks CPU memory): the built-in
// loop's workspaces (the math attention scores) are Go heap whatever
// device its kernels are shown on. Nothing while disabled.
func (t *Tracer) Memory(bytes int64, addr uint64) {
	if !t.enabled.Load() {
		return
	}
	l := &t.mem
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.evs) >= MaxMemory {
		l.dropped.Add(1)
		return
	}
	l.evs = append(l.evs, tracer.MemEvent{TS: t.clock(), Bytes: bytes, Addr: addr, Allocated: -1, Reserved: -1, PID: t.pid, TID: t.tid, Device: -1})
}

// TakeMemory returns and clears the memory events recorded so far
// (times on the tracer's clock, as the ring's events).
func (t *Tracer) TakeMemory() []tracer.MemEvent {
	l := &t.mem
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.evs
	l.evs = nil
	return m
}

// MemoryDropped counts memory events dropped while MaxMemory waited.
func (t *Tracer) MemoryDropped() uint64 { return t.mem.dropped.Load() }
