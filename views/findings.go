package views

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// FindingsKeyMap is the bindings of the findings view.
type FindingsKeyMap struct {
	ListKeyMap
	Try key.Binding // enter: test the selected finding's flag
}

// DefaultFindingsKeyMap: list movement; enter tests the selected
// finding's flag (a comparison of the current value against the
// suggested one).
func DefaultFindingsKeyMap() FindingsKeyMap {
	return FindingsKeyMap{DefaultListKeyMap(), key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "test its flag"))}
}

// Findings lists ranked findings (attrib.EvaluateFindings): one line each
// (rank, share of the step, title, the flag to test or the measured
// result), and under them the selected finding in full: its evidence in
// numbers, top kernels, what to try, the flag, the result of testing it,
// and the rule's source. The root evaluates the findings and passes them
// with SetFindings; the view only draws them.
type Findings struct {
	st    *Styles
	keys  FindingsKeyMap
	fs    []attrib.Finding
	tried map[string]string // finding id → measured result line
	// triedFlag is the same lines by the flag setting tested: a
	// second finding that names that flag has been tested too.
	triedFlag map[flagSetting]string
	order     []string // tried ids, oldest first
	running   string   // finding id whose test runs now
	have      bool     // SetFindings was called
	note      string   // why there are none (e.g. "waiting for steps")
	list      list
	w, h      int
	focused   bool
}

// flagSetting is a flag and the value a finding's test sets it to.
type flagSetting struct{ key, value string }

// NewFindings is the findings view.
func NewFindings(st *Styles) *Findings {
	return &Findings{st: st, keys: DefaultFindingsKeyMap(), tried: map[string]string{}}
}

func (f *Findings) Title() string { return "Findings" }

func (f *Findings) Info() string {
	if !f.have {
		return ""
	}
	n := 0
	for i := range f.fs {
		if f.fs[i].Flag != nil {
			n++
		}
	}
	s := fmt.Sprintf("%d findings", len(f.fs))
	if len(f.fs) == 1 {
		s = "1 finding"
	}
	if n > 0 {
		s += fmt.Sprintf(" · %d with a flag to test (enter)", n)
	}
	// The list's left column is each finding's share, of a different
	// whole for each (its detail's "share:" line names it).
	return s + " · % is each one's share (its share: line says of what)"
}

// SetSnapshot is a no-op: the root evaluates the findings over the
// snapshot and its timeline, counters and flags, and calls SetFindings.
func (f *Findings) SetSnapshot(*attrib.Snapshot) {}

// SetFindings replaces the findings shown (ranked); note says why there
// are none when fs is empty ("" the default text), else what they are
// evaluated over (a line above the list; "" none). The cursor stays on
// the same finding id when it is still there, else it goes to the first
// (the top-ranked) finding: an index kept from another list pointed at an
// arbitrary one (on #3 when the findings came back).
func (f *Findings) SetFindings(fs []attrib.Finding, note string) {
	cur := ""
	if f.list.cursor < len(f.fs) {
		cur = f.fs[f.list.cursor].ID
	}
	f.fs, f.note, f.have = fs, note, true
	f.list.setLen(len(fs))
	f.list.cursor = max(slices.IndexFunc(fs, func(x attrib.Finding) bool { return x.ID == cur }), 0)
	f.list.clamp()
	f.layoutList()
}

// Findings returns the findings shown.
func (f *Findings) Findings() []attrib.Finding { return f.fs }

// Find returns the finding with id, or nil.
func (f *Findings) Find(id string) *attrib.Finding {
	for i := range f.fs {
		if f.fs[i].ID == id {
			return &f.fs[i]
		}
	}
	return nil
}

// SetRunning marks the finding whose flag is being tested ("" none).
func (f *Findings) SetRunning(id string) { f.running = id }

// SetTried records the measured result of testing finding id's flag
// (livestate.Tried.String()); it stays shown on the finding while it is
// listed, and under "tested in this run" while it is not (a comparison
// restarts the window, and the finding returns only when its rule fires
// again on the new steps).
func (f *Findings) SetTried(id, line string) {
	if _, ok := f.tried[id]; !ok {
		f.order = append(f.order, id)
	}
	f.tried[id] = line
	if x := f.Find(id); x != nil && x.Flag != nil {
		if f.triedFlag == nil {
			f.triedFlag = map[flagSetting]string{}
		}
		f.triedFlag[flagSetting{x.Flag.Key, x.Flag.Value}] = line
	}
	if f.running == id {
		f.running = ""
	}
}

