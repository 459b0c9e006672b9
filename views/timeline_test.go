package views_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/views"
	"github.com/rlktop/rlktop/views/viewstest"
)

func TestTimelineView(t *testing.T) {
	cases := []struct {
		name string
		h    int
		keys []string
	}{
		{"initial", 14, nil},
		{"fit-select", 14, []string{"0", "]", "]"}},
		{"zoom-in", 14, []string{"0", "]", "+", "+"}},
		{"short", 8, []string{"0"}},
	}
	for _, c := range cases {
		for _, w := range widths {
			t.Run(fmt.Sprintf("%s/w%d", c.name, w), func(t *testing.T) {
				v := views.NewTimeline(styles())
				v.SetSize(w, c.h)
				v.SetFocused(true)
				v.SetTimeline(viewstest.Timeline())
				press(v, c.keys...)
				golden.RequireEqual(t, render(t, v.View(), w, c.h))
			})
		}
	}
}

// TestTimelineCells checks the lane drawing against positions computed by
// hand: at 80 columns the grid is 80-10 = 70 cells; after "0" (fit) the
// 14,000 ns of the fixture span 70 cells of 200 ns. Stream 7 is busy
// 1,000–3,500 (cells 5–17), 4,000–6,000 (cells 20–29) and 8,000–13,000
// (cells 40–64); everything else on it is idle (blank).
func TestTimelineCells(t *testing.T) {
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 14)
	v.SetTimeline(viewstest.Timeline())
	press(v, "0")
	if from, span := v.Range(); from != 0 || span != 14_000 {
		t.Fatalf("range %d+%d, want 0+14000", from, span)
	}
	var lane string
	for _, l := range strings.Split(ansi.Strip(v.View()), "\n") {
		if strings.HasPrefix(l, "GPU0 s7") {
			lane = l
		}
	}
	if lane == "" {
		t.Fatal("no GPU0 s7 lane")
	}
	grid := []rune(lane)[10:]
	busy := func(c int) bool {
		return c >= 5 && c <= 17 || c >= 20 && c <= 29 || c >= 40 && c <= 64
	}
	for c, r := range grid {
		if busy(c) == (r == ' ') {
			t.Errorf("cell %d = %q, busy %v", c, r, busy(c))
		}
	}
	// The attention run (cells 5–17) starts with its letter then a name.
	if grid[5] != 'A' {
		t.Errorf("cell 5 = %q, want A (attention)", grid[5])
	}
	// Built-in categories keep their letters in every trace (optimizer is
	// p, whatever else is there).
	if v.Letter("optimizer") != 'p' || v.Letter("gemm") != 'g' {
		t.Errorf("letters optimizer %q gemm %q, want p and g", v.Letter("optimizer"), v.Letter("gemm"))
	}
}

// Two timelines of different traces give a category the same letter:
// the A100 trace's letters came out of its categories' order, so E was
// embedding there and elementwise in the built-in loop; a user category
// takes the first letter of its name that no category shown holds.
func TestTimelineLettersFixed(t *testing.T) {
	mk := func(cats ...string) *views.Timeline {
		tl := &attrib.Timeline{Lanes: []attrib.TimelineLane{{Device: 0, Stream: 7}}}
		for i, c := range cats {
			tl.Ops = append(tl.Ops, attrib.TimelineOp{Lane: 0, Name: c + "_k", Category: c, StartNs: int64(i) * 100, DurNs: int64(100 * (len(cats) - i))})
		}
		p := views.PlainStyles()
		v := views.NewTimeline(&p)
		v.SetSize(80, 14)
		v.SetTimeline(tl, nil)
		return v
	}
	a := mk("embedding", "elementwise", "memcpy", "optimizer")
	b := mk("elementwise", "attention", "sample", "mycat")
	for _, c := range []struct {
		v    *views.Timeline
		cat  string
		want rune
	}{{a, "embedding", 'b'}, {a, "elementwise", 'e'}, {b, "elementwise", 'e'}, {a, "memcpy", 'm'}, {a, "optimizer", 'p'}, {b, "sample", 's'}, {b, "attention", 'a'}, {b, "mycat", 'm'}} {
		if got := c.v.Letter(c.cat); got != c.want {
			t.Errorf("%s: letter %q, want %q", c.cat, got, c.want)
		}
	}
}

