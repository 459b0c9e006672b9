package views

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Steps lists training steps (Snapshot.Steps): wall time of each step as
// a bar scaled to the longest step, the GPU time launched in it and the
// number of GPU operations. With several sources (Snapshot.Ranks with
// more than one), a first column names each step's source (its rank, or
// under "file" its position in input order when ranks are positions),
// since step numbers repeat across sources.
type Steps struct {
	st   *Styles
	keys GroupsKeyMap
	snap *attrib.Snapshot
	// Worked out once per snapshot shown (Info runs every frame, and a
	// live run's snapshot has a row per step), when statsOK: the median
	// wall time, ns, whether a step's launched GPU time exceeds its wall
	// time, the longest wall time (the bars' scale), ns.
	statsOK         bool
	medianNs, maxNs int64
	gpuOver         bool
	list            list
	w, h            int
	focused         bool
}

// NewSteps returns an empty steps view.
func NewSteps(st *Styles) *Steps { return &Steps{st: st, keys: DefaultGroupsKeyMap()} }

func (s *Steps) Title() string { return "Steps" }

// stats works out medianNs, maxNs and gpuOver for the snapshot shown, in
// one pass over its rows (a live run's are many, and large), when it is
// not done yet: a view not drawn costs nothing per snapshot.
func (s *Steps) stats() {
	if s.statsOK {
		return
	}
	s.statsOK = true
	s.medianNs, s.maxNs, s.gpuOver = 0, 0, false
	if s.snap == nil {
		return
	}
	steps := s.snap.Steps
	d := make([]int64, len(steps))
	for i := range steps {
		r := &steps[i]
		d[i] = r.DurNs
		s.maxNs = max(s.maxNs, r.DurNs)
		s.gpuOver = s.gpuOver || r.KernelNs > r.DurNs
	}
	s.medianNs = attrib.MedianNs(d)
}

func (s *Steps) Info() string {
	if s.snap == nil || len(s.snap.Steps) == 0 {
		return ""
	}
	s.stats()
	info := fmt.Sprintf("%s · median %s", units.Plural(int64(len(s.snap.Steps)), "step"), FormatNs(s.medianNs))
	if f := s.snap.StepsForgotten; f > 0 {
		// A live session lists its newest steps (attrib.SetStepCap).
		info = fmt.Sprintf("last %s of %s steps · median %s", FormatCount(int64(len(s.snap.Steps))), FormatCount(int64(len(s.snap.Steps))+f), FormatNs(s.medianNs))
	}
	if label, n := stepsItem(s.snap); strings.Contains(label, "/") {
		// Several sources: rows are per (source, step); say each one's
		// count as the header does, not the rows summed.
		info = fmt.Sprintf("%s %s · median %s", n, label, FormatNs(s.medianNs))
	}
	// As report's note under its step table (the TUI showed
	// "wall 100 ms  gpu 151 ms" with nothing saying why).
	if s.gpuOver {
		info += " · gpu > wall: launched ops summed"
	}
	return info
}

// SetSnapshot shows snap's steps. When the cursor is on the last step
// (as it is from the start), it follows new steps as a live run adds
// them; moving up stops that.
func (s *Steps) SetSnapshot(snap *attrib.Snapshot) {
	follow := s.list.n == 0 || s.list.cursor == s.list.n-1
	s.snap, s.statsOK = snap, false
	n := 0
	if snap != nil {
		n = len(snap.Steps)
	}
	s.list.setLen(n)
	if follow {
		s.list.cursor = n - 1
		s.list.clamp()
	}
}

// Select puts the cursor on the first row of step number step (the
// root's step scrubber: , and .), scrolled into view; a step not in the
// table leaves the cursor where it is.
func (s *Steps) Select(step int64) {
	if s.snap == nil {
		return
	}
	if i := slices.IndexFunc(s.snap.Steps, func(r attrib.StepRow) bool { return r.Step == step }); i >= 0 {
		s.list.cursor = i
		s.list.clamp()
	}
}

func (s *Steps) SetSize(w, h int)  { s.w, s.h = w, h; s.list.setPage(h - 1) }
func (s *Steps) SetFocused(f bool) { s.focused = f }
func (s *Steps) Capturing() bool   { return false }

func (s *Steps) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		s.list.handle(km, s.keys.ListKeyMap)
	}
	return nil
}

func (s *Steps) ShortHelp() []key.Binding  { return []key.Binding{s.keys.move()} }
func (s *Steps) FullHelp() [][]key.Binding { return [][]key.Binding{s.keys.bindings()} }

// Height returns the lines needed to show every step plus the heading.
func (s *Steps) Height() int {
	if s.snap == nil || len(s.snap.Steps) == 0 {
		return 1
	}
	return len(s.snap.Steps) + 1
}

func (s *Steps) View() string {
	st := s.st
	if s.snap == nil {
		return block([]string{st.Table.Dim.Render("waiting for data…")}, s.w, s.h)
	}
	steps := s.snap.Steps
	if len(steps) == 0 {
		return block(wrapStyled(attrib.NoStepsText, max(s.w-1, 20), st.Table.Dim.Render), s.w, s.h)
	}
	s.stats()
	maxDur := s.maxNs
	const nw, tw, cw = 9, 9, 8
	rk := s.snap.Ranks
	rw := 0 // source column: the rank, or the file's position
	srcOf := func(i int) string {
		if x := rk.Source(i); x != nil && rk.ByRank {
			return fmt.Sprint(x.Rank)
		}
		return fmt.Sprint(i)
	}
	if rk != nil && len(rk.Sources) > 1 {
		rw = 4
		for i := range rk.Sources {
			rw = max(rw, len(srcOf(rk.Sources[i].Index)))
		}
	}
	srcCol := func(text string, style func(...string) string) string {
		if rw == 0 {
			return ""
		}
		return style(fit(text, rw)) + " "
	}
	bw := s.w - 1 - nw - 1 - 1 - tw - 1 - tw - 1 - cw
	if rw > 0 {
		bw -= rw + 1
	}
	srcName := "rank"
	if rk != nil && !rk.ByRank {
		srcName = "file"
	}
	hdr := " " + srcCol(srcName, st.Table.Header.Render) + st.Table.Header.Render(fit("step", nw)) + " " + st.Table.Header.Render(fit("wall time", max(bw, 0))) +
		" " + st.Table.Header.Render(fitRight("wall", tw)) + " " + st.Table.Header.Render(fitRight("gpu", tw)) +
		" " + st.Table.Header.Render(fitRight("ops", cw))
	lines := []string{hdr}
	from, to := s.list.visible()
	for i := from; i < to; i++ {
		r := &steps[i]
		gut := " "
		if s.focused && i == s.list.cursor {
			gut = "›"
		}
		frac := 0.0
		if maxDur > 0 {
			frac = float64(r.DurNs) / float64(maxDur)
		}
		src := ""
		if rw > 0 {
			src = srcCol(srcOf(r.Source), st.Table.Dim.Render)
		}
		lines = append(lines, gut+src+fit(fmt.Sprintf("%d", r.Step), nw)+" "+st.bar(frac, bw)+" "+
			st.Bar.Value.Render(fitRight(FormatNs(r.DurNs), tw))+" "+fitRight(FormatNs(r.KernelNs), tw)+
			" "+st.Table.Dim.Render(fitRight(FormatCount(r.Count), cw)))
	}
	return block(lines, s.w, s.h)
}

// Available reports whether the snapshot has steps; the root model hides
// the view otherwise.
func (s *Steps) Available() bool { return s.snap != nil && len(s.snap.Steps) > 0 }
