// Package tui is rlktop's one root bubbletea model: layout, focus, the
// global key map, the status bar, and the routing of snapshots, progress
// and errors from a source to the views in package views.
//
// Data arrives as messages — SnapshotMsg, ProgressMsg, StatusMsg, ErrMsg —
// either sent with tea.Program.Send or read from Options.Feed. Nothing but
// Update changes the model.
//
// Layout: below 160 columns one view fills the body and tab / shift+tab
// switch between views; from 160 columns the first main view (Kernels) is
// on the left and the side views (Categories, Stages, Steps) are stacked on
// the right, and tab moves focus between panes.
//
// Adding a view (flags panel, step-time sparkline, compare, device): write
// a views.View, pass it in Options.Extra (Side: true to stack it in the
// right column of the wide layout), implement Available() bool if it can
// have nothing to show for a source (it is then skipped by tab and
// layout) and Height() int if it knows how many lines it needs. Data for
// it travels in the Snapshot or in a message of its own routed here.
// Requests a view makes of the root are typed messages (views.DrillMsg,
// BackMsg, NoteMsg, TryMsg, FlipMsg); a live run's requests to the
// outside go to its Controller (live.go).
//
// Live runs (Options.Controller set; `rlktop` with no arguments): the
// views are Kernels, Flags, Step time, Child, Categories, Stages, Device
// and Compare. livestate.Update (session state, child status, flags in force,
// about 10 Hz) and DeviceMsg (telemetry) feed them. Keys (LiveKeyMap):
// 1–5 flip backend flag n (space in Flags flips the selected one; shown
// "pending" until the child acknowledges it at a step boundary, then
// marked ▲ on the step-time sparkline), T tracing on/off, p freezes the
// display, w switches between the recent window and cumulative totals,
// r restarts the child (its exit status and stderr tail stay on screen
// after a crash), R starts/stops a recording (its file, size and
// duration in the status bar), C compares the selected flag's values in
// a separate interleaved run (the live child stops meanwhile; C again
// cancels). Every key's work runs in a tea.Cmd calling the Controller;
// results come back as messages, so Update never does I/O.
package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
)

// WideWidth is the terminal width from which panes sit side by side.
const WideWidth = 160

// Minimum usable terminal size; smaller terminals get a notice.
const (
	MinWidth  = 40
	MinHeight = 10
)

// Tab is one entry of the view registry.
type Tab struct {
	View views.View
	// Side views are stacked in the right column of the wide layout; main
	// views take the left. In the narrow layout all views are tabs.
	Side bool
}

// availabler is implemented by views that can have nothing to show for a
// source (Steps without ProfilerStep ranges); unavailable views are
// skipped by tab and layout.
type availabler interface{ Available() bool }

// heighter is implemented by views that know how many lines they need.
type heighter interface{ Height() int }

// Options configure New.
type Options struct {
	// Styles; nil means views.DefaultStyles().
	Styles *views.Styles
	// Source names what is shown on the loading screen (a file path).
	Source string
	// Snapshot, when non-nil, is shown at once (no loading screen).
	Snapshot *attrib.Snapshot
	// Timeline, when non-nil, is drawn by the Timeline view at once.
	Timeline *attrib.Timeline
	// Feed, when non-nil, is read for SnapshotMsg, ProgressMsg, StatusMsg
	// and ErrMsg values until it is closed.
	Feed <-chan tea.Msg
	// Extra views, appended to the built-in Kernels, Categories, Stages
	// and Steps.
	Extra []Tab
	// KeyMap; the zero value means DefaultKeyMap().
	KeyMap *KeyMap
	// Controller, when non-nil, makes this a live run: the Flags, Step
	// time, Child, Device and Compare views are added (the file Steps
	// view is left out), livestate.Update and DeviceMsg feed them, and the live
	// keys (LiveKeyMap) call the Controller from commands.
	Controller Controller
	// Backends are the flags the Flags view lists (live runs).
	Backends []livestate.FlagSpec
	// DeviceStatus is gpu.Open's status line for the Device view.
	DeviceStatus string
	// Untraced, when set, is why a live command runs without a tracer
	// (loop.Live.Banner); it stays under the header, wrapped, never cut.
	Untraced string
	// Findings rules (nil: the built-in table), a file's Outputs and
	// Command (a live command: environment flags restart it) feed the
	// Findings view (findings.go).
	Findings *attrib.FindingRules
	Outputs  []attrib.OutputRow
	Command  bool
}