// TestTimelineMouse: a click on the GPU0 s7 lane over the GEMM selects
// it; a drag over cells 5–17 zooms to 1,000–3,600 ns; the wheel zooms in
// around the pointer.
func TestTimelineMouse(t *testing.T) {
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 14)
	v.SetTimeline(viewstest.Timeline())
	press(v, "0")
	// Rows: axis 0, steps 1, CPU 2, ranges 3, GPU0 s7 4, GPU0 s13 5.
	// Cell 25 of the grid is column 10+25.
	v.Update(tea.MouseClickMsg{X: 35, Y: 4, Button: tea.MouseLeft})
	v.Update(tea.MouseReleaseMsg{X: 35, Y: 4, Button: tea.MouseLeft})
	if s := v.Selected(); s == nil || s.Name != "gemm_nt" {
		t.Fatalf("selected %v, want gemm_nt", s)
	}
	v.Update(tea.MouseClickMsg{X: 15, Y: 4, Button: tea.MouseLeft})
	v.Update(tea.MouseMotionMsg{X: 20, Y: 4, Button: tea.MouseLeft})
	v.Update(tea.MouseReleaseMsg{X: 27, Y: 4, Button: tea.MouseLeft})
	if from, span := v.Range(); from != 1_000 || span != 2_600 {
		t.Errorf("after drag: %d+%d, want 1000+2600 (cells 5–17 of 200 ns)", from, span)
	}
	if v.Following() {
		t.Error("still following after a zoom")
	}
	press(v, "0")
	v.Update(tea.MouseWheelMsg{X: 10, Y: 4, Button: tea.MouseWheelUp}) // grid cell 0
	if from, span := v.Range(); from != 0 || span != 7_000 {
		t.Errorf("after wheel up at cell 0: %d+%d, want 0+7000", from, span)
	}
}

// TestHeaderCPUAndLive: a CPU-only source's device is called CPU, not
// GPU 0; a live source does not repeat "rlktop" after its name; a
// recording says it is one.
func TestHeaderCPUAndLive(t *testing.T) {
	s := viewstest.Snapshot()
	s.Source, s.Format, s.Rank = "live: built-in RL loop", "rlktop", -1
	s.Devices = []tracer.Device{{ID: 0, Name: "host CPU", Vendor: "cpu"}}
	h := views.NewHeader(styles())
	h.SetWidth(80)
	h.SetSnapshot(s)
	lines := strings.Split(ansi.Strip(h.View()), "\n")
	if strings.TrimSpace(lines[0]) != "rlktop  live: built-in RL loop" {
		t.Errorf("title line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "CPU: host CPU") || strings.Contains(lines[1], "GPU") {
		t.Errorf("device line %q", lines[1])
	}
	s.Source = "run.rlk"
	h.SetSnapshot(s)
	if l := ansi.Strip(strings.Split(h.View(), "\n")[0]); !strings.Contains(l, "rlktop recording") {
		t.Errorf("recording title %q", l)
	}
}

// TestTimelineCPULanes: a host device's lanes say CPU.
func TestTimelineCPULanes(t *testing.T) {
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 14)
	v.SetTimeline(viewstest.Timeline())
	v.SetCPUDevices([]int32{0})
	out := ansi.Strip(v.View())
	if !strings.Contains(out, "CPU s7") || strings.Contains(out, "GPU0") {
		t.Errorf("lanes:\n%s", out)
	}
}

