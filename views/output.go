package views

import (
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
)

// OutputMaxLines bounds the lines the output pane keeps (the oldest leave
// first); loop.OutputLines is what one poll can bring.
const OutputMaxLines = 5000

// OutputKeyMap is the output pane's bindings.
type OutputKeyMap struct {
	ListKeyMap
	Filter, ClearFilter, Accept, Streams key.Binding
}

// DefaultOutputKeyMap: movement, / filters lines (a regular expression,
// case-insensitive), esc clears it, s cycles both streams / stdout /
// stderr; End (G) follows the newest line again.
func DefaultOutputKeyMap() OutputKeyMap {
	return OutputKeyMap{
		ListKeyMap:  DefaultListKeyMap(),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter lines")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Accept:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
		Streams:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "stdout/stderr/both")),
	}
}

// Output is the child's output pane: its stdout and stderr interleaved in
// the order rlktop read them (loop.Supervisor.Output), stderr marked,
// rlktop's own notices highlighted, the line each stream is still writing
// at the bottom. It follows the newest line until the user scrolls up;
// End (G) follows again. / filters the lines shown (a regular expression,
// case-insensitive; plain text where it is not one); s shows one stream.
// Lines stay after the child exits, at most OutputMaxLines. Text is shown
// with control characters escaped (escape.Control).
type Output struct {
	st      *Styles
	keys    OutputKeyMap
	lines   []livestate.OutputLine
	partial []livestate.OutputLine
	dropped uint64 // lines the ring or this pane dropped
	lastSeq uint64
	stream  livestate.Stream // 0 both
	input   textinput.Model
	editing bool
	re      *regexp.Regexp
	shown   []int // indices into lines after filtering
	follow  bool
	top     int // first shown line on screen when not following
	w, h    int
	focused bool
}

// NewOutput returns an empty output pane that follows the newest line.
func NewOutput(st *Styles) *Output {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "regular expression (case-insensitive)"
	in.SetStyles(st.Filter)
	in.CharLimit = 256
	return &Output{st: st, keys: DefaultOutputKeyMap(), follow: true, input: in}
}

func (o *Output) Title() string { return "Output" }

func (o *Output) Info() string {
	s := FormatCount(int64(len(o.lines))) + " lines"
	if len(o.lines) == 1 {
		s = "1 line"
	}
	if o.re != nil || o.stream != 0 {
		s = fmt.Sprintf("%s of %s lines", FormatCount(int64(len(o.shown))), FormatCount(int64(len(o.lines))))
	}
	if o.stream != 0 {
		s += " · " + o.stream.String() + " only"
	}
	if o.dropped > 0 {
		s += fmt.Sprintf(" · %s earlier dropped", FormatCount(int64(o.dropped)))
	}
	if !o.follow {
		s += " · G follows"
	}
	return s
}

func (o *Output) SetSnapshot(*attrib.Snapshot) {}

// Append adds the lines read since the last call (Seq increasing) and
// replaces the unterminated lines; lines with a Seq already seen are
// ignored, and a gap in Seq counts as dropped lines.
func (o *Output) Append(lines, partial []livestate.OutputLine) {
	for _, l := range lines {
		if l.Seq <= o.lastSeq {
			continue
		}
		if o.lastSeq > 0 && l.Seq > o.lastSeq+1 {
			o.dropped += l.Seq - o.lastSeq - 1
		}
		o.lastSeq = l.Seq
		o.lines = append(o.lines, l)
	}
	if n := len(o.lines) - OutputMaxLines; n > 0 {
		o.dropped += uint64(n)
		o.lines = append(o.lines[:0], o.lines[n:]...)
		o.top = max(o.top-n, 0)
	}
	o.partial = partial
	o.refilter()
}

// LastSeq is the Seq of the newest line kept (0: none): what to ask
// loop.Supervisor.Output for next.
func (o *Output) LastSeq() uint64 { return o.lastSeq }

// Lines returns the lines shown (filtered), oldest first.
func (o *Output) Lines() []livestate.OutputLine {
	out := make([]livestate.OutputLine, len(o.shown))
	for i, j := range o.shown {
		out[i] = o.lines[j]
	}
	return out
}

// Following reports whether the pane keeps to the newest line.
func (o *Output) Following() bool { return o.follow }

// SetFilter filters lines by a regular expression (case-insensitive;
// plain text where s is not a valid expression); "" shows all.
func (o *Output) SetFilter(s string) {
	o.input.SetValue(s)
	o.setRe(s)
	o.refilter()
}

func (o *Output) setRe(s string) {
	o.re = nil
	if s == "" {
		return
	}
	re, err := regexp.Compile("(?i)" + s)
	if err != nil {
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(s))
	}
	o.re = re
}

func (o *Output) refilter() {
	o.shown = o.shown[:0]
	for i, l := range o.lines {
		if o.stream != 0 && l.Stream != o.stream && l.Stream != livestate.Notice {
			continue
		}
		if o.re != nil && !o.re.MatchString(l.Text) {
			continue
		}
		o.shown = append(o.shown, i)
	}
}

func (o *Output) SetSize(w, h int)  { o.w, o.h = w, h; o.input.SetWidth(max(w-2, 1)) }
func (o *Output) SetFocused(f bool) { o.focused = f }
func (o *Output) Capturing() bool   { return o.editing }

// page is the number of screen rows for complete output lines.
func (o *Output) page() int {
	p := o.h - o.partialRows()
	if o.editing || o.re != nil {
		p--
	}
	return max(p, 1)
}

