package views_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

func memSnapshot() *attrib.Snapshot { return &attrib.Snapshot{Memory: viewstest.Memory()} }

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

// TestTimelineMemoryLane: the memory lane under the lanes of a timeline
// of memSnapshot's two steps: low before the first allocation, high
// while the 64 MiB temporary lives, the peak (step 2's) drawn as ▲.
func TestTimelineMemoryLane(t *testing.T) {
	tv := views.NewTimeline(styles())
	tv.SetTimeline(&attrib.Timeline{StartNs: 10e6, EndNs: 30e6, Steps: []attrib.TimelineStep{{Step: 1, StartNs: 10e6, DurNs: 10e6}, {Step: 2, StartNs: 20e6, DurNs: 10e6}}}, nil)
	tv.SetSnapshot(memSnapshot())
	tv.SetSize(80, 14)
	tv.ShowRange(10e6, 20e6)
	out := render(t, tv.View(), 80, 14)
	var lane string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "memory") {
			lane = l
		}
	}
	if lane == "" {
		t.Fatalf("no memory lane:\n%s", out)
	}
	// Levels in eighths of the 165 MiB peak: 164 MiB during step 1's
	// temporary (▇), 101–102 MiB held between (▅), the peak at step 2's
	// temporary (▲) after it.
	i, j := strings.Index(lane, "▇"), strings.Index(lane, "▲")
	if strings.Count(lane, "▲") != 1 || strings.Count(lane, "▇") != 1 || !strings.Contains(lane, "▅") || i < 0 || j < i {
		t.Errorf("lane %q: want step 1's temporary ▇, the held ▅, then one peak ▲", lane)
	}
}

// TestCompareMemoryLines: a finished comparison with memory per arm says
// each arm's peak, temporaries per step and its largest attention
// temporary (the math arm's 32 MiB scores, the flash arm's 128 KiB).
func TestCompareMemoryLines(t *testing.T) {
	r := explainFixture()
	r.Memory = []livestate.ArmMemory{
		{Arm: "sdpa=math", Steps: 2, PeakAllocatedBytes: 74 << 20, TempBytesPerStep: 76 << 20,
			Categories: []livestate.ArmMemCategory{{Category: "attention", TempBytesPerStep: 76 << 20, LargestBytes: 32 << 20, LargestOperator: "aten::bmm"}}},
		{Arm: "sdpa=flash", Steps: 2, PeakAllocatedBytes: 6 << 20, TempBytesPerStep: 128 << 10,
			Categories: []livestate.ArmMemCategory{{Category: "attention", TempBytesPerStep: 128 << 10, LargestBytes: 128 << 10, LargestOperator: "aten::_scaled_dot_product_flash_attention_for_cpu"}}},
	}
	v := views.NewCompare(styles())
	v.SetSize(160, 60)
	v.SetState(views.CompareState{Phase: views.CompareDone, What: "sdpa: math vs flash", Flag: "sdpa", Result: r})
	out := render(t, v.View(), 160, 60)
	for _, want := range []string{
		"memory sdpa=math   : peak 74.0 MiB · temporaries 76.0 MiB/step · attention largest 32.0 MiB (aten::bmm)",
		"memory sdpa=flash  : peak 6.0 MiB · temporaries 128.0 KiB/step · attention largest 128.0 KiB (aten::_scaled_dot_product_flash_attention_for_cpu)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
}

// TestMemoryOneOperator: temporaries each allocated and freed by one
// operator (the built-in loop's attention_math) name it once, whole, at 80
// columns, with the longest stage drawn whole beside it.
func TestMemoryOneOperator(t *testing.T) {
	m := &attrib.Memory{Temporaries: []attrib.MemTemp{
		{Bytes: 6 << 20, Device: -1, Count: 246, LifetimeNs: 26e6, Op: "attention_math", FreedBy: "attention_math", Stage: "forward"},
		{Bytes: 6 << 20, Device: -1, Count: 60, LifetimeNs: 26e6, Op: "attention_math", FreedBy: "attention_math", Stage: "update.forward"},
	}}
	v := views.NewMemory(styles())
	v.SetSnapshot(&attrib.Snapshot{Memory: m})
	v.SetSize(80, 8)
	out := render(t, v.View(), 80, 8)
	if !strings.Contains(out, "allocated and freed by") || strings.Contains(out, "→") {
		t.Errorf("want one operator column:\n%s", out)
	}
	for _, want := range []string{"attention_math  ", "update.forward"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q not drawn whole:\n%s", want, out)
		}
	}
}
