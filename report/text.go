package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// grid is one view as rows of cells; right marks numeric (right-aligned)
// columns.
type grid struct {
	header []string
	right  []bool
	rows   [][]string
	// split > 0 starts a second part of the table at rows[split], drawn
	// under its own label line (the kernel table's memcpy/memset rows,
	// whose share has another denominator).
	split      int
	splitLabel string
}

// countCell is a count as a table cell: as the header's counts read
// ("1,198") for the human formats, the integer for csv. Step numbers are
// not counts: they stay plain.
func countCell(v int64, human bool) string {
	if human {
		return units.Count(v)
	}
	return strconv.FormatInt(v, 10)
}

// makeGrid builds view by of s. human selects unit-formatted times and
// percentages (table, md); otherwise cells are raw integers (ns) and
// fractions (csv).
func makeGrid(s *attrib.Snapshot, by string, human bool, topN int) grid {
	ns := func(v int64) string {
		if human {
			return Duration(v)
		}
		return strconv.FormatInt(v, 10)
	}
	pct := func(x float64) string {
		if human {
			return Percent(x)
		}
		return strconv.FormatFloat(x, 'f', 6, 64)
	}
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	count := func(v int64) string { return countCell(v, human) }
	var g grid
	switch by {
	case ByKernel:
		nameCol := "name"
		if human {
			nameCol = "kernel"
			if s.CPUOps() {
				nameCol = "operator"
			}
		}
		g.header = []string{nameCol, "category", "count", "total", "mean", "min", "max", "p50", "p99", "share"}
		if !human {
			g.header = []string{"name", "display_name", "kind", "category", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "p50_ns", "p99_ns", "share"}
		}
		g.header = append(g.header, workColumns(s, human)...)
		rows := append(append([]attrib.KernelRow{}, s.Kernels...), s.Transfers...)
		if human {
			// Kernels first, then transfers, each already sorted.
			kernels := top(append([]attrib.KernelRow{}, s.Kernels...), topN)
			rows = append(kernels, top(s.Transfers, topN)...)
			if len(rows) > len(kernels) && len(kernels) > 0 {
				g.split = len(kernels)
				g.splitLabel = fmt.Sprintf("memcpy/memset (%s, %s; share of memcpy/memset time):",
					units.Count(s.Totals.TransferCount), Duration(s.Totals.TransferNs))
			}
		} else {
			rows = top(rows, topN)
		}
		var shown []string
		if human {
			// Rows whose display names collide show what tells them apart.
			names, disps := make([]string, len(rows)), make([]string, len(rows))
			for i, k := range rows {
				names[i], disps[i] = k.Name, k.DisplayName
			}
			shown = attrib.DistinctNames(names, disps)
		}
		for i, k := range rows {
			p50, p99 := ns(k.P50Ns), ns(k.P99Ns)
			if s.SummaryOnly && human {
				p99 = "-"
				if k.P50Ns == 0 {
					p50 = "-"
				}
			}
			var row []string
			if human {
				row = []string{shown[i], k.Category, count(k.Count), ns(k.TotalNs), ns(k.MeanNs), ns(k.MinNs), ns(k.MaxNs), p50, p99, pct(k.Share)}
			} else {
				row = []string{k.Name, k.DisplayName, k.Kind.String(), k.Category, count(k.Count), ns(k.TotalNs), ns(k.MeanNs), ns(k.MinNs), ns(k.MaxNs), p50, p99, pct(k.Share)}
			}
			g.rows = append(g.rows, append(row, workCells(s, k.Work, human)...))
		}
	case ByCategory, ByStage:
		src := s.Categories
		if by == ByStage {
			src = s.Stages
		}
		if human {
			g.header = []string{by, "count", "total", "share", ""}
		} else {
			g.header = []string{by, "count", "total_ns", "share"}
		}
		g.header = append(g.header, workColumns(s, human)...)
		for _, r := range top(src, topN) {
			row := []string{r.Key, count(r.Count), ns(r.TotalNs), pct(r.Share)}
			if human {
				row = append(row, bar(r.Share, 20))
			}
			g.rows = append(g.rows, append(row, workCells(s, r.Work, human)...))
		}
	case ByStep:
		if human {
			g.header = []string{"step", "start", "duration", "gpu time", "gpu ops"}
			if s.CPUOps() {
				g.header = []string{"step", "start", "duration", "cpu op time", "cpu ops"}
			}
		} else {
			g.header = []string{"step", "start_ns", "dur_ns", "gpu_ns", "gpu_ops"}
		}
		// Several sources: a rank (or file) column; starts are relative
		// to each source's first step (its own clock).
		multi := multiSource(s)
		if multi {
			g.header = append([]string{sourceKind(s)}, g.header...)
		}
		g.header = append(g.header, stepWorkColumns(s, human)...)
		t0 := map[int]int64{}
		for _, st := range s.Steps {
			if _, ok := t0[st.Source]; !ok {
				t0[st.Source] = st.StartNs
			}
		}
		for _, st := range top(s.Steps, topN) {
			start := num(st.StartNs)
			if human {
				start = "+" + Duration(st.StartNs-t0[st.Source])
			}
			row := []string{num(st.Step), start, ns(st.DurNs), ns(st.KernelNs), count(st.Count)}
			if multi {
				row = append([]string{sourceLabel(s, st.Source)}, row...)
			}
			g.rows = append(g.rows, append(row, stepWorkCells(s, st, human)...))
		}
	case ByRank, ByFile:
		return rankGrid(s, by, human, topN)
	}
	g.right = make([]bool, len(g.header))
	for i, h := range g.header {
		switch h {
		case "name", "kernel", "operator", "display_name", "kind", "category", "stage", "", "bound":
		default:
			g.right[i] = true
		}
	}
	if by == ByStage || by == ByCategory {
		g.right[0] = false
	}
	return g
}