// TestKernelsFullNameAndCopy: v shows the selected kernel's whole name
// (the fixture's flash kernel, 253 characters, cut at 80 columns
// otherwise); y asks the root to say it was copied.
func TestKernelsFullNameAndCopy(t *testing.T) {
	k := views.NewKernels(styles())
	k.SetSize(80, 24)
	k.SetFocused(true)
	k.SetSnapshot(viewstest.Snapshot())
	name := viewstest.Kernels[0].Name
	flat := func() string {
		return strings.ReplaceAll(strings.Join(strings.Fields(ansi.Strip(k.View())), ""), "name", "")
	}
	want := strings.ReplaceAll(name, " ", "")
	if strings.Contains(flat(), want) {
		t.Fatal("whole name shown before v")
	}
	press(k, "v")
	if !strings.Contains(flat(), want) {
		t.Errorf("v: whole name not shown:\n%s", ansi.Strip(k.View()))
	}
	cmd := k.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if cmd == nil {
		t.Fatal("y returned no command")
	}
	var status bool
	if b, ok := cmd().(tea.BatchMsg); ok {
		for _, c := range b {
			if a, ok := c().(views.NoteMsg); ok && strings.Contains(a.Text, "OSC 52") {
				status = true
			}
		}
	}
	if !status {
		t.Error("y: no status message about the copy")
	}
}

// slidingTimeline is a live window [startNs, startNs+10,000) ns: CPU ranges
// and steps from its start, GPU ops only in its second half (the oldest
// ops were dropped by the bound), 1,000 ns each every 1,000 ns on lane 0.
func slidingTimeline(startNs int64) *attrib.Timeline {
	tl := &attrib.Timeline{StartNs: startNs, EndNs: startNs + 10_000,
		Lanes: []attrib.TimelineLane{{Device: 0, Stream: 7}}}
	for s := startNs + 5_000; s < startNs+10_000; s += 1_000 {
		tl.Ops = append(tl.Ops, attrib.TimelineOp{Lane: 0, Kind: tracer.KindKernel, StartNs: s, DurNs: 1_000,
			Name: "k", Display: "k", Category: "gemm", Step: -1})
	}
	tl.CPU = []attrib.TimelineSpan{{Kind: tracer.KindRange, StartNs: startNs, DurNs: 10_000, Name: "collect"}}
	return tl
}

// TestTimelineFitFollowsLiveWindow: "0" in a live window fits the range
// that has ops, and keeps fitting as new windows arrive, so the lane never
// goes blank (with fit the range stayed where it was and the
// sliding window's blocks left the view within seconds). Each window
// [S, S+10,000) holds ops over [S+5,000, S+10,000): the fit range is
// exactly that (5,000 ns, no steps to widen it), every grid cell busy.
// The axis counts from the first window's start: after windows at 0,
// 20,000 and 40,000 the first label is +5.00 µs, +25.0 µs, +45.0 µs.
func TestTimelineFitFollowsLiveWindow(t *testing.T) {
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 10)
	v.SetFollow(true)
	v.SetTimeline(slidingTimeline(0), nil)
	press(v, "0")
	for _, c := range []struct {
		start int64
		label string
	}{{0, "┊5.00 µs"}, {20_000, "┊25.0 µs"}, {40_000, "┊45.0 µs"}} {
		v.SetTimeline(slidingTimeline(c.start), nil)
		if from, span := v.Range(); from != c.start+5_000 || span != 5_000 {
			t.Errorf("window at %d: range %d+%d, want %d+5000", c.start, from, span, c.start+5_000)
		}
		if !v.Fitting() {
			t.Errorf("window at %d: no longer fitting", c.start)
		}
		lines := strings.Split(ansi.Strip(v.View()), "\n")
		if got := strings.TrimSpace(lines[0]); !strings.HasPrefix(got, c.label) {
			t.Errorf("window at %d: axis %q, want it to start with %q", c.start, got, c.label)
		}
		var lane string
		for _, l := range lines {
			if strings.HasPrefix(l, "GPU0 s7") {
				lane = l
			}
		}
		if grid := []rune(lane); len(grid) != 80 || strings.ContainsRune(string(grid[10:]), ' ') {
			t.Errorf("window at %d: lane %q, want 70 busy cells", c.start, lane)
		}
	}
	// A zoom stops fitting; a window that slides past the range says how
	// to get the ops back instead of showing blank lanes without a word.
	press(v, "+")
	v.SetTimeline(slidingTimeline(5_000_000), nil)
	if v.Fitting() {
		t.Error("still fitting after a zoom")
	}
	if out := ansi.Strip(v.View()); !strings.Contains(out, "0 fits the ops, f follows the newest") {
		t.Errorf("no hint with no ops in view:\n%s", out)
	}
}

