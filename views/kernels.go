package views

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// SortKey is a column the kernels table can be sorted by.
type SortKey int

// Sort columns. Total, Count and Mean sort descending by default, Name
// ascending; pressing the same key again reverses the order.
const (
	SortTotal SortKey = iota
	SortCount
	SortMean
	SortName
)

func (k SortKey) String() string {
	return [...]string{"total", "count", "mean", "name"}[k]
}

// KernelsKeyMap is the kernels table's bindings.
type KernelsKeyMap struct {
	ListKeyMap
	SortTotal, SortCount, SortMean, SortName key.Binding
	Transfers                                key.Binding // show memcpy/memset rows in the table
	Filter                                   key.Binding // open the filter input
	ClearFilter                              key.Binding // esc: clear the filter (and close the input)
	Accept                                   key.Binding // enter: close the input, keep the filter
}

// DefaultKernelsKeyMap: t/c/m/n sort (again to reverse), / filters.
func DefaultKernelsKeyMap() KernelsKeyMap {
	return KernelsKeyMap{
		ListKeyMap:  DefaultListKeyMap(),
		SortTotal:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "sort total")),
		SortCount:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "sort count")),
		SortMean:    key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "sort mean")),
		SortName:    key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "sort name")),
		Transfers:   key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "memcpy/set rows")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Accept:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
	}
}

// Kernels is the kernels table: one row per kernel name with count,
// total, mean (p50 and p99 from 110 columns), share of kernel time and
// category; sortable, filterable, scrollable, with a detail pane for the
// selected kernel (full original name, launch context, stage, min/max).
type Kernels struct {
	st      *Styles
	keys    KernelsKeyMap
	snap    *attrib.Snapshot
	all     []*attrib.KernelRow // snap.Kernels, then snap.Transfers
	nKern   int                 // how many of all are kernels
	xfers   bool                // show memcpy/memset rows too
	lower   []string            // lower-cased "name\x00display" per all row
	lowerOf map[string]string   // cache of lower across snapshots, by Name
	disp    []string            // name shown per all row (see shownNames)
	rows    []int               // indices into all: filtered and sorted
	sortBy  SortKey
	desc    bool
	input   textinput.Model
	editing bool
	filter  string // applied filter (lower case)
	list    list
	w, h    int
	focused bool
}

// NewKernels returns an empty kernels table sorted by total, descending.
func NewKernels(st *Styles) *Kernels {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "substring of the kernel name"
	in.SetStyles(st.Filter)
	in.CharLimit = 256
	return &Kernels{st: st, keys: DefaultKernelsKeyMap(), sortBy: SortTotal, desc: true, input: in}
}

// KeyMap returns the bindings in use; SetKeyMap replaces them.
func (k *Kernels) KeyMap() KernelsKeyMap      { return k.keys }
func (k *Kernels) SetKeyMap(km KernelsKeyMap) { k.keys = km }

func (k *Kernels) Title() string { return "Kernels" }

func (k *Kernels) Info() string {
	if k.snap == nil {
		return ""
	}
	arrow := "▲"
	if k.desc {
		arrow = "▼"
	}
	n := k.nKern
	what := ""
	if k.xfers {
		n = len(k.all)
		what = " incl. memcpy/set"
	}
	return fmt.Sprintf("sort %s %s · %s of %s%s", k.sortBy, arrow, FormatCount(int64(len(k.rows))), FormatCount(int64(n)), what)
}

// Sort returns the sort column and whether it is descending.
func (k *Kernels) Sort() (SortKey, bool) { return k.sortBy, k.desc }

// SetSort sorts by col in the given direction.
func (k *Kernels) SetSort(col SortKey, desc bool) {
	k.sortBy, k.desc = col, desc
	k.refresh()
}

// Filter returns the filter text as typed ("" none).
func (k *Kernels) Filter() string { return k.input.Value() }

// SetFilter filters rows to kernels whose name or display name contains
// s, case-insensitively.
func (k *Kernels) SetFilter(s string) {
	k.input.SetValue(s)
	k.filter = strings.ToLower(s)
	k.refresh()
}

