package cupti

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Memory reads what CUPTI records point to. The injection library reads C
// memory; tests use a table. Implementations must not retain the slices.
type Memory interface {
	// CString returns the NUL-terminated string whose pointer is stored at
	// rec[off:off+8], without the NUL; nil for a NULL pointer.
	CString(rec []byte, off int) []byte
	// APIName returns the name CUPTI gives callback cbid of domain
	// (DomainRuntime, DomainDriver), "" when unknown.
	APIName(domain int, cbid uint32) string
}

// GPUAttrs are the attributes of a GPU event that tracer.Event has no field
// for. Batch.Attrs holds one per kernel, memcpy and memset event.
type GPUAttrs struct {
	Event         int      // index into Batch.Events
	Context       uint32   // CUDA context id
	Grid, Block   [3]int32 // kernels only
	StaticShared  int32    // bytes per block, kernels only
	DynamicShared int32    // bytes per block, kernels only
	Registers     uint16   // per thread, kernels only
	GraphID       uint32   // CUDA graph id; 0 when not launched from a graph
	GraphNodeID   uint64   // CUDA graph node id; 0 when not from a graph
}

// Stats counts what the decoder skipped, cumulative.
type Stats struct {
	Records    uint64 // records seen
	Short      uint64 // records shorter than the prefix read (skipped)
	Unknown    uint64 // records of kinds not decoded
	Unpaired   uint64 // marker END without START, or START evicted
	OpenRanges int    // marker STARTs waiting for their END
}

// Batch is what one Take returns: events decoded since the previous Take
// and the strings they introduced.
type Batch struct {
	// Events hold times in host CLOCK_MONOTONIC ns (see Clock), Name as an
	// id of the decoder's string table. CPU kinds carry TID = CUPTI's thread
	// id (the low 32 bits of pthread_self, the same in API and marker
	// records, cast to int32); GPU kinds carry TID -1 and link to their
	// launch through Corr.
	Events []tracer.Event
	Attrs  []GPUAttrs
	// NewStrings are the strings interned since the previous Take, in id
	// order; the first has id FirstString.
	NewStrings  []string
	FirstString tracer.StrID
	// Memory holds the allocations and releases of MEMORY2 records
	// (memory.go), times as Events'.
	Memory []tracer.MemEvent
}

const maxOpenRanges = 1 << 16

type openRange struct {
	start int64
	name  tracer.StrID
	tid   int32
}

// Decoder decodes activity buffers. Not safe for concurrent use.
type Decoder struct {
	PID   int32
	Clock Clock
	mem   Memory
	strs  *tracer.Strings
	sent  int // strings already handed out by Take
	apis  [3]map[uint32]tracer.StrID
	open  map[uint32]openRange
	b     Batch
	stats Stats
	// corrTID: the thread of recent API calls by correlation id, for
	// memory records (memory.go).
	corrTID map[uint32]int32
}

// NewDecoder returns a decoder for process pid reading pointers through mem.
func NewDecoder(pid int32, mem Memory) *Decoder {
	d := &Decoder{PID: pid, mem: mem, strs: tracer.NewStrings(), open: map[uint32]openRange{}, sent: 1}
	for i := range d.apis {
		d.apis[i] = map[uint32]tracer.StrID{}
	}
	return d
}

// Strings returns the decoder's string table (ids used by Batch.Events).
func (d *Decoder) Strings() *tracer.Strings { return d.strs }

// Stats returns the cumulative counters.
func (d *Decoder) Stats() Stats {
	s := d.stats
	s.OpenRanges = len(d.open)
	return s
}

// Take returns the events decoded since the previous Take. The slices are
// the caller's: the decoder starts new ones.
func (d *Decoder) Take() Batch {
	b := d.b
	b.FirstString = tracer.StrID(d.sent)
	for i := d.sent; i < d.strs.Len(); i++ {
		b.NewStrings = append(b.NewStrings, d.strs.Get(tracer.StrID(i)))
	}
	d.sent = d.strs.Len()
	d.b = Batch{}
	return b
}

func u16(b []byte, o int) uint16 { return binary.LittleEndian.Uint16(b[o:]) }
func u32(b []byte, o int) uint32 { return binary.LittleEndian.Uint32(b[o:]) }
func i32(b []byte, o int) int32  { return int32(binary.LittleEndian.Uint32(b[o:])) }
func u64(b []byte, o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }

// span converts a CUPTI [start, end] pair to host start and duration;
// end < start (CUPTI writes 0 for an unfinished record) gives 0.
func (d *Decoder) span(start, end uint64) (int64, int64) {
	s := d.Clock.Host(int64(start))
	if end < start {
		return s, 0
	}
	return s, d.Clock.Host(int64(end)) - s
}

