package tracefile

import (
	"strconv"

	"github.com/rlktop/rlktop/tracer"
)

// kMemArgs holds the args of a torch.profiler `[memory]` instant event
// (profile_memory=True) that the importer reads besides Bytes (kev.bytesV):
// {"Total Reserved": N, "Total Allocated": N, "Bytes": ±N, "Addr": N,
// "Device Id": N, "Device Type": N}. Device Type is c10::DeviceType: 0
// CPU, 1 CUDA, 6 HIP (checked on torch 2.6 and in the shared TraceLens
// traces, H100 and MI300X).
type kMemArgs struct {
	addr               uint64
	alloc, reserved    int64
	devID, devType     int64
	hasAddr, hasAlloc  bool
	hasRes, hasDevID   bool
	hasDevType, anyMem bool
}

// arg reads one of the memory keys (kMemKey says which are).
func (m *kMemArgs) arg(key string, kind byte, val []byte) {
	m.anyMem = true
	switch key {
	case "Addr":
		m.addr, m.hasAddr = kNumUint(kind, val)
	case "Total Allocated":
		m.alloc, m.hasAlloc = kNumInt(kind, val)
	case "Total Reserved":
		m.reserved, m.hasRes = kNumInt(kind, val)
	case "Device Id":
		m.devID, m.hasDevID = kNumInt(kind, val)
	case "Device Type":
		m.devType, m.hasDevType = kNumInt(kind, val)
	}
}

// kMemoryName is the name torch.profiler gives its memory instants.
const kMemoryName = "[memory]"

// memory turns an instant named "[memory]" with Bytes and Addr into a
// tracer.MemEvent of Trace.Memory (and reports true: it is no Event).
// Host memory (Device Type 0) gets Device -1; a device event without a
// Device Id, or one whose Bytes or Addr is missing, stays an instant
// event and is counted (a warning). A streamed read (OpenStream) drops
// them and counts them in Window.MemoryEvents, so that a caller needing
// the memory model can stop and read the input whole.
func (d *kdec) memory(name []byte, e *tracer.Event) bool {
	ev := d.ev
	if !ev.mem.anyMem || string(name) != kMemoryName {
		return false
	}
	m := &ev.mem
	if !ev.hasBytes || !m.hasAddr || (m.devType != 0 && !m.hasDevID) {
		d.memSkipped++
		return false
	}
	me := tracer.MemEvent{TS: e.Start, Bytes: ev.bytesV, Addr: m.addr, Allocated: -1, Reserved: -1, PID: e.PID, TID: e.TID, Device: -1}
	if m.hasAlloc {
		me.Allocated = m.alloc
	}
	if m.hasRes {
		me.Reserved = m.reserved
	}
	if m.hasDevType && m.devType != 0 {
		me.Device = int32(m.devID)
	}
	if d.stream != nil {
		d.stream.addMemory(me) // handed with the window they fall in
		return true
	}
	d.t.Memory = append(d.t.Memory, me)
	return true
}

// writeMemory writes m as torch.profiler writes its memory events (an
// "i" event named "[memory]", cat cpu_instant_event, with Bytes, Addr,
// Total Allocated, Total Reserved, Device Type 0 host / 1 device, Device
// Id), so that reading the export back gives the same Trace.Memory.
// Unknown totals (-1) are left out.
func (x *exporter) writeMemory(m *tracer.MemEvent) {
	x.sep()
	b := append(x.buf, `{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":`...)
	b = strconv.AppendInt(b, x.cpuPID(m.PID), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(m.TID), 10)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, m.TS)
	b = append(b, `,"args":{"Bytes":`...)
	b = strconv.AppendInt(b, m.Bytes, 10)
	b = append(b, `,"Addr":`...)
	b = strconv.AppendUint(b, m.Addr, 10)
	if m.Allocated >= 0 {
		b = append(b, `,"Total Allocated":`...)
		b = strconv.AppendInt(b, m.Allocated, 10)
	}
	if m.Reserved >= 0 {
		b = append(b, `,"Total Reserved":`...)
		b = strconv.AppendInt(b, m.Reserved, 10)
	}
	typ := 1
	if m.Device < 0 {
		typ = 0
	}
	b = append(b, `,"Device Type":`...)
	b = strconv.AppendInt(b, int64(typ), 10)
	b = append(b, `,"Device Id":`...)
	b = strconv.AppendInt(b, int64(m.Device), 10)
	b = append(b, "}}"...)
	x.buf = b
	x.flushIfBig()
}