// Rows returns the rows shown, filtered and in display order.
func (k *Kernels) Rows() []attrib.KernelRow {
	out := make([]attrib.KernelRow, len(k.rows))
	for i, r := range k.rows {
		out[i] = *k.all[r]
	}
	return out
}

// Selected returns the row under the cursor, or nil when none.
func (k *Kernels) Selected() *attrib.KernelRow {
	if len(k.rows) == 0 {
		return nil
	}
	return k.all[k.rows[k.list.cursor]]
}

func (k *Kernels) SetSnapshot(s *attrib.Snapshot) {
	var keep string
	if sel := k.Selected(); sel != nil {
		keep = sel.Name
	}
	k.snap = s
	k.lower = k.lower[:0]
	k.all = k.all[:0]
	k.nKern = 0
	if s != nil {
		for i := range s.Kernels {
			k.all = append(k.all, &s.Kernels[i])
		}
		k.nKern = len(k.all)
		for i := range s.Transfers {
			k.all = append(k.all, &s.Transfers[i])
		}
		if k.lowerOf == nil || len(k.lowerOf) > 4*len(k.all)+1024 {
			k.lowerOf = make(map[string]string, len(k.all))
		}
		for _, r := range k.all {
			l, ok := k.lowerOf[r.Name]
			if !ok {
				l = strings.ToLower(r.Name + "\x00" + r.DisplayName)
				k.lowerOf[r.Name] = l
			}
			k.lower = append(k.lower, l)
		}
	}
	k.disp = shownNames(k.all, k.disp[:0])
	k.refresh()
	if keep != "" {
		for i, r := range k.rows {
			if k.all[r].Name == keep {
				k.list.cursor = i
				k.list.clamp()
				break
			}
		}
	}
}

// refresh recomputes the filtered, sorted row list.
func (k *Kernels) refresh() {
	k.rows = k.rows[:0]
	if k.snap == nil {
		k.list.setLen(0)
		return
	}
	for i := range k.all {
		if i >= k.nKern && !k.xfers {
			break
		}
		if k.filter == "" || strings.Contains(k.lower[i], k.filter) {
			k.rows = append(k.rows, i)
		}
	}
	slices.SortStableFunc(k.rows, func(a, b int) int {
		ra, rb := k.all[a], k.all[b]
		var c int
		switch k.sortBy {
		case SortTotal:
			c = cmp.Compare(ra.TotalNs, rb.TotalNs)
		case SortCount:
			c = cmp.Compare(ra.Count, rb.Count)
		case SortMean:
			c = cmp.Compare(ra.MeanNs, rb.MeanNs)
		case SortName:
			c = cmp.Compare(k.disp[a], k.disp[b])
		}
		if k.desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(ra.Name, rb.Name)
		}
		return c
	})
	k.list.setLen(len(k.rows))
	k.layout()
}

func (k *Kernels) SetSize(w, h int) { k.w, k.h = w, h; k.layout() }

func (k *Kernels) SetFocused(f bool) {
	k.focused = f
	if !f && k.editing {
		k.editing = false
		k.input.Blur()
	}
}

func (k *Kernels) Capturing() bool { return k.editing }

// detailLines is how many lines the detail pane takes at the current height.
func (k *Kernels) detailLines() int {
	switch {
	case k.h >= 30:
		return 5
	case k.h >= 14:
		return 4
	case k.h >= 9:
		return 2
	}
	return 0
}

func (k *Kernels) filterShown() bool { return k.editing || k.input.Value() != "" }

func (k *Kernels) layout() {
	page := k.h - 1 - k.detailLines()
	if k.filterShown() {
		page--
	}
	k.list.setPage(page)
	k.input.SetWidth(max(k.w-2, 1))
}