// Decode decodes the records of one buffer. buf holds the valid bytes of a
// completed activity buffer; offs are the offsets of its records in the
// order cuptiActivityGetNextRecord returned them (ascending). A record
// extends to the next offset (the last to len(buf)). It returns an error
// only for offsets that do not fit buf; bad records are skipped and
// counted.
func (d *Decoder) Decode(buf []byte, offs []uint32) error {
	d.b.Events = slices.Grow(d.b.Events, len(offs))
	d.b.Attrs = slices.Grow(d.b.Attrs, len(offs))
	for i, o := range offs {
		end := len(buf)
		if i+1 < len(offs) {
			end = int(offs[i+1])
		}
		if int(o) > end || end > len(buf) {
			return fmt.Errorf("cupti: record %d: offset %d..%d outside the %d-byte buffer (offsets must ascend)", i, o, end, len(buf))
		}
		d.record(buf[o:end])
	}
	return nil
}

func (d *Decoder) add(e tracer.Event) int {
	e.PID = d.PID
	d.b.Events = append(d.b.Events, e)
	return len(d.b.Events) - 1
}

func (d *Decoder) record(r []byte) {
	d.stats.Records++
	if len(r) < 8 {
		d.stats.Short++
		return
	}
	switch u32(r, 0) {
	case KindKernel, KindConcurrentKernel:
		d.kernel(r)
	case KindMemcpy:
		d.memcpy(r)
	case KindMemset:
		d.memset(r)
	case KindRuntime:
		d.api(r, DomainRuntime, tracer.KindRuntime)
	case KindDriver:
		d.api(r, DomainDriver, tracer.KindDriver)
	case KindSynchronization:
		d.sync(r)
	case KindOverhead:
		d.overhead(r)
	case KindMarker:
		d.marker(r)
	case KindMemory2:
		d.memory(r) // memory.go
	default:
		d.stats.Unknown++
	}
}

func (d *Decoder) kernel(r []byte) {
	L := &LayoutKernel
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	a := d.gpuOp(r, &L.LayoutGPUOp, tracer.Event{Kind: tracer.KindKernel, Name: d.strs.InternBytes(d.mem.CString(r, L.Name))})
	a.Grid = [3]int32{i32(r, L.GridX), i32(r, L.GridY), i32(r, L.GridZ)}
	a.Block = [3]int32{i32(r, L.BlockX), i32(r, L.BlockY), i32(r, L.BlockZ)}
	a.StaticShared = i32(r, L.StaticShared)
	a.DynamicShared = i32(r, L.DynamicShared)
	a.Registers = u16(r, L.Registers)
}

// gpuOp adds the event of a kernel, memcpy or memset record r (its length
// checked against L.Min by the caller): e as given (Kind, Name, Value) with
// the fields L places — host start and duration, correlation id, device,
// stream, TID -1 — and its GPUAttrs (context, graph ids when r reaches
// L.MinGraph), which it returns for the caller to complete.
func (d *Decoder) gpuOp(r []byte, L *LayoutGPUOp, e tracer.Event) *GPUAttrs {
	e.Start, e.Dur = d.span(u64(r, L.Start), u64(r, L.End))
	e.Corr = uint64(u32(r, L.Correlation))
	e.TID = -1
	e.Device, e.Stream = int32(u32(r, L.Device)), int32(u32(r, L.Stream))
	a := GPUAttrs{Event: d.add(e), Context: u32(r, L.Context)}
	if len(r) >= L.MinGraph {
		a.GraphID, a.GraphNodeID = u32(r, L.GraphID), u64(r, L.GraphNodeID)
	}
	d.b.Attrs = append(d.b.Attrs, a)
	return &d.b.Attrs[len(d.b.Attrs)-1]
}

var copyKinds = [...]string{"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"}
var memKinds = [...]string{"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"}

func enumName(names []string, v uint32) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("kind%d", v)
}

func (d *Decoder) memcpy(r []byte) {
	L := &LayoutMemcpy
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	// Named as Kineto names them: "Memcpy HtoD (Pinned -> Device)".
	name := "Memcpy " + enumName(copyKinds[:], uint32(r[L.CopyKind])) + " (" +
		enumName(memKinds[:], uint32(r[L.SrcKind])) + " -> " + enumName(memKinds[:], uint32(r[L.DstKind])) + ")"
	d.gpuOp(r, &L.LayoutGPUOp, tracer.Event{Kind: tracer.KindMemcpy, Name: d.strs.Intern(name), Value: int64(u64(r, L.Bytes))})
}

func (d *Decoder) memset(r []byte) {
	L := &LayoutMemset
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	name := "Memset (" + enumName(memKinds[:], uint32(u16(r, L.MemoryKind))) + ")"
	d.gpuOp(r, &L.LayoutGPUOp, tracer.Event{Kind: tracer.KindMemset, Name: d.strs.Intern(name), Value: int64(u64(r, L.Bytes))})
}