// Model is the root model. Use it through a pointer.
type Model struct {
	st     *views.Styles
	keys   KeyMap
	header *views.Header
	// steps are a file's per-step snapshots (SnapshotMsg.Steps); stepSel
	// the one shown (-1: all steps, the whole snapshot).
	steps     []StepSnapshot
	stepSel   int
	loading   *views.Loading
	tabs      []Tab
	kernels   *views.Kernels
	timeline  *views.Timeline
	python    *views.Python // builds a large profile's rows off the frame (pyAsyncSize)
	focus     int           // index into tabs
	snap      *attrib.Snapshot
	feed      <-chan tea.Msg
	help      help.Model
	status    StatusMsg
	loadStart time.Time
	warn      warnings // the import warnings screen (W; warnings.go)
	err       error    // fatal
	live      *live    // nil unless Options.Controller is set
	fnd       *findingsUI
	w, h      int
	bodyH     int
	drag      *region // the pane a mouse drag started in
	back      int     // the tab a drill-down came from (-1 none)
}

// New builds the root model with the built-in views and opts.Extra.
func New(opts Options) *Model {
	st := opts.Styles
	if st == nil {
		d := views.DefaultStyles()
		st = &d
	}
	m := &Model{st: st, keys: DefaultKeyMap(), feed: opts.Feed, w: 80, h: 24, back: -1}
	if opts.KeyMap != nil {
		m.keys = *opts.KeyMap
	}
	m.header = views.NewHeader(st)
	m.loading = views.NewLoading(st, opts.Source)
	m.kernels = views.NewKernels(st)
	m.timeline = views.NewTimeline(st)
	m.timeline.SetFollow(opts.Controller != nil) // only a live run has newer work to follow
	m.python = views.NewPython(st)
	m.python.SetAsync(pyAsyncSize)
	if opts.Controller != nil {
		m.live = newLive(st, opts)
		m.tabs = append([]Tab{{View: m.kernels}, {View: m.timeline}, {View: m.live.output}}, m.live.tabs()...)
		m.tabs = append(m.tabs, Tab{View: views.NewCategories(st), Side: true}, Tab{View: views.NewStages(st), Side: true})
		m.tabs = append(m.tabs, m.live.lateTabs()...)
		m.tabs = append(m.tabs, Tab{View: views.NewRanks(st)})    // several ranks only (Available)
		m.tabs = append(m.tabs, Tab{View: views.NewRoofline(st)}) // modelled work only (Available)
		m.tabs = append(m.tabs, Tab{View: views.NewMemory(st)})   // memory events only (Available)
		m.tabs = append(m.tabs, Tab{View: m.python})              // with Python samples only (Available)
	} else {
		m.tabs = []Tab{
			{View: m.kernels},
			{View: m.timeline},
			{View: views.NewCategories(st), Side: true},
			{View: views.NewStages(st), Side: true},
			{View: views.NewSteps(st), Side: true},
			{View: views.NewRanks(st)},    // several files only (Available)
			{View: views.NewRoofline(st)}, // modelled work only (Available)
			{View: views.NewMemory(st)},   // memory events only (Available)
			{View: m.python},              // with Python samples only (Available)
		}
	}
	m.fnd = newFindingsUI(st, opts)
	m.tabs = append(m.tabs, Tab{View: m.fnd.view})
	m.tabs = append(m.tabs, opts.Extra...)
	m.help = help.New()
	m.help.Styles = st.Help
	if opts.Timeline != nil {
		m.timeline.SetTimeline(opts.Timeline, nil)
		m.kernels.SetTimeline(opts.Timeline)
	}
	if opts.Snapshot != nil {
		m.setSnapshot(opts.Snapshot)
	}
	m.layout()
	return m
}

// Init starts reading the feed, while there is no snapshot the loading
// screen's clock, and the evaluation of Options.Snapshot's findings when
// it runs off the frame.
func (m *Model) Init() tea.Cmd {
	cmds := m.fnd.takeCmds()
	if c := m.python.Cmd(); c != nil {
		cmds = append(cmds, c)
	}
	if m.feed != nil {
		cmds = append(cmds, listen(m.feed))
	}
	if m.snap == nil {
		cmds = append(cmds, loadTick())
	}
	if m.live != nil {
		cmds = append(cmds, listenProgress(m.live.progressCh))
	}
	return tea.Batch(cmds...)
}

