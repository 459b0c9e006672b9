package attrib

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
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
	out := make([]string, len(names))
	groups := map[string][]string{} // display → distinct original names
	for i, n := range names {
		d := displays[i]
		if d == "" {
			d = n
		}
		out[i] = d
		if g := groups[d]; !slices.Contains(g, n) {
			groups[d] = append(g, n)
		}
	}
	shown := map[string]string{} // original name → shown, for collided groups
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for n, s := range elideShared(g) {
			shown[n] = s
		}
	}
	for i, n := range names {
		if s, ok := shown[n]; ok {
			out[i] = s
		}
	}
	// Still equal for different originals: number them in row order.
	first := map[string]string{} // shown → first original name
	seen := map[string]map[string]int{}
	for i, n := range names {
		s := out[i]
		f, ok := first[s]
		if !ok {
			first[s] = n
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
		out[i] = fmt.Sprintf("%s #%d", s, k)
	}
	return out
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
		cut := max(strings.LastIndex(p, "<")+1, strings.LastIndex(p, ", ")+2)
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
func FitNames(names []string, w int) []string {
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
	// What still looks alike (differences too far apart for one window)
	// is numbered: " #1", " #2", … by first row, at the end of the cut.
	var left []int
	for _, g := range clashes(all) {
		left = append(left, g...)
	}
	slices.Sort(left)
	num := map[string]map[string]int{} // cut → name → number
	for _, i := range left {
		base := cutRunes([]rune(out[i]), w-4)
		if num[base] == nil {
			num[base] = map[string]int{}
		}
		k, ok := num[base][names[i]]
		if !ok {
			k = len(num[base]) + 1
			num[base][names[i]] = k
		}
		tag := fmt.Sprintf(" #%d", k)
		out[i] = cutRunes([]rune(out[i]), w-len(tag)) + tag
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
