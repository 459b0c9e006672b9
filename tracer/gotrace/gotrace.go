// Package gotrace is rlktop's in-process tracer for Go code: the built-in RL
// loop (loop/demo) records every backend op as a kernel-like event, every
// stage as a range and every training step as a step, into a preallocated
// single-producer / single-consumer ring of tracer.Event. A consumer drains
// the ring from another goroutine: a wire sender's writer
// (tracer/wire.AsyncSender.AttachEvents), the names being the stream's
// ids (NameWith), so that the loop's events go from this ring to the
// socket with neither a second ring nor a remapping.
//
// Costs (measured by BenchmarkKernel / BenchmarkDisabled on the 2-core dev
// machine; see the package tests): one traced event is one monotonic clock
// read plus a 64-byte store, well under 100 ns, with zero allocations;
// a disabled tracer costs one atomic load per call.
//
// Clock: event times are ns since the tracer's base instant (Go's monotonic
// clock, time.Since). ClockOffset gives the CLOCK_REALTIME ns of that base, so
// realtime = Start + ClockOffset; the wire hello carries it.
//
// Threading: the recording methods (Now, Kernel, RangeBegin/End,
// StepBegin/End, Instant) must be called from one goroutine at a time (the
// producer). Drain, Dropped, Names and Enable may be called from any
// goroutine. Name may be called from any goroutine.
package gotrace

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlktop/rlktop/tracer"
)

// NameID is a registered event name: the name's index in Names(), or,
// once the tracer names with a Namer (NameWith), the id the Namer gave it
// — the wire stream's, so that a sender takes the tracer's events as they
// are (0 is the empty name).
type NameID uint32

// Namer hands out a stream's ids of names: tracer/wire.AsyncSender.Name.
type Namer interface {
	Name(name string) tracer.StrID
}

// DefaultTID is the thread id the tracer stamps on events (the built-in loop
// runs in one goroutine).
const DefaultTID int32 = 1

// DefaultCapacity is the ring size New uses when given cap <= 0: 1<<16 events
// (4.5 MiB), about 2 s of the demo loop at its default size.
const DefaultCapacity = 1 << 16

// maxDepth bounds range nesting; deeper RangeBegin calls are counted as
// dropped and their RangeEnd is ignored.
const maxDepth = 32

type openRange struct {
	name  NameID
	start int64 // 0: opened while disabled (not recorded)
}

// Tracer records events into a bounded ring. The zero value is not usable;
// call New.
type Tracer struct {
	enabled atomic.Bool
	mem     memLog // memory events (memory.go)

	// ring: producer writes at head, consumer reads at tail; len is a power
	// of two. head/tail are free-running counters.
	ring []tracer.Event
	mask uint64
	head atomic.Uint64
	_    [56]byte // keep the consumer's counter off the producer's cache line
	tail atomic.Uint64

	dropped atomic.Uint64
	wake    chan struct{}

	base   time.Time
	offset int64

	pid, tid, device, stream int32

	// producer-only state
	stack     [maxDepth]openRange
	depth     int
	stepN     int64
	stepStart int64 // 0: no step open (or opened while disabled)

	nmu   sync.Mutex
	names []string
	ids   map[string]NameID
	namer Namer // once set (NameWith), names are its ids and names/ids stay as they were

	drainMu sync.Mutex
}

// New returns an enabled tracer whose ring holds capacity events, rounded up
// to a power of two (DefaultCapacity when capacity <= 0). The ring is
// allocated here; recording never allocates.
func New(capacity int) *Tracer {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	n := 1
	for n < capacity {
		n <<= 1
	}
	base := time.Now()
	t := &Tracer{
		ring:   make([]tracer.Event, n),
		mask:   uint64(n - 1),
		wake:   make(chan struct{}, 1),
		base:   base,
		offset: base.UnixNano(),
		tid:    DefaultTID,
		device: 0,
		stream: 0,
		names:  []string{"", "step"},
		ids:    map[string]NameID{"": 0, "step": StepName},
	}
	t.enabled.Store(true)
	return t
}

// SetThread sets the PID and TID stamped on subsequent events (defaults 0 and
// DefaultTID). Call it before recording starts.
func (t *Tracer) SetThread(pid, tid int32) { t.pid, t.tid = pid, tid }

// Enable switches recording on or off. While off, every recording call costs
// one atomic load and records nothing; ranges and steps open across a switch
// are recorded only if they were opened while on and close while on.
func (t *Tracer) Enable(on bool) { t.enabled.Store(on) }

// Enabled reports whether recording is on.
func (t *Tracer) Enabled() bool { return t.enabled.Load() }

// ClockOffset returns the realtime (Unix epoch) ns of the tracer's clock
// zero: an event at Start ns happened at Unix time Start+ClockOffset ns.
func (t *Tracer) ClockOffset() int64 { return t.offset }