// loadTickMsg drives the loading screen's elapsed time.
type loadTickMsg time.Time

func loadTick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(t time.Time) tea.Msg { return loadTickMsg(t) })
}

// Err returns the fatal error that ended the program, or nil.
func (m *Model) Err() error { return m.err }

// Snapshot returns the snapshot shown (nil while loading).
func (m *Model) Snapshot() *attrib.Snapshot { return m.snap }

// Timeline returns the timeline view.
func (m *Model) Timeline() *views.Timeline { return m.timeline }

// Kernels returns the kernels view.
func (m *Model) Kernels() *views.Kernels { return m.kernels }

// Focused returns the view with the keyboard.
func (m *Model) Focused() views.View { return m.tabs[m.focus].View }

// Status returns the status bar's message.
func (m *Model) Status() StatusMsg { return m.status }

func (m *Model) setSnapshot(s *attrib.Snapshot) {
	m.snap = s
	if s != nil {
		var cpu []int32
		for _, d := range s.Devices {
			if strings.EqualFold(d.Vendor, "cpu") {
				cpu = append(cpu, d.ID)
			}
		}
		if len(s.Devices) > 0 {
			m.timeline.SetCPUDevices(cpu)
		}
	}
	m.header.SetSnapshot(s)
	for _, t := range m.tabs {
		t.View.SetSnapshot(s)
	}
	if !m.available(m.focus) {
		m.focus = 0
	}
	m.refreshFindings(false)
}

// Scrub keys (files with steps): `,` previous step, `.` next step; past
// either end is every step again.
var (
	scrubPrev = key.NewBinding(key.WithKeys(","), key.WithHelp(",", "prev step"))
	scrubNext = key.NewBinding(key.WithKeys("."), key.WithHelp(".", "next step"))
)

// scrub moves the step selection by d (-1 is all steps, then 0…len-1)
// and shows the selected step's snapshot in the header's totals and every
// table view but Steps (which keeps the whole file); the Timeline shows
// that step's range (back to fit for every step); the header says which.
func (m *Model) scrub(d int) {
	n := len(m.steps)
	m.stepSel = (m.stepSel+1+d+n+1)%(n+1) - 1
	s, note := m.snap, ""
	if m.stepSel >= 0 {
		ss := m.steps[m.stepSel]
		s = ss.Snapshot
		note = fmt.Sprintf("step %d (%d of %d) · , . step · header and tables show this step only", ss.Step, m.stepSel+1, n)
		m.timeline.ShowStep(ss.Step)
	} else {
		m.timeline.FitAll()
	}
	for _, t := range m.tabs {
		if sv, ok := t.View.(*views.Steps); ok {
			if m.stepSel >= 0 {
				sv.Select(m.steps[m.stepSel].Step)
			}
			continue
		}
		t.View.SetSnapshot(s)
	}
	m.header.SetSnapshot(s)
	m.header.SetNote(note)
	m.refreshFindings(true)
	m.layout()
}

func (m *Model) available(i int) bool {
	if a, ok := m.tabs[i].View.(availabler); ok {
		return a.Available()
	}
	return true
}

func (m *Model) wide() bool { return m.w >= WideWidth }

