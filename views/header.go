package views

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Header is the top of the screen: source, format, devices and totals
// (kernel count, kernel time, busy time, span, transfers, steps, dropped
// events). It has no keys. Its height depends on the width: totals wrap
// onto as many lines as they need (2–4 lines at 80 columns, 2 at 160+).
type Header struct {
	st    *Styles
	snap  *attrib.Snapshot
	w     int
	lines []string
	note  string // SetNote
}

// NewHeader returns an empty header drawn with st.
func NewHeader(st *Styles) *Header { return &Header{st: st} }

// SetSnapshot sets the data shown; nil shows only the program name.
func (h *Header) SetSnapshot(s *attrib.Snapshot) { h.snap = s; h.layout() }

// SetWidth sets the width in cells.
func (h *Header) SetWidth(w int) { h.w = w; h.layout() }

// SetNote sets a line drawn under the header's totals (which step the
// tables show); "" removes it.
func (h *Header) SetNote(s string) { h.note = s; h.layout() }

// Height is the number of lines View returns at the current width.
func (h *Header) Height() int { return len(h.lines) }

// View draws the header: Height() lines of exactly the set width.
func (h *Header) View() string { return block(h.lines, h.w, len(h.lines)) }

func (h *Header) layout() {
	st := h.st
	h.lines = h.lines[:0]
	first := st.App.Title.Render("rlktop")
	s := h.snap
	if s == nil {
		h.lines = append(h.lines, first)
		return
	}
	meta := s.Format
	switch {
	case s.Format == "rlktop" && strings.HasPrefix(s.Source, "live:"):
		meta = "" // the title already says rlktop
	case s.Format == "rlktop":
		meta = "rlktop recording"
	}
	if s.Rank >= 0 {
		meta += fmt.Sprintf(" · rank %d", s.Rank)
	}
	if s.SummaryOnly {
		meta += " · summary only"
	}
	meta = strings.TrimPrefix(meta, " · ")
	// The source is cut from the left: the file name matters most.
	room := h.w - ansi.StringWidth("rlktop  ") - ansi.StringWidth(meta) - 2
	if room < 10 {
		room = 10
	}
	src := s.Source
	if ansi.StringWidth(src) > room && strings.Contains(src, ", ") {
		// Several files: their base names, so the first is not the one
		// cut away.
		parts := strings.Split(src, ", ")
		for i, p := range parts {
			parts[i] = filepath.Base(p)
		}
		src = strings.Join(parts, ", ")
	}
	first += "  " + st.Header.Source.Render(fitLeftCut(src, min(room, ansi.StringWidth(src)))) +
		"  " + st.Header.Dim.Render(meta)
	h.lines = append(h.lines, first)

	if len(s.Devices) > 0 {
		work := s.WorkingDevices()
		line := h.devices(work)
		if idle := len(s.Devices) - len(work); idle > 0 {
			line += st.Header.Dim.Render(fmt.Sprintf(" · %d more without work", idle))
		}
		h.lines = append(h.lines, ansi.Truncate(line, h.w, "…"))
	}

	t := s.Totals
	item := func(label, value string) string {
		return st.Header.Label.Render(label) + " " + st.Header.Value.Render(value)
	}
	items := []string{
		item("kernels", FormatCount(t.KernelCount)),
		item("kernel time", FormatNs(t.KernelTotalNs)),
	}
	if s.CPUOps() { // CPU operators by self time, not kernels
		items = []string{
			item("CPU ops", FormatCount(t.KernelCount)),
			item("CPU op time", FormatNs(t.KernelTotalNs)),
		}
	}
	if !s.SummaryOnly {
		// busy is the union of kernel intervals, as `rlktop report` and its
		// JSON busy_ns; "GPU busy" adds memcpy and memset.
		items = append(items,
			item("busy", FormatNs(t.KernelBusyNs)),
			item("span", FormatNs(t.SpanNs)))
	}
	if t.TransferCount > 0 {
		items = append(items, item("memcpy/set", FormatCount(t.TransferCount)+" · "+FormatNs(t.TransferNs)))
		if !s.SummaryOnly {
			items = append(items, item("GPU busy", FormatNs(t.GPUBusyNs)))
		}
	}
	if label, n := stepsItem(s); n != "" {
		items = append(items, item(label, n))
	}
	items = append(items, item("dropped", FormatCount(int64(s.Dropped))))
	h.lines = append(h.lines, pack(items, "   ", h.w)...)
	if h.note != "" {
		h.lines = append(h.lines, ansi.Truncate(st.Live.Pending.Render(h.note), h.w, "…"))
	}
}

