package views_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
)

// TestStepsInfoGPUAboveWall: when a step's gpu time (its launched ops'
// durations summed) exceeds its wall time, the Steps view says why, as
// report's note does; hand-made steps of 100 ms, gpu 151 ms in
// one of them.
func TestStepsInfoGPUAboveWall(t *testing.T) {
	s := views.NewSteps(styles())
	snap := &attrib.Snapshot{Steps: []attrib.StepRow{{Step: 1, DurNs: 100e6, KernelNs: 90e6, Count: 3}, {Step: 2, DurNs: 100e6, KernelNs: 151e6, Count: 3}}}
	s.SetSnapshot(snap)
	if got := s.Info(); !strings.Contains(got, "gpu > wall: launched ops summed") {
		t.Errorf("Info %q: want the note", got)
	}
	snap.Steps[1].KernelNs = 99e6
	s.SetSnapshot(snap)
	if got := s.Info(); strings.Contains(got, "gpu > wall") {
		t.Errorf("Info %q: no step exceeds, no note", got)
	}
}

// TestStepsInfoForgotten: a live session's snapshot lists its newest
// steps (attrib.Snapshot.StepsForgotten): the Steps view says "last 2 of
// 5 steps" and the header counts all 5.
func TestStepsInfoForgotten(t *testing.T) {
	s := views.NewSteps(styles())
	snap := &attrib.Snapshot{StepsForgotten: 3, Steps: []attrib.StepRow{{Step: 3, DurNs: 100e6}, {Step: 4, DurNs: 120e6}}}
	s.SetSnapshot(snap)
	if got := s.Info(); !strings.HasPrefix(got, "last 2 of 5 steps · median 100 ms") {
		t.Errorf("Info %q: want the newest 2 of 5 and their median", got)
	}
	h := views.NewHeader(styles())
	h.SetSnapshot(snap)
	h.SetWidth(120)
	if got := ansi.Strip(h.View()); !strings.Contains(got, "steps 5") {
		t.Errorf("header %q: want steps 5", got)
	}
}
