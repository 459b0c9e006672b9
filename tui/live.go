package tui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	wiremsg "github.com/rlktop/rlktop/tracer/wire/msg"
	"github.com/rlktop/rlktop/views"
)

// Controller carries out the live TUI's requests to the outside world.
// Its methods may block and do I/O; the model calls them only inside
// tea.Cmds (never from Update), and their results come back as messages.
// loop.Controller implements it over a *loop.Live.
type Controller interface {
	// SetFlag applies key=value (at the next step boundary for a live
	// flag; a restart otherwise).
	SetFlag(key, value string) error
	// SetTracing pauses (false) or resumes (true) tracing in the child;
	// the loop keeps running.
	SetTracing(on bool) error
	// Restart stops the child (if running) and starts it again with the
	// flags in force.
	Restart() error
	// StartRecording starts recording the session to a new file and
	// returns its path.
	StartRecording() (path string, err error)
	// StopRecording ends the recording and closes its file.
	StopRecording() (livestate.RecordingInfo, error)
	// Compare stops the live child, compares the values of flag key in a
	// separate interleaved run (loop.Compare), restarts the live child and
	// returns the result. progress receives the comparison's progress
	// lines, onStep each step's label as soon as its segment is cut
	// (loop.CompareOptions.OnStep; either may block until the TUI reads
	// it); ctx cancels it.
	Compare(ctx context.Context, key string, values []string, progress func(string), onStep func(livestate.StepLabel)) (*livestate.CompareResult, error)
}

// DeviceMsg carries a telemetry reading (gpu.Poller).
type DeviceMsg struct {
	Sample reading.Sample
	Err    error
}

// The results of Controller calls, one message type each.
type (
	// flipDoneMsg is SetFlag(key, value)'s result.
	flipDoneMsg struct {
		key, value string
		err        error
	}
	// tracingDoneMsg is SetTracing(on)'s result.
	tracingDoneMsg struct {
		on  bool
		err error
	}
	// restartDoneMsg is Restart's result.
	restartDoneMsg struct{ err error }
	// recordStartedMsg is StartRecording's result.
	recordStartedMsg struct {
		path string
		err  error
	}
	// recordStoppedMsg is StopRecording's result.
	recordStoppedMsg struct {
		info livestate.RecordingInfo
		err  error
	}
)

type compareProgressMsg struct{ line string }

type compareDoneMsg struct {
	res *livestate.CompareResult
	err error
}

type compareTickMsg time.Time

// compareStepMsg carries one step of a running comparison to the step
// chart (which arm ran it).
type compareStepMsg struct{ label livestate.StepLabel }

// maxCompareSteps bounds the comparison steps the step chart keeps.
const maxCompareSteps = 4096

// LiveKeyMap is the live run's global keys.
type LiveKeyMap struct {
	Flip, Tracing, Pause, Recent, Restart, Record, Compare key.Binding
}

// DefaultLiveKeyMap: 1–9 flip flag n, T tracing, p pause display, w
// window/cumulative, r restart, R record, C compare.
func DefaultLiveKeyMap() LiveKeyMap {
	return LiveKeyMap{
		Flip:    key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-5", "flip")),
		Tracing: key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "tracing")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Recent:  key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "window")),
		Restart: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
		Record:  key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "record")),
		Compare: key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "compare")),
	}
}

// live is the root model's live-run state.
type live struct {
	ctl     Controller
	keys    LiveKeyMap
	flags   *views.Flags
	steps   *views.StepTimes
	child   *views.Child
	device  *views.Device
	compare *views.Compare
	output  *views.Output

	state  *livestate.State
	status livestate.Status
	// fs is the run's flags as the last livestate.Update said; asked holds the
	// flips made here that fs does not show yet (neither pending nor in
	// force): the flags panel draws fs with asked pending (flagState).
	fs    livestate.FlagState
	asked map[string]string
	now   time.Time

	refusals       int // State.Refusals already looked at for pending flips
	tracingPending bool
	tracingWant    bool
	note           string

	paused bool // display frozen
	recent bool // show State.Recent

	recPath     string
	recStarting bool

	cmp        views.CompareState
	cmpSteps   []views.ArmStep // the running comparison's steps (step chart)
	cmpKey     string          // the compared flag and its values (arm names)
	cmpVals    []string
	cmpStart   time.Time
	cmpCancel  context.CancelFunc
	progressCh chan tea.Msg

	sample *reading.Sample

	untraced    string // Options.Untraced
	lastPartial []livestate.OutputLine
	applied     string    // the "requested; applied at the next step" status to clear, "" none
	ops         opsKeeper // the Python agent's latest operators (livetimeline.go)
}

