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
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// KernelsKeyMap is the kernels table's bindings. Each Sort key orders
// the rows by one attrib.KernelSort column (as `report --sort` does):
// descending, except Name ascending; the same key again reverses it.
type KernelsKeyMap struct {
	ListKeyMap
	SortTotal, SortCount, SortMean, SortName key.Binding
	SortP50, SortP99, SortShare              key.Binding
	Transfers                                key.Binding // show memcpy/memset rows in the table
	Filter                                   key.Binding // open the filter input
	ClearFilter                              key.Binding // esc: clear the filter (and close the input); back from a drill-down
	Accept                                   key.Binding // enter: close the input, keep the filter
	Drill                                    key.Binding // enter: the selected kernel's launch contexts
	FullName                                 key.Binding // the selected kernel's full name
	Copy                                     key.Binding // copy the selected kernel's name (OSC 52)
}

// DefaultKernelsKeyMap: t/c/m/M/P/s/n sort by total, count, mean, p50,
// p99, share, name (again to reverse); / filters (a regular expression,
// cat:NAME, stage:NAME); enter lists the selected kernel's launch
// contexts; v shows its full name; y copies it.
func DefaultKernelsKeyMap() KernelsKeyMap {
	return KernelsKeyMap{
		ListKeyMap:  DefaultListKeyMap(),
		SortTotal:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "sort total")),
		SortCount:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "sort count")),
		SortMean:    key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "sort mean")),
		SortName:    key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "sort name")),
		SortP50:     key.NewBinding(key.WithKeys("M"), key.WithHelp("M", "sort p50")),
		SortP99:     key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "sort p99")),
		SortShare:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort share")),
		Drill:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "launch contexts")),
		FullName:    key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "full name")),
		Copy:        key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy name")),
		Transfers:   key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "memcpy/set rows")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter/back")),
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
	names   kernelNames         // the name shown per row, and fitted to the column
	disp    []string            // names.Shown per all row, while sorted by name
	rows    []int               // indices into all: filtered and sorted
	sortBy  attrib.KernelSort
	desc    bool
	input   textinput.Model
	editing bool
	filter  string // applied filter (lower case)
	kf      attrib.KernelFilter
	plain   bool // filter is plain text: the lower-case substring test decides
	tl      *attrib.Timeline
	drill   bool   // showing the selected kernel's launch contexts
	dscroll int    // first line of the drill-down's body shown
	drilled string // the filter set by a drill-down from another view ("" none)
	full    bool   // the detail pane shows the whole name
	list    list
	w, h    int
	focused bool
}

// NewKernels returns an empty kernels table sorted by total, descending.
func NewKernels(st *Styles) *Kernels {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "name (regular expression), cat:NAME or stage:NAME"
	in.SetStyles(st.Filter)
	in.CharLimit = 256
	return &Kernels{st: st, keys: DefaultKernelsKeyMap(), sortBy: attrib.ByTotal, desc: true, input: in}
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
	info := fmt.Sprintf("sort %s %s · %s of %s%s", k.sortBy, arrow, FormatCount(int64(len(k.rows))), FormatCount(int64(n)), what)
	if k.w > 0 && k.names.Numbered(k.nameWidth()) {
		// Names that read alike once shortened are numbered in the table;
		// the detail pane shows the selected one's full name.
		info += " · #N: alike names, full one below"
	}
	return info
}

// Sort returns the sort column and whether it is descending.
func (k *Kernels) Sort() (attrib.KernelSort, bool) { return k.sortBy, k.desc }

// SetSort sorts by col in the given direction.
func (k *Kernels) SetSort(col attrib.KernelSort, desc bool) {
	k.sortBy, k.desc = col, desc
	k.refresh()
}

// Filter returns the filter text as typed ("" none).
func (k *Kernels) Filter() string { return k.input.Value() }

// SetFilter filters rows to kernels whose name or display name contains
// s, case-insensitively.
func (k *Kernels) SetFilter(s string) {
	k.input.SetValue(s)
	k.setFilter(s)
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
	var keep, keepCat string
	if sel := k.Selected(); sel != nil {
		keep, keepCat = sel.Name, sel.Category
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
	}
	if s != nil {
		k.names.SetRows(s.Kernels, s.Transfers)
	} else {
		k.names.SetRows()
	}
	k.refresh()
	if keep != "" {
		for i, r := range k.rows {
			if k.all[r].Name == keep && k.all[r].Category == keepCat {
				k.list.cursor = i
				k.list.clamp()
				break
			}
		}
	}
}