func (o *Output) maxTop() int { return max(len(o.shown)-o.page(), 0) }

func (o *Output) scroll(d int) {
	if o.follow {
		o.top = o.maxTop()
	}
	o.top = min(max(o.top+d, 0), o.maxTop())
	o.follow = o.top >= o.maxTop() && d > 0
}

func (o *Output) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if o.editing {
			var cmd tea.Cmd
			o.input, cmd = o.input.Update(msg)
			return cmd
		}
		return nil
	}
	k := o.keys
	if o.editing {
		switch {
		case key.Matches(km, k.ClearFilter):
			o.editing = false
			o.input.Blur()
			o.SetFilter("")
		case key.Matches(km, k.Accept):
			o.editing = false
			o.input.Blur()
		default:
			var cmd tea.Cmd
			o.input, cmd = o.input.Update(km)
			o.setRe(o.input.Value())
			o.refilter()
			return cmd
		}
		return nil
	}
	switch {
	case key.Matches(km, k.Up):
		o.scroll(-1)
	case key.Matches(km, k.Down):
		o.scroll(1)
	case key.Matches(km, k.PageUp):
		o.scroll(-o.page())
	case key.Matches(km, k.PageDown):
		o.scroll(o.page())
	case key.Matches(km, k.Home):
		o.top, o.follow = 0, false
	case key.Matches(km, k.End):
		o.follow = true
	case key.Matches(km, k.Filter):
		o.editing = true
		return o.input.Focus()
	case key.Matches(km, k.ClearFilter):
		o.SetFilter("")
	case key.Matches(km, k.Streams):
		o.stream = map[livestate.Stream]livestate.Stream{0: livestate.Stdout, livestate.Stdout: livestate.Stderr, livestate.Stderr: 0}[o.stream]
		o.refilter()
	}
	return nil
}

func (o *Output) ShortHelp() []key.Binding {
	if o.editing {
		return []key.Binding{o.keys.Accept, o.keys.ClearFilter}
	}
	return []key.Binding{o.keys.move(), o.keys.Filter, o.keys.Streams}
}

func (o *Output) FullHelp() [][]key.Binding {
	follow := key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "follow the newest line"))
	return [][]key.Binding{o.keys.bindings(), {follow, o.keys.Filter, o.keys.ClearFilter, o.keys.Streams}}
}

// partialRows is the number of rows the lines still being written take
// (at most half the pane).
func (o *Output) partialRows() int {
	n := 0
	for _, p := range o.partial {
		n += len(o.line(p, true))
	}
	return min(n, max(o.h/2, 1))
}

// line renders one output line: "err│" before stderr, rlktop's notices
// in the warning style, text escaped and wrapped at word boundaries to
// the width (a word longer than the width is broken); continuation rows
// carry a dim "│" only.
func (o *Output) line(l livestate.OutputLine, partial bool) []string {
	st := o.st
	mark := "   " + st.Table.Dim.Render("│")
	switch l.Stream {
	case livestate.Stderr:
		// Dim, not a warning colour: progress bars and logging write
		// to stderr as much as errors do.
		mark = st.Table.Dim.Render("err│")
	case livestate.Notice:
		mark = st.Live.Warn.Render("rlk") + st.Table.Dim.Render("│")
	}
	text := escape.Control(strings.TrimRight(l.Text, "\r"))
	if partial {
		text += " …"
	}
	rows := strings.Split(ansi.Wrap(text, max(o.w-4, 1), " "), "\n")
	cont := "   " + st.Table.Dim.Render("│")
	for i, r := range rows {
		if l.Stream == livestate.Notice {
			r = st.Live.Warn.Render(r)
		}
		if i == 0 {
			rows[i] = mark + r
		} else {
			rows[i] = cont + r
		}
	}
	return rows
}

func (o *Output) View() string {
	st := o.st
	var out []string
	switch {
	case o.editing:
		out = append(out, o.input.View())
	case o.re != nil:
		out = append(out, st.Table.Dim.Render("filter /"+o.input.Value()+"  (/ to edit, esc to clear)"))
	}
	if len(o.lines) == 0 && len(o.partial) == 0 {
		out = append(out, st.Table.Dim.Render(" no output from the child yet (its stdout and stderr show here)"))
		return block(out, o.w, o.h)
	}
	page := o.page()
	if o.follow {
		// The newest lines, as many as their wrapped rows fit.
		var rows []string
		for i := len(o.shown) - 1; i >= 0 && len(rows) < page; i-- {
			rows = append(o.line(o.lines[o.shown[i]], false), rows...)
		}
		out = append(out, rows[max(len(rows)-page, 0):]...)
	} else {
		top := min(o.top, o.maxTop())
		var rows []string
		for i := top; i < len(o.shown) && len(rows) < page; i++ {
			rows = append(rows, o.line(o.lines[o.shown[i]], false)...)
		}
		out = append(out, rows[:min(len(rows), page)]...)
	}
	if len(o.shown) == 0 {
		out = append(out, st.Table.Dim.Render(" no line matches"))
	}
	// The lines the streams are still writing stay at the bottom.
	pr := o.partialRows()
	for len(out) < o.h-pr {
		out = append(out, "")
	}
	var prows []string
	for _, p := range o.partial {
		prows = append(prows, o.line(p, true)...)
	}
	out = append(out, prows[max(len(prows)-pr, 0):]...)
	return block(out, o.w, o.h)
}
