package attrib

import (
	"testing"

	"github.com/rlktop/rlktop/tracer"
)

// TestMemoryPeakThreshold: a step whose peak is one block allocated
// inside attention_math (the built-in loop's math attention) fires
// memory-peak-attention from 16 MiB (its threshold) and not below; the
// block is the whole peak, so its share is 1 either way.
func TestMemoryPeakThreshold(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		fire  bool
	}{{6 << 20, false}, {16<<20 - 1, false}, {16 << 20, true}, {18 << 20, true}} {
		ops := []string{"attention_math"}
		recs := []MemRecord{
			{MemEvent: tracer.MemEvent{TS: 100, Bytes: c.bytes, Addr: 0x10, Allocated: -1, Reserved: -1, Device: -1}, Op: "attention_math", Ops: ops, Stage: "forward", Step: 0},
			{MemEvent: tracer.MemEvent{TS: 200, Bytes: -c.bytes, Addr: 0x10, Allocated: -1, Reserved: -1, Device: -1}, Op: "attention_math", Ops: ops, Stage: "forward", Step: 0},
		}
		m := BuildMemory(recs, []MemStepWindow{{Step: 0, StartNs: 0, EndNs: 1000}})
		snap := &Snapshot{Memory: m, Steps: []StepRow{{Step: 0, DurNs: 1000}}}
		var got *Finding
		for _, f := range EvaluateFindings(nil, FindingInput{Snapshot: snap}) {
			if f.ID == "memory-peak-attention" {
				got = &f
			}
		}
		if (got != nil) != c.fire {
			t.Errorf("%d bytes inside attention_math: fired %v, want %v", c.bytes, got != nil, c.fire)
		}
		if got != nil && (got.Numbers["inside_bytes"] != float64(c.bytes) || got.Share != 1) {
			t.Errorf("%d bytes: inside %v, share %v; want %d, 1", c.bytes, got.Numbers["inside_bytes"], got.Share, c.bytes)
		}
	}
}