// Update handles messages. It never does I/O, and a large snapshot's
// findings are evaluated off it (findingsAsyncSize), as are a large
// Python profile's rows (pyAsyncSize).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if f, ok := msg.(findingsMsg); ok {
		m.onFindings(f)
		return m, tea.Batch(m.fnd.takeCmds()...)
	}
	if r, ok := msg.(views.PyRowsMsg); ok {
		// Wherever the focus is now: the view shows the rows when it is
		// focused again.
		return m, m.python.SetRows(r)
	}
	_, cmd := m.update(msg)
	// After the message: a snapshot, or the focus moved to the view.
	if pc := m.python.Cmd(); pc != nil {
		cmd = tea.Batch(cmd, pc)
	}
	if fc := m.fnd.takeCmds(); len(fc) > 0 {
		return m, tea.Batch(append(fc, cmd)...)
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	if f, ok := msg.(feedMsg); ok {
		if !f.ok {
			m.feed = nil
			return m, nil
		}
		msg = f.msg
		cmds = append(cmds, listen(m.feed))
	}
	if d, ok := msg.(compareDoneMsg); ok {
		m.findingCompareDone(d) // before the compare view takes it
	}
	if m.live != nil {
		if cmd, ok := m.updateLive(msg); ok {
			return m, tea.Batch(append(cmds, cmd)...)
		}
	}
	switch msg := msg.(type) {
	case loadTickMsg:
		if m.snap != nil {
			break // loaded: the clock stops
		}
		if m.loadStart.IsZero() {
			m.loadStart = time.Time(msg)
		}
		m.loading.Elapsed = time.Time(msg).Sub(m.loadStart)
		cmds = append(cmds, loadTick())
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layout()
	case SnapshotMsg:
		m.fnd.timeline = msg.Timeline
		if msg.Findings != nil {
			m.fnd.input = msg.Findings
		}
		if msg.Timeline != nil {
			m.timeline.SetTimeline(msg.Timeline, nil)
			m.kernels.SetTimeline(msg.Timeline)
		}
		m.setSnapshot(msg.Snapshot)
		m.steps, m.stepSel = msg.Steps, -1
		m.layout()
	case ProgressMsg:
		m.loading.Phase, m.loading.Read, m.loading.Size = msg.Phase, msg.Read, msg.Size
	case StatusMsg:
		m.status = msg
		m.layout() // the status bar's height may change
	case ErrMsg:
		if msg.Err == nil {
			break
		}
		if msg.Fatal {
			m.err = msg.Err
			return m, tea.Quit
		}
		m.status = StatusMsg{Text: msg.Err.Error(), Level: Error}
		m.layout()
	case tea.MouseClickMsg, tea.MouseReleaseMsg, tea.MouseMotionMsg, tea.MouseWheelMsg:
		cmds = append(cmds, m.mouse(msg.(tea.MouseMsg)))
	case views.DrillMsg:
		m.back = m.focus
		m.kernels.DrillFrom(msg.Group, msg.Key)
		what := "category"
		if msg.Group == "stage" {
			what = "stage"
		}
		m.focusTab(m.kernels)
		m.setStatusText(what+" "+msg.Key+": its kernels · enter: launches · esc: back", Info)
		m.layout()
	case views.BackMsg:
		if m.back >= 0 && m.back < len(m.tabs) && m.available(m.back) {
			m.Focused().SetFocused(false)
			m.focus = m.back
		}
		m.back = -1
		m.setStatusText("", Info)
		m.layout()
	case views.NoteMsg:
		m.setStatusText(msg.Text, Info)
		m.layout()
	case views.TryMsg:
		m.tryFinding(msg.Finding)
		m.layout()
	case tea.KeyPressMsg:
		if key.Matches(msg, m.keys.ForceQuit) {
			m.stopLive()
			return m, tea.Quit
		}
		if m.live != nil && m.live.cmp.Confirm != "" && !key.Matches(msg, m.live.keys.Compare) {
			m.live.cmp.Confirm = ""
			m.findingCancelled()
			m.live.refreshCompare()
			m.setStatus("comparison not started", Info)
			break
		}
		v := m.Focused()
		if m.snap != nil && v.Capturing() {
			cmds = append(cmds, v.Update(msg))
			m.layout() // the help bar may have changed
			break
		}
		if m.warn.open && m.warnKeyPress(msg) {
			m.layout()
			break
		}
		switch {
		case key.Matches(msg, m.keys.Quit):
			m.stopLive()
			return m, tea.Quit
		case m.hasWarnings() && key.Matches(msg, warnKey):
			m.warn = warnings{open: true}
			m.layout()
		case key.Matches(msg, m.keys.Help):
			m.help.ShowAll = !m.help.ShowAll
			m.layout()
		case m.help.ShowAll && msg.String() == "esc":
			m.help.ShowAll = false // esc closes the full help too
			m.layout()
		case key.Matches(msg, m.keys.Next):
			m.cycle(1)
		case key.Matches(msg, m.keys.Prev):
			m.cycle(-1)
		case m.live == nil && len(m.steps) > 0 && (key.Matches(msg, scrubPrev) || key.Matches(msg, scrubNext)):
			d := 1
			if key.Matches(msg, scrubPrev) {
				d = -1
			}
			m.scrub(d)
		case m.live == nil && msg.String() == "C":
			// Findings offer C (compare a flag); a file has no process to
			// flip one in.
			m.setStatus("comparing a flag needs a running loop: rlktop compare --flag K=A,B -- CMD, or C in rlktop run", Info)
		case m.live != nil && m.snap != nil && m.isLiveKey(msg):
			cmd, _ := m.liveKey(msg)
			cmds = append(cmds, cmd)
			m.layout()
		default:
			if m.snap != nil {
				cmds = append(cmds, v.Update(msg))
				m.layout()
			}
		}
	default:
		if m.snap != nil {
			cmds = append(cmds, m.Focused().Update(msg))
		}
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) focusTab(v views.View) {
	for i, t := range m.tabs {
		if t.View == v {
			m.Focused().SetFocused(false)
			m.focus = i
		}
	}
}

func (m *Model) setStatusText(text string, lvl Level) { m.status = StatusMsg{Text: text, Level: lvl} }

func (m *Model) cycle(d int) {
	n := len(m.tabs)
	for i := 1; i <= n; i++ {
		j := ((m.focus+d*i)%n + n) % n
		if m.available(j) {
			m.Focused().SetFocused(false)
			m.focus = j
			break
		}
	}
	m.layout()
}

// chrome heights.
func (m *Model) helpView() string {
	m.help.SetWidth(m.w)
	var lk []key.Binding
	if m.live != nil {
		lk = m.live.bindings()
	}
	g := m.keys
	if m.help.ShowAll {
		g.Help.SetHelp("?", "close help")
	}
	hk := helpKeys{global: g, view: m.helpTarget(), live: lk}
	if m.live == nil && len(m.steps) > 0 {
		hk.extra = []key.Binding{scrubPrev, scrubNext}
	}
	if m.hasWarnings() {
		hk.extra = append(hk.extra, warnKey)
	}
	if !m.help.ShowAll {
		return m.help.View(hk)
	}
	// Full help: bubbles/help drops the columns that do not fit the
	// width; here they wrap onto more rows, so every key stays listed.
	m.help.SetWidth(0)
	defer m.help.SetWidth(m.w)
	var rows []string
	var row [][]key.Binding
	rowW := 0
	for _, grp := range hk.FullHelp() {
		w := ansi.StringWidth(strings.Split(m.help.FullHelpView([][]key.Binding{grp}), "\n")[0])
		for _, l := range strings.Split(m.help.FullHelpView([][]key.Binding{grp}), "\n") {
			w = max(w, ansi.StringWidth(l))
		}
		if len(row) > 0 && rowW+4+w > m.w {
			rows = append(rows, m.help.FullHelpView(row))
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			rowW += 4 // bubbles/help's column separator
		}
		row = append(row, grp)
		rowW += w
	}
	if len(row) > 0 {
		rows = append(rows, m.help.FullHelpView(row))
	}
	return strings.Join(rows, "\n")
}

func (m *Model) helpTarget() views.View {
	if m.snap == nil {
		return nil
	}
	return m.Focused()
}

// layout gives every view its size for the current terminal and focus.
func (m *Model) layout() {
	m.header.SetWidth(m.w)
	for i, t := range m.tabs {
		t.View.SetFocused(i == m.focus)
	}
	helpH := strings.Count(m.helpView(), "\n") + 1
	m.bodyH = m.h - m.header.Height() - m.bannerHeight() - 1 /*tabs*/ - (strings.Count(m.statusBar(), "\n") + 1) - helpH
	m.loading.SetSize(m.w, max(m.bodyH, 1))
	if m.bodyH < 1 {
		return
	}
	if !m.wide() {
		m.Focused().SetSize(m.w, m.bodyH)
		return
	}
	lw, rw := m.split()
	m.mainTab().View.SetSize(lw, m.bodyH-1)
	side := m.sideTabs()
	hs := m.sideHeights(side)
	for i, t := range side {
		t.View.SetSize(rw, hs[i]-1)
	}
}

// split returns the left and right pane widths of the wide layout (one
// column between them).
func (m *Model) split() (int, int) {
	lw := m.w * 62 / 100
	return lw, m.w - lw - 1
}

// mainTab is the main view shown on the left of the wide layout: the
// focused one if it is a main view, else the first main view.
func (m *Model) mainTab() Tab {
	if !m.tabs[m.focus].Side {
		return m.tabs[m.focus]
	}
	for i, t := range m.tabs {
		if !t.Side && m.available(i) {
			return t
		}
	}
	return m.tabs[0]
}

func (m *Model) sideTabs() []Tab {
	var s []Tab
	for i, t := range m.tabs {
		if t.Side && m.available(i) {
			s = append(s, t)
		}
	}
	return s
}

// sideHeights shares the body height among the side panes (title line
// included): each gets what it needs if all fit, else an equal share of
// what is left after the small ones, and the last takes the remainder.
func (m *Model) sideHeights(side []Tab) []int {
	hs := make([]int, len(side))
	if len(side) == 0 {
		return hs
	}
	want := make([]int, len(side))
	for i, t := range side {
		want[i] = 4
		if h, ok := t.View.(heighter); ok {
			want[i] = h.Height() + 1
		}
	}
	left := m.bodyH - (len(side) - 1) // a blank line between panes
	// Give every pane what it wants when that is at most a fair share;
	// split the rest evenly among the hungry ones.
	hungry := len(side)
	done := make([]bool, len(side))
	for changed := true; changed; {
		changed = false
		fair := left / max(hungry, 1)
		for i := range side {
			if !done[i] && want[i] <= fair {
				hs[i], done[i] = want[i], true
				left -= want[i]
				hungry--
				changed = true
			}
		}
	}
	for i := range side {
		if !done[i] {
			hs[i] = left / hungry
		}
	}
	// The last pane takes any remainder so the column is filled.
	sum := len(side) - 1
	for _, h := range hs {
		sum += h
	}
	hs[len(hs)-1] += m.bodyH - sum
	for i := range hs {
		hs[i] = max(hs[i], 1)
	}
	return hs
}

// View renders the screen in the alternate screen buffer.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "rlktop"
	return v
}