// TestTimelineLegendWraps (at 80 columns the legend ended
// "O opt…"): nine categories of the built-in loop do not fit one 80-column
// line; the legend takes two and names every category whole.
func TestTimelineLegendWraps(t *testing.T) {
	cats := []string{"attention", "elementwise", "embedding", "env", "gemm", "loss", "norm", "optimizer", "qkv"}
	tl := &attrib.Timeline{StartNs: 0, EndNs: 9_000, Lanes: []attrib.TimelineLane{{Device: 0, Stream: 0}}}
	for i, c := range cats {
		tl.Ops = append(tl.Ops, attrib.TimelineOp{Kind: tracer.KindKernel, StartNs: int64(i) * 1_000, DurNs: 1_000,
			Name: c + "_k", Display: c + "_k", Category: c, Step: -1})
	}
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 14)
	v.SetTimeline(tl, nil)
	out := render(t, v.View(), 80, 14)
	words := strings.Fields(out)
	for _, c := range cats {
		if !slices.Contains(words, c) {
			t.Errorf("legend lacks %q whole:\n%s", c, out)
		}
	}
}

// TestTimelineSelectionLeavesWindow (tmux 200x50: a block selected with ]
// lost its description two seconds later, when the live window slid past
// it): the description stays, saying the op is no longer in the window.
func TestTimelineSelectionLeavesWindow(t *testing.T) {
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 12)
	v.SetTimeline(slidingTimeline(0), nil)
	press(v, "0", "]")
	sel := v.Selected()
	if sel == nil {
		t.Fatal("] selected nothing")
	}
	at := sel.StartNs
	v.SetTimeline(slidingTimeline(20_000), nil) // every op of the first window is gone
	out := ansi.Strip(v.View())
	if v.Selected() != nil || !strings.Contains(out, "kernel k") || !strings.Contains(out, "(no longer in the live window)") ||
		!strings.Contains(out, "at +"+views.FormatNs(at)) {
		t.Errorf("selection at %d ns after the window slid:\n%s", at, out)
	}
}

// TestTimelineStepNumbersNotRunTogether (tmux 80x24, fit: the step row
// read "│2││3│31  │32│3││35"): steps 2 cells apart (at 80 columns after
// fit, 14,000 ns / 70 cells = 200 ns a cell, steps every 400 ns) show
// their boundaries; a number is written only where it fits, so every run
// of digits on the row is a whole step number.
func TestTimelineStepNumbersNotRunTogether(t *testing.T) {
	tl, _ := viewstest.Timeline()
	tl.Steps = nil
	for i := int64(0); i < 35; i++ {
		tl.Steps = append(tl.Steps, attrib.TimelineStep{Step: 100 + i, StartNs: i * 400, DurNs: 400})
	}
	tl.Steps = append(tl.Steps, attrib.TimelineStep{Step: 7, StartNs: 14_000 - 2_000, DurNs: 2_000}) // room for "│7"
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 14)
	v.SetTimeline(tl, nil)
	press(v, "0")
	var row string
	for _, l := range strings.Split(ansi.Strip(v.View()), "\n") {
		if strings.HasPrefix(l, "steps") {
			row = l
		}
	}
	nums := strings.FieldsFunc(row[len("steps"):], func(r rune) bool { return r < '0' || r > '9' })
	for _, n := range nums {
		if n != "7" && (len(n) != 3 || n < "100" || n > "134") {
			t.Errorf("digits %q on the step row are no step number: %q", n, row)
		}
	}
	if !strings.Contains(row, "│7") {
		t.Errorf("step 7 with room lacks its number: %q", row)
	}
}