func newLive(st *views.Styles, opts Options) *live {
	l := &live{ctl: opts.Controller, keys: DefaultLiveKeyMap(),
		flags:       views.NewFlags(st, opts.Backends),
		steps:       views.NewStepTimes(st),
		child:       views.NewChild(st),
		device:      views.NewDevice(st, opts.DeviceStatus),
		compare:     views.NewCompare(st),
		output:      views.NewOutput(st),
		asked:       map[string]string{},
		progressCh:  make(chan tea.Msg, 64),
		tracingWant: true,
		untraced:    opts.Untraced,
	}
	if n := len(opts.Backends); n > 0 && n < 9 {
		l.keys.Flip.SetHelp(fmt.Sprintf("1-%d", n), "flip")
		l.keys.Flip.SetKeys(strings.Split("123456789"[:n], "")...)
	}
	l.refreshCompare()
	return l
}

// liveTabs are the live panels in tab order (Kernels comes first).
func (l *live) tabs() []Tab {
	return []Tab{
		{View: l.flags, Side: true},
		{View: l.steps, Side: true},
		{View: l.child, Side: true},
	}
}

func (l *live) lateTabs() []Tab {
	return []Tab{{View: l.device, Side: true}, {View: l.compare}}
}

// bindings are the live keys for help.
func (l *live) bindings() []key.Binding {
	k := l.keys
	return []key.Binding{k.Flip, k.Tracing, k.Pause, k.Recent, k.Restart, k.Record, k.Compare}
}

func (l *live) tracing() bool {
	if l.state == nil || len(l.state.Children) == 0 {
		return true
	}
	return l.state.Children[len(l.state.Children)-1].Tracing
}

// flagState is the run's flags as the panel shows them: fs, with the
// flips asked here that fs does not show yet pending.
func (l *live) flagState() livestate.FlagState {
	if len(l.asked) == 0 {
		return l.fs
	}
	out := livestate.FlagState{InForce: l.fs.InForce, Pending: maps.Clone(l.fs.Pending)}
	if out.Pending == nil {
		out.Pending = map[string]string{}
	}
	maps.Copy(out.Pending, l.asked)
	return out
}

// dropPending forgets a flip whose request failed, until the next livestate.Update
// says the run's flags again.
func (l *live) dropPending(k string) {
	delete(l.asked, k)
	if _, ok := l.fs.Pending[k]; ok {
		l.fs.Pending = maps.Clone(l.fs.Pending)
		delete(l.fs.Pending, k)
	}
}

func (l *live) refreshFlags() {
	l.flags.SetState(views.FlagsState{FlagState: l.flagState(), Tracing: l.tracing(),
		TracingPending: l.tracingPending, Live: l.status.State == livestate.Running})
}

func (l *live) refreshChild() {
	cs := views.ChildState{Status: l.status, Note: l.note, Untraced: l.untraced}
	if l.state != nil {
		cs.Events, cs.Dropped, cs.Pending = l.state.Events, l.state.Dropped, l.state.Pending
	}
	if l.cmp.Phase == views.CompareRunning && cs.Note == "" {
		cs.Note = "stopped while the comparison runs; restarts after it"
	}
	l.child.SetState(cs)
}

func (l *live) refreshCompare() {
	c := l.flags.Selected()
	if c.Key != "" {
		l.cmp.Hint = c.Key + ": " + strings.Join(c.Values, " vs ")
	}
	if l.cmp.Phase == views.CompareRunning && !l.now.IsZero() && !l.cmpStart.IsZero() {
		l.cmp.Elapsed = l.now.Sub(l.cmpStart)
	}
	l.compare.SetState(l.cmp)
}

// snapshot picks the snapshot the main views show.
func (l *live) snapshot() *attrib.Snapshot {
	if l.state == nil {
		return nil
	}
	if l.recent && l.state.Recent != nil {
		return l.state.Recent
	}
	return l.state.Cumulative
}