func (k *Kernels) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if k.editing {
			var cmd tea.Cmd
			k.input, cmd = k.input.Update(msg)
			return cmd
		}
		return nil
	}
	if k.editing {
		switch {
		case key.Matches(km, k.keys.ClearFilter):
			k.editing = false
			k.input.Blur()
			k.SetFilter("")
			return nil
		case key.Matches(km, k.keys.Accept):
			k.editing = false
			k.input.Blur()
			k.layout()
			return nil
		case key.Matches(km, k.keys.Up, k.keys.Down, k.keys.PageUp, k.keys.PageDown) &&
			km.Text == "": // arrows move the cursor; letters type
			k.list.handle(km, k.keys.ListKeyMap)
			return nil
		}
		var cmd tea.Cmd
		k.input, cmd = k.input.Update(km)
		if f := strings.ToLower(k.input.Value()); f != k.filter {
			k.filter = f
			k.refresh()
			k.list.cursor, k.list.offset = 0, 0
		}
		return cmd
	}
	if k.list.handle(km, k.keys.ListKeyMap) {
		return nil
	}
	sortKey := func(col SortKey) {
		if k.sortBy == col {
			k.desc = !k.desc
		} else {
			k.sortBy, k.desc = col, col != SortName
		}
		k.refresh()
		k.list.cursor, k.list.offset = 0, 0 // after sorting, users look at the top
	}
	switch {
	case key.Matches(km, k.keys.SortTotal):
		sortKey(SortTotal)
	case key.Matches(km, k.keys.SortCount):
		sortKey(SortCount)
	case key.Matches(km, k.keys.SortMean):
		sortKey(SortMean)
	case key.Matches(km, k.keys.SortName):
		sortKey(SortName)
	case key.Matches(km, k.keys.Transfers):
		k.xfers = !k.xfers
		k.refresh()
	case key.Matches(km, k.keys.Filter):
		k.editing = true
		k.layout()
		return k.input.Focus()
	case key.Matches(km, k.keys.ClearFilter):
		if k.input.Value() != "" {
			k.SetFilter("")
		}
	}
	return nil
}

func (k *Kernels) ShortHelp() []key.Binding {
	if k.editing {
		return []key.Binding{k.keys.Accept, k.keys.ClearFilter}
	}
	sortKeys := append(append(append(k.keys.SortTotal.Keys(), k.keys.SortCount.Keys()...), k.keys.SortMean.Keys()...), k.keys.SortName.Keys()...)
	sortHelp := key.NewBinding(key.WithKeys(sortKeys...), key.WithHelp(strings.Join(sortKeys, "/"), "sort"))
	return []key.Binding{k.keys.move(), sortHelp, k.keys.Filter}
}

func (k *Kernels) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.keys.bindings(),
		{k.keys.SortTotal, k.keys.SortCount, k.keys.SortMean, k.keys.SortName},
		{k.keys.Filter, k.keys.Accept, k.keys.ClearFilter, k.keys.Transfers},
	}
}

// column widths in cells.
const (
	kwCat   = 11
	kwCount = 8
	kwTime  = 9
	kwShare = 6
)

func (k *Kernels) wide() bool { return k.w >= 110 }

func (k *Kernels) nameWidth() int {
	fixed := 1 + (1 + kwCat) + (1 + kwCount) + 2*(1+kwTime) + (1 + kwShare)
	if k.wide() {
		fixed += 2 * (1 + kwTime)
	}
	return max(k.w-fixed, 8)
}

