package tui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// TestScrubSteps: a file with two per-step snapshots (step 7: the
// synthetic kernels elementwise_kernel<128, 0…1>, step 8: <128, 0…2>).
// `.` selects step 7 — the header says "step 7 (1 of 2)" and Kernels
// lists that step's kernels instead of the file's (flash_fwd); `.`
// again step 8, a third `.` wraps to every step; `,` from every step
// goes to the last one.
func TestScrubSteps(t *testing.T) {
	steps := []tui.StepSnapshot{{Step: 7, Snapshot: viewstest.Big(2)}, {Step: 8, Snapshot: viewstest.Big(3)}}
	for _, sz := range [][2]int{{80, 24}, {160, 40}} {
		t.Run(fmt.Sprintf("w%d", sz[0]), func(t *testing.T) {
			w, h := sz[0], sz[1]
			m := newModel(t, w, h, tui.Options{})
			m.Update(tui.SnapshotMsg{Snapshot: viewstest.Snapshot(), Steps: steps})
			if out := screen(t, m, w, h); !strings.Contains(out, "flash_fwd") || strings.Contains(out, "step 7") {
				t.Fatalf("before scrubbing:\n%s", out)
			}
			press(m, ".")
			out := screen(t, m, w, h)
			golden.RequireEqual(t, out)
			if !strings.Contains(out, "step 7 (1 of 2)") || !strings.Contains(out, "elementwise_kernel<128, 1") ||
				strings.Contains(out, "elementwise_kernel<128, 2") || strings.Contains(out, "flash_fwd") {
				t.Errorf("step 7 selected:\n%s", out)
			}
			press(m, ".")
			if out := screen(t, m, w, h); !strings.Contains(out, "step 8 (2 of 2)") || !strings.Contains(out, "elementwise_kernel<128, 2") {
				t.Errorf("step 8 selected:\n%s", out)
			}
			press(m, ".")
			if out := screen(t, m, w, h); strings.Contains(out, "of 2)") || !strings.Contains(out, "flash_fwd") {
				t.Errorf("back to every step:\n%s", out)
			}
			press(m, ",")
			if out := screen(t, m, w, h); !strings.Contains(out, "step 8 (2 of 2)") {
				t.Errorf(", from every step:\n%s", out)
			}
		})
	}
}

// TestScrubHeaderAndTimeline (while scrubbing, the header's
// totals stayed the whole file's and the timeline did not move): with the
// hand-made timeline (step 41 = 0–7,000 ns, its ops ending by 6,000;
// step 42 = 7,000–14,000, its optimizer kernel ending at 13,000), `.`
// shows step 41's totals in the header (3 kernels, 3,000 ns: counts 1+2
// and 2,000+1,000 ns of viewstest.Big(2)) and the timeline's range
// 0+7,000; `.` again step 42 (6 kernels, 6.00 µs; 7,000+7,000); a third
// `.` every step: the file's totals and the fitted 0+14,000.
func TestScrubHeaderAndTimeline(t *testing.T) {
	s41, s42 := viewstest.Big(2), viewstest.Big(3)
	s41.Totals = attrib.Totals{KernelCount: 3, KernelTotalNs: 3_000, GPUTotalNs: 3_000}
	s42.Totals = attrib.Totals{KernelCount: 6, KernelTotalNs: 6_000, GPUTotalNs: 6_000}
	file := viewstest.Snapshot()
	tl, _ := viewstest.Timeline()
	m := newModel(t, 160, 40, tui.Options{})
	m.Update(tui.SnapshotMsg{Snapshot: file, Timeline: tl,
		Steps: []tui.StepSnapshot{{Step: 41, Snapshot: s41}, {Step: 42, Snapshot: s42}}})
	check := func(what, header string, from, span int64) {
		t.Helper()
		out := screen(t, m, 160, 40)
		if !strings.Contains(out, header) {
			t.Errorf("%s: header lacks %q:\n%s", what, header, out)
		}
		if f, s := m.Timeline().Range(); f != from || s != span {
			t.Errorf("%s: timeline %d+%d, want %d+%d", what, f, s, from, span)
		}
	}
	press(m, ".")
	check("step 41", "kernels 3   kernel time 3.00 µs", 0, 7_000)
	press(m, ".")
	check("step 42", "kernels 6   kernel time 6.00 µs", 7_000, 7_000)
	press(m, ".")
	check("every step", "kernels "+views.FormatCount(file.Totals.KernelCount)+"   kernel time "+views.FormatNs(file.Totals.KernelTotalNs), 0, 14_000)
}

// Scrubbed to a step, the Findings view evaluates that step (as the
// header and tables show it) and says so; back on every step it says
// nothing of a step. A new user saw "median of 6 steps" in the findings
// while the header said one step.
func TestScrubFindingsFollow(t *testing.T) {
	steps := []tui.StepSnapshot{{Step: 7, Snapshot: viewstest.Big(2)}, {Step: 8, Snapshot: viewstest.Big(3)}}
	m := newModel(t, 160, 40, tui.Options{})
	m.Update(tui.SnapshotMsg{Snapshot: viewstest.Snapshot(), Steps: steps})
	for range 20 {
		if m.Focused().Title() == "Findings" {
			break
		}
		press(m, "tab")
	}
	if m.Focused().Title() != "Findings" {
		t.Fatalf("no Findings tab")
	}
	press(m, ".")
	if out := screen(t, m, 160, 40); !strings.Contains(out, "step 7 only") {
		t.Errorf("step 7 selected, the findings do not say so:\n%s", out)
	}
	press(m, ".")
	press(m, ".")
	if out := screen(t, m, 160, 40); strings.Contains(out, "only (, . step)") {
		t.Errorf("every step again, the findings still speak of one:\n%s", out)
	}
}