// Snapshot is the snapshot last set (nil before any).
func (k *Kernels) Snapshot() *attrib.Snapshot { return k.snap }

// ShownName is the name the table shows for Snapshot.Kernels[i] of the
// snapshot last set (attrib.DistinctNames over its kernel and transfer
// rows), for callers that label the same kernels (findings).
func (k *Kernels) ShownName(i int) string { return k.names.Shown(i) }

// ShownNames is ShownName for the rows shown now, safe to call from
// another goroutine while the table takes later snapshots.
func (k *Kernels) ShownNames() func(int) string { return k.names.shownNow() }

// refresh recomputes the filtered, sorted row list.
func (k *Kernels) refresh() {
	k.rows = k.rows[:0]
	if k.snap == nil {
		k.list.setLen(0)
		return
	}
	if k.filter != "" && k.plain {
		k.lowerNames()
	}
	for i := range k.all {
		if i >= k.nKern && !k.xfers {
			break
		}
		if k.filter == "" || (k.plain && strings.Contains(k.lower[i], k.filter)) || (!k.plain && k.kf.Match(k.all[i])) {
			k.rows = append(k.rows, i)
		}
	}
	k.disp = k.disp[:0]
	if k.sortBy == attrib.ByName {
		for i := range k.all {
			k.disp = append(k.disp, k.names.Shown(i))
		}
	}
	order := func(a, b int) int {
		ra, rb := k.all[a], k.all[b]
		var c int
		switch k.sortBy {
		case attrib.ByName:
			c = cmp.Compare(k.disp[a], k.disp[b])
		case attrib.ByShare:
			c = cmp.Compare(k.share(ra), k.share(rb))
		default:
			c = attrib.CompareKernels(ra, rb, k.sortBy)
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(ra.Name, rb.Name), strings.Compare(ra.Category, rb.Category))
	}
	// A snapshot's rows come largest total first (attrib.Snapshot): the
	// default order is checked in one pass rather than sorted again.
	if !slices.IsSortedFunc(k.rows, order) {
		slices.SortStableFunc(k.rows, order)
	}
	k.list.setLen(len(k.rows))
	k.layout()
}

// lowerNames fills lower for the snapshot's rows, for the plain-text
// filter, from a cache kept across snapshots.
func (k *Kernels) lowerNames() {
	if len(k.lower) == len(k.all) {
		return
	}
	if k.lowerOf == nil || len(k.lowerOf) > 4*len(k.all)+1024 {
		k.lowerOf = make(map[string]string, len(k.all))
	}
	k.lower = k.lower[:0]
	for _, r := range k.all {
		l, ok := k.lowerOf[r.Name]
		if !ok {
			l = strings.ToLower(r.Name + "\x00" + r.DisplayName)
			k.lowerOf[r.Name] = l
		}
		k.lower = append(k.lower, l)
	}
}

// setFilter parses the filter text (attrib.ParseKernelFilter); plain
// text keeps the fast lower-case substring test.
func (k *Kernels) setFilter(s string) {
	k.filter = strings.ToLower(s)
	k.kf = attrib.ParseKernelFilter(s)
	k.plain = !strings.ContainsAny(s, `\.+*?()|[]{}^$:`)
}

// share is the row's share as the table shows it: of kernel time, or of
// all GPU time when transfers are listed too.
func (k *Kernels) share(r *attrib.KernelRow) float64 {
	if k.xfers && k.snap != nil && k.snap.Totals.GPUTotalNs > 0 {
		return float64(r.TotalNs) / float64(k.snap.Totals.GPUTotalNs)
	}
	return r.Share
}

// SetTimeline gives the drill-down its launches: the ops of tl (a live
// window or a file's first run, bounded) are grouped by launch context,
// stage and step for the selected kernel.
func (k *Kernels) SetTimeline(tl *attrib.Timeline) { k.tl = tl }