// TestTimelineSeveralSources: two ranks merged (attrib.MergeTimelines):
// lanes are named by rank, the step and CPU rows follow the cursor lane's
// rank, and ShowStep spans step 3 of both ranks (rank 1 starts it 4,000
// ns late and ends at 9,000: the range is 0–9,000).
func TestTimelineSeveralSources(t *testing.T) {
	part := func(start, dur int64, rng string) *attrib.Timeline {
		return &attrib.Timeline{StartNs: start, EndNs: start + dur, Lanes: []attrib.TimelineLane{{Device: 0, Stream: 7}},
			Ops:   []attrib.TimelineOp{{Lane: 0, Kind: tracer.KindKernel, StartNs: start, DurNs: dur, Name: "k", Display: "k", Category: "gemm", Step: 3}},
			CPU:   []attrib.TimelineSpan{{Kind: tracer.KindRange, StartNs: start, DurNs: dur, Name: rng}},
			Steps: []attrib.TimelineStep{{Step: 3, StartNs: start, DurNs: dur}}}
	}
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(100, 14)
	v.SetFocused(true)
	v.SetTimeline(attrib.MergeTimelines([]*attrib.Timeline{part(0, 5_000, "fwd_r0"), part(4_000, 5_000, "fwd_r1")}, []string{"r0", "r1"}), nil)
	if !v.ShowStep(3) {
		t.Fatal("ShowStep(3): not found")
	}
	if from, span := v.Range(); from != 0 || span != 9_000 {
		t.Errorf("step 3: range %d+%d, want 0+9000", from, span)
	}
	out := ansi.Strip(v.View())
	for _, want := range []string{"steps r0", "›r0 G0 s7", "r1 G0 s7", "fwd_r0"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "fwd_r1") {
		t.Errorf("the CPU row of r0's lane shows r1's range:\n%s", out)
	}
	press(v, "down")
	out = ansi.Strip(v.View())
	if !strings.Contains(out, "steps r1") || !strings.Contains(out, "fwd_r1") || strings.Contains(out, "fwd_r0") {
		t.Errorf("cursor on r1's lane: want r1's step and CPU rows:\n%s", out)
	}
}

// TestTimelineCPUOperatorLanes: a trace without GPU work shows its CPU
// operators by self time on device -1, one lane per thread (tracer's
// CPUOpKernels): the lane says CPU and the thread, not "GPU-1 s…".
func TestTimelineCPUOperatorLanes(t *testing.T) {
	p := views.PlainStyles()
	v := views.NewTimeline(&p)
	v.SetSize(80, 10)
	v.SetTimeline(&attrib.Timeline{StartNs: 0, EndNs: 1000, Lanes: []attrib.TimelineLane{{Device: -1, Stream: 42}},
		Ops: []attrib.TimelineOp{{Lane: 0, Kind: tracer.KindKernel, DurNs: 1000, Name: "aten::mm", Display: "aten::mm", Category: "gemm", Step: -1}}}, nil)
	if out := ansi.Strip(v.View()); !strings.Contains(out, "CPU t42") || strings.Contains(out, "GPU-1") {
		t.Errorf("want a lane named CPU t42:\n%s", out)
	}
}

