package tui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tui"
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
