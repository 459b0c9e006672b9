package rocprof

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Stats counts what the decoder met, cumulative.
type Stats struct {
	Records  uint64 // entries decoded
	Short    uint64 // records shorter than the pinned prefix (skipped)
	Unknown  uint64 // entries with a tag this decoder does not know (skipped)
	Dropped  uint64 // records rocprofiler-sdk reported dropped (buffer callbacks' drop_count)
	Unpaired uint64 // roctx pops/stops with no open range
	NoName   uint64 // dispatches whose kernel_id had no code-object symbol
	NoAgent  uint64 // records whose agent handle was not among the agents SetAgent named
}

// Batch is what Take returns: the events decoded since the last Take and
// the strings they use that were new (in ID order after the previous
// Take's).
type Batch struct {
	Events     []tracer.Event
	NewStrings []string
}

type open struct {
	name  tracer.StrID
	start int64
	tid   uint64
}

// Decoder decodes chunks from the C layer. Not safe for concurrent use.
type Decoder struct {
	pid int32
	// OpName names a HIP API operation (rocprofiler's
	// rocprofiler_query_buffer_tracing_kind_operation_name); nil or "" gives
	// "HIP op N".
	OpName func(kind, op int32) string

	strs    *tracer.Strings
	sent    int
	names   map[uint64]tracer.StrID // kernel_id → name
	ops     map[int64]tracer.StrID  // kind<<32|op → API name
	agents  map[uint64]int32
	known   bool // SetAgent was called: agents holds the SDK's GPU indices
	queues  map[uint64]int32
	stacks  map[uint64][]open // thread → roctx push stack
	started map[uint64]open   // roctx range id → start
	events  []tracer.Event
	mem     []tracer.MemEvent // memory allocation records (memory.go)
	sizes   map[uint64]int64  // live allocations' sizes by address (memory.go)
	stats   Stats
	sdk     uint32 // rocprofiler-sdk version (major*10000+minor*100+patch); 0 unknown
}

// SetSDKVersion selects the record layouts of the rocprofiler-sdk version
// the tool was configured by (rocprofiler_configure's version argument):
// from VersionAncestor on, API records carry a 24-byte correlation id.
// Without it the pre-0.7.0 layout is assumed.
func (d *Decoder) SetSDKVersion(v uint32) { d.sdk = v }

// NewDecoder returns a decoder for process pid.
func NewDecoder(pid int32) *Decoder {
	return &Decoder{pid: pid, strs: tracer.NewStrings(), sent: 1, names: map[uint64]tracer.StrID{}, ops: map[int64]tracer.StrID{},
		agents: map[uint64]int32{}, queues: map[uint64]int32{}, stacks: map[uint64][]open{}, started: map[uint64]open{}}
}

// Stats returns the counters.
func (d *Decoder) Stats() Stats { return d.stats }

// Agents returns the agent handle → device number map (for run metadata).
func (d *Decoder) Agents() map[uint64]int32 { return d.agents }

// SetAgent names the device number of an agent handle (a GPU agent's
// logical_node_type_id from rocprofiler_query_available_agents). Once any
// agent is set, records on other agents get Device -1 (Stats.NoAgent);
// without any, devices are numbered in order of first appearance.
func (d *Decoder) SetAgent(handle uint64, device int32) {
	d.known = true
	d.agents[handle] = device
}

func (d *Decoder) device(h uint64) int32 {
	if d.known {
		if v, ok := d.agents[h]; ok {
			return v
		}
		d.stats.NoAgent++
		return -1
	}
	return ordinal(d.agents, h)
}

// Take returns and clears the decoded events and new strings.
func (d *Decoder) Take() Batch {
	b := Batch{Events: d.events}
	for i := d.sent; i < d.strs.Len(); i++ {
		b.NewStrings = append(b.NewStrings, d.strs.Get(tracer.StrID(i)))
	}
	d.sent = d.strs.Len()
	d.events = nil
	return b
}

// Name returns the string for an ID of this decoder's table.
func (d *Decoder) Name(id tracer.StrID) string { return d.strs.Get(id) }

var le = binary.LittleEndian