// Capacity returns the ring size in events.
func (t *Tracer) Capacity() int { return len(t.ring) }

// Name registers s and returns its id; registering the same string again
// returns the same id. Register names up front: the recording calls take ids
// so that the hot path never touches strings.
func (t *Tracer) Name(s string) NameID {
	t.nmu.Lock()
	defer t.nmu.Unlock()
	if id, ok := t.ids[s]; ok {
		return id
	}
	if t.namer != nil {
		return NameID(t.namer.Name(s))
	}
	id := NameID(len(t.names))
	t.names = append(t.names, s)
	t.ids[s] = id
	return id
}

// NameWith makes n hand out the ids of names registered from now on (a
// wire sender: the tracer's events are then in the stream's ids, sent
// without remapping). The names registered so far ("step" at least) are
// defined with n and must get the ids they have: call it on a new tracer
// with a new sender, before other names are registered. Names and NameOf
// know only the names registered before.
func (t *Tracer) NameWith(n Namer) error {
	t.nmu.Lock()
	defer t.nmu.Unlock()
	for i, s := range t.names[1:] {
		if id := n.Name(s); id != tracer.StrID(i+1) {
			return fmt.Errorf("gotrace: name %q is id %d here and %d in the stream; call NameWith on a new tracer and sender", s, i+1, id)
		}
	}
	t.namer = n
	return nil
}

// Names returns the registered names from index from on (Names(0)[0] is "").
// The wire client calls Names(sent) before each batch to send new entries of
// its string table. A name is registered before any event using it is
// published, so a consumer that calls Names after Drain has returned a batch
// knows every id in that batch.
func (t *Tracer) Names(from int) []string {
	t.nmu.Lock()
	defer t.nmu.Unlock()
	if from < 0 {
		from = 0
	}
	if from >= len(t.names) {
		return nil
	}
	return append([]string(nil), t.names[from:]...)
}

// NameOf returns the string registered as id ("" if none).
func (t *Tracer) NameOf(id NameID) string {
	t.nmu.Lock()
	defer t.nmu.Unlock()
	if int(id) < len(t.names) {
		return t.names[id]
	}
	return ""
}

// Now returns the tracer clock in ns (> 0), or 0 when the tracer is
// disabled. Pass it to Kernel as the start of the op.
func (t *Tracer) Now() int64 {
	if !t.enabled.Load() {
		return 0
	}
	return int64(time.Since(t.base)) + 1
}

// clock reads the tracer clock unconditionally.
func (t *Tracer) clock() int64 { return int64(time.Since(t.base)) + 1 }

