package views

import (
	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// kernelNames gives a view that lists kernel rows the name to show for
// each (attrib.DistinctNames, escaped for the terminal) and that name
// fitted to a column (attrib.NameFitter). It is the pattern for every
// view with a row per kernel (or per any name) and many rows: a frame
// costs the rows drawn, never all rows.
//
//   - SetRows, once per snapshot, compares the rows' names with the last
//     snapshot's, position by position (the aggregator keeps one copy of
//     each name, so equal names compare by address) and, where rows
//     moved, through a map; names are told apart again only when the
//     set of names changed.
//   - The column's fitter is made once per set of names and width.
//   - Shown and Fitted, per row drawn, are a map lookup.
//
// Names alike even when told apart are numbered (" #2") in the order of
// the snapshot the set was first seen in, so the numbers stay on their
// rows while a live session's rows change places.
type kernelNames struct {
	names, disps []string         // the set's names, in the order first seen
	shown        []string         // per names: DistinctNames, escaped
	tags         map[int]string   // per names: the number tag DistinctNames added (" #2")
	idx          map[string]int32 // name → index into names (the first row with it)
	rows         kernelRows       // the last SetRows' rows
	at           []int32          // per row of rows: index into names
	moved        []int32          // per names: rows that moved in minus rows that moved out (scratch)
	fitter       *attrib.NameFitter
	fitW         int
}

// kernelRows are rows of a snapshot, one part after the other (the
// kernels, then the transfers).
type kernelRows [][]attrib.KernelRow

func (p kernelRows) len() int {
	n := 0
	for _, r := range p {
		n += len(r)
	}
	return n
}

// SetRows takes a snapshot's rows, parts one after the other, which
// must not change afterwards (snapshots are immutable); Shown and Fitted
// then take an index into them.
func (n *kernelNames) SetRows(parts ...[]attrib.KernelRow) {
	rows := kernelRows(parts)
	at := make([]int32, rows.len())
	if !n.same(rows, at) {
		n.names, n.disps = make([]string, 0, len(at)), make([]string, 0, len(at))
		for _, p := range rows {
			for i := range p {
				n.names, n.disps = append(n.names, p[i].Name), append(n.disps, p[i].DisplayName)
			}
		}
		n.shown, n.tags = attrib.DistinctNamesNumbered(n.names, n.disps)
		n.idx = make(map[string]int32, len(at))
		for i, s := range n.shown {
			// Names are data: controls from a trace must not act on the terminal.
			n.shown[i] = escape.Control(s)
			j, ok := n.idx[n.names[i]]
			if !ok {
				j = int32(i)
				n.idx[n.names[i]] = j
			}
			at[i] = j
		}
		n.moved = make([]int32, len(at))
		n.fitter = nil
	}
	n.rows, n.at = rows, at
}

// same reports whether rows hold the same names (and display names) as
// the last SetRows, as a multiset, and fills at.
func (n *kernelNames) same(rows kernelRows, at []int32) bool {
	if n.idx == nil || len(at) != len(n.at) {
		return false
	}
	var touched []int32
	ok := true
	i := -1
	for pi, part := range rows {
		var prev []attrib.KernelRow
		if pi < len(n.rows) {
			prev = n.rows[pi]
		}
		for k := range part {
			i++
			r := &part[k]
			// The aggregator keeps one copy of each name: equal names
			// compare by address. Most rows stay where they were or
			// move by one place.
			j := -1
			for _, p := range [3]int{k, k - 1, k + 1} {
				// Display names, shorter, first: a mismatch costs less.
				if p >= 0 && p < len(prev) && r.DisplayName == prev[p].DisplayName && r.Name == prev[p].Name {
					j = i + p - k
					break
				}
			}
			if j == i {
				at[i] = n.at[i]
				continue
			}
			var in int32
			if j >= 0 {
				in = n.at[j]
			} else {
				m, found := n.idx[r.Name]
				if !found || n.disps[m] != r.DisplayName {
					ok = false
					break
				}
				in = m
			}
			at[i] = in
			out := n.at[i]
			n.moved[in]++
			n.moved[out]--
			touched = append(touched, in, out)
		}
		if !ok {
			break
		}
	}
	for _, t := range touched {
		if n.moved[t] != 0 {
			ok = false
		}
	}
	for _, t := range touched {
		n.moved[t] = 0
	}
	return ok
}

// shownNow is Shown over the names and rows of now: SetRows makes new
// slices rather than change these.
func (n *kernelNames) shownNow() func(int) string {
	shown, at := n.shown, n.at
	return func(i int) string { return shown[at[i]] }
}

// Shown is the name to show for row i, told apart from the other rows'.
func (n *kernelNames) Shown(i int) string {
	return n.shown[n.at[i]]
}

// Tag is the number tag (" #2") row i's name shows at width w: added
// because another kernel's name reads the same once shortened or cut;
// "" when none.
func (n *kernelNames) Tag(i, w int) string {
	n.fit(w)
	if t := n.fitter.Tag(int(n.at[i])); t != "" {
		return t
	}
	return n.tags[int(n.at[i])]
}

// Numbered reports whether any row's name at width w carries a number tag.
func (n *kernelNames) Numbered(w int) bool {
	n.fit(w)
	return len(n.tags) > 0 || n.fitter.Numbered()
}

func (n *kernelNames) fit(w int) {
	if n.fitter == nil || n.fitW != w {
		n.fitter, n.fitW = attrib.NewNameFitter(n.shown, w), w
	}
}

// Fitted is Shown(i) cut to w cells so that rows with different names
// still look different (attrib.FitNames over every row).
func (n *kernelNames) Fitted(i, w int) string {
	n.fit(w)
	return n.fitter.Fit(int(n.at[i]))
}
