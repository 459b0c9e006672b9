package attrib

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// DistinctNames returns the name to show for each row (names[i] is the
// row's original kernel name, displays[i] its DisplayName; both slices
// have the same length): the display name, unless rows with other
// original names share it (templates shortened away, e.g. twelve
// different vectorized_elementwise_kernel instances in one ResNet trace).
// Those rows show their original name compacted (CompactName) with the
// template text they share with their most similar sibling elided at
// the start (and what they share with both sorted neighbours at the end), so that what tells them apart comes first and is not cut
// by a narrow column:
//
//	vectorized_elementwise_kernel<…CUDAFunctor_add<float>, Array<char*, 3>>
//	vectorized_elementwise_kernel<…BinaryFunctor<float, float, float, …>…
//
// Elision stops at whole template arguments (after '<' or ", ", before
// ',' or '>' of the same nesting depth). Rows whose shown names are still
// equal (names that differ only in the parameter list, which compacting
// drops) get " #2", " #3", … in row order after the first. Rows with the
// same original name (one per category) get the same shown name. The
// empty display name shows the original name. Control characters are
// left as they are: callers escape for their terminal or format.
//
// The TUI's kernels table (views) and `rlktop report`/`diff` tables use
// this one rule (STYLE.md habit 8: one name disambiguator).
func DistinctNames(names, displays []string) []string {
	out, _ := DistinctNamesNumbered(names, displays)
	return out
}

// DistinctNamesNumbered is DistinctNames that also returns, per row whose
// shown name it numbered, the tag it added (" #2"); nil when none.
func DistinctNamesNumbered(names, displays []string) ([]string, map[int]string) {
	// One map insert per row is the whole cost when no display name is
	// shared (most rows of every trace); the rest runs for shared ones.
	out := make([]string, len(names))
	first := make(map[string]int, len(names)) // display → first row showing it
	var shared map[string]map[string]struct{} // display → its distinct original names, where more than one
	for i, n := range names {
		d := displays[i]
		if d == "" {
			d = n
		}
		out[i] = d
		f, ok := first[d]
		if !ok {
			first[d] = i
			continue
		}
		if names[f] == n {
			continue
		}
		if shared == nil {
			shared = map[string]map[string]struct{}{}
		}
		g := shared[d]
		if g == nil {
			g = map[string]struct{}{names[f]: {}}
			shared[d] = g
		}
		g[n] = struct{}{}
	}
	if len(shared) == 0 {
		return out, nil
	}
	shown := map[string]string{} // original name → shown, for collided groups
	for _, g := range shared {
		for n, s := range elideShared(slices.Collect(maps.Keys(g))) {
			shown[n] = s
		}
	}
	for i, n := range names {
		if s, ok := shown[n]; ok {
			out[i] = s
		}
	}
	// Shown names can still be equal for different originals only where
	// an elided name is: equal to another elided one, or to a display
	// name some row shows as it is.
	clash := false
	byShown := make(map[string]string, len(shown))
	for n, s := range shown {
		if o, ok := byShown[s]; ok && o != n {
			clash = true
			break
		}
		byShown[s] = n
		if f, ok := first[s]; ok && names[f] != n {
			clash = true
			break
		}
	}
	if !clash {
		return out, nil
	}
	// Still equal for different originals: number them in row order.
	firstOf := map[string]string{} // shown → first original name
	seen := map[string]map[string]int{}
	var tags map[int]string
	for i, n := range names {
		s := out[i]
		f, ok := firstOf[s]
		if !ok {
			firstOf[s] = n
			continue
		}
		if f == n {
			continue
		}
		if seen[s] == nil {
			seen[s] = map[string]int{f: 1}
		}
		k, ok := seen[s][n]
		if !ok {
			k = len(seen[s]) + 1
			seen[s][n] = k
		}
		tag := fmt.Sprintf(" #%d", k)
		out[i] = s + tag
		if tags == nil {
			tags = map[int]string{}
		}
		tags[i] = tag
	}
	return out, tags
}