// stepsItem is the header's step count: the step rows, or with several
// sources (ranks, files) each one's steps (attrib.SourceRow.Steps: a live
// rank's whole run in the cumulative snapshot) as "steps/rank 399", or
// "398–399" when they differ — not the rows of all sources summed (user
// "steps 798" over two ranks of 399 steps). "" without
// steps.
func stepsItem(s *attrib.Snapshot) (label, n string) {
	if s.Ranks == nil || len(s.Ranks.Sources) < 2 {
		if len(s.Steps) == 0 {
			return "", ""
		}
		return "steps", FormatCount(int64(len(s.Steps)) + s.StepsForgotten)
	}
	lo, hi := s.Ranks.Sources[0].Steps, 0
	for _, r := range s.Ranks.Sources {
		lo, hi = min(lo, r.Steps), max(hi, r.Steps)
	}
	if hi == 0 {
		return "", ""
	}
	label = "steps/rank"
	if !s.Ranks.ByRank {
		label = "steps/file"
	}
	n = FormatCount(int64(hi))
	if lo != hi {
		n = FormatCount(int64(lo)) + "–" + n
	}
	return label, n
}

// pack lays items out left to right, starting a new line when the next
// item would pass width w.
func pack(items []string, sep string, w int) []string {
	var lines []string
	cur, curW := "", 0
	sw := ansi.StringWidth(sep)
	for _, it := range items {
		iw := ansi.StringWidth(it)
		if curW > 0 && curW+sw+iw > w {
			lines = append(lines, cur)
			cur, curW = "", 0
		}
		if curW > 0 {
			cur += sep
			curW += sw
		}
		cur += it
		curW += iw
	}
	if curW > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// devices describes the GPUs, identical ones grouped:
// "GPU 0–7: Tesla V100-SXM2-32GB (80 SMs, 31.7 GiB, cc 7.0)".
func (h *Header) devices(ds []tracer.Device) string {
	st := h.st
	type group struct {
		desc string
		ids  []int32
		cpu  bool
	}
	var groups []*group
	byDesc := map[string]*group{}
	for _, d := range ds {
		var props []string
		if d.SMs > 0 {
			props = append(props, fmt.Sprintf("%d SMs", d.SMs))
		}
		if d.TotalMemory > 0 {
			props = append(props, FormatBytes(d.TotalMemory))
		}
		if d.ComputeCap != "" {
			props = append(props, "cc "+d.ComputeCap)
		}
		name := escape.Control(d.Name)
		if name == "" {
			name = "device"
		}
		desc := name
		if len(props) > 0 {
			desc += st.Header.Dim.Render(" (" + strings.Join(props, ", ") + ")")
		}
		g := byDesc[desc]
		if g == nil {
			g = &group{desc: desc, cpu: strings.EqualFold(d.Vendor, "cpu")}
			byDesc[desc] = g
			groups = append(groups, g)
		}
		g.ids = append(g.ids, d.ID)
	}
	var parts []string
	for _, g := range groups {
		label := "GPU "
		if g.cpu {
			// A CPU-only source (the built-in loop without a GPU): its
			// device is the host, not a GPU.
			label = "CPU "
			if len(g.ids) == 1 && g.ids[0] == 0 {
				label = "CPU"
				parts = append(parts, label+": "+g.desc)
				continue
			}
		}
		parts = append(parts, label+idList(g.ids)+": "+g.desc)
	}
	return strings.Join(parts, st.Header.Dim.Render(" · "))
}

// idList writes ids as "0", "0,2" or "0–7" for a consecutive run.
func idList(ids []int32) string {
	if len(ids) > 2 {
		run := true
		for i := 1; i < len(ids); i++ {
			if ids[i] != ids[i-1]+1 {
				run = false
				break
			}
		}
		if run {
			return fmt.Sprintf("%d–%d", ids[0], ids[len(ids)-1])
		}
	}
	var p []string
	for _, id := range ids {
		p = append(p, fmt.Sprint(id))
	}
	return strings.Join(p, ",")
}