func u64(b []byte, off int) uint64 { return le.Uint64(b[off:]) }
func u32(b []byte, off int) uint32 { return le.Uint32(b[off:]) }

func ordinal(m map[uint64]int32, h uint64) int32 {
	if v, ok := m[h]; ok {
		return v
	}
	v := int32(len(m))
	m[h] = v
	return v
}

func span(start, end uint64) (int64, int64) {
	s, e := int64(start), int64(end)
	if e < s {
		return s, 0
	}
	return s, e - s
}

// Decode reads one chunk: a sequence of entries (tag u32, len u32,
// payload, padding to 8 bytes). A malformed entry ends the chunk with an
// error; events decoded before it are kept.
func (d *Decoder) Decode(chunk []byte) error {
	// Most entries are records of 56-192 bytes: reserve once per chunk.
	d.events = slices.Grow(d.events, len(chunk)/128)
	off := 0
	for off+8 <= len(chunk) {
		tag, n := u32(chunk, off), int(u32(chunk, off+4))
		if n < 0 || off+8+n > len(chunk) {
			return fmt.Errorf("rocprof chunk: entry at byte %d claims %d bytes, %d left", off, n, len(chunk)-off-8)
		}
		p := chunk[off+8 : off+8+n]
		off += 8 + (n+7)&^7
		d.stats.Records++
		switch tag {
		case TagDispatch:
			d.dispatch(p)
		case TagCopy:
			d.copyRec(p)
		case TagAPI:
			d.api(p)
		case TagMemory:
			d.memory(p) // memory.go
		case TagSymbol:
			if len(p) < 8 {
				d.stats.Short++
				continue
			}
			d.names[u64(p, 0)] = d.strs.InternBytes(p[8:])
		case TagMarker:
			d.marker(p)
		case TagDrops:
			if len(p) < 8 {
				d.stats.Short++
				continue
			}
			d.stats.Records--
			d.stats.Dropped += u64(p, 0)
		default:
			d.stats.Unknown++
		}
	}
	if off != len(chunk) {
		return fmt.Errorf("rocprof chunk: %d trailing bytes", len(chunk)-off)
	}
	return nil
}

// recordOK checks a copied SDK record: its size field must cover the
// pinned prefix and must not exceed the bytes copied.
func (d *Decoder) recordOK(p []byte, min int) bool {
	if len(p) < min || u64(p, 0) < uint64(min) {
		d.stats.Short++
		return false
	}
	return true
}

func (d *Decoder) dispatch(p []byte) {
	if !d.recordOK(p, DispatchMin) {
		return
	}
	e := tracer.Event{Kind: tracer.KindKernel, PID: d.pid, Corr: u64(p, DispatchOffCorr), TID: int32(u64(p, DispatchOffThreadID))}
	e.Start, e.Dur = span(u64(p, DispatchOffStart), u64(p, DispatchOffEnd))
	e.Device = d.device(u64(p, DispatchOffAgent))
	e.Stream = ordinal(d.queues, u64(p, DispatchOffQueue))
	kid := u64(p, DispatchOffKernelID)
	name, ok := d.names[kid]
	if !ok {
		d.stats.NoName++
		name = d.strs.Intern(fmt.Sprintf("<kernel_id %d>", kid))
	}
	e.Name = name
	d.events = append(d.events, e)
}

func (d *Decoder) copyRec(p []byte) {
	if !d.recordOK(p, CopyMin) {
		return
	}
	op := u32(p, CopyOffOperation)
	name := "MEMORY_COPY"
	if int(op) < len(memcpyOpNames) {
		name = memcpyOpNames[op]
	}
	e := tracer.Event{Kind: tracer.KindMemcpy, PID: d.pid, Corr: u64(p, CopyOffCorr), TID: int32(u64(p, CopyOffThreadID)),
		Value: int64(u64(p, CopyOffBytes)), Name: d.strs.Intern(name), Device: -1}
	e.Start, e.Dur = span(u64(p, CopyOffStart), u64(p, CopyOffEnd))
	// The GPU side of the copy.
	switch op {
	case 3: // device to host
		e.Device = d.device(u64(p, CopyOffSrcAgent))
	case 2, 4: // host to device, device to device
		e.Device = d.device(u64(p, CopyOffDstAgent))
	}
	d.events = append(d.events, e)
}

