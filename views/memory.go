package views

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// MemoryKeyMap: list movement; enter lists the allocations of the
// selected temporary's operator, esc goes back.
type MemoryKeyMap struct {
	ListKeyMap
	Drill key.Binding
	Back  key.Binding
}

// DefaultMemoryKeyMap: arrows, enter, esc/backspace.
func DefaultMemoryKeyMap() MemoryKeyMap {
	return MemoryKeyMap{
		ListKeyMap: DefaultListKeyMap(),
		Drill:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "its allocations")),
		Back:       key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// Memory shows the memory model (Snapshot.Memory): per device the peak
// allocated and reserved and the growth of what is held at step end, the
// peak per step as a sparkline, then the temporaries largest first (size,
// count, lifetime, allocating → freeing operator, stage); enter lists
// every allocation of the selected row's operator and stage.
type Memory struct {
	st      *Styles
	keys    MemoryKeyMap
	m       *attrib.Memory
	list    list
	drill   *attrib.MemTemp // the row drilled into; nil: the temporaries
	allocs  []attrib.MemAlloc
	w, h    int
	focused bool
}

// NewMemory returns an empty memory view.
func NewMemory(st *Styles) *Memory { return &Memory{st: st, keys: DefaultMemoryKeyMap()} }

func (v *Memory) Title() string { return "Memory" }

func (v *Memory) Info() string {
	if v.m == nil {
		return ""
	}
	if v.drill != nil {
		return fmt.Sprintf("%d allocations of %s", len(v.allocs), memOp(v.drill.Op))
	}
	return fmt.Sprintf("%d temporaries · %d events", len(v.m.Temporaries), v.m.Events)
}

// SetSnapshot shows s's memory model; a drill-down is kept when its
// operator still has allocations.
func (v *Memory) SetSnapshot(s *attrib.Snapshot) {
	v.m = nil
	if s != nil {
		v.m = s.Memory
	}
	if v.drill != nil {
		if v.m == nil {
			v.drill = nil
		} else {
			v.allocs = v.m.AllocationsOf(v.drill.Device, v.drill.Op, v.drill.Stage)
		}
	}
	v.list.setLen(v.rows())
}

func (v *Memory) rows() int {
	switch {
	case v.m == nil:
		return 0
	case v.drill != nil:
		return len(v.allocs)
	}
	return len(v.m.Temporaries)
}

// Available reports whether the snapshot has a memory model; the root
// hides the tab otherwise.
func (v *Memory) Available() bool { return v.m != nil }

func (v *Memory) SetSize(w, h int)  { v.w, v.h = w, h; v.list.setPage(h - v.headLines()) }
func (v *Memory) SetFocused(f bool) { v.focused = f }
func (v *Memory) Capturing() bool   { return false }

func (v *Memory) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok || v.m == nil {
		return nil
	}
	switch {
	case key.Matches(km, v.keys.Drill) && v.drill == nil && v.list.cursor < len(v.m.Temporaries):
		t := v.m.Temporaries[v.list.cursor]
		v.drill = &t
		v.allocs = v.m.AllocationsOf(t.Device, t.Op, t.Stage)
		v.list = list{page: v.list.page}
		v.list.setLen(len(v.allocs))
	case key.Matches(km, v.keys.Back) && v.drill != nil:
		v.drill = nil
		v.list = list{page: v.list.page}
		v.list.setLen(len(v.m.Temporaries))
	default:
		v.list.handle(km, v.keys.ListKeyMap)
	}
	return nil
}

func (v *Memory) ShortHelp() []key.Binding {
	if v.drill != nil {
		return []key.Binding{v.keys.move(), v.keys.Back}
	}
	return []key.Binding{v.keys.move(), v.keys.Drill}
}

func (v *Memory) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.keys.bindings(), {v.keys.Drill, v.keys.Back}}
}

// memName is a stage name of the memory model for the terminal: escaped
// (names are data), "—" when none.
func memName(s string) string {
	if s == "" {
		return "—"
	}
	return escape.Control(s)
}

// memOp is an allocating or freeing operator for the terminal: escaped,
// attrib.NoOperator when no recorded operator was open around the event
// (most frees in PyTorch traces: a tensor's last reference dropped by
// Python between operators), as report names it.
func memOp(s string) string {
	if s == "" {
		return attrib.NoOperator
	}
	return escape.Control(s)
}

// headLines is how many lines the summary above the table takes.
func (v *Memory) headLines() int {
	if v.m == nil {
		return 1
	}
	return len(v.m.Devices) + 2 // devices, sparkline, table header
}

// deviceLabel names a memory device.
func deviceLabel(d int32) string {
	if d < 0 {
		return "cpu"
	}
	return fmt.Sprintf("gpu %d", d)
}

