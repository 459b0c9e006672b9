package views_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// drillTimeline holds three launches of the fixture's volta_sgemm_64x64_nt
// (gemm): 80 µs and 100 µs under MmBackward0 in backward of step 3, and
// 20 µs under aten::linear in forward of step 4; plus one launch of the
// same name classified attention (another row) that must not count.
func drillTimeline() *attrib.Timeline {
	const name = "volta_sgemm_64x64_nt"
	bw := []string{"autograd::engine::evaluate_function: MmBackward0", "aten::mm"}
	op := func(s, d int64, cat, stage string, step int64, ops []string) attrib.TimelineOp {
		return attrib.TimelineOp{Kind: tracer.KindKernel, StartNs: s, DurNs: d, Name: name, Display: name,
			Category: cat, Stage: stage, Step: step, Ops: ops, Ranges: []string{stage}}
	}
	return &attrib.Timeline{Lanes: []attrib.TimelineLane{{Device: 0, Stream: 7}}, EndNs: 1_000_000, Ops: []attrib.TimelineOp{
		op(0, 80_000, "gemm", "backward", 3, bw),
		op(100_000, 100_000, "gemm", "backward", 3, bw),
		op(300_000, 20_000, "gemm", "forward", 4, []string{"aten::linear"}),
		op(400_000, 50_000, "attention", "forward", 4, []string{"aten::scaled_dot_product_attention"}),
	}}
}

func TestKernelDrill(t *testing.T) {
	for _, w := range widths {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			k := views.NewKernels(styles())
			k.SetSize(w, 20)
			k.SetFocused(true)
			k.SetSnapshot(viewstest.Snapshot())
			k.SetTimeline(drillTimeline())
			k.SetFilter("volta")
			press(k, "enter")
			if !k.Drilled() {
				t.Fatal("enter did not open the drill-down")
			}
			out := render(t, k.View(), w, 20)
			golden.RequireEqual(t, out)
			// By hand: 3 launches, 200 µs; backward 2 / 180 µs = 90.0%,
			// forward 1 / 20 µs = 10.0%; steps 4 then 3.
			for _, s := range []string{"3 launches on the timeline (200 µs)", "backward", "90.0%", "10.0%"} {
				if !strings.Contains(out, s) {
					t.Errorf("drill-down lacks %q", s)
				}
			}
			lines := strings.Split(ansi.Strip(out), "\n")
			var stepRows []string
			in := false
			for _, l := range lines {
				if strings.Contains(l, "step (newest first)") {
					in = true
					continue
				}
				if in && strings.TrimSpace(l) != "" {
					stepRows = append(stepRows, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
				}
			}
			if len(stepRows) != 2 || stepRows[0] != "4 1" || stepRows[1] != "3 2" {
				t.Errorf("step rows %q, want [4 1, 3 2]", stepRows)
			}
			press(k, "esc")
			if k.Drilled() {
				t.Error("esc did not close the drill-down")
			}
		})
	}
}

// TestKernelDrillCountsEveryLaunch (the drill-down counted
// only the launches the bounded timeline held): a row whose aggregation
// saw 1,000 launches (KernelRow.Launches: 700 / 560 µs under MmBackward0 in
// backward, 300 / 140 µs under aten::linear in forward; steps 9 and 8 of
// 100 each, 800 in older steps) shows those counts, not the timeline's 3.
// Shares by hand: 560/700 = 80.0%, 140/700 = 20.0%.
func TestKernelDrillCountsEveryLaunch(t *testing.T) {
	s := viewstest.Snapshot()
	var row *attrib.KernelRow
	for i := range s.Kernels {
		if s.Kernels[i].Name == "volta_sgemm_64x64_nt" {
			row = &s.Kernels[i]
		}
	}
	if row == nil {
		t.Fatal("fixture lacks volta_sgemm_64x64_nt")
	}
	row.Count, row.TotalNs = 1_000, 700_000
	row.Launches = &attrib.KernelLaunches{
		Contexts: []attrib.LaunchGroup{{Key: "autograd::engine::evaluate_function: MmBackward0 › backward", Count: 700, TotalNs: 560_000},
			{Key: "aten::linear › forward", Count: 300, TotalNs: 140_000}},
		Stages:     []attrib.LaunchGroup{{Key: "backward", Count: 700, TotalNs: 560_000}, {Key: "forward", Count: 300, TotalNs: 140_000}},
		Steps:      []attrib.LaunchStep{{Step: 9, Count: 100, TotalNs: 70_000}, {Step: 8, Count: 100, TotalNs: 70_000}},
		OlderSteps: attrib.LaunchGroup{Count: 800, TotalNs: 560_000},
	}
	k := views.NewKernels(styles())
	k.SetSize(80, 24)
	k.SetFocused(true)
	k.SetSnapshot(s)
	k.SetTimeline(drillTimeline())
	k.SetFilter("volta")
	press(k, "enter")
	out := ansi.Strip(k.View())
	for _, want := range []string{"1,000 launches in all (700 µs)", "80.0%", "20.0%", "older steps (before the newest 64)"} {
		if !strings.Contains(out, want) {
			t.Errorf("drill-down lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "on the timeline") {
		t.Errorf("drill-down still counts the timeline:\n%s", out)
	}
}

// TestKernelDetailTopContext: a kernel launched from several contexts
// shows, under the table, the context with most of its time and how
// many there are (the first occurrence's context can be a small one): by
// hand, 3/4 of the row's time under "aten::mm › backward".
func TestKernelDetailTopContext(t *testing.T) {
	s := viewstest.Snapshot()
	r := &s.Kernels[0]
	r.Ops, r.Ranges = []string{"aten::linear"}, []string{"forward"} // the first occurrence's
	r.Launches = &attrib.KernelLaunches{Contexts: []attrib.LaunchGroup{
		{Key: "aten::mm › backward", Count: 3, TotalNs: r.TotalNs / 4 * 3},
		{Key: "aten::linear › forward", Count: 1, TotalNs: r.TotalNs - r.TotalNs/4*3},
	}}
	k := views.NewKernels(styles())
	k.SetSize(200, 30)
	k.SetFocused(true)
	k.SetSnapshot(s)
	k.SetFilter(regexp.QuoteMeta(r.Name))
	out := ansi.Strip(k.View())
	if want := "aten::mm › backward · 75.0% of its time, 2 contexts (enter)"; !strings.Contains(out, want) {
		t.Errorf("detail lacks %q:\n%s", want, out)
	}
}
