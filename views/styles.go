package views

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// Styles holds every style the views and the root model use, in semantic
// groups. Views take colours only from here; DefaultStyles is the one
// theme, Plain a colourless one (tests, NO_COLOR).
type Styles struct {
	App struct {
		Title lipgloss.Style // the program name in the header
	}
	Header struct {
		Label  lipgloss.Style // "kernels", "busy", …
		Value  lipgloss.Style // the numbers
		Source lipgloss.Style // file name / live command
		Dim    lipgloss.Style // format, device details
	}
	Tabs struct {
		Active   lipgloss.Style
		Inactive lipgloss.Style
		Sep      lipgloss.Style
	}
	Pane struct {
		TitleFocused lipgloss.Style // a pane's title line when it has focus
		TitleBlurred lipgloss.Style
		Info         lipgloss.Style // right side of a title: sort, counts
	}
	Table struct {
		Header   lipgloss.Style // column headings
		Row      lipgloss.Style
		Selected lipgloss.Style // the cursor row of the focused pane
		Sorted   lipgloss.Style // the heading of the sort column
		Dim      lipgloss.Style // secondary cells (category, empty notes)
	}
	Detail struct {
		Label lipgloss.Style
		Value lipgloss.Style
		Name  lipgloss.Style // the full original kernel name
	}
	Bar struct {
		Fill  lipgloss.Style
		Empty lipgloss.Style
		Label lipgloss.Style
		Value lipgloss.Style
	}
	Status struct {
		Info  lipgloss.Style
		Warn  lipgloss.Style
		Error lipgloss.Style
		Right lipgloss.Style // right-hand status (warnings count, live state)
	}
	// Live is the live-run panels: flags, child, step times, device,
	// compare.
	Live struct {
		On      lipgloss.Style // the flag value in force, tracing on
		Off     lipgloss.Style // values not in force, tracing off
		Pending lipgloss.Style // a request not yet acknowledged
		Rec     lipgloss.Style // the recording indicator
		Warn    lipgloss.Style // co-tenant banner, dropped events, crashes
		Mark    lipgloss.Style // flag-change marks on the sparkline
		Spark   lipgloss.Style // sparkline blocks
		Arms    [3]lipgloss.Style
		Faster  lipgloss.Style
		Slower  lipgloss.Style
		Noise   lipgloss.Style // "within noise"
		Invalid lipgloss.Style
	}
	// Timeline is the timeline view: Cats colours GPU blocks by category
	// (picked by a hash of the name; empty: no colour), Selected the
	// selected block.
	Timeline struct {
		Cats     []lipgloss.Style
		Selected lipgloss.Style
	}
	Help   help.Styles
	Filter textinput.Styles
	// BarFull and BarEmpty are the runes bars are drawn with.
	BarFull, BarEmpty string
}

// DefaultStyles is the colour theme: ANSI 16/256 colours, which every
// terminal downsamples sensibly.
func DefaultStyles() Styles {
	var s Styles
	accent := lipgloss.Color("39") // blue
	dim := lipgloss.Color("245")
	s.App.Title = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Header.Label = lipgloss.NewStyle().Foreground(dim)
	s.Header.Value = lipgloss.NewStyle().Bold(true)
	s.Header.Source = lipgloss.NewStyle().Bold(true)
	s.Header.Dim = lipgloss.NewStyle().Foreground(dim)
	s.Tabs.Active = lipgloss.NewStyle().Bold(true).Reverse(true)
	s.Tabs.Inactive = lipgloss.NewStyle().Foreground(dim)
	s.Tabs.Sep = lipgloss.NewStyle().Foreground(dim)
	s.Pane.TitleFocused = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.Pane.TitleBlurred = lipgloss.NewStyle().Foreground(dim)
	s.Pane.Info = lipgloss.NewStyle().Foreground(dim)
	s.Table.Header = lipgloss.NewStyle().Bold(true).Underline(true)
	s.Table.Row = lipgloss.NewStyle()
	s.Table.Selected = lipgloss.NewStyle().Reverse(true)
	s.Table.Sorted = lipgloss.NewStyle().Bold(true).Underline(true).Foreground(accent)
	s.Table.Dim = lipgloss.NewStyle().Foreground(dim)
	s.Detail.Label = lipgloss.NewStyle().Foreground(dim)
	s.Detail.Value = lipgloss.NewStyle()
	s.Detail.Name = lipgloss.NewStyle().Foreground(lipgloss.Color("180"))
	s.Bar.Fill = lipgloss.NewStyle().Foreground(lipgloss.Color("35")) // green
	s.Bar.Empty = lipgloss.NewStyle().Foreground(lipgloss.Color("238"))
	s.Bar.Label = lipgloss.NewStyle()
	s.Bar.Value = lipgloss.NewStyle().Bold(true)
	s.Status.Info = lipgloss.NewStyle().Foreground(dim)
	s.Status.Warn = lipgloss.NewStyle().Foreground(lipgloss.Color("214"))
	s.Status.Error = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196"))
	s.Status.Right = lipgloss.NewStyle().Foreground(dim)
	s.Live.On = lipgloss.NewStyle().Bold(true).Reverse(true)
	s.Live.Off = lipgloss.NewStyle().Foreground(dim)
	s.Live.Pending = lipgloss.NewStyle().Foreground(lipgloss.Color("214"))
	s.Live.Rec = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196"))
	s.Live.Warn = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("214"))
	s.Live.Mark = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("213"))
	s.Live.Spark = lipgloss.NewStyle().Foreground(lipgloss.Color("35"))
	s.Live.Arms = [3]lipgloss.Style{
		lipgloss.NewStyle().Foreground(lipgloss.Color("39")),  // A blue
		lipgloss.NewStyle().Foreground(lipgloss.Color("208")), // B orange
		lipgloss.NewStyle().Foreground(lipgloss.Color("245")), // A′ grey
	}
	s.Live.Faster = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("35"))
	s.Live.Slower = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196"))
	s.Live.Noise = lipgloss.NewStyle().Foreground(dim)
	s.Live.Invalid = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196")).Strikethrough(true)
	for _, c := range []string{"39", "208", "35", "213", "220", "81", "203", "141", "150", "180"} {
		s.Timeline.Cats = append(s.Timeline.Cats, lipgloss.NewStyle().Foreground(lipgloss.Color("16")).Background(lipgloss.Color(c)))
	}
	s.Timeline.Selected = lipgloss.NewStyle().Bold(true).Reverse(true)
	s.Help = help.DefaultDarkStyles()
	s.Filter = textinput.DefaultDarkStyles()
	s.Filter.Cursor.Blink = false // no timer messages; steadier output
	s.BarFull, s.BarEmpty = "█", "░"
	return s
}

// PlainStyles has no colours or attributes at all: every style is empty.
// Bars still draw with block characters.
func PlainStyles() Styles {
	var s Styles
	s.Help = help.Styles{}
	s.Filter = textinput.Styles{}
	s.BarFull, s.BarEmpty = "█", "░"
	return s
}
