package views

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/units"
)

// Loading is the screen shown while a source is read: the file, a bar of
// bytes read against the file size, and the phase ("reading",
// "attributing"). Read and Size are bytes of the file as stored (so
// compressed bytes for .gz); Size 0 means unknown and draws no bar. With
// no phase yet (a live source before its first snapshot) it says it is
// waiting for data.
type Loading struct {
	Source     string
	Phase      string
	Read, Size int64
	Elapsed    time.Duration // since loading started; 0 hides it
	st         *Styles
	w, h       int
}

// NewLoading returns a loading screen for source.
func NewLoading(st *Styles, source string) *Loading {
	return &Loading{st: st, Source: source}
}

// SetSize sets the screen area in cells.
func (l *Loading) SetSize(w, h int) { l.w, l.h = w, h }

// View draws the loading screen centred vertically, exactly h lines of w cells.
func (l *Loading) View() string {
	st := l.st
	bw := min(l.w-4, 60)
	if l.Phase == "" {
		lines := []string{
			st.Header.Label.Render("waiting for data from ") + st.Header.Source.Render(fitLeftCut(l.Source, min(ansi.StringWidth(l.Source), max(l.w-34, 10)))) + l.clock(),
		}
		top := max((l.h-1)/2, 0)
		return block(append(make([]string, top), lines...), l.w, l.h)
	}
	lines := []string{
		st.Header.Label.Render("opening ") + st.Header.Source.Render(fitLeftCut(l.Source, min(ansi.StringWidth(l.Source), max(l.w-10, 10)))),
		"",
	}
	if l.Size > 0 {
		frac := float64(l.Read) / float64(l.Size)
		lines = append(lines, "  "+st.bar(frac, bw),
			fmt.Sprintf("  %s of %s (%s) · %s…%s", FormatBytes(l.Read), FormatBytes(l.Size), units.ShareWhole(min(frac, 1)), l.Phase, l.clock()))
	} else {
		lines = append(lines, fmt.Sprintf("  %s read · %s…%s", FormatBytes(l.Read), l.Phase, l.clock()))
	}
	top := max((l.h-len(lines))/2, 0)
	out := make([]string, top, l.h)
	out = append(out, lines...)
	return block(out, l.w, l.h)
}

var spinner = [...]string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// clock shows the elapsed time with a spinner, so a long phase with no
// new byte count (gzip blocks, attribution) still visibly moves.
func (l *Loading) clock() string {
	if l.Elapsed <= 0 {
		return ""
	}
	return fmt.Sprintf(" %s %.1f s", spinner[int(l.Elapsed/(100*time.Millisecond))%len(spinner)], l.Elapsed.Seconds())
}
