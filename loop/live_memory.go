package loop

import (
	"strconv"

	"github.com/rlktop/rlktop/tracer/attrib"
)

// memoryMeta is the memory part of the run record's end (session Meta,
// shown by report --meta): per source device with memory events its peak
// allocated and reserved bytes over the traced steps and the growth of
// what is held at step end; nil without memory events.
func memoryMeta(m *attrib.Memory) map[string]string {
	if m == nil {
		return nil
	}
	out := map[string]string{"memory.events": strconv.Itoa(m.Events)}
	for _, d := range m.Devices {
		p := "memory.cpu."
		if d.Device >= 0 {
			p = "memory.gpu" + strconv.Itoa(int(d.Device)) + "."
		}
		out[p+"peak_allocated_bytes"] = strconv.FormatInt(d.PeakAllocatedBytes, 10)
		out[p+"peak_reserved_bytes"] = strconv.FormatInt(d.PeakReservedBytes, 10)
		out[p+"steps"] = strconv.Itoa(d.Steps)
		if d.StepPairs > 0 {
			out[p+"growth_bytes_per_step"] = strconv.FormatFloat(d.GrowthBytesPerStep, 'f', 0, 64)
		}
	}
	return out
}