func (d *Decoder) api(p []byte) {
	offCorr, offStart, offEnd, offTID, min := APIOffCorr, APIOffStart, APIOffEnd, APIOffThreadID, APIMin
	if d.sdk >= VersionAncestor {
		offCorr, offStart, offEnd, offTID, min = APIV1OffCorr, APIV1OffStart, APIV1OffEnd, APIV1OffThreadID, APIV1Min
	}
	if !d.recordOK(p, min) {
		return
	}
	kind, op := int32(u32(p, APIOffKind)), int32(u32(p, APIOffOperation))
	key := int64(kind)<<32 | int64(uint32(op))
	name, ok := d.ops[key]
	if !ok {
		s := ""
		if d.OpName != nil {
			s = d.OpName(kind, op)
		}
		if s == "" {
			s = fmt.Sprintf("HIP op %d", op)
		}
		name = d.strs.Intern(s)
		d.ops[key] = name
	}
	e := tracer.Event{Kind: tracer.KindRuntime, PID: d.pid, Corr: u64(p, offCorr), TID: int32(u64(p, offTID)), Device: -1, Name: name}
	e.Start, e.Dur = span(u64(p, offStart), u64(p, offEnd))
	d.events = append(d.events, e)
}

func (d *Decoder) marker(p []byte) {
	if len(p) < MarkerEntryFixed {
		d.stats.Short++
		return
	}
	op, phase := u32(p, 0), u32(p, 4)
	tid, ts, rid := u64(p, 8), int64(u64(p, 16)), u64(p, 32)
	msg := p[MarkerEntryFixed:]
	ev := func(kind tracer.Kind, name tracer.StrID, start, end int64, tid uint64) {
		e := tracer.Event{Kind: kind, PID: d.pid, TID: int32(tid), Device: -1, Name: name, Start: start}
		if end > start {
			e.Dur = end - start
		}
		if n, ok := profilerStep(d.strs.Get(name)); ok && kind == tracer.KindRange {
			e.Kind, e.Value = tracer.KindStep, n
		}
		d.events = append(d.events, e)
	}
	switch {
	case op == MarkerMarkA && phase == PhaseEnter:
		ev(tracer.KindInstant, d.strs.InternBytes(msg), ts, ts, tid)
	case op == MarkerRangePushA && phase == PhaseEnter:
		d.stacks[tid] = append(d.stacks[tid], open{d.strs.InternBytes(msg), ts, tid})
	case op == MarkerRangePop && phase == PhaseEnter:
		st := d.stacks[tid]
		if len(st) == 0 {
			d.stats.Unpaired++
			return
		}
		o := st[len(st)-1]
		d.stacks[tid] = st[:len(st)-1]
		ev(tracer.KindRange, o.name, o.start, ts, tid)
	case op == MarkerRangeStartA && phase == PhaseExit:
		d.started[rid] = open{d.strs.InternBytes(msg), ts, tid}
	case op == MarkerRangeStop && phase == PhaseEnter:
		o, ok := d.started[rid]
		if !ok {
			d.stats.Unpaired++
			return
		}
		delete(d.started, rid)
		// A start/stop range may end on another thread; it belongs to
		// the thread that started it.
		ev(tracer.KindRange, o.name, o.start, ts, o.tid)
	}
}

// Open returns the roctx ranges still open (pushed, not popped; started,
// not stopped), for reporting at exit.
func (d *Decoder) Open() int {
	n := len(d.started)
	for _, s := range d.stacks {
		n += len(s)
	}
	return n
}

// profilerStep returns N for PyTorch's "ProfilerStep#N" range name, which
// becomes a KindStep event (as in the Kineto importer).
func profilerStep(name string) (int64, bool) {
	const p = "ProfilerStep#"
	if !strings.HasPrefix(name, p) {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(p):], 10, 64)
	return n, err == nil && n >= 0
}