// Tried returns the recorded result line of finding id ("" none).
func (f *Findings) Tried(id string) string { return f.tried[id] }

// triedLine is x's result line: its own test's, else that of another
// finding whose test flipped the same flag to the same value ("" none).
func (f *Findings) triedLine(x *attrib.Finding) string {
	if l := f.tried[x.ID]; l != "" {
		return l
	}
	if x.Flag != nil {
		return f.triedFlag[flagSetting{x.Flag.Key, x.Flag.Value}]
	}
	return ""
}

func (f *Findings) SetSize(w, h int)  { f.w, f.h = w, h; f.layoutList() }
func (f *Findings) SetFocused(b bool) { f.focused = b }
func (f *Findings) Capturing() bool   { return false }

// Available is always true: with no finding the view says so.
func (f *Findings) Available() bool { return true }

// listRows is how many lines the list takes: every finding up to a
// third of the body (at least 3), the rest is the selected one's detail.
func (f *Findings) listRows() int {
	return min(len(f.fs), max(f.h/3, 3))
}

func (f *Findings) layoutList() { f.list.setPage(max(f.listRows(), 1)) }

// Update moves the cursor; enter on a finding that names a flag returns
// TryMsg{Finding: the finding's id}; on one that does not,
// a status message saying so.
func (f *Findings) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		if key.Matches(km, f.keys.Try) {
			return f.tryCmd()
		}
		f.list.handle(km, f.keys.ListKeyMap)
	}
	return nil
}

func (f *Findings) tryCmd() tea.Cmd {
	if f.list.cursor >= len(f.fs) {
		return nil
	}
	x := &f.fs[f.list.cursor]
	if x.Flag == nil {
		return Send(NoteMsg{Text: x.ID + ": no flag to test here (" + ansi.Truncate(x.Try, 60, "…") + ")"})
	}
	return Send(TryMsg{Finding: x.ID})
}

// Click selects the finding at line y; on the selected one it tests its
// flag.
func (f *Findings) Click(x, y int) tea.Cmd {
	i := f.list.offset + y
	if y < 0 || y >= f.listRows() || i >= len(f.fs) {
		return nil
	}
	if i == f.list.cursor {
		return f.tryCmd()
	}
	f.list.cursor = i
	f.list.clamp()
	return nil
}

// ShortHelp offers enter only on a finding that names a flag (on one
// without, enter just says so).
func (f *Findings) ShortHelp() []key.Binding {
	return append([]key.Binding{f.keys.move()}, f.tryHelp()...)
}

func (f *Findings) FullHelp() [][]key.Binding {
	return [][]key.Binding{f.keys.bindings(), f.tryHelp()}
}

func (f *Findings) tryHelp() []key.Binding {
	if f.list.cursor < len(f.fs) && f.fs[f.list.cursor].Flag != nil {
		return []key.Binding{f.keys.Try}
	}
	return nil
}

// flagText is "attention=fused (now math)".
func flagText(fl *attrib.FindingFlag) string {
	cur := fl.Current
	if cur == "" {
		cur = "unset"
	}
	return fmt.Sprintf("%s=%s (now %s)", fl.Key, fl.Value, cur)
}

