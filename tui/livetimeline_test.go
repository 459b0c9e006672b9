package tui_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// pyWindow is a live Python run's window timeline: steps first..last of
// 100 ms each (step k starts at k·100 ms), with one operator of 40 ms on
// CPU thread 42 in each step listed in profiled.
func pyWindow(first, last int64, profiled ...int64) *attrib.Timeline {
	const ms = int64(1e6)
	tl := &attrib.Timeline{StartNs: first * 100 * ms, EndNs: (last + 1) * 100 * ms}
	for k := first; k <= last; k++ {
		tl.Steps = append(tl.Steps, attrib.TimelineStep{Step: k, StartNs: k * 100 * ms, DurNs: 100 * ms})
	}
	for _, k := range profiled {
		tl.Lanes = []attrib.TimelineLane{{Device: -1, Stream: 42}}
		tl.Ops = append(tl.Ops, attrib.TimelineOp{Lane: 0, Kind: tracer.KindKernel, StartNs: k*100*ms + 30*ms, DurNs: 40 * ms,
			Name: "aten::mm", Display: "aten::mm", Category: "gemm", Step: k})
	}
	return tl
}

// TestLiveTimelinePythonWindows (a selfplay run's Timeline
// showed only step markers, following or after 0, and nothing said that
// the Python agent profiles 2 of every 10 steps): after a window whose
// steps 12 and 13 had operators, a window of steps 14–17 without any
// says, following, which steps the operators come from, and 0 shows
// them (their lane and no note).
func TestLiveTimelinePythonWindows(t *testing.T) {
	m := newLive(t, 120, 40, &fakeCtl{})
	msg := liveMsg("math", true)
	msg.State.Children[0].Hello.Source = "pyagent"
	msg.State.StepCount = 14
	msg.State.Timeline = pyWindow(10, 13, 12, 13)
	m.Update(msg)
	msg = liveMsg("math", true)
	msg.State.Children[0].Hello.Source = "pyagent"
	msg.State.StepCount = 18
	msg.State.Timeline = pyWindow(14, 17)
	m.Update(msg)
	for m.Focused().Title() != "Timeline" {
		m.Update(key("tab"))
	}
	note := "no operators in this view: torch.profiler operators come from steps 12–13 (RLKTOP_KINETO windows); 0 fits the latest"
	out := ansi.Strip(m.Render())
	if !strings.Contains(strings.Join(strings.Fields(out), " "), note) {
		t.Errorf("following: no %q:\n%s", note, out)
	}
	press(m, "0")
	out = ansi.Strip(m.Render())
	if strings.Contains(out, "no operators in this view") || !strings.Contains(out, "CPU t42") || !strings.Contains(out, "│12") {
		t.Errorf("after 0: want steps 12–13's operators on lane CPU t42 and no note:\n%s", out)
	}
}