func (v *Memory) View() string {
	st := v.st
	if v.m == nil {
		return block([]string{st.Table.Dim.Render("no memory events (torch.profiler profile_memory; the Python agent's windows record them)")}, v.w, v.h)
	}
	var lines []string
	for _, d := range v.m.Devices {
		reserved := FormatBytes(d.PeakReservedBytes) + " reserved"
		if d.PeakReservedBytes <= 0 && d.PeakAllocatedBytes > 0 {
			reserved = "no reserved pool recorded" // the source gives no allocator pool figure (or 0: CPU memory has none)
		}
		l := fmt.Sprintf("%-6s peak %s allocated · %s", deviceLabel(d.Device), FormatBytes(d.PeakAllocatedBytes), reserved)
		if d.StepPairs > 0 {
			g := int64(d.GrowthBytesPerStep)
			sign := "+"
			if g < 0 {
				sign, g = "-", -g
			}
			l += fmt.Sprintf(" · held at step end %s%s/step", sign, FormatBytes(g))
		}
		if d.FragmentationBytes > 0 {
			l += " · reserved−allocated " + FormatBytes(d.FragmentationBytes)
		}
		lines = append(lines, " "+fit(l, max(v.w-1, 0)))
	}
	// Peak per step of the device with the highest peak.
	dev, best := int32(0), int64(-1)
	for _, d := range v.m.Devices {
		if d.PeakAllocatedBytes > best {
			dev, best = d.Device, d.PeakAllocatedBytes
		}
	}
	var peaks []int64
	for _, s := range v.m.Steps {
		if s.Device == dev {
			peaks = append(peaks, s.PeakAllocatedBytes)
		}
	}
	const label = " peak/step "
	sw := max(v.w-width(label)-1, 0)
	if len(peaks) > sw {
		peaks = peaks[len(peaks)-sw:]
	}
	lo, hi := minMax(peaks)
	lines = append(lines, st.Table.Dim.Render(label)+Sparkline(peaks, lo, hi))
	if v.drill != nil {
		lines = append(lines, v.allocLines()...)
	} else {
		lines = append(lines, v.tempLines()...)
	}
	return block(lines, v.w, v.h)
}

func (v *Memory) tempLines() []string {
	st := v.st
	const bw, nw, lw, dw = 10, 6, 9, 6
	rest := max(v.w-1-bw-1-dw-1-nw-1-lw-1-3-1, 12) // gutter, columns, " → ", spaces
	from, to := v.list.visible()
	// The operator and stage columns share what is left by what the rows
	// drawn need; rows allocated and freed by one operator (the rule for
	// a temporary of one operator: math attention's scores) name it once.
	same, opNeed, stageNeed := true, 0, width("stage")
	for i := from; i < to; i++ {
		t := &v.m.Temporaries[i]
		same = same && t.Op == t.FreedBy
		opNeed = max(opNeed, width(memOp(t.Op)), width(memOp(t.FreedBy)))
		stageNeed = max(stageNeed, width(memName(t.Stage)))
	}
	avail := rest + 3 // the operator columns (with their arrow) and the stage's
	opsHead, want := "allocated by → freed by", 2*opNeed+3
	if same {
		opsHead, want = "allocated and freed by", max(opNeed, width("allocated and freed by"))
	}
	opsW := min(avail-min(stageNeed, rest*4/10), want)
	ow := (opsW - 3) / 2
	if !same {
		opsW = 2*ow + 3 // what the rows draw
	}
	sw := avail - opsW
	hdr := " " + st.Table.Header.Render(fitRight("size", bw)) + " " + st.Table.Header.Render(fit("device", dw)) + " " +
		st.Table.Header.Render(fitRight("count", nw)) + " " + st.Table.Header.Render(fitRight("lifetime", lw)) + " " +
		st.Table.Header.Render(fit(opsHead, opsW)) + " " + st.Table.Header.Render(fit("stage", sw))
	out := []string{hdr}
	if len(v.m.Temporaries) == 0 {
		return append(out, st.Table.Dim.Render(" no temporaries (nothing allocated and freed inside one step)"))
	}
	for i := from; i < to; i++ {
		t := &v.m.Temporaries[i]
		gut := " "
		if v.focused && i == v.list.cursor {
			gut = "›"
		}
		ops := fit(memOp(t.Op), opsW)
		if !same {
			ops = fit(memOp(t.Op), ow) + " → " + fit(memOp(t.FreedBy), ow)
		}
		out = append(out, gut+st.Bar.Value.Render(fitRight(FormatBytes(t.Bytes), bw))+" "+fit(deviceLabel(t.Device), dw)+" "+
			fitRight(FormatCount(int64(t.Count)), nw)+" "+fitRight(FormatNs(t.LifetimeNs), lw)+" "+ops+" "+st.Table.Dim.Render(fit(memName(t.Stage), sw)))
	}
	return out
}

func (v *Memory) allocLines() []string {
	st := v.st
	const bw, pw, lw = 10, 8, 10
	fw := max(v.w-1-bw-1-pw-1-lw-1, 8)
	hdr := " " + st.Table.Header.Render(fitRight("size", bw)) + " " + st.Table.Header.Render(fitRight("step", pw)) + " " +
		st.Table.Header.Render(fitRight("lifetime", lw)) + " " + st.Table.Header.Render(fit("freed by · "+memOp(v.drill.Op)+" in "+memName(v.drill.Stage), fw))
	out := []string{hdr}
	from, to := v.list.visible()
	for i := from; i < to; i++ {
		a := &v.allocs[i]
		gut := " "
		if v.focused && i == v.list.cursor {
			gut = "›"
		}
		life := "not freed"
		if a.LifetimeNs >= 0 {
			life = FormatNs(a.LifetimeNs)
		}
		step := "—"
		if a.Step >= 0 {
			step = fmt.Sprint(a.Step)
		}
		out = append(out, gut+st.Bar.Value.Render(fitRight(FormatBytes(a.Bytes), bw))+" "+fitRight(step, pw)+" "+fitRight(life, lw)+" "+fit(memOp(a.FreedBy), fw))
	}
	return out
}