// DrillFrom filters to a category ("cat") or stage ("stage") chosen in
// another view; esc then returns a BackMsg.
func (k *Kernels) DrillFrom(what, key string) {
	f := attrib.FilterTerm(what, key)
	k.drill = false
	k.drilled = f
	k.SetFilter(f)
	k.list.cursor, k.list.offset = 0, 0
}

// Drilled reports whether the kernel drill-down (launch contexts) is open.
func (k *Kernels) Drilled() bool { return k.drill }

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
	n := 0
	switch {
	case k.h >= 30:
		n = 5
	case k.h >= 14:
		n = 4
	case k.h >= 9:
		n = 2
	}
	if k.full && n > 0 {
		// v: room for the whole name, up to half the pane.
		if r := k.Selected(); r != nil {
			wrapped := strings.Count(ansi.Hardwrap(r.Name, max(k.w-7, 8), true), "\n") + 1
			n = max(n, min(wrapped+3, k.h/2))
		}
	}
	return n
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
			k.setFilter(k.input.Value())
			k.refresh()
			k.list.cursor, k.list.offset = 0, 0
		}
		return cmd
	}
	if k.drill {
		switch {
		case key.Matches(km, k.keys.ClearFilter, k.keys.Drill):
			k.drill = false
		case key.Matches(km, k.keys.Copy):
			return k.copyName()
		case key.Matches(km, k.keys.Up):
			k.dscroll--
		case key.Matches(km, k.keys.Down):
			k.dscroll++
		case key.Matches(km, k.keys.PageUp):
			k.dscroll -= max(k.h/2, 1)
		case key.Matches(km, k.keys.PageDown):
			k.dscroll += max(k.h/2, 1)
		case key.Matches(km, k.keys.Home):
			k.dscroll = 0
		case key.Matches(km, k.keys.End):
			k.dscroll = 1 << 30
		}
		return nil
	}
	if k.list.handle(km, k.keys.ListKeyMap) {
		return nil
	}
	sortKey := func(col attrib.KernelSort) {
		if k.sortBy == col {
			k.desc = !k.desc
		} else {
			k.sortBy, k.desc = col, col != attrib.ByName
		}
		k.refresh()
		k.list.cursor, k.list.offset = 0, 0 // after sorting, users look at the top
	}
	switch {
	case key.Matches(km, k.keys.SortTotal):
		sortKey(attrib.ByTotal)
	case key.Matches(km, k.keys.SortCount):
		sortKey(attrib.ByCount)
	case key.Matches(km, k.keys.SortMean):
		sortKey(attrib.ByMean)
	case key.Matches(km, k.keys.SortName):
		sortKey(attrib.ByName)
	case key.Matches(km, k.keys.SortP50):
		sortKey(attrib.ByP50)
	case key.Matches(km, k.keys.SortP99):
		sortKey(attrib.ByP99)
	case key.Matches(km, k.keys.SortShare):
		sortKey(attrib.ByShare)
	case key.Matches(km, k.keys.Drill):
		if k.Selected() != nil {
			k.drill = true
			k.dscroll = 0
		}
	case key.Matches(km, k.keys.FullName):
		k.full = !k.full
	case key.Matches(km, k.keys.Copy):
		return k.copyName()
	case key.Matches(km, k.keys.Transfers):
		k.xfers = !k.xfers
		k.refresh()
	case key.Matches(km, k.keys.Filter):
		k.editing = true
		k.layout()
		return k.input.Focus()
	case key.Matches(km, k.keys.ClearFilter):
		back := k.drilled != "" && k.input.Value() == k.drilled
		k.drilled = ""
		if k.input.Value() != "" {
			k.SetFilter("")
		}
		if back {
			return Send(BackMsg{})
		}
	}
	return nil
}