func bar(share float64, width int) string {
	n := int(share*float64(width) + 0.5)
	if n > width {
		n = width
	}
	if n < 0 {
		n = 0
	}
	return strings.Repeat("█", n)
}

func header(w io.Writer, s *attrib.Snapshot, prefix string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%ssource: %s (format %s)\n", prefix, escape.Control(s.Source), escape.Control(formatName(s)))
	// Runs of consecutive device ids with the same name share a line
	// ("devices 0–7: Tesla V100-SXM2-32GB"); only devices that ran GPU
	// work are named (Snapshot.WorkingDevices).
	devs := s.WorkingDevices()
	for i := 0; i < len(devs); {
		d := devs[i]
		name := d.Name
		if name == "" {
			name = d.Vendor
		}
		name = escape.Control(name)
		j := i + 1
		for j < len(devs) && devs[j].ID == devs[j-1].ID+1 &&
			(devs[j].Name == d.Name && devs[j].Vendor == d.Vendor) {
			j++
		}
		if j-i > 1 {
			fmt.Fprintf(&b, "%sdevices %d–%d: %s\n", prefix, d.ID, devs[j-1].ID, name)
		} else {
			fmt.Fprintf(&b, "%sdevice %d: %s\n", prefix, d.ID, name)
		}
		i = j
	}
	if idle := len(s.Devices) - len(devs); idle > 0 {
		fmt.Fprintf(&b, "%s%d more devices listed without GPU work\n", prefix, idle)
	}
	t := s.Totals
	if s.CPUOps() {
		// A trace without GPU work: its rows are CPU operators by self
		// time (tracer.Trace.CPUOpKernels), never called kernels.
		fmt.Fprintf(&b, "%sCPU operators (no GPU work in the trace): %s, self time %s", prefix, units.Count(t.KernelCount), Duration(t.KernelTotalNs))
	} else {
		fmt.Fprintf(&b, "%skernels: %s, kernel time %s", prefix, units.Count(t.KernelCount), Duration(t.KernelTotalNs))
	}
	if !s.SummaryOnly {
		fmt.Fprintf(&b, ", busy %s", Duration(t.KernelBusyNs))
	}
	if t.TransferCount > 0 {
		fmt.Fprintf(&b, "; memcpy/memset: %s, %s", units.Count(t.TransferCount), Duration(t.TransferNs))
		if !s.SummaryOnly {
			fmt.Fprintf(&b, "; GPU busy with copies %s", Duration(t.GPUBusyNs))
		}
	}
	b.WriteString("\n")
	sourcesHeader(&b, s, prefix)
	if len(s.Steps) > 0 && s.StepRule != "" {
		fmt.Fprintf(&b, "%ssteps: %d, cut by %s%s\n", prefix, len(s.Steps), s.StepRule, outsideSteps(s))
	}
	if s.SummaryOnly {
		fmt.Fprintf(&b, "%ssummary-only input: per-kernel sums without events; no busy time, stages, steps or p99\n", prefix)
	}
	workHeader(&b, s, prefix)
	for _, wmsg := range s.Warnings {
		fmt.Fprintf(&b, "%swarning: %s\n", prefix, escape.Control(wmsg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// outsideSteps says, when more than 1% of the GPU time was launched in
// no step, how much: "; 509 GPU ops (13.7 ms, 30.0% of GPU time) were
// launched outside every step" (work before the first step's range, or on
// threads no step covers); "" otherwise. Steps' GPU time is what was
// launched inside them (StepRow.KernelNs), so the rest is Totals.GPUTotalNs
// less their sum.
func outsideSteps(s *attrib.Snapshot) string {
	var ns, n int64
	for _, st := range s.Steps {
		ns += st.KernelNs
		n += st.Count
	}
	t := s.Totals
	out, outN := t.GPUTotalNs-ns, t.KernelCount+t.TransferCount-n
	if t.GPUTotalNs <= 0 || out*100 <= t.GPUTotalNs || outN <= 0 {
		return ""
	}
	verb := "were launched"
	if outN == 1 {
		verb = "was launched"
	}
	what := "GPU op"
	if s.CPUOps() {
		what, verb = "CPU operator", "ran" // a trace without GPU work: its operators stand in
	}
	return fmt.Sprintf("; %s (%s, %s of %s) %s outside every step", units.Plural(outN, what), Duration(out), units.Share(float64(out)/float64(t.GPUTotalNs)), s.TimeName(), verb)
}

// shareNote names the two denominators of the kernel table's share column
// when it holds memcpy/memset rows (attrib.KernelRow.Share): kernels are
// shares of kernel time, transfers of memcpy/memset time; "" otherwise.
func shareNote(s *attrib.Snapshot, by string) string {
	if by != ByKernel || len(s.Transfers) == 0 {
		return ""
	}
	return fmt.Sprintf("share: kernel rows of kernel time (%s), memcpy/memset rows of memcpy/memset time (%s)",
		Duration(s.Totals.KernelTotalNs), Duration(s.Totals.TransferNs))
}

// rateNote explains the FLOP/s and B/s columns when a row's kernels are
// partly modelled: the rates are over the modelled kernels' time
// (attrib.RatesOf over Work.Ns), so FLOPs over the row's total time gives
// a lower figure there. "" when every row with work is modelled whole.
func rateNote(s *attrib.Snapshot, by string) string {
	var works []attrib.Work
	switch by {
	case ByKernel:
		for i := range s.Kernels {
			works = append(works, s.Kernels[i].Work)
		}
	case ByCategory, ByStage:
		rows := s.Categories
		if by == ByStage {
			rows = s.Stages
		}
		for i := range rows {
			works = append(works, rows[i].Work)
		}
	}
	n := 0
	for _, w := range works {
		if w.Ns > 0 && w.UnmodelledNs > 0 {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	rows := strconv.Itoa(n) + " rows are"
	if n == 1 {
		rows = "1 row is"
	}
	return "FLOP/s and B/s: over the time of each row's modelled kernels (" + rows + " partly unmodelled)"
}

// stepNote explains the step table's gpu time column when it exceeds a
// step's duration in any step: the column sums the durations of the GPU
// ops launched in the step (attrib.StepRow.KernelNs), and ops on several
// streams run at once and can end after the step, so the sum can exceed
// the step's wall time (hta_ns_resolution_v100 step 101,
// 35.1 ms with 94.6 ms of GPU ops). For CPU-only traces the column sums
// CPU operators' self times over all threads. "" otherwise.
//
// A live session's snapshot lists its newest steps only
// (attrib.Snapshot.StepsForgotten): the note says so first.
func stepNote(s *attrib.Snapshot, by string) string {
	if by != ByStep {
		return ""
	}
	var notes []string
	if f := s.StepsForgotten; f > 0 {
		notes = append(notes, fmt.Sprintf("the newest %d of %d steps (a live session lists its newest; every total counts them all)", len(s.Steps), int64(len(s.Steps))+f))
	}
	n := 0
	for _, st := range s.Steps {
		if st.KernelNs > st.DurNs {
			n++
		}
	}
	switch {
	case n == 0:
	case s.CPUOps():
		notes = append(notes, fmt.Sprintf("cpu op time exceeds duration in %d of %d steps: it sums the self times of the CPU operators in the step over all threads, so it can exceed the step's wall time", n, len(s.Steps)))
	default:
		notes = append(notes, fmt.Sprintf("gpu time exceeds duration in %d of %d steps: it sums the durations of the GPU ops launched in the step (ops on several streams overlap, and work can end after the step), so it can exceed the step's wall time", n, len(s.Steps)))
	}
	return strings.Join(notes, "; ")
}

func writeTable(w io.Writer, s *attrib.Snapshot, o Options) error {
	var hb strings.Builder
	if err := header(&hb, s, ""); err != nil {
		return err
	}
	if _, err := io.WriteString(w, wrapProse(hb.String(), o.Width)); err != nil {
		return err
	}
	if why := Unavailable(s, o.By); why != "" {
		_, err := io.WriteString(w, wrapProse("\n"+why+"\n", o.Width))
		return err
	}
	g := makeGrid(s, o.By, true, o.Top)
	if len(g.rows) == 0 {
		_, err := io.WriteString(w, wrapProse("\n"+emptyView(s, o)+"\n", o.Width))
		return err
	}
	cut := 0
	if o.By == ByKernel {
		cut = fitNameColumn(g.rows, NameColumnWidth)
	}
	left, narrower := fitGrid(&g, o.Width, o.By == ByKernel)
	if narrower > 0 {
		cut = narrower
	}
	var b, notes strings.Builder
	b.WriteString("\n")
	writeTextGrid(&b, g)
	if cut > 0 {
		fmt.Fprintf(&notes, "names cut to %d characters (--format csv or json keeps them whole)\n", cut)
	}
	if len(left) > 0 {
		fmt.Fprintf(&notes, "left out to fit %d columns: %s (--format csv or json, or a pipe, shows every column)\n", o.Width, strings.Join(left, ", "))
	}
	if n := hidden(s, o.By, o.Top); n > 0 {
		fmt.Fprintf(&notes, "… %d more rows (--top 0 shows all)\n", n)
	}
	if note := shareNote(s, o.By); note != "" && g.split == 0 {
		notes.WriteString(note + "\n")
	}
	if note := stepNote(s, o.By); note != "" {
		notes.WriteString(note + "\n")
	}
	if note := rateNote(s, o.By); note != "" {
		notes.WriteString(note + "\n")
	}
	b.WriteString(wrapProse(notes.String(), o.Width))
	if o.By == ByRank || o.By == ByFile {
		writeRankSections(&b, s, o, false)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapProse breaks each line of text longer than width runes (0: no
// limit) at spaces, continuing it indented by two; a word longer than a
// line stays whole.
func wrapProse(text string, width int) string {
	if width <= 0 {
		return text
	}
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteString("\n")
		}
		n, indent := 0, ""
		for j, word := range strings.Split(line, " ") {
			wl := utf8.RuneCountInString(word)
			if j > 0 && n+1+wl > width && n > len(indent) {
				indent = "  "
				b.WriteString("\n" + indent)
				n = len(indent)
			} else if j > 0 {
				b.WriteString(" ")
				n++
			}
			b.WriteString(word)
			n += wl
		}
	}
	return b.String()
}

// NameColumnWidth is the most runes a kernel name takes in a text table
// (report and diff): one templated name can run past 400 characters and
// would widen every row past any terminal.
const NameColumnWidth = 72

// MinNameWidth is the fewest runes Options.Width cuts a kernel name to:
// below it templated names lose what tells them apart.
const MinNameWidth = 32

// fitNameColumn cuts the first cell of each row to width runes with
// attrib.FitNames, so that names which differ still differ once cut, and
// returns width when any was cut, else 0.
func fitNameColumn(rows [][]string, width int) int {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r[0]
	}
	cut := 0
	for i, f := range attrib.FitNames(names, width) {
		if f != rows[i][0] {
			cut = width
			rows[i][0] = f
		}
	}
	return cut
}

// dropOrder is the order fitGrid leaves columns out in: a row's spread
// and its rates go before what it is and what it costs.
var dropOrder = []string{"min", "max", "p99", "p50", "FLOP/B", "B/s", "FLOPs", "mean", "of peak", "FLOP/s", "bound", ""}

// gridWidth is the runes of g's widest line as writeTextGrid draws it.
func gridWidth(g grid) int {
	w := 2 * (len(g.header) - 1)
	for i, h := range g.header {
		c := utf8.RuneCountInString(h)
		for _, r := range g.rows {
			c = max(c, utf8.RuneCountInString(r[i]))
		}
		w += c
	}
	return w
}

// fitGrid makes g at most width runes wide (0: no limit): names cut first
// (nameCol: the first column holds kernel names, cut down to MinNameWidth;
// narrower > 0 is the width they were cut to), then columns left out in
// dropOrder (left: their headers).
func fitGrid(g *grid, width int, nameCol bool) (left []string, narrower int) {
	if width <= 0 || gridWidth(*g) <= width {
		return nil, 0
	}
	if nameCol {
		nw := 0
		for _, r := range g.rows {
			nw = max(nw, utf8.RuneCountInString(r[0]))
		}
		if want := max(nw-(gridWidth(*g)-width), MinNameWidth); want < nw {
			narrower = fitNameColumn(g.rows, want)
		}
	}
	for _, name := range dropOrder {
		if gridWidth(*g) <= width {
			break
		}
		i := slices.Index(g.header, name)
		if i <= 0 {
			continue
		}
		left = append(left, name)
		g.header = slices.Delete(slices.Clone(g.header), i, i+1)
		g.right = slices.Delete(slices.Clone(g.right), i, i+1)
		rows := make([][]string, len(g.rows))
		for j, r := range g.rows {
			rows[j] = slices.Delete(slices.Clone(r), i, i+1)
		}
		g.rows = rows
	}
	return left, narrower
}

// writeTextGrid writes g as aligned text columns, control characters in
// cells escaped (names are data: escape.Control).
func writeTextGrid(b *strings.Builder, g grid) {
	g = escapeGrid(g)
	width := make([]int, len(g.header))
	for i, h := range g.header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range g.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if g.right[i] {
				b.WriteString(pad + c)
			} else if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + pad)
			}
		}
		b.WriteString("\n")
	}
	line(g.header)
	for i, r := range g.rows {
		if i == g.split && i > 0 {
			b.WriteString("\n" + g.splitLabel + "\n")
		}
		line(r)
	}
}

// escapeGrid returns g with escape.Control applied to every cell (a copy;
// g's rows may be shared).
func escapeGrid(g grid) grid {
	out := grid{header: make([]string, len(g.header)), right: g.right, rows: make([][]string, len(g.rows)), split: g.split, splitLabel: escape.Control(g.splitLabel)}
	for i, h := range g.header {
		out.header[i] = escape.Control(h)
	}
	for i, r := range g.rows {
		out.rows[i] = make([]string, len(r))
		for j, c := range r {
			out.rows[i][j] = escape.Control(c)
		}
	}
	return out
}

// writeMDGrid writes g as a GitHub Markdown table (cells through escape.Markdown).
func writeMDGrid(b *strings.Builder, g grid) {
	b.WriteString("|")
	for _, h := range g.header {
		b.WriteString(" " + escape.Markdown(h) + " |")
	}
	b.WriteString("\n|")
	for i := range g.header {
		if g.right[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range g.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + escape.Markdown(c) + " |")
		}
		b.WriteString("\n")
	}
}

// emptyView says why view o.By of s has no rows: with a --filter that
// kept no kernel row of an input that has some, that no row matched it
// (and, for cat:/stage:, the names it could take), else that the input has
// no GPU work.
func emptyView(s *attrib.Snapshot, o Options) string {
	by := o.By
	switch by {
	case ByKernel:
		if o.Filter != "" && s.Totals.KernelCount+s.Totals.TransferCount > 0 {
			return filterMiss(s, o.Filter)
		}
		return "no GPU kernels, memcpy or memset in this input"
	case ByStep:
		return attrib.NoStepsText
	}
	return fmt.Sprintf("no GPU work in this input, so no %s rows", by)
}

// filterMiss says that no kernel row of s (which has some) matched
// filter, and lists the categories or stages of s when the filter names
// one (cat:NAME, stage:NAME match exactly).
func filterMiss(s *attrib.Snapshot, filter string) string {
	msg := fmt.Sprintf("no kernel, memcpy or memset matches --filter %q (the input has %d kernels and %d memcpy/memset)", filter, s.Totals.KernelCount, s.Totals.TransferCount)
	if s.CPUOps() {
		msg = fmt.Sprintf("no CPU operator matches --filter %q (the input has %d, and no GPU work)", filter, s.Totals.KernelCount)
	}
	f := attrib.ParseKernelFilter(filter)
	names := func(rows []attrib.GroupRow) string {
		var n []string
		for _, r := range rows {
			n = append(n, r.Key)
		}
		return strings.Join(n, ", ")
	}
	if f.Category != "" {
		msg += "; its categories: " + names(s.Categories)
	}
	if f.Stage != "" {
		msg += "; its stages: " + names(s.Stages)
	}
	return msg
}

// hidden is how many rows of view by the text formats leave out with
// --top topN (> 0): kernels and memcpy/memset rows are cut to topN each,
// as JSON's "kernels" and "transfers" are.
func hidden(s *attrib.Snapshot, by string, topN int) int {
	if topN <= 0 {
		return 0
	}
	if by == ByKernel {
		return max(len(s.Kernels)-topN, 0) + max(len(s.Transfers)-topN, 0)
	}
	return max(total(s, by)-topN, 0)
}

func total(s *attrib.Snapshot, by string) int {
	switch by {
	case ByKernel:
		return len(s.Kernels)
	case ByCategory:
		return len(s.Categories)
	case ByStage:
		return len(s.Stages)
	case ByRank, ByFile:
		if s.Ranks == nil {
			return 0
		}
		return len(s.Ranks.Sources)
	}
	return len(s.Steps)
}

func writeCSV(w io.Writer, s *attrib.Snapshot, o Options) error {
	if why := Unavailable(s, o.By); why != "" && s.SummaryOnly {
		return fmt.Errorf("%w: %s", ErrOption, why)
	}
	// Cells escaped too: a CSV is read in terminals (cat, column) as much
	// as by programs; the JSON format keeps names raw.
	return writeCSVGrid(w, makeGrid(s, o.By, false, o.Top))
}

// writeCSVGrid writes g as CSV, cells through escape.Control.
func writeCSVGrid(w io.Writer, g grid) error {
	g = escapeGrid(g)
	cw := csv.NewWriter(w)
	if err := cw.Write(g.header); err != nil {
		return err
	}
	if err := cw.WriteAll(g.rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func writeMarkdown(w io.Writer, s *attrib.Snapshot, o Options) error {
	var b strings.Builder
	var hb strings.Builder
	if err := header(&hb, s, ""); err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimRight(hb.String(), "\n"), "\n") {
		// Names in the header (paths, a warning's operator names such as
		// "<built-in method …>") must not open markup or HTML.
		b.WriteString(escape.Markdown(l) + "  \n")
	}
	if why := Unavailable(s, o.By); why != "" {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(why))
		_, err := io.WriteString(w, b.String())
		return err
	}
	g := makeGrid(s, o.By, true, o.Top)
	if len(g.rows) == 0 {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(emptyView(s, o)))
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n")
	writeMDGrid(&b, g)
	if n := hidden(s, o.By, o.Top); n > 0 {
		fmt.Fprintf(&b, "\n_%d more rows not shown_\n", n)
	}
	if note := shareNote(s, o.By); note != "" {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(note))
	}
	if note := stepNote(s, o.By); note != "" {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(note))
	}
	if note := rateNote(s, o.By); note != "" {
		fmt.Fprintf(&b, "\n_%s_\n", escape.Markdown(note))
	}
	if o.By == ByRank || o.By == ByFile {
		writeRankSections(&b, s, o, true)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
