package tracefile

import "github.com/rlktop/rlktop/tracer"

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
// event and is counted in Meta["memory_events_skipped"]. Events of a
// streamed read (OpenStream) are dropped: the windows carry no memory.
func (d *kdec) memory(name []byte, e *tracer.Event) bool {
	ev := &d.ev
	if !ev.mem.anyMem || string(name) != kMemoryName {
		return false
	}
	m := &ev.mem
	if !ev.hasBytes || !m.hasAddr || (m.devType != 0 && !m.hasDevID) {
		d.memSkipped++
		return false
	}
	if d.stream != nil {
		return true
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
	d.t.Memory = append(d.t.Memory, me)
	return true
}