// Click acts on a click at (x, y) of the body: on the heading it sorts by
// the column under the pointer (again: reverse), on a row it selects it,
// on the selected row it opens the drill-down.
func (k *Kernels) Click(x, y int) tea.Cmd {
	if k.drill || k.snap == nil {
		return nil
	}
	if k.filterShown() {
		y--
	}
	if y == 0 { // the heading
		type col struct {
			w int
			s attrib.KernelSort
		}
		cols := []col{{1 + k.nameWidth(), attrib.ByName}, {1 + kwCat, -1}, {1 + kwCount, attrib.ByCount}, {1 + kwTime, attrib.ByTotal}, {1 + kwTime, attrib.ByMean}}
		if k.wide() {
			cols = append(cols, col{1 + kwTime, attrib.ByP50}, col{1 + kwTime, attrib.ByP99})
		}
		cols = append(cols, col{1 + kwShare, attrib.ByShare})
		at := 0
		for _, c := range cols {
			if x >= at && x < at+c.w && c.s >= 0 {
				if k.sortBy == c.s {
					k.desc = !k.desc
				} else {
					k.sortBy, k.desc = c.s, c.s != attrib.ByName
				}
				k.refresh()
				k.list.cursor, k.list.offset = 0, 0
			}
			at += c.w
		}
		return nil
	}
	i := k.list.offset + y - 1
	if y < 1 || i >= len(k.rows) || y > k.list.page {
		return nil
	}
	if i == k.list.cursor {
		k.drill, k.dscroll = true, 0
		return nil
	}
	k.list.cursor = i
	k.list.clamp()
	return nil
}

// copyName copies the selected kernel's original name to the terminal's
// clipboard (OSC 52; terminals that do not support it ignore it) and says
// so in the status bar.
func (k *Kernels) copyName() tea.Cmd {
	r := k.Selected()
	if r == nil {
		return nil
	}
	return tea.Batch(tea.SetClipboard(r.Name),
		Send(NoteMsg{Text: "copied the kernel name to the clipboard (OSC 52)"}))
}

func (k *Kernels) ShortHelp() []key.Binding {
	if k.editing {
		return []key.Binding{k.keys.Accept, k.keys.ClearFilter}
	}
	if k.drill {
		back := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))
		return []key.Binding{k.keys.move(), back, k.keys.Copy}
	}
	var sortKeys []string
	for _, b := range []key.Binding{k.keys.SortTotal, k.keys.SortCount, k.keys.SortMean, k.keys.SortP50, k.keys.SortP99, k.keys.SortShare, k.keys.SortName} {
		sortKeys = append(sortKeys, b.Keys()...)
	}
	sortHelp := key.NewBinding(key.WithKeys(sortKeys...), key.WithHelp(strings.Join(sortKeys[:3], "/")+"…", "sort"))
	drill := key.NewBinding(key.WithKeys(k.keys.Drill.Keys()...), key.WithHelp("enter", "drill"))
	return []key.Binding{k.keys.move(), sortHelp, k.keys.Filter, drill}
}

func (k *Kernels) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.keys.bindings(),
		{k.keys.SortTotal, k.keys.SortCount, k.keys.SortMean, k.keys.SortName},
		{k.keys.SortP50, k.keys.SortP99, k.keys.SortShare, k.keys.Transfers},
		{k.keys.Filter, k.keys.ClearFilter, k.keys.Drill, k.keys.FullName, k.keys.Copy},
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
	if k.showWork() {
		fixed += workCols
	}
	return max(k.w-fixed, 8)
}

// showWork: the source carries modelled work and the table is wide
// enough for its columns (FLOP/s, roofline bound) beside names of about
// 50 cells.
func (k *Kernels) showWork() bool { return k.snap != nil && k.snap.HasWork() && k.w >= 150 }