// apiName returns the interned name of a callback id: CUPTI's name without
// its "_vNNNN" version suffix ("cudaLaunchKernel_v7000" → "cudaLaunchKernel").
func (d *Decoder) apiName(domain int, cbid uint32) tracer.StrID {
	if id, ok := d.apis[domain][cbid]; ok {
		return id
	}
	n := d.mem.APIName(domain, cbid)
	if n == "" {
		if domain == DomainRuntime {
			n = fmt.Sprintf("cudaRuntimeAPI#%d", cbid)
		} else {
			n = fmt.Sprintf("cuDriverAPI#%d", cbid)
		}
	} else if i := strings.LastIndex(n, "_v"); i > 0 && i+2 < len(n) && strings.Trim(n[i+2:], "0123456789") == "" {
		n = n[:i]
	}
	id := d.strs.Intern(n)
	d.apis[domain][cbid] = id
	return id
}

func (d *Decoder) api(r []byte, domain int, kind tracer.Kind) {
	L := &LayoutAPI
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	s, dur := d.span(u64(r, L.Start), u64(r, L.End))
	d.noteCall(u32(r, L.Correlation), int32(u32(r, L.Thread)))
	d.add(tracer.Event{
		Kind: kind, Start: s, Dur: dur,
		Corr: uint64(u32(r, L.Correlation)),
		Name: d.apiName(domain, u32(r, L.Cbid)),
		TID:  int32(u32(r, L.Thread)), Device: -1,
	})
}

var syncTypes = [...]string{"Synchronize", "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaStreamSynchronize", "cudaDeviceSynchronize"}

func (d *Decoder) sync(r []byte) {
	L := &LayoutSync
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	s, dur := d.span(u64(r, L.Start), u64(r, L.End))
	d.add(tracer.Event{
		Kind: tracer.KindSync, Start: s, Dur: dur,
		Corr:   uint64(u32(r, L.Correlation)),
		Name:   d.strs.Intern(enumName(syncTypes[:], u32(r, L.Type))),
		TID:    -1,
		Device: -1, Stream: int32(u32(r, L.Stream)),
	})
}

func overheadName(k uint32) string {
	switch k {
	case 1:
		return "CUPTI overhead: driver compiler"
	case 1 << 16:
		return "CUPTI overhead: buffer flush"
	case 2 << 16:
		return "CUPTI overhead: instrumentation"
	case 3 << 16:
		return "CUPTI overhead: resource"
	}
	return fmt.Sprintf("CUPTI overhead: kind %d", k)
}

func (d *Decoder) overhead(r []byte) {
	L := &LayoutOverhead
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	tid := int32(-1)
	if u32(r, L.ObjectKind) == objectThread {
		tid = int32(u32(r, L.ThreadID))
	}
	s, dur := d.span(u64(r, L.Start), u64(r, L.End))
	d.add(tracer.Event{
		Kind: tracer.KindOverhead, Start: s, Dur: dur,
		Name: d.strs.Intern(overheadName(u32(r, L.OverheadKind))),
		TID:  tid, Device: -1,
	})
}

// marker pairs NVTX START/END records by id into KindRange events (push/pop
// and start/end ranges alike; the range keeps the START's thread) and turns
// instantaneous markers into KindInstant events.
func (d *Decoder) marker(r []byte) {
	L := &LayoutMarker
	if len(r) < L.Min {
		d.stats.Short++
		return
	}
	flags := u32(r, L.Flags)
	ts := d.Clock.Host(int64(u64(r, L.Timestamp)))
	id := u32(r, L.ID)
	tid := int32(-1)
	if u32(r, L.ObjectKind) == objectThread {
		tid = int32(u32(r, L.ThreadID))
	}
	switch {
	case flags&markerStart != 0:
		if len(d.open) >= maxOpenRanges {
			d.stats.Unpaired++
			return
		}
		d.open[id] = openRange{start: ts, name: d.strs.InternBytes(d.mem.CString(r, L.Name)), tid: tid}
	case flags&markerEnd != 0:
		o, ok := d.open[id]
		if !ok {
			d.stats.Unpaired++
			return
		}
		delete(d.open, id)
		dur := ts - o.start
		if dur < 0 {
			dur = 0
		}
		d.add(tracer.Event{Kind: tracer.KindRange, Start: o.start, Dur: dur, Name: o.name, TID: o.tid, Device: -1})
	case flags&markerInstant != 0:
		d.add(tracer.Event{Kind: tracer.KindInstant, Start: ts, Name: d.strs.InternBytes(d.mem.CString(r, L.Name)), TID: tid, Device: -1})
	}
}