// elideShared maps each original name of one display-name group to its
// compacted name with the template text shared with its neighbours (in
// sorted order, where the most similar name is) elided at both ends.
func elideShared(group []string) map[string]string {
	type item struct{ orig, c string }
	items := make([]item, len(group))
	for i, n := range group {
		items[i] = item{n, CompactName(n)}
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Or(cmp.Compare(a.c, b.c), cmp.Compare(a.orig, b.orig)) })
	lcp := func(a, b string) int {
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		return k
	}
	lcs := func(a, b string) int {
		k := 0
		for k < len(a) && k < len(b) && a[len(a)-1-k] == b[len(b)-1-k] {
			k++
		}
		return k
	}
	out := make(map[string]string, len(items))
	for o, it := range items {
		n := it.c
		// The prefix shared with the most similar neighbour is elided, so
		// what tells the row from it comes first; only the suffix shared
		// with both neighbours is, so what tells it from either stays.
		pre, suf := 0, -1
		for _, nb := range []int{o - 1, o + 1} {
			if nb < 0 || nb >= len(items) || items[nb].c == n {
				continue
			}
			pre = max(pre, lcp(n, items[nb].c))
			if l := lcs(n, items[nb].c); suf < 0 || l < suf {
				suf = l
			}
		}
		suf = max(suf, 0)
		base := n
		if b := strings.IndexByte(base, '<'); b >= 0 {
			base = base[:b+1]
		}
		// Start: just after the last '<' or ", " of the shared prefix.
		p := n[:pre]
		cut := strings.LastIndex(p, "<") + 1 // 0 when there is none
		if c := strings.LastIndex(p, ", "); c >= 0 {
			cut = max(cut, c+2)
		}
		head := ""
		if cut > len(base) {
			head = base + "…"
		} else {
			cut = 0
		}
		// End: the first ',' or '>' at the start's nesting depth at or
		// after where the shared suffix begins.
		end := len(n)
		if suf > 0 {
			depth := 0
			for i := cut; i < len(n); i++ {
				c := n[i]
				if (c == ',' || c == '>') && depth <= 0 && i >= len(n)-suf {
					end = i
					break
				}
				switch c {
				case '<':
					depth++
				case '>':
					depth--
				}
			}
		}
		tail := ""
		if rest := n[end:]; strings.Trim(rest, ">") == "" {
			end = len(n)
		} else {
			tail = "…"
		}
		out[it.orig] = head + n[cut:end] + tail
	}
	return out
}

// nsNoise are namespace qualifiers that make C++ kernel names long
// without telling kernels apart.
var nsNoise = strings.NewReplacer(
	"(anonymous namespace)::", "", "at::native::", "", "at::detail::", "",
	"at::cuda::", "", "binary_internal::", "", "at::", "", "c10::", "", "std::", "", "> >", ">>")