func (k *Kernels) View() string {
	if k.drill && k.snap != nil {
		return k.drillView()
	}
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
	head := func(label string, col attrib.KernelSort, w int, right bool) string {
		s := fit(label, w)
		if right {
			s = fitRight(label, w)
		}
		if k.sortBy == col {
			return st.Table.Sorted.Render(s)
		}
		return st.Table.Header.Render(s)
	}
	hdr := " " + head("kernel", attrib.ByName, nw, false) + " " + st.Table.Header.Render(fit("category", kwCat)) +
		" " + head("count", attrib.ByCount, kwCount, true) + " " + head("total", attrib.ByTotal, kwTime, true) +
		" " + head("mean", attrib.ByMean, kwTime, true)
	if k.wide() {
		hdr += " " + head("p50", attrib.ByP50, kwTime, true) + " " + head("p99", attrib.ByP99, kwTime, true)
	}
	shareHead := "share"
	if k.xfers {
		shareHead = "of GPU"
	}
	hdr += " " + head(shareHead, attrib.ByShare, kwShare, true)
	if k.showWork() {
		hdr += " " + st.Table.Header.Render(fitRight("FLOP/s", 9)) + " " + st.Table.Header.Render(fitRight("roof", 11))
	}
	lines = append(lines, hdr)

	from, to := k.list.visible()
	for i := from; i < to; i++ {
		r := k.all[k.rows[i]]
		row := fit(k.names.Fitted(k.rows[i], nw), nw) + " " + st.Table.Dim.Render(fit(r.Category, kwCat)) +
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
		if k.showWork() {
			row += workCells(r.Work, k.snap.Peak)
		}
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
	// Hidden memcpy/memset rows are said where there is room (an nsys file whose copies held 76% of the GPU time showed one
	// kernel and no sign of them).
	if hidden := len(k.all) - k.nKern; !k.xfers && hidden > 0 && k.input.Value() == "" && len(lines) < k.h-k.detailLines() {
		var ns int64
		for _, r := range k.all[k.nKern:] {
			ns += r.TotalNs
		}
		lines = append(lines, st.Table.Dim.Render(fmt.Sprintf(" + %d memcpy/memset rows, %s (x shows them)", hidden, FormatNs(ns))))
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
	if k.full {
		nameLines = max(n-3, 1)
	}
	lw := 7 // "launch " width
	var nl []string
	// A row the table numbers (" #2": another kernel's name reads the
	// same once shortened) is labelled with its number here, beside the
	// full name that tells it apart.
	nameLabel, nw := "name", lw
	if tag := k.names.Tag(k.rows[k.list.cursor], k.nameWidth()); tag != "" {
		nameLabel += tag
		nw = max(lw, len(nameLabel)+1)
	}
	// Names are data: escaped (SGR, C1 CSI, bidi) before any cut, as in
	// the tables.
	wrapped := strings.Split(ansi.Hardwrap(escape.Control(r.Name), max(k.w-nw, 8), true), "\n")
	for i := 0; i < nameLines && i < len(wrapped); i++ {
		s := wrapped[i]
		if i == nameLines-1 && len(wrapped) > nameLines {
			s = ansi.Truncate(s+" ", max(k.w-nw, 8)-1, "") + "…"
		}
		prefix := label(fit(nameLabel, nw))
		if i > 0 {
			prefix = strings.Repeat(" ", nw)
		}
		nl = append(nl, prefix+st.Detail.Name.Render(s))
	}
	ops, ranges := escapeAll(r.Ops), escapeAll(r.Ranges)
	launch := strings.Join(append(append([]string{}, ops...), ranges...), " › ")
	if r.StageRule == "step thread" && len(r.Ranges) > 0 {
		// No range was open on the launching thread (autograd's): the
		// stage is the step thread's range open at the launch.
		launch = strings.Join(ops, " › ") + " · stage from the step thread: " + strings.Join(ranges, " › ")
	}
	if launch == "" {
		launch = "(no operator or range recorded)"
	}
	if l := r.Launches; l != nil && len(l.Contexts) > 1 && r.TotalNs > 0 {
		// Launched from several contexts: the one with most of its time
		// (the first occurrence's can be a small one), and how many.
		top := l.Contexts[0]
		launch = escape.Control(top.Key)
		if launch == "" {
			launch = "(no operator or range recorded)"
		}
		launch += fmt.Sprintf(" · %s of its time, %d contexts (enter)", FormatShare(float64(top.TotalNs)/float64(r.TotalNs)), len(l.Contexts))
	}
	launchLine := label(fit("launch", lw)) + st.Detail.Value.Render(fitLeftCut(launch, k.w-lw))
	stage := escape.Control(r.Stage)
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

// escapeAll is escape.Control of each of names.
func escapeAll(names []string) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = escape.Control(s)
	}
	return out
}

// pct formats a percentile; summary-only sources (sums, no events) have
// none, shown as "–" rather than a misleading "0 ns".
func (k *Kernels) pct(ns int64) string {
	if ns == 0 && k.snap != nil && k.snap.SummaryOnly {
		return "–"
	}
	return FormatNs(ns)
}