// Render returns the screen's text: exactly the terminal's height in
// lines, each exactly its width in cells.
func (m *Model) Render() string {
	if m.w < MinWidth || m.h < MinHeight {
		return views.Block([]string{"terminal too small for rlktop", "need at least 40×10"}, max(m.w, 1), max(m.h, 1))
	}
	parts := []string{m.header.View()}
	if b := m.banner(); b != "" {
		parts = append(parts, views.Block(strings.Split(b, "\n"), m.w, m.bannerHeight()))
	}
	parts = append(parts, m.tabBar())
	if m.bodyH < 1 {
		return views.Block(strings.Split(strings.Join(parts, "\n"), "\n"), m.w, m.h)
	}
	switch {
	case m.snap == nil:
		parts = append(parts, m.loading.View())
	case m.warn.open && m.hasWarnings():
		parts = append(parts, m.warnView())
	case !m.wide():
		parts = append(parts, m.Focused().View())
	default:
		parts = append(parts, m.wideBody())
	}
	parts = append(parts, m.statusBar(), m.helpView())
	out := strings.Join(parts, "\n")
	return views.Block(strings.Split(out, "\n"), m.w, m.h)
}

// tabBar draws the available views as tabs, the focused one highlighted,
// with the focused view's Info on the right in the narrow layout.
func (m *Model) tabBar() string {
	st := m.st
	if m.snap == nil {
		return ""
	}
	tabs, before, after := m.tabLayout()
	var b strings.Builder
	if before > 0 {
		b.WriteString(st.Tabs.Sep.Render(tabsBefore(before)))
	}
	for k, tp := range tabs {
		if k > 0 {
			b.WriteString(st.Tabs.Sep.Render("│"))
		}
		label := strings.Repeat(" ", tp.pad) + tp.label + strings.Repeat(" ", tp.pad)
		if tp.tab == m.focus {
			b.WriteString(st.Tabs.Active.Render(label))
		} else {
			b.WriteString(st.Tabs.Inactive.Render(label))
		}
	}
	if after > 0 {
		b.WriteString(st.Tabs.Sep.Render(tabsAfter(after)))
	}
	left := b.String()
	if m.wide() || m.snap == nil {
		return left
	}
	info := m.Focused().Info()
	room := m.w - ansi.StringWidth(left) - 2
	if info == "" || room < 8 {
		return left
	}
	if ansi.StringWidth(info) > room {
		info = ansi.Truncate(info, room, "…")
	}
	pad := m.w - ansi.StringWidth(left) - ansi.StringWidth(info)
	return left + strings.Repeat(" ", pad) + st.Pane.Info.Render(info)
}