func (k *Kernels) View() string {
	st := k.st
	var lines []string
	if k.filterShown() {
		if k.editing {
			lines = append(lines, k.input.View())
		} else {
			lines = append(lines, st.Table.Dim.Render("filter /"+k.input.Value()+"  (/ to edit, esc to clear)"))
		}
	}
	if k.snap == nil {
		lines = append(lines, st.Table.Dim.Render("waiting for data…"))
		return block(lines, k.w, k.h)
	}
	nw := k.nameWidth()
	head := func(label string, col SortKey, w int, right bool) string {
		s := fit(label, w)
		if right {
			s = fitRight(label, w)
		}
		if k.sortBy == col {
			return st.Table.Sorted.Render(s)
		}
		return st.Table.Header.Render(s)
	}
	hdr := " " + head("kernel", SortName, nw, false) + " " + st.Table.Header.Render(fit("category", kwCat)) +
		" " + head("count", SortCount, kwCount, true) + " " + head("total", SortTotal, kwTime, true) +
		" " + head("mean", SortMean, kwTime, true)
	if k.wide() {
		hdr += " " + st.Table.Header.Render(fitRight("p50", kwTime)) + " " + st.Table.Header.Render(fitRight("p99", kwTime))
	}
	shareHead := "share"
	if k.xfers {
		shareHead = "of GPU"
	}
	hdr += " " + st.Table.Header.Render(fitRight(shareHead, kwShare))
	lines = append(lines, hdr)

	from, to := k.list.visible()
	for i := from; i < to; i++ {
		r := k.all[k.rows[i]]
		name := k.disp[k.rows[i]]
		shown := fit(name, nw)
		if name != r.DisplayName && name != r.Name { // elided by shownNames
			shown = fitName(name, nw)
		}
		row := shown + " " + st.Table.Dim.Render(fit(r.Category, kwCat)) +
			" " + fitRight(FormatCount(r.Count), kwCount) + " " + fitRight(FormatNs(r.TotalNs), kwTime) +
			" " + fitRight(FormatNs(r.MeanNs), kwTime)
		if k.wide() {
			row += " " + fitRight(k.pct(r.P50Ns), kwTime) + " " + fitRight(k.pct(r.P99Ns), kwTime)
		}
		share := r.Share
		if k.xfers && k.snap.Totals.GPUTotalNs > 0 {
			// Kernel shares are of kernel time and transfer shares of
			// transfer time; mixed in one table both become shares of
			// all GPU time.
			share = float64(r.TotalNs) / float64(k.snap.Totals.GPUTotalNs)
		}
		row += " " + fitRight(FormatShare(share), kwShare)
		if i == k.list.cursor {
			row = "›" + row
			if k.focused {
				row = st.Table.Selected.Render(ansi.Strip(row))
			}
		} else {
			row = " " + row
		}
		lines = append(lines, row)
	}
	if len(k.rows) == 0 {
		if len(k.all) == 0 || (k.nKern == 0 && !k.xfers) {
			lines = append(lines, st.Table.Dim.Render(" no kernels in this source"))
		} else {
			lines = append(lines, st.Table.Dim.Render(fmt.Sprintf(" no kernel name contains %q", k.input.Value())))
		}
	}
	// Pad the table so the detail pane sits at the bottom.
	for len(lines) < k.h-k.detailLines() {
		lines = append(lines, "")
	}
	lines = append(lines, k.detail(k.detailLines())...)
	return block(lines, k.w, k.h)
}