func (f *Findings) View() string {
	st := f.st
	if !f.have {
		return block([]string{st.Table.Dim.Render("waiting for data…")}, f.w, f.h)
	}
	if len(f.fs) == 0 {
		note := f.note
		if note == "" {
			note = "no findings: no rule of the findings table fired (tracer/attrib/findings.toml; --findings FILE adds rules)"
		}
		return block(append(wrapLines(note, f.w, st.Table.Dim.Render), f.testedLines()...), f.w, f.h)
	}
	var lines []string
	if f.note != "" {
		// What the findings are evaluated over (a live run after a flip).
		lines = append(lines, wrapLines(f.note, f.w, st.Table.Dim.Render)...)
	}
	from, to := f.list.visible()
	for i := from; i < to; i++ {
		x := &f.fs[i]
		gut := " "
		if i == f.list.cursor {
			gut = "›"
			if !f.focused {
				gut = "·"
			}
		}
		share := "      "
		if x.Share > 0 && x.ShareOf != "" {
			share = fitRight(FormatShare(x.Share), 6)
		}
		right := ""
		switch {
		case f.running == x.ID:
			right = "testing…"
		case f.triedLine(x) != "":
			right = "tested"
		case x.Flag != nil:
			right = "enter: " + x.Flag.Key + "=" + x.Flag.Value
		}
		if x.Invalid {
			right = "INVALID RUN"
		}
		title := fmt.Sprintf("%d. %s", i+1, escape.Control(x.Title))
		rw := ansi.StringWidth(right)
		tw := max(f.w-1-6-1-rw-2, 8)
		line := gut + st.Bar.Value.Render(share) + " " + fit(title, tw)
		if right != "" {
			line += "  " + st.Table.Dim.Render(right)
		}
		lines = append(lines, line)
	}
	// The selected finding in full.
	x := &f.fs[min(f.list.cursor, len(f.fs)-1)]
	lines = append(lines, st.Table.Dim.Render(strings.Repeat("─", max(f.w, 1))))
	add := func(label, text string, style func(...string) string) {
		for _, l := range hangingWrap(label+escape.Control(text), f.w) {
			lines = append(lines, style(l))
		}
	}
	plain := func(s ...string) string { return strings.Join(s, " ") }
	add("", fmt.Sprintf("%s  [%s]", x.Title, x.ID), st.Bar.Label.Render)
	// A test's result (or that it runs) comes right under the title: at
	// 80×24 the evidence pushed it below the bottom.
	switch {
	case f.running == x.ID:
		add("test: ", "comparing "+flagText(x.Flag)+"… (Compare view)", st.Table.Dim.Render)
	case f.triedLine(x) != "":
		add("", f.triedLine(x), st.Bar.Value.Render)
	}
	if x.Share > 0 && x.ShareOf != "" {
		add("share: ", fmt.Sprintf("%s of %s", FormatShare(x.Share), x.ShareOf), plain)
	}
	for _, e := range x.Evidence {
		add("· ", e, plain)
	}
	if len(x.Top) > 0 {
		add("top: ", strings.Join(x.Top, "; "), plain)
	}
	if x.Flag != nil && !x.Flag.Env {
		// The run's own flag first: the rule's advice is general (user
		// the built-in loop's finding spoke only of sdpa=flash
		// and ROCm, not of its attention=fused).
		add("try: ", flagText(x.Flag)+", this run's own flag; in general: "+x.Try, plain)
	} else {
		add("try: ", x.Try, plain)
	}
	if f.running != x.ID && f.triedLine(x) == "" && x.Flag != nil {
		how := "switched live at a step boundary"
		if x.Flag.Env {
			how = "an environment variable: the command restarts per arm"
		}
		add("test: ", "enter compares "+flagText(x.Flag)+" against the current setting ("+how+")", plain)
	}
	add("source: ", x.Source, st.Table.Dim.Render)
	return block(append(lines, f.testedLines()...), f.w, f.h)
}

// testedLines are the results of findings tested in this run that are
// not listed now: a heading and each result line, wrapped (none when
// every tested finding is listed).
func (f *Findings) testedLines() []string {
	var out []string
	for _, id := range f.order {
		if f.Find(id) != nil {
			continue
		}
		if out == nil {
			out = append(out, "", f.st.Bar.Label.Render(" tested in this run (finding not listed now)"))
		}
		for _, l := range hangingWrap(escape.Control(f.tried[id]), f.w) {
			out = append(out, f.st.Bar.Value.Render(l))
		}
	}
	return out
}

// wrapLines wraps text, control characters escaped, to w cells (10 at
// least) and styles each line.
func wrapLines(text string, w int, style func(...string) string) []string {
	return wrapStyled(escape.Control(text), max(w, 10), style)
}

// hangingWrap wraps text into lines of at most w cells: the first
// indented by one cell, the rest by five (a hanging indent); every line is
// wrapped at w-5, so none is cut (a continuation wrapped at the first
// line's width and then indented ran 4 cells past w and lost its end).
func hangingWrap(text string, w int) []string {
	var out []string
	for j, l := range WrapLines(text, max(w-5, 10)) {
		if j > 0 {
			l = "    " + l
		}
		out = append(out, " "+l)
	}
	return out
}