// paneTitle draws a pane's title line: title left, info right.
func (m *Model) paneTitle(v views.View, w int, focused bool) string {
	st := m.st
	ts := st.Pane.TitleBlurred
	mark := "  "
	if focused {
		ts = st.Pane.TitleFocused
		mark = "▸ "
	}
	title := ts.Render(mark + v.Title())
	info := v.Info()
	room := w - ansi.StringWidth(title) - 2
	if info == "" || room < 8 {
		return title
	}
	if ansi.StringWidth(info) > room {
		info = ansi.Truncate(info, room, "…")
	}
	return title + strings.Repeat(" ", w-ansi.StringWidth(title)-ansi.StringWidth(info)) + st.Pane.Info.Render(info)
}

// wideBody draws the main pane on the left and the side panes stacked on
// the right.
func (m *Model) wideBody() string {
	lw, rw := m.split()
	main := m.mainTab()
	left := append([]string{m.paneTitle(main.View, lw, main.View == m.Focused())},
		strings.Split(main.View.View(), "\n")...)
	var right []string
	side := m.sideTabs()
	hs := m.sideHeights(side)
	for i, t := range side {
		if i > 0 {
			right = append(right, "")
		}
		right = append(right, m.paneTitle(t.View, rw, t.View == m.Focused()))
		if hs[i] > 1 {
			right = append(right, strings.Split(t.View.View(), "\n")...)
		}
	}
	sep := m.st.Tabs.Sep.Render("│")
	lines := make([]string, m.bodyH)
	lb := strings.Split(views.Block(left, lw, m.bodyH), "\n")
	rb := strings.Split(views.Block(right, rw, m.bodyH), "\n")
	for i := range lines {
		lines[i] = lb[i] + sep + rb[i]
	}
	return strings.Join(lines, "\n")
}