// onLive takes a livestate.Update; it returns the snapshot to show, or nil to keep
// the current one (paused).
func (m *Model) onLive(msg livestate.Update) {
	l := m.live
	l.status = msg.Child
	if !msg.At.IsZero() {
		l.now = msg.At
	}
	if len(msg.Output) > 0 || msg.Partial != nil || len(l.lastPartial) > 0 {
		l.output.Append(msg.Output, msg.Partial)
		l.lastPartial = msg.Partial
	}
	// The flips the panel showed pending before this message.
	pend := maps.Clone(l.flagState().Pending)
	if msg.Flags.InForce != nil {
		l.fs = msg.Flags
	}
	if msg.State != nil {
		// A flip the child refused is no longer pending: say why.
		for _, rf := range msg.State.Refusals[min(l.refusals, len(msg.State.Refusals)):] {
			if rf.Op == wiremsg.ControlSet && pend[rf.Key] == rf.Value {
				delete(pend, rf.Key)
				delete(l.asked, rf.Key)
				m.status = StatusMsg{Text: rf.String(), Level: Error}
				l.applied = ""
			}
		}
		l.refusals = len(msg.State.Refusals)
	}
	for k, v := range l.asked {
		if l.fs.Pending[k] == v {
			delete(l.asked, k) // the run's flags say it now
		}
	}
	for k, v := range pend {
		if l.fs.InForce[k] == v {
			delete(l.asked, k)
			if l.applied != "" && m.status.Text == l.applied {
				// The request's status line said "applied at the next
				// step": say that it was, with the step, once it is.
				text := fmt.Sprintf("%s=%s applied", k, v)
				if msg.State != nil {
					for i := len(msg.State.Marks) - 1; i >= 0; i-- {
						if mk := msg.State.Marks[i]; mk.Key == k && mk.Value == v && mk.Step >= 0 {
							text = fmt.Sprintf("%s=%s applied at step %d", k, v, mk.Step)
							break
						}
					}
				}
				m.status = StatusMsg{Text: text, Level: Info}
				l.applied = ""
			}
		}
	}
	if l.paused && l.state != nil {
		// Frozen display: only the child's state and the flags move.
		if msg.State != nil {
			l.state.Children = msg.State.Children
		}
	} else if msg.State != nil {
		l.state = msg.State
		steps, count := l.state.Steps, l.state.StepCount
		if rs := l.state.RankSteps(); rs != nil {
			// A distributed job: one step per step every rank finished
			// (its slowest rank's time), as compare and run count them;
			// the count per rank (ranks step together), as the header.
			steps, count = rs, max(int64(len(rs)), l.state.StepsPerRank())
		}
		l.steps.SetSteps(steps, l.state.Marks, l.state.StepsPerSec, count)
		l.steps.SetTracing(l.tracing())
		gone := ""
		if st := msg.Child.State; st != livestate.Running && st != livestate.NotStarted {
			gone = "the child " + msg.Child.Describe() + " before sending a step"
		}
		l.steps.SetGone(gone)
		if l.state.Timeline != nil {
			// A live snapshot lists no devices; the children's hellos do
			// (the built-in loop's is the host CPU).
			var cpu []int32
			for _, c := range l.state.Children {
				for _, d := range c.Hello.Devices {
					if strings.EqualFold(d.Vendor, "cpu") {
						cpu = append(cpu, d.ID)
					}
				}
			}
			if len(cpu) > 0 {
				m.timeline.SetCPUDevices(cpu)
			}
			marks := make([]views.TimelineMark, 0, len(l.state.Marks))
			for _, mk := range l.state.Marks {
				marks = append(marks, views.TimelineMark{AtNs: mk.AtNs, Label: mk.Key + "=" + mk.Value})
			}
			tl := l.state.Timeline
			if l.pyAgent() {
				tl = l.ops.timeline(tl, l.state.StepCount)
				m.timeline.SetNote(l.ops.viewNote())
			}
			m.timeline.SetTimeline(tl, marks)
			m.kernels.SetTimeline(l.state.Timeline)
		}
		if s := l.snapshot(); s != nil {
			m.setSnapshot(s)
		}
	}
	if l.tracingPending && l.tracing() == l.tracingWant {
		l.tracingPending = false
	}
	l.refreshFlags()
	l.refreshChild()
	l.refreshCompare()
}