// CompactName shortens a demangled C++ kernel name: drops a leading
// "void ", the trailing parameter list and namespace noise (at::native::,
// std::, …), keeping the template arguments that tell instances apart.
func CompactName(name string) string {
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

// FitNames cuts each name to at most w runes (w >= 8) for a column of
// that width, "…" marking a cut, so that names which differ still differ
// once cut: names whose plain cuts clash keep as much of their start as
// leaves room (4 runes to a third of w), then "…", then their text from
// the identifier boundary ('_', ':', '<', ' ',
// ',' at most 6 runes back) before the end of the prefix the clashing
// names share ("split_embedding_b…warp_per_row_1"); names that still
// clash start further on, just far enough for their first difference to
// show; names alike even then end in " #1", " #2", … (numbered by first
// row). Equal names stay equal.
//
// FitNames(names, w)[i] is NewNameFitter(names, w).Fit(i): rows are told
// apart within the set of rows whose plain cuts are equal.
func FitNames(names []string, w int) []string {
	f := NewNameFitter(names, w)
	out := make([]string, len(names))
	for i := range names {
		out[i] = f.Fit(i)
	}
	return out
}

// NameFitter fits names to a column as FitNames does, a row at a time,
// for a table that draws a few of many rows. NewNameFitter groups the
// rows by their plain cut (one pass, one map insert per row, no copies
// of names) and fits, at once, only the rows whose plain cut another
// name shares, and the rows those then look like; Fit cuts any other
// row when asked.
type NameFitter struct {
	names  []string
	w      int
	fitted map[int]string // rows whose fitted name is not their plain cut
	tagged map[int]string // rows whose fitted name ends in a number tag: the tag (" #2")
}

// fitKey is a name's plain cut at some width: the first w-1 runes of
// what is cut (cut true), or the whole name.
type fitKey struct {
	s   string
	cut bool
}

// NewNameFitter prepares FitNames(names, w) row by row; names must not
// change while it is used.
func NewNameFitter(names []string, w int) *NameFitter {
	w = max(w, 8)
	f := &NameFitter{names: names, w: w}
	type chain struct {
		first, last int // rows with this plain cut, linked by next
		distinct    bool
	}
	heads := make(map[fitKey]*chain, len(names))
	next := make([]int32, len(names))
	var clashing []*chain // plain cuts more than one name has
	for i, n := range names {
		next[i] = -1
		k, _ := plainCut(n, w)
		c := heads[k]
		if c == nil {
			heads[k] = &chain{first: i, last: i}
			continue
		}
		next[c.last], c.last = int32(i), i
		if !c.distinct && names[c.first] != n {
			c.distinct = true
			clashing = append(clashing, c)
		}
	}
	if len(clashing) == 0 {
		return f
	}
	rowsOf := func(c *chain) []int {
		var rows []int
		for r := c.first; r >= 0; r = int(next[r]) {
			rows = append(rows, r)
		}
		return rows
	}
	// Each clashing set of rows is told apart on its own; what then
	// looks alike across sets, or like a row no other name clashed with,
	// is numbered together.
	f.fitted = map[int]string{}
	var cands []int
	for _, c := range clashing {
		rows := rowsOf(c)
		gn := make([]string, len(rows))
		for j, r := range rows {
			gn[j] = names[r]
		}
		for j, s := range fixClashing(gn, w) {
			f.fitted[rows[j]] = s
		}
		cands = append(cands, rows...)
	}
	for _, r := range cands[:len(cands):len(cands)] {
		k, _ := plainCut(f.fitted[r], w)
		if c := heads[k]; c != nil && !c.distinct {
			if _, done := f.fitted[c.first]; !done {
				for _, o := range rowsOf(c) {
					f.fitted[o] = cutString(names[o], w)
					cands = append(cands, o)
				}
			}
		}
	}
	by := map[string][]int{}
	for _, r := range cands {
		by[f.fitted[r]] = append(by[f.fitted[r]], r)
	}
	var left []int
	for _, g := range by {
		if slices.ContainsFunc(g, func(j int) bool { return names[j] != names[g[0]] }) {
			left = append(left, g...)
		}
	}
	// What still looks alike (differences too far apart for one window)
	// is numbered: " #1", " #2", … by first row, at the end of the cut.
	slices.Sort(left)
	num := map[string]map[string]int{} // cut → name → number
	for _, i := range left {
		out := []rune(f.fitted[i])
		base := cutRunes(out, w-4)
		if num[base] == nil {
			num[base] = map[string]int{}
		}
		k, ok := num[base][names[i]]
		if !ok {
			k = len(num[base]) + 1
			num[base][names[i]] = k
		}
		tag := fmt.Sprintf(" #%d", k)
		f.fitted[i] = cutRunes(out, w-len(tag)) + tag
		if f.tagged == nil {
			f.tagged = map[int]string{}
		}
		f.tagged[i] = tag
	}
	return f
}

// Tag returns the number tag (" #2") Fit(i) ends in, "" when it has
// none: a table that shows tags says what they mean for the row selected.
func (f *NameFitter) Tag(i int) string { return f.tagged[i] }

// Numbered reports whether any row's fitted name carries a number tag.
func (f *NameFitter) Numbered() bool { return len(f.tagged) > 0 }

// Fit returns row i's name fitted to the width (FitNames).
func (f *NameFitter) Fit(i int) string {
	if s, ok := f.fitted[i]; ok {
		return s
	}
	return cutString(f.names[i], f.w)
}

// plainCut is the key of n's plain cut at width w (names with equal keys
// have equal plain cuts) and whether n is longer than w runes.
func plainCut(n string, w int) (fitKey, bool) {
	if len(n) <= w-1 {
		return fitKey{n, false}, false // fewer than w runes: never cut, never w runes ending in "…"
	}
	runes, off := 0, 0 // off: byte offset of rune w-1
	for j := range n {
		if runes == w-1 {
			off = j
		}
		runes++
		if runes > w {
			return fitKey{n[:off], true}, true
		}
	}
	if runes == w && strings.HasSuffix(n, "…") {
		return fitKey{n[:len(n)-len("…")], true}, false // as long as a cut and ending as one
	}
	return fitKey{n, false}, false
}

// cutString is cutRunes for a string.
func cutString(n string, w int) string {
	if !utf8.ValidString(n) {
		return cutRunes([]rune(n), w) // each bad byte becomes U+FFFD, as []rune makes it
	}
	if k, long := plainCut(n, w); long {
		return k.s + "…"
	}
	return n
}

// fixClashing is FitNames' telling apart of names whose plain cuts
// clash, before numbering: names holds the rows of one plain cut.
func fixClashing(names []string, w int) []string {
	w = max(w, 8)
	keep := max(w/3, 4)
	rs := make([][]rune, len(names))
	out := make([]string, len(names))
	for i, n := range names {
		rs[i] = []rune(n)
		out[i] = cutRunes(rs[i], w)
	}
	// clashes groups rows by their current cut; groups holding distinct
	// names are returned.
	clashes := func(rows []int) [][]int {
		by := map[string][]int{}
		var keys []string
		for _, i := range rows {
			if _, ok := by[out[i]]; !ok {
				keys = append(keys, out[i])
			}
			by[out[i]] = append(by[out[i]], i)
		}
		var gs [][]int
		for _, k := range keys {
			g := by[k]
			if slices.ContainsFunc(g, func(j int) bool { return names[j] != names[g[0]] }) {
				gs = append(gs, g)
			}
		}
		return gs
	}
	all := make([]int, len(names))
	for i := range all {
		all[i] = i
	}
	avail := w - keep - 1 // runes after the shortest head and its "…"
	// compose is r's head, "…", then r from b: as much of the head as the
	// rest leaves room for (at least keep runes), the rest cut at w.
	compose := func(r []rune, b int) string {
		if b < len(r) && r[b] == '…' {
			b++ // an elision already there
		}
		h := min(max(w-1-(len(r)-b), keep), b)
		return cutRunes(append(append(slices.Clone(r[:h]), '…'), r[b:]...), w)
	}
	var fix func(g []int, parent, after int)
	fix = func(g []int, parent, after int) {
		c := len(rs[g[0]]) // common prefix of the group
		for _, i := range g[1:] {
			p := 0
			for p < c && p < len(rs[i]) && rs[i][p] == rs[g[0]][p] {
				p++
			}
			c = p
		}
		if c <= after || c <= keep {
			return // no further to go: the cut is not what makes them alike
		}
		var b int
		if parent < 0 {
			// First cut: from the identifier boundary before c.
			b = c
			for k := 0; k < 6 && b > keep+1 && !strings.ContainsRune("_:<, …", rs[g[0]][b-1]); k++ {
				b--
			}
			if !strings.ContainsRune("_:<, …", rs[g[0]][b-1]) {
				b = c
			}
		} else {
			// Names still alike: move the start on only as far as needed
			// to bring their first difference into view, so the text
			// that told them from the other names stays.
			b = max(parent, c-avail+2)
		}
		for _, i := range g {
			out[i] = compose(rs[i], b)
		}
		for _, sub := range clashes(g) {
			fix(sub, b, c)
		}
	}
	for _, g := range clashes(all) {
		fix(g, -1, 0)
	}
	return out
}

// cutRunes is r cut to w runes, the last one "…" when cut.
func cutRunes(r []rune, w int) string {
	if len(r) <= w {
		return string(r)
	}
	return string(r[:w-1]) + "…"
}