// push publishes e, or counts it as dropped when the ring is full.
func (t *Tracer) push(e *tracer.Event) {
	h := t.head.Load()
	tl := t.tail.Load()
	if h-tl >= uint64(len(t.ring)) {
		t.dropped.Add(1)
		return
	}
	t.ring[h&t.mask] = *e
	t.head.Store(h + 1)
	if h-tl == uint64(len(t.ring))/2 {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// Kernel records a kernel-like event named name from start (a value from Now)
// to now, on the tracer's device 0 / stream 0 with the producer's TID, and
// returns now (ns) so that back-to-back ops can chain: s = tr.Kernel(a, s)
// costs one clock read per event instead of two. A start of 0 (Now was
// called while disabled) records nothing and returns Now().
func (t *Tracer) Kernel(name NameID, start int64) int64 { return t.kernel(name, start, 0) }

// KernelWork is Kernel for a kernel whose work the caller knows: it
// carries flops (a multiply-add = 2) and bytes (read + written) at fp32
// in its Value (tracer.PackWork), for the roofline.
func (t *Tracer) KernelWork(name NameID, start int64, flops, bytes float64) int64 {
	if !t.enabled.Load() {
		return 0
	}
	return t.kernel(name, start, tracer.PackWork(tracer.Work{Flops: flops, Bytes: bytes, DType: tracer.DTypeFP32, Modelled: true}))
}

func (t *Tracer) kernel(name NameID, start, value int64) int64 {
	return t.interval(tracer.KindKernel, name, start, value, t.device, t.stream)
}

// interval records an event of kind from start to now and returns now
// (0 while disabled; nothing recorded for a start of 0).
func (t *Tracer) interval(kind tracer.Kind, name NameID, start, value int64, device, stream int32) int64 {
	if !t.enabled.Load() {
		return 0
	}
	end := t.clock()
	if start <= 0 {
		return end
	}
	e := tracer.Event{
		Start:  start,
		Dur:    end - start,
		Value:  value,
		Name:   tracer.StrID(name),
		PID:    t.pid,
		TID:    t.tid,
		Device: device,
		Stream: stream,
		Kind:   kind,
	}
	t.push(&e)
	return end
}

// Op records a framework operator (a KindCPUOp event) named name, from
// start (ns, from Now or a previous Kernel or Op) to now, and returns now,
// as Kernel does. Call it after the operator's kernels and allocations:
// the linker attributes what was launched or allocated on this thread
// inside [start, now) to it (the memory model's temporaries by operator,
// the kernels' launch contexts). A start of 0 records nothing.
func (t *Tracer) Op(name NameID, start int64) int64 {
	return t.interval(tracer.KindCPUOp, name, start, 0, -1, 0)
}

// Instant records a zero-length KindInstant marker (e.g. "flag attention=fused").
func (t *Tracer) Instant(name NameID) {
	if !t.enabled.Load() {
		return
	}
	e := tracer.Event{Start: t.clock(), Name: tracer.StrID(name), PID: t.pid, TID: t.tid, Device: -1, Kind: tracer.KindInstant}
	t.push(&e)
}

// RangeBegin opens a stage range; the matching RangeEnd records it as a
// KindRange event. Ranges nest up to 32 deep.
func (t *Tracer) RangeBegin(name NameID) {
	if t.depth >= maxDepth {
		t.dropped.Add(1)
		t.depth++
		return
	}
	var s int64
	if t.enabled.Load() {
		s = t.clock()
	}
	t.stack[t.depth] = openRange{name: name, start: s}
	t.depth++
}

// RangeEnd closes the innermost open range. Unbalanced calls are ignored.
func (t *Tracer) RangeEnd() {
	if t.depth == 0 {
		return
	}
	t.depth--
	if t.depth >= maxDepth {
		return
	}
	r := t.stack[t.depth]
	if r.start <= 0 || !t.enabled.Load() {
		return
	}
	end := t.clock()
	e := tracer.Event{Start: r.start, Dur: end - r.start, Name: tracer.StrID(r.name), PID: t.pid, TID: t.tid, Device: -1, Kind: tracer.KindRange}
	t.push(&e)
}

// Depth returns the number of open ranges.
func (t *Tracer) Depth() int { return t.depth }

// StepName is the id of "step", the name of every KindStep event; New
// registers it.
const StepName NameID = 1

// StepBegin opens training step n; StepEnd records it as a KindStep event
// named "step" with Value n.
func (t *Tracer) StepBegin(n int64) {
	t.stepN = n
	t.stepStart = 0
	if t.enabled.Load() {
		t.stepStart = t.clock()
	}
}

// StepEnd closes the step opened by StepBegin.
func (t *Tracer) StepEnd() {
	s := t.stepStart
	t.stepStart = 0
	if s <= 0 || !t.enabled.Load() {
		return
	}
	end := t.clock()
	e := tracer.Event{Start: s, Dur: end - s, Name: tracer.StrID(StepName), Value: t.stepN, PID: t.pid, TID: t.tid, Device: -1, Kind: tracer.KindStep}
	t.push(&e)
}

// Drain hands every published event to f, in order, in at most two
// contiguous batches (the ring wraps), and then frees them. f must not keep
// the slice. It returns the number of events drained. Drain never blocks the
// producer; concurrent Drain calls are serialised.
func (t *Tracer) Drain(f func(batch []tracer.Event)) int {
	t.drainMu.Lock()
	defer t.drainMu.Unlock()
	tl := t.tail.Load()
	h := t.head.Load()
	n := int(h - tl)
	if n == 0 {
		return 0
	}
	i := int(tl & t.mask)
	first := n
	if i+first > len(t.ring) {
		first = len(t.ring) - i
	}
	f(t.ring[i : i+first])
	if first < n {
		f(t.ring[:n-first])
	}
	t.tail.Store(h)
	return n
}

// Pending returns how many published events are not drained yet.
func (t *Tracer) Pending() int { return int(t.head.Load() - t.tail.Load()) }

// Wake returns a channel that receives (without blocking the producer) when
// the ring becomes half full; a consumer may select on it and on a ticker.
func (t *Tracer) Wake() <-chan struct{} { return t.wake }

// Dropped returns how many events were discarded because the ring was full
// (or ranges nested deeper than 32).
func (t *Tracer) Dropped() uint64 { return t.dropped.Load() }

// Recorded returns how many events were published to the ring.
func (t *Tracer) Recorded() uint64 { return t.head.Load() }

// Device describes the device the tracer's kernel events run on (ID 0): the
// CPU running the Go loop, for the wire hello's device list.
func (t *Tracer) Device() tracer.Device {
	return tracer.Device{ID: t.device, Name: "Go CPU (in-process gotrace)", Vendor: "cpu", Props: map[string]string{"source": "gotrace"}}
}

// String describes the tracer for logs.
func (t *Tracer) String() string {
	return fmt.Sprintf("gotrace(cap=%d enabled=%v recorded=%d dropped=%d)", len(t.ring), t.Enabled(), t.Recorded(), t.Dropped())
}
