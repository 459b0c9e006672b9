package views_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
)

// memSnapshot: two steps of 10 ms on gpu 0; each allocates a 64 MiB
// temporary in aten::index (stage policy_head) freed by aten::sum 0.3 ms
// later, and 1 MiB held across steps by aten::zeros.
func memSnapshot() *attrib.Snapshot {
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
	return &attrib.Snapshot{Memory: attrib.BuildMemory(recs, wins)}
}

func TestMemoryView(t *testing.T) {
	for _, w := range []int{80, 160} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			v := views.NewMemory(styles())
			v.SetSnapshot(memSnapshot())
			v.SetSize(w, 8)
			v.SetFocused(true)
			golden.RequireEqual(t, render(t, v.View(), w, 8))
		})
	}
	t.Run("drill_w80", func(t *testing.T) {
		v := views.NewMemory(styles())
		v.SetSnapshot(memSnapshot())
		v.SetSize(80, 8)
		v.SetFocused(true)
		press(v, "enter")
		out := render(t, v.View(), 80, 8)
		golden.RequireEqual(t, out)
		press(v, "esc")
		if back := render(t, v.View(), 80, 8); !strings.Contains(back, "allocated by → freed by") {
			t.Errorf("esc did not return to the temporaries:\n%s", back)
		}
	})
	t.Run("none", func(t *testing.T) {
		v := views.NewMemory(styles())
		v.SetSnapshot(&attrib.Snapshot{})
		if v.Available() {
			t.Error("available without a memory model")
		}
	})
}