// statusBar shows the latest status message on the left and the
// snapshot's warning count on the right. Messages wrap at word
// boundaries: errors onto up to four lines, so that a whole positioned
// error (file, byte, what was expected) can be read, others onto two.
func (m *Model) statusBar() string {
	st := m.st
	status := m.status
	importWarning := false
	if status.Text == "" && m.snap != nil && len(m.snap.Warnings) > 0 {
		status = StatusMsg{Text: "warning: " + m.firstWarning(), Level: Warn}
		importWarning = true
	}
	if status.Text == "" {
		status.Text = m.findingHint() // the top finding (findings.go)
	}
	style := st.Status.Info
	switch status.Level {
	case Warn:
		style = st.Status.Warn
	case Error:
		style = st.Status.Error
	}
	var right string
	if m.snap != nil && len(m.snap.Warnings) > 0 {
		n := len(m.snap.Warnings)
		right = views.FormatCount(int64(n)) + " import warnings (W)"
		if n == 1 {
			right = "1 import warning (W)"
		}
	}
	if m.live != nil {
		lr := m.liveRight()
		if right != "" {
			lr += " · " + right
		}
		right = lr
	}
	if ansi.StringWidth(right) > m.w/2 {
		right = ansi.Truncate(right, m.w/2, "…")
	}
	rwid := ansi.StringWidth(right)
	room := max(m.w-rwid-2, 1) // at least two spaces before the right side
	// Long messages wrap at word boundaries (errors onto up to four
	// lines, others two); what still does not fit ends in "…" after a
	// whole word.
	maxLines := 2
	switch {
	case status.Level == Error:
		maxLines = 4
	case importWarning:
		// The whole text is one key away (W); a second line would cost
		// a table row on every screen of a file with a benign warning.
		maxLines = 1
	}
	// Messages quote data (import warnings name events, errors paths and
	// flag values): escaped, as the tables escape names.
	lines := views.WrapLines(escape.Control(status.Text), room)
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		last := ansi.Truncate(lines[maxLines-1], room-1, "")
		if i := strings.LastIndexByte(last, ' '); i > 0 {
			last = last[:i]
		}
		lines[maxLines-1] = last + "…"
	}
	for i, l := range lines {
		l = style.Render(l)
		// The right side ends the last line: beside a wrapped message's
		// first line it read as the message's next words (e.g.
		// "(the live child stops and 6.98 steps/s · cumulative").
		if i == len(lines)-1 && right != "" {
			l += strings.Repeat(" ", max(m.w-ansi.StringWidth(l)-rwid, 0)) + st.Status.Right.Render(right)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