func (m *Model) onDevice(msg DeviceMsg) {
	l := m.live
	s := msg.Sample
	l.sample = &s
	e := ""
	if msg.Err != nil {
		e = msg.Err.Error()
	}
	l.device.SetSample(l.sample, e)
	if l.cmp.Phase == views.CompareRunning && s.HasCoTenant() {
		l.cmp.CoTenant = true
		l.refreshCompare()
	}
}

// liveKey handles a live key press; ok is false when msg is not one.
func (m *Model) liveKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	l := m.live
	k := l.keys
	switch {
	case l.cmp.Phase == views.CompareRunning && !key.Matches(msg, k.Pause) && !key.Matches(msg, k.Recent) && !key.Matches(msg, k.Compare):
		m.setStatus("a comparison runs (C cancels); flags, tracing, restart and recording wait for it", Warn)
		return nil, true
	case key.Matches(msg, k.Flip):
		i := int(msg.String()[0] - '1')
		cs := l.flags.Choices()
		if i < 0 || i >= len(cs) {
			return nil, true
		}
		l.flags.Select(cs[i].Key)
		return m.flip(cs[i].Key), true
	case key.Matches(msg, k.Tracing):
		want := !l.tracing()
		if l.tracingPending {
			want = !l.tracingWant
		}
		l.tracingWant, l.tracingPending = want, true
		l.refreshFlags()
		ctl := l.ctl
		return func() tea.Msg { return tracingDoneMsg{on: want, err: ctl.SetTracing(want)} }, true
	case key.Matches(msg, k.Pause):
		l.paused = !l.paused
		if l.paused {
			m.setStatus("display paused (p resumes); the loop keeps running", Info)
		} else {
			m.setStatus("display resumed", Info)
		}
		return nil, true
	case key.Matches(msg, k.Recent):
		l.recent = !l.recent
		if s := l.snapshot(); s != nil && !l.paused {
			m.setSnapshot(s)
		}
		if l.recent {
			m.setStatus(fmt.Sprintf("showing the last %s (w: cumulative)", windowText(l.state)), Info)
		} else {
			m.setStatus("showing everything since the start (w: window)", Info)
		}
		return nil, true
	case key.Matches(msg, k.Restart):
		l.note = "restarting…"
		l.refreshChild()
		ctl := l.ctl
		return func() tea.Msg { return restartDoneMsg{err: ctl.Restart()} }, true
	case key.Matches(msg, k.Record):
		ctl := l.ctl
		if l.recPath != "" || (l.state != nil && l.state.Recording != nil) {
			return func() tea.Msg {
				info, err := ctl.StopRecording()
				return recordStoppedMsg{info: info, err: err}
			}, true
		}
		if l.recStarting {
			return nil, true
		}
		l.recStarting = true
		return func() tea.Msg {
			p, err := ctl.StartRecording()
			return recordStartedMsg{path: p, err: err}
		}, true
	case key.Matches(msg, k.Compare):
		return m.startCompare(), true
	}
	return nil, false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func windowText(st *livestate.State) string {
	if st == nil || st.RecentNs <= 0 {
		return "window"
	}
	return views.FormatNs(st.RecentNs)
}

// flip requests the next value of flag k.
func (m *Model) flip(k string) tea.Cmd {
	l := m.live
	var c livestate.FlagSpec
	for _, x := range l.flags.Choices() {
		if x.Key == k {
			c = x
		}
	}
	cur := l.flagState().Wanted(k)
	next := c.Next(cur)
	if next == cur {
		return nil
	}
	l.asked[k] = next
	l.refreshFlags()
	ctl := l.ctl
	return func() tea.Msg { return flipDoneMsg{key: k, value: next, err: ctl.SetFlag(k, next)} }
}

