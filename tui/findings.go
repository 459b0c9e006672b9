package tui

import (
	"fmt"
	"maps"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views"
)

// findingsEvery bounds how often a live run re-evaluates its findings
// (livestate.Update arrives about 10 times a second; the evaluation walks the
// window's timeline).
const findingsEvery = time.Second

// findingsUI is the Findings view and its link to the compare path:
// enter on a finding that names a flag asks for the same
// confirmation as C, C then compares the flag's current value (A)
// against the suggested one (B), and the finding shows the measured
// result when the comparison ends.
type findingsUI struct {
	view *views.Findings
	// Rules evaluated (Options.Findings; nil: the built-in table).
	rules *attrib.FindingRules
	// Timeline and Outputs of a file (SnapshotMsg / Options); the live
	// state carries its own.
	timeline *attrib.Timeline
	outputs  []attrib.OutputRow
	// input: a file's whole findings input (SnapshotMsg.Findings), over
	// timeline and outputs when set.
	input *attrib.FindingInput
	// command: the live run is a command (environment flags restart it).
	command bool
	last    time.Time // last live evaluation (livestate.Update.At)

	// Evaluations off the frame (findingsAsyncSize): gen numbers each
	// evaluation asked for, the latest one's result is shown; one runs
	// at a time, and the last asked while it runs waits in queued.
	gen      uint64
	inFlight bool
	queued   *findingsJob
	cmds     []tea.Cmd // to return from this Update

	pending string // finding id awaiting the compare confirmation
	running string // finding id whose comparison runs
	flag    attrib.FindingFlag
}

func newFindingsUI(st *views.Styles, opts Options) *findingsUI {
	f := &findingsUI{view: views.NewFindings(st), rules: opts.Findings, timeline: opts.Timeline, outputs: opts.Outputs, command: opts.Command}
	return f
}

// refreshFindings re-evaluates the findings over what is shown: a file's
// snapshot with its timeline and outputs, or the live state (at most once
// per findingsEvery of livestate.Update time, always when force).
func (m *Model) refreshFindings(force bool) {
	f := m.fnd
	if m.snap == nil {
		return
	}
	if m.live == nil {
		in := attrib.FindingInput{Timeline: f.timeline, Outputs: f.outputs}
		if f.input != nil {
			in = *f.input
		}
		in.Snapshot = m.snap
		note := ""
		if m.stepSel >= 0 && m.stepSel < len(m.steps) {
			// Scrubbed to one step (, .): its findings, as the tables show it.
			ss := m.steps[m.stepSel]
			in.Snapshot, note = ss.Snapshot, fmt.Sprintf("step %d only (, . step)", ss.Step)
		}
		m.evaluateFindings(in, note)
		return
	}
	l := m.live
	if !force && !l.now.IsZero() && !f.last.IsZero() && l.now.Sub(f.last) < findingsEvery {
		return
	}
	f.last = l.now
	if l.state == nil {
		return
	}
	in := livestate.FindingInputOf(l.state, l.fs.InForce, f.command)
	in.Snapshot = m.snap // cumulative or window, as shown
	note := ""
	if l.state.StepCount == 0 {
		note = "no findings yet: waiting for the first steps"
	}
	if s, n := sinceFlip(l.state, m.snap); s != nil {
		in.Snapshot, note = s, n
	}
	m.evaluateFindings(in, note)
}

// findingsAsyncSize is the size of an evaluation's input (kernel rows
// plus timeline ops) from which it runs on its own goroutine, the result
// shown when it arrives. BenchmarkFindings (which makes its own names;
// the table's save about half at 100k, in a CPU profile of
// BenchmarkFrame): 0.35 ms at 2k kernel rows, 3.1 ms at 20k, 28 ms at
// 100k, against a 16 ms frame; below the size the findings show in the
// frame that shows the snapshot.
const findingsAsyncSize = 20_000

// findingsJob is one evaluation asked for.
type findingsJob struct {
	gen   uint64
	rules *attrib.FindingRules
	in    attrib.FindingInput
	note  string
}

// findingsMsg is an evaluation's result.
type findingsMsg struct {
	gen  uint64
	fs   []attrib.Finding
	note string
}

// evaluateFindings evaluates the rules over in and shows the result with
// note: at once for a small input, off the frame for a large one.
func (m *Model) evaluateFindings(in attrib.FindingInput, note string) {
	f := m.fnd
	f.gen++
	size := len(in.Snapshot.Kernels)
	if in.Timeline != nil {
		size += len(in.Timeline.Ops)
	}
	if size < findingsAsyncSize {
		in.Labels = m.kernelLabels(in.Snapshot)
		f.view.SetFindings(attrib.EvaluateFindings(f.rules, in), note)
		f.queued = nil // a result in flight is older: dropped when it comes
		return
	}
	// What the goroutine reads must not change under it: snapshots,
	// timelines and outputs are never changed once made; the flags map
	// and the kernels table's names are.
	in.Flags = maps.Clone(in.Flags)
	in.Labels = m.kernelLabelsFixed(in.Snapshot)
	j := &findingsJob{gen: f.gen, rules: f.rules, in: in, note: note}
	if f.inFlight {
		f.queued = j
		return
	}
	f.start(j)
}

// start runs j on its own goroutine; its result comes back as a
// findingsMsg through the command it adds.
func (f *findingsUI) start(j *findingsJob) {
	f.inFlight = true
	ch := make(chan findingsMsg, 1)
	go func() {
		ch <- findingsMsg{gen: j.gen, fs: attrib.EvaluateFindings(j.rules, j.in), note: j.note}
	}()
	f.cmds = append(f.cmds, func() tea.Msg { return <-ch })
}