// detail renders n lines about the selected kernel: its full original
// name (wrapped onto up to two lines when there is room), launch context
// (operators › ranges), stage and min/p50/p99/max.
func (k *Kernels) detail(n int) []string {
	if n == 0 {
		return nil
	}
	st := k.st
	r := k.Selected()
	sep := st.Table.Dim.Render(strings.Repeat("─", k.w))
	if r == nil {
		return []string{sep}
	}
	label := func(s string) string { return st.Detail.Label.Render(s) }
	nameLines := 1
	if n >= 5 {
		nameLines = 2
	}
	lw := 7 // "launch " width
	var nl []string
	wrapped := strings.Split(ansi.Hardwrap(r.Name, max(k.w-lw, 8), true), "\n")
	for i := 0; i < nameLines && i < len(wrapped); i++ {
		s := wrapped[i]
		if i == nameLines-1 && len(wrapped) > nameLines {
			s = ansi.Truncate(s+" ", max(k.w-lw, 8)-1, "") + "…"
		}
		prefix := label(fit("name", lw))
		if i > 0 {
			prefix = strings.Repeat(" ", lw)
		}
		nl = append(nl, prefix+st.Detail.Name.Render(s))
	}
	ctx := append(append([]string{}, r.Ops...), r.Ranges...)
	launch := strings.Join(ctx, " › ")
	if launch == "" {
		launch = "(no operator or range recorded)"
	}
	launchLine := label(fit("launch", lw)) + st.Detail.Value.Render(fitLeftCut(launch, k.w-lw))
	stage := r.Stage
	if stage == "" {
		stage = "(none)"
	}
	nums := label("   min ") + FormatNs(r.MinNs) + label("  p50 ") + k.pct(r.P50Ns) +
		label("  p99 ") + k.pct(r.P99Ns) + label("  max ") + FormatNs(r.MaxNs)
	// A long stage name is cut so the numbers stay visible.
	if room := k.w - lw - ansi.StringWidth(nums); ansi.StringWidth(stage) > room {
		stage = ansi.Truncate(stage, max(room, 8), "…")
	}
	stats := label(fit("stage", lw)) + st.Detail.Value.Render(stage) + nums
	out := []string{sep}
	switch n {
	case 2:
		out = append(out, nl[0])
	default:
		out = append(out, nl...)
		out = append(out, launchLine, stats)
	}
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// shownNames returns the name to show for each kernel row: its
// DisplayName, unless several rows share that display name (templates
// shortened away, e.g. eight different vectorized_elementwise_kernel
// instances). Those rows show their original name compacted (return type,
// parameter list and namespace noise removed) with the template text the
// whole group shares elided, so that what tells them apart comes first:
// "elementwise_kernel<…BinaryFunctor<BFloat16, …, MulFunctor<float>>…".
func shownNames(rows []*attrib.KernelRow, out []string) []string {
	groups := make(map[string][]int, len(rows))
	for i, r := range rows {
		groups[r.DisplayName] = append(groups[r.DisplayName], i)
	}
	start := len(out)
	for _, r := range rows {
		if r.DisplayName == "" {
			out = append(out, r.Name)
		} else {
			out = append(out, r.DisplayName)
		}
	}
	for disp, g := range groups {
		if disp == "" || len(g) < 2 {
			continue
		}
		names := make([]string, len(g))
		for j, i := range g {
			names[j] = compactName(rows[i].Name)
		}
		// Each row elides what it shares with its most similar sibling,
		// which in sorted order is a neighbour.
		order := make([]int, len(g))
		for j := range order {
			order[j] = j
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(names[a], names[b]) })
		lcp := func(a, b string) int {
			k := 0
			for k < len(a) && k < len(b) && a[k] == b[k] {
				k++
			}
			return k
		}
		for o, j := range order {
			n := names[j]
			shared := 0
			if o > 0 {
				shared = lcp(n, names[order[o-1]])
			}
			if o+1 < len(order) {
				shared = max(shared, lcp(n, names[order[o+1]]))
			}
			// Elide only whole template arguments: back off to just after
			// the last '<' or ", " of the shared prefix.
			p := n[:shared]
			cut := max(strings.LastIndex(p, "<")+1, strings.LastIndex(p, ", ")+2)
			base := n
			if b := strings.IndexByte(base, '<'); b >= 0 {
				base = base[:b+1]
			}
			if cut > len(base) {
				out[start+g[j]] = base + "…" + n[cut:]
			} else {
				out[start+g[j]] = n
			}
		}
	}
	return out
}

// nsNoise are namespace qualifiers that make C++ kernel names long
// without telling kernels apart.
var nsNoise = strings.NewReplacer(
	"(anonymous namespace)::", "", "at::native::", "", "at::detail::", "",
	"at::cuda::", "", "at::", "", "c10::", "", "std::", "", "> >", ">>")

// compactName shortens a demangled C++ kernel name: drops a leading
// "void ", the trailing parameter list and namespace noise, keeping the
// template arguments that tell instances apart.
func compactName(name string) string {
	s := strings.TrimPrefix(name, "void ")
	if strings.HasSuffix(s, ")") {
		depth := 0
		for i := len(s) - 1; i >= 0; i-- {
			switch s[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				if i > 0 {
					s = s[:i]
				}
				break
			}
		}
	}
	return nsNoise.Replace(s)
}

// fitName is fit for the name column. A name elided by shownNames
// ("base<…rest") that does not fit gives the base at most two fifths of
// the width, so the part that tells rows apart stays visible.
func fitName(name string, w int) string {
	i := strings.Index(name, "<…")
	if i < 0 || width(name) <= w {
		return fit(name, w)
	}
	head, tail := name[:i], name[i:]
	hw := min(width(head), max(w*2/5, 4))
	if width(head) > hw {
		head = ansi.Truncate(head, hw, "…")
	}
	return fit(head+tail, w)
}

// pct formats a percentile; summary-only sources (sums, no events) have
// none, shown as "–" rather than a misleading "0 ns".
func (k *Kernels) pct(ns int64) string {
	if ns == 0 && k.snap != nil && k.snap.SummaryOnly {
		return "–"
	}
	return FormatNs(ns)
}