// TestTimelineAxisTicks: every axis label names a distinct round time
// that lies in the cell its ┊ stands in ("┊13.9 s ┊13.9 s
// ┊13.9 s" at 80 columns, "34.2 s ┊34.2 s" at 200 columns on a 515 ms
// view). The labels are parsed back here and checked against the range
// the view reports: ticks equally spaced by 1, 2 or 5 × 10^k ns, each
// tick's time within [from + c·pc, from + (c+1)·pc) for its column c.
// Zoomed to 80 µs at 60.4 s (a case seen) the first label says where
// the view starts and the others are offsets from it.
func TestTimelineAxisTicks(t *testing.T) {
	for _, c := range []struct {
		name       string
		w          int
		from, span int64
		rel        bool
	}{
		{"13.9 s at 80 cols", 80, 13_840_000_000, 70_000_000, false},
		{"515 ms at 34.2 s, 200 cols", 200, 34_180_000_000, 515_000_000, false},
		{"near the origin", 80, 0, 12_000, false},
		{"1 ns a cell, 1 ms from the origin", 80, 1_000_000, 70, true},
		{"80 µs at 60.4 s", 90, 60_400_000_000, 80_000, true},
		{"5 s an hour in, 80 cols", 80, 73*60_000_000_000 + 27_400_000_000, 5_000_000_000, true},
		{"100 ms an hour in, 200 cols", 200, 73*60_000_000_000 + 27_400_000_000, 100_000_000, true},
		{"30 min at 2 h", 80, 2 * 3_600_000_000_000, 1_800_000_000_000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := views.PlainStyles()
			v := views.NewTimeline(&p)
			v.SetSize(c.w, 10)
			end := c.from + 2*c.span
			v.SetTimeline(&attrib.Timeline{StartNs: 0, EndNs: end, Lanes: []attrib.TimelineLane{{Device: 0, Stream: 7}},
				Ops: []attrib.TimelineOp{{Lane: 0, Kind: tracer.KindKernel, StartNs: 0, DurNs: 10, Name: "k", Display: "k", Category: "gemm", Step: -1},
					{Lane: 0, Kind: tracer.KindKernel, StartNs: c.from, DurNs: c.span, Name: "k", Display: "k", Category: "gemm", Step: -1}}}, nil)
			v.ShowRange(c.from, c.span)
			line := []rune(strings.Split(ansi.Strip(v.View()), "\n")[0])
			grid := line[10:] // lane labels are 9 cells and a space
			gw := int64(c.w - 10)
			pc := c.span / gw
			type tick struct {
				col int
				ns  int64
				txt string
			}
			var ticks []tick
			for i, r := range grid {
				if r != '┊' {
					continue
				}
				txt := strings.TrimSpace(strings.SplitN(string(grid[i+1:]), "┊", 2)[0])
				ns := parseNs(t, strings.TrimPrefix(txt, "+"))
				if strings.HasPrefix(txt, "+") {
					ns += c.from
				}
				ticks = append(ticks, tick{i, ns, txt})
			}
			if len(ticks) < 3 {
				t.Fatalf("axis %q: want 3 or more labels", string(grid))
			}
			if rel := strings.HasPrefix(ticks[1].txt, "+"); rel != c.rel {
				t.Errorf("axis %q: offsets %v, want %v", string(grid), rel, c.rel)
			}
			first := 0
			if c.rel {
				first = 1 // the start, three digits
				if ticks[0].col != 0 {
					t.Errorf("axis %q: the start label is not at column 0", string(grid))
				}
			}
			d := ticks[first+1].ns - ticks[first].ns
			m := d
			for m%10 == 0 {
				m /= 10
			}
			if d <= 0 || (m != 1 && m != 2 && m != 5) {
				t.Errorf("axis %q: spacing %d ns is not 1, 2 or 5 × 10^k", string(grid), d)
			}
			for k, tk := range ticks[first:] {
				if k > 0 && tk.ns-ticks[first+k-1].ns != d {
					t.Errorf("axis %q: %q is not %d ns after the label before it", string(grid), tk.txt, d)
				}
				lo := c.from + int64(tk.col)*pc
				if tk.ns < lo || tk.ns >= lo+pc {
					t.Errorf("axis %q: %q (%d ns) is not in column %d's cell [%d, %d)", string(grid), tk.txt, tk.ns, tk.col, lo, lo+pc)
				}
			}
		})
	}
}

// parseNs reads a label such as "13.86 s", "250 µs" or "0 ns".
func parseNs(t *testing.T, s string) int64 {
	t.Helper()
	// units.LongDuration's two units: "1 h 13 m", "16 m 40 s".
	if f := strings.Fields(s); len(f) == 4 {
		mult := map[string]int64{"s": 1e9, "m": 60e9, "h": 3600e9, "d": 86400e9}
		a, errA := strconv.ParseInt(f[0], 10, 64)
		b, errB := strconv.ParseInt(f[2], 10, 64)
		if errA != nil || errB != nil || mult[f[1]] == 0 || mult[f[3]] == 0 {
			t.Fatalf("label %q: not two numbers with units", s)
		}
		return a*mult[f[1]] + b*mult[f[3]]
	}
	num, unit, ok := strings.Cut(s, " ")
	mult := map[string]float64{"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || mult == 0 || err != nil {
		t.Fatalf("label %q: not a number and a unit", s)
	}
	return int64(math.Round(f * mult))
}