// onFindings shows an evaluation's result unless a later one was asked
// for, and starts the one waiting.
func (m *Model) onFindings(msg findingsMsg) {
	f := m.fnd
	f.inFlight = false
	if msg.gen == f.gen {
		f.view.SetFindings(msg.fs, msg.note)
	}
	if q := f.queued; q != nil {
		f.queued = nil
		f.start(q)
	}
}

func (f *findingsUI) takeCmds() []tea.Cmd {
	c := f.cmds
	f.cmds = nil
	return c
}

// kernelLabels is the kernels table's shown names for s's kernels, so
// that a finding names a kernel as the table does and the names are not
// made twice per snapshot; nil when the table holds another snapshot.
func (m *Model) kernelLabels(s *attrib.Snapshot) func(int) string {
	if m.kernels == nil || m.kernels.Snapshot() != s {
		return nil
	}
	return m.kernels.ShownName
}

// kernelLabelsFixed is kernelLabels for another goroutine: the names
// the table shows now, which later snapshots do not change.
func (m *Model) kernelLabelsFixed(s *attrib.Snapshot) func(int) string {
	if m.kernels == nil || m.kernels.Snapshot() != s {
		return nil
	}
	return m.kernels.ShownNames()
}

// sinceFlip is what the live findings are evaluated over once a flag was
// flipped while the cumulative totals are shown: the window (the last
// RecentNs), with a note saying so; nil when no flip took effect or the
// window is shown anyway. The cumulative totals mix the steps before and
// after the flip, so a finding about the old setting stayed listed
// ("attention runs on the math fallback" at 14.3% after 1
// switched the built-in loop to attention=fused).
func sinceFlip(st *livestate.State, shown *attrib.Snapshot) (*attrib.Snapshot, string) {
	if st == nil || st.Recent == nil || shown != st.Cumulative || len(st.Marks) == 0 {
		return nil, ""
	}
	mk := st.Marks[len(st.Marks)-1]
	flip := mk.Key + "=" + mk.Value
	if mk.Step >= 0 {
		flip += fmt.Sprintf(" from step %d", mk.Step)
	}
	note := fmt.Sprintf("findings over the last %s (%s; the cumulative totals mix both settings)", windowText(st), flip)
	if mk.Step >= 0 && slices.ContainsFunc(st.Recent.Steps, func(r attrib.StepRow) bool { return r.Step < mk.Step }) {
		note = fmt.Sprintf("findings over the last %s, which still holds steps before %s", windowText(st), flip)
	}
	return st.Recent, note
}

// tryFinding is enter on finding id: in a live run, the compare view's
// confirmation for the finding's flag (C then starts it); elsewhere a
// status line with the command that tests it.
func (m *Model) tryFinding(id string) {
	f := m.fnd
	x := f.view.Find(id)
	if x == nil || x.Flag == nil {
		return
	}
	if m.live == nil {
		m.setStatusText("testing needs a live run: rlktop compare --flag "+x.Flag.Key+"="+x.Flag.Current+","+x.Flag.Value+" -- CMD (or rlktop compare --suggest)", Warn)
		return
	}
	if m.live.cmp.Phase == views.CompareRunning {
		m.setStatusText("a comparison runs (C cancels); test the finding after it", Warn)
		return
	}
	f.pending, f.flag = id, *x.Flag
	m.live.cmp.Confirm = "" // a fresh confirmation naming the finding's flag
	m.startCompare()
}

// findingChoice is the flag and values the next comparison compares when
// a finding asked for it (enter): its current value, then the suggested
// one; ok false otherwise.
func (m *Model) findingChoice() (livestate.FlagSpec, bool) {
	f := m.fnd
	if f.pending == "" {
		return livestate.FlagSpec{}, false
	}
	return livestate.FlagSpec{Key: f.flag.Key, Values: []string{f.flag.Current, f.flag.Value}}, true
}

// findingStarted: the confirmed comparison runs for the pending finding.
func (m *Model) findingStarted() {
	f := m.fnd
	if f.pending == "" {
		return
	}
	f.running, f.pending = f.pending, ""
	f.view.SetRunning(f.running)
}

// findingCancelled: the confirmation was dismissed.
func (m *Model) findingCancelled() { m.fnd.pending = "" }

// findingCompareDone records a finished comparison on the finding that
// started it: "tried sdpa=flash: step 0.71× [0.70, 0.75] faster,
// attention 0.68×, outputs max |Δ| …" (livestate.Tried).
func (m *Model) findingCompareDone(msg compareDoneMsg) {
	f := m.fnd
	if f.running == "" {
		return
	}
	id := f.running
	f.running = ""
	x := f.view.Find(id)
	row := ""
	if x != nil {
		row = livestate.FindingRow(x)
	}
	t := livestate.TriedOf(msg.res, id, f.flag.Key, f.flag.Current, f.flag.Value, row)
	if msg.err != nil {
		t.Err = msg.err.Error()
	}
	f.view.SetTried(id, t.String())
}

// findingHint is the status bar's line when nothing else is said: the
// top finding and where to act on it, so that what owns the step and
// what to try are on the first screen ("" with no finding, or when the
// Findings view has focus and shows it whole).
func (m *Model) findingHint() string {
	fs := m.fnd.view.Findings()
	if len(fs) == 0 || m.Focused() == views.View(m.fnd.view) {
		return ""
	}
	f := fs[0]
	h := "▸ " + f.Title
	if f.Share > 0 && f.ShareOf != "" {
		h += " (" + views.FormatShare(f.Share) + ")"
	}
	// The way to act is one phrase: wrapped, it starts the next line
	// whole ("· to" / "test: Findings, enter").
	if f.Flag != nil {
		return h + " " + views.Together("· to test: Findings, enter ("+f.Flag.Key+"="+f.Flag.Value+")")
	}
	return h + " " + views.Together("· see Findings")
}