func (m *Model) startCompare() tea.Cmd {
	l := m.live
	if l.cmp.Phase == views.CompareRunning {
		if l.cmpCancel != nil {
			l.cmpCancel()
		}
		m.setStatus("cancelling the comparison…", Warn)
		return nil
	}
	c := l.flags.Selected()
	if fc, ok := m.findingChoice(); ok { // enter on a finding (findings.go)
		c = fc
	}
	if c.Key == "" || len(c.Values) < 2 {
		m.setStatus("nothing to compare: select a flag with two or more values in Flags", Warn)
		return nil
	}
	if l.cmp.Confirm == "" {
		// First C: say what a comparison stops and loses, and wait for a
		// second C (any other key cancels).
		steps := ""
		if l.state != nil && l.state.StepCount > 0 {
			steps = fmt.Sprintf(" (%s steps so far)", views.FormatCount(l.state.StepsPerRank()))
		}
		l.cmp.Confirm = fmt.Sprintf("Compare %s: %s? The live child stops now; a separate run interleaves the arms (A, B and A′, a second run of A for noise); "+
			"then the live child restarts and its totals, step history%s and window start from zero. C again starts it · any other key cancels.",
			c.Key, strings.Join(c.Values, " vs "), steps)
		l.refreshCompare()
		m.focusView(l.compare)
		m.setStatus("C again to compare "+c.Key+" (the live child stops and its totals restart) · any other key cancels", Warn)
		return nil
	}
	l.cmp.Confirm = ""
	// The confirmation prompt ("C again to compare …") is answered: it
	// must not stay up while the comparison runs; the
	// Compare view, focused below, says what runs and that C cancels.
	m.setStatus("", Info)
	m.findingStarted()
	ctx, cancel := context.WithCancel(context.Background())
	l.cmpCancel = cancel
	l.cmpStart = l.now
	l.cmp = views.CompareState{Phase: views.CompareRunning, What: c.Key + ": " + strings.Join(c.Values, " vs "), Flag: c.Key,
		CoTenant: l.sample != nil && l.sample.HasCoTenant()}
	l.cmpSteps, l.cmpKey, l.cmpVals = []views.ArmStep{}, c.Key, slices.Clone(c.Values)
	l.steps.SetCompare(l.cmpSteps, l.cmpVals)
	l.refreshCompare()
	l.refreshChild()
	m.focusView(l.compare)
	ctl, ch, key, vals := l.ctl, l.progressCh, c.Key, c.Values
	run := func() tea.Msg {
		res, err := ctl.Compare(ctx, key, vals, func(s string) {
			select {
			case ch <- compareProgressMsg{s}:
			default: // the TUI is behind; progress lines are advisory
			}
		}, func(sl livestate.StepLabel) {
			select { // every label counts for the arm row: wait for the TUI
			case ch <- compareStepMsg{sl}:
			case <-ctx.Done():
			}
		})
		return compareDoneMsg{res: res, err: err}
	}
	return tea.Batch(run, compareTick())
}

// armStep maps a comparison step's label to the step chart's arm: arm i
// is named as livestate.ArmName names the i-th value of the compared flag, the
// noise arm as livestate.NoiseName names arm A; a label of no known arm draws
// as not counted.
func (l *live) armStep(sl livestate.StepLabel) views.ArmStep {
	a := views.ArmStep{Counted: sl.Phase == livestate.PhaseCounted, DurNs: sl.DurNs}
	spec := []livestate.FlagSpec{{Key: l.cmpKey, Values: l.cmpVals}}
	name := func(v string) string { return livestate.ArmName(map[string]string{l.cmpKey: v}, spec) }
	if len(l.cmpVals) > 0 && sl.Arm == livestate.NoiseName(name(l.cmpVals[0])) {
		a.Noise = true
		return a
	}
	for i, v := range l.cmpVals {
		if sl.Arm == name(v) {
			a.Arm = i
			return a
		}
	}
	a.Counted = false
	return a
}

func compareTick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return compareTickMsg(t) })
}

