package tui_test

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

// liveSnapshots returns two snapshots of n kernels and n steps as a live session
// sends them one after the other: new slices each time, the same name
// strings (the aggregator keeps one copy of each name), and totals that
// moved enough to swap neighbouring rows.
func liveSnapshots(n int) [2]*attrib.Snapshot {
	a := viewstest.BigWork(n)
	a.Steps = bigSteps(n, 0)
	b := *a
	b.Kernels = slices.Clone(a.Kernels)
	b.Steps = bigSteps(n+1, 1)
	for i := 0; i+1 < len(b.Kernels); i += 7 {
		b.Kernels[i], b.Kernels[i+1] = b.Kernels[i+1], b.Kernels[i]
		b.Kernels[i].TotalNs, b.Kernels[i+1].TotalNs = b.Kernels[i+1].TotalNs, b.Kernels[i].TotalNs
	}
	return [2]*attrib.Snapshot{a, &b}
}

// bigSteps is n steps of a live run, 100 ms apart, their wall times
// varying by up to 10% (seed moves them between snapshots).
func bigSteps(n, seed int) []attrib.StepRow {
	out := make([]attrib.StepRow, n)
	for i := range out {
		d := int64(95e6 + (i*7919+seed*104729)%10007*1000)
		out[i] = attrib.StepRow{Step: int64(i), StartNs: int64(i) * 100e6, DurNs: d, KernelNs: d * 8 / 10, Count: 500}
	}
	return out
}

// pythonSnapshots are liveSnapshots(n) of a Python run: each with a
// profile of n functions of its own (the session builds a new one per
// snapshot), the second's counts moved as its kernels are.
func pythonSnapshots(n int) [2]*attrib.Snapshot {
	s := liveSnapshots(n)
	a, b := *s[0], *s[1]
	a.Python, b.Python = viewstest.BigPython(n, false), viewstest.BigPython(n, true)
	return [2]*attrib.Snapshot{&a, &b}
}

// BenchmarkFrame is one live tick at 200×50 with each view focused: a new
// snapshot (and timeline) routed to every view, then a whole frame, at
// 2k, 20k and 100k kernel rows (timeline ops; Python functions for the
// Python view, whose snapshots reach every other view too). The budget is 2 ms at 2k
// and 16 ms (one frame at 60 Hz) at 100k. The commands a frame returns
// run on goroutines and their messages reach a later frame, as in
// Bubble Tea's loop: the findings of a large snapshot are evaluated
// there, their CPU time in cpu-ms/op, their latency not in ns/op
// (BenchmarkFindings times them alone).
func BenchmarkFrame(b *testing.B) {
	for _, n := range []int{2_000, 20_000, 100_000} {
		plain, python := liveSnapshots(n), pythonSnapshots(n)
		tl := viewstest.BigTimeline(n)
		// KernelsPy: the Kernels view of a Python run, whose snapshots
		// carry the Python profile to every view.
		for _, view := range []string{"Kernels", "Timeline", "Categories", "Stages", "Steps", "Findings", "Roofline", "Memory", "Python", "KernelsPy"} {
			snaps := plain
			if view == "Python" || view == "KernelsPy" {
				snaps = python
			}
			name := view
			view = strings.TrimSuffix(view, "Py")
			b.Run(fmt.Sprintf("%s/%dk", name, n/1000), func(b *testing.B) {
				st := views.DefaultStyles()
				m := tui.New(tui.Options{Styles: &st, Snapshot: snaps[0], Timeline: tl})
				msgs := make(chan tea.Msg, 16)
				runCmds(m.Init(), msgs)
				_, cmd := m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
				runCmds(cmd, msgs)
				for range 20 {
					if m.Focused().Title() == view {
						break
					}
					_, cmd := m.Update(key("tab"))
					runCmds(cmd, msgs)
				}
				if got := m.Focused().Title(); got != view {
					b.Fatalf("focused %q, want %q", got, view)
				}
				b.ReportAllocs()
				i := 0
				got := 0 // messages back from commands: evaluations of findings
				cpu0 := cpuTime()
				for b.Loop() {
					for more := true; more; {
						select {
						case msg := <-msgs:
							got++
							_, cmd := m.Update(msg)
							runCmds(cmd, msgs)
						default:
							more = false
						}
					}
					_, cmd := m.Update(tui.SnapshotMsg{Snapshot: snaps[i%2], Timeline: tl})
					runCmds(cmd, msgs)
					_ = m.Render()
					i++
				}
				// CPU time (garbage collection included) says more than
				// wall time on a shared machine.
				b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(got)/float64(b.N), "msgs/op")
			})
		}
	}
}

// runCmds runs cmd (a batch's commands each) on goroutines, as Bubble
// Tea does, and sends what they return to msgs.
func runCmds(cmd tea.Cmd, msgs chan<- tea.Msg) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				runCmds(c, msgs)
			}
			return
		}
		if msg != nil {
			msgs <- msg
		}
	}()
}

// BenchmarkFindings is the evaluation of the built-in rules over the
// snapshots and timeline of BenchmarkFrame, at 2k, 20k and 100k kernel
// rows: the work a Findings refresh adds to a frame below
// findingsAsyncSize, and runs beside the frames above it.
func BenchmarkFindings(b *testing.B) {
	for _, n := range []int{2_000, 20_000, 100_000} {
		snaps, tl := liveSnapshots(n), viewstest.BigTimeline(n)
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			i := 0
			for b.Loop() {
				_ = attrib.EvaluateFindings(nil, attrib.FindingInput{Snapshot: snaps[i%2], Timeline: tl})
				i++
			}
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
