package viewstest

import (
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Memory is a hand-made memory model on gpu 0: two steps of 10 ms, each
// with a 64 MiB temporary of aten::index in stage policy_head freed by
// aten::sum 0.3 ms later, and 1 MiB of aten::zeros (stage rollout) held
// across steps; 100 MiB held before, 256 MiB reserved (the allocator's
// totals given). By hand: step peaks 164 and 165 MiB, held at step end
// 101 and 102 MiB, growth 1 MiB a step.
func Memory() *attrib.Memory {
	var recs []attrib.MemRecord
	var wins []attrib.MemStepWindow
	level := int64(100 << 20)
	for s := int64(1); s <= 2; s++ {
		t0 := s * 10e6
		wins = append(wins, attrib.MemStepWindow{PID: 1, Step: s, StartNs: t0, EndNs: t0 + 10e6})
		add := func(ts, bytes int64, addr uint64, op, stage string) {
			level += bytes
			recs = append(recs, attrib.MemRecord{MemEvent: tracer.MemEvent{TS: ts, Bytes: bytes, Addr: addr, Allocated: level, Reserved: 256 << 20, PID: 1, Device: 0},
				Op: op, Ops: []string{op}, Stage: stage, Step: s})
		}
		add(t0+1e6, 64<<20, 0x1000, "aten::index", "policy_head")
		add(t0+1.3e6, -(64 << 20), 0x1000, "aten::sum", "policy_head")
		add(t0+2e6, 1<<20, uint64(0x9000+s), "aten::zeros", "rollout")
	}
	return attrib.BuildMemory(recs, wins)
}