func listenProgress(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

// focusView gives v the keyboard.
func (m *Model) focusView(v views.View) {
	for i, t := range m.tabs {
		if t.View == v {
			m.Focused().SetFocused(false)
			m.focus = i
		}
	}
	m.layout()
}

func (m *Model) setStatus(text string, lvl Level) {
	m.status = StatusMsg{Text: text, Level: lvl}
	m.layout()
}

// updateLive handles the live messages; ok is false for others.
func (m *Model) updateLive(msg tea.Msg) (tea.Cmd, bool) {
	l := m.live
	switch msg := msg.(type) {
	case views.FlipMsg:
		if l.cmp.Phase == views.CompareRunning {
			m.setStatus("a comparison runs (C cancels); flags wait for it", Warn)
			return nil, true
		}
		return m.flip(msg.Key), true
	case livestate.Update:
		m.onLive(msg)
		m.layout()
		return nil, true
	case DeviceMsg:
		m.onDevice(msg)
		m.layout()
		return nil, true
	case compareProgressMsg:
		l.cmp.Progress = append(l.cmp.Progress, msg.line)
		if len(l.cmp.Progress) > 50 {
			l.cmp.Progress = l.cmp.Progress[len(l.cmp.Progress)-50:]
		}
		l.refreshCompare()
		return listenProgress(l.progressCh), true
	case compareStepMsg:
		if l.cmp.Phase == views.CompareRunning {
			l.cmpSteps = append(l.cmpSteps, l.armStep(msg.label))
			if len(l.cmpSteps) > maxCompareSteps {
				l.cmpSteps = slices.Delete(l.cmpSteps, 0, len(l.cmpSteps)-maxCompareSteps)
			}
			l.steps.SetCompare(l.cmpSteps, l.cmpVals)
			m.layout()
		}
		return listenProgress(l.progressCh), true
	case compareTickMsg:
		if l.cmp.Phase != views.CompareRunning {
			return nil, true
		}
		if l.now.IsZero() || time.Time(msg).After(l.now) {
			l.now = time.Time(msg)
		}
		l.refreshCompare()
		return compareTick(), true
	case compareDoneMsg:
		if l.cmpCancel != nil {
			l.cmpCancel()
			l.cmpCancel = nil
		}
		l.cmpSteps = nil
		l.steps.SetCompare(nil, nil)
		co := l.cmp.CoTenant
		prog := l.cmp.Progress
		what := l.cmp.What
		flag := l.cmp.Flag
		switch {
		case errors.Is(msg.err, context.Canceled):
			l.cmp = views.CompareState{Phase: views.CompareFailed, What: what, Err: "cancelled", Progress: prog, CoTenant: co}
			m.status = StatusMsg{Text: "comparison cancelled; the live child restarts", Level: Warn}
		case msg.err != nil:
			l.cmp = views.CompareState{Phase: views.CompareFailed, What: what, Err: msg.err.Error(), Progress: prog, CoTenant: co}
			m.status = StatusMsg{Text: "comparison failed: " + msg.err.Error(), Level: Error}
		default:
			var wall time.Duration
			if msg.res != nil {
				wall = time.Duration(msg.res.WallNs)
			}
			l.cmp = views.CompareState{Phase: views.CompareDone, What: what, Flag: flag, Result: msg.res, Elapsed: wall, CoTenant: co}
			if msg.res != nil {
				m.status = StatusMsg{Text: fmt.Sprintf("comparison done: %s", msg.res.Verdict), Level: Info}
			}
		}
		l.refreshCompare()
		l.refreshChild()
		m.layout()
		return nil, true
	case flipDoneMsg:
		fs := l.flagState()
		if msg.err != nil {
			l.dropPending(msg.key)
			m.status = StatusMsg{Text: fmt.Sprintf("%s=%s: %v", msg.key, msg.value, msg.err), Level: Error}
		} else if fs.Pending[msg.key] == msg.value {
			m.status = StatusMsg{Text: fmt.Sprintf("%s=%s requested; applied at the next step", msg.key, msg.value), Level: Info}
			l.applied = m.status.Text
		} else if fs.InForce[msg.key] == msg.value {
			m.status = StatusMsg{Text: fmt.Sprintf("%s=%s applied", msg.key, msg.value), Level: Info}
		}
		l.refreshFlags()
	case tracingDoneMsg:
		if msg.err != nil {
			l.tracingPending = false
			m.status = StatusMsg{Text: "tracing " + onOff(msg.on) + ": " + msg.err.Error(), Level: Error}
		} else {
			m.status = StatusMsg{Text: "tracing " + onOff(msg.on) + " requested", Level: Info}
		}
		l.refreshFlags()
	case restartDoneMsg:
		l.note = ""
		if msg.err != nil {
			m.status = StatusMsg{Text: "restart: " + msg.err.Error(), Level: Error}
		} else {
			m.status = StatusMsg{Text: "child restarted (its steps and totals start afresh)", Level: Info}
		}
		l.refreshChild()
	case recordStartedMsg:
		l.recStarting = false
		if msg.err != nil {
			m.status = StatusMsg{Text: "recording: " + msg.err.Error(), Level: Error}
		} else {
			l.recPath = msg.path
			m.status = StatusMsg{Text: "recording to " + msg.path + " (R stops)", Level: Info}
		}
	case recordStoppedMsg:
		p := l.recPath
		l.recPath = ""
		if msg.err != nil {
			m.status = StatusMsg{Text: "recording " + p + ": " + msg.err.Error(), Level: Error}
		} else {
			m.status = StatusMsg{Text: fmt.Sprintf("recorded %s: %s, %d frames, %s events", p,
				views.FormatBytes(msg.info.Bytes), msg.info.Frames, views.FormatCount(int64(msg.info.Events))), Level: Info}
		}
	default:
		return nil, false
	}
	m.layout()
	return nil, true
}

// liveRight is the live part of the status bar's right side: recording,
// paused, window or cumulative.
func (m *Model) liveRight() string {
	l := m.live
	st := m.st
	var parts []string
	if l.recPath != "" || (l.state != nil && l.state.Recording != nil) {
		r := "● REC " + filepath.Base(l.recPath)
		if l.state != nil && l.state.Recording != nil {
			ri := l.state.Recording
			r += " " + views.FormatBytes(ri.Bytes)
			if !l.now.IsZero() && !ri.Started.IsZero() {
				r += " " + clock(l.now.Sub(ri.Started))
			}
			if ri.Err != "" {
				r += " error: " + ri.Err
			}
		}
		parts = append(parts, st.Live.Rec.Render(r))
	}
	if l.state != nil && l.state.StepsPerSec > 0 {
		parts = append(parts, units.Sig3(l.state.StepsPerSec)+" steps/s")
	}
	if l.paused {
		parts = append(parts, st.Live.Pending.Render("PAUSED"))
	}
	if l.recent {
		parts = append(parts, "window "+windowText(l.state))
	} else {
		parts = append(parts, "cumulative")
	}
	return strings.Join(parts, " · ")
}

// clock writes d as m:ss.
func clock(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// banner is the lines under the header that must stay in sight in a
// live run: why the command runs untraced (Options.Untraced), tracing
// turned off, a co-tenant on the GPU. Each is wrapped at word boundaries
// to the width, never cut ("" when none).
func (m *Model) banner() string {
	if m.live == nil {
		return ""
	}
	var lines []string
	add := func(text string, st func(...string) string) {
		for _, l := range views.WrapLines(text, max(m.w, 10)) {
			lines = append(lines, st(l))
		}
	}
	if u := m.live.untraced; u != "" {
		// In full on a tall terminal; in two lines below 40 rows (at
		// 80×24 the reason took 6 rows for the whole session): the Child
		// view has it all.
		// The text says what is traced and what not (loop.Live.Banner):
		// no "untraced:" label, which contradicted a Python command's
		// torch.profiler operators and --tracer kineto.
		ls := views.WrapLines(u, max(m.w, 10))
		if len(ls) > 2 && m.h < 40 {
			const more = " … (in full: Child)"
			ls = []string{ls[0], ansi.Truncate(ls[1], max(m.w-ansi.StringWidth(more), 10), "") + more}
		}
		for _, l := range ls {
			lines = append(lines, m.st.Live.Warn.Render(l))
		}
	}
	if !m.live.tracing() && m.live.untraced == "" {
		add("tracing off: the child runs untraced, no kernels or steps arrive (T turns it on)", m.st.Live.Pending.Render)
	}
	if b := views.CoTenantBanner(m.live.sample); b != "" {
		add(b, m.st.Live.Warn.Render)
	}
	return strings.Join(lines, "\n")
}

// isLiveKey reports whether msg is one of the live keys.
func (m *Model) isLiveKey(msg tea.KeyPressMsg) bool {
	for _, b := range m.live.bindings() {
		if key.Matches(msg, b) {
			return true
		}
	}
	return false
}

func (m *Model) bannerHeight() int {
	b := m.banner()
	if b == "" {
		return 0
	}
	return strings.Count(b, "\n") + 1
}

// stopLive cancels a running comparison when the program quits (the
// Controller's owner waits for it to clean up).
func (m *Model) stopLive() {
	if m.live != nil && m.live.cmpCancel != nil {
		m.live.cmpCancel()
	}
}
