package views

import (
	"slices"

	"github.com/rlktop/rlktop/internal/escape"
	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// kernelNames gives a view that lists kernel rows the name to show for
// each (attrib.DistinctNames, escaped for the terminal) and that name
// fitted to a column (attrib.NameFitter). It is the pattern for every
// view with a row per kernel (or per any name) and many rows: a frame
// costs the rows drawn, never all rows.
//
//   - SetRows, once per snapshot, finds each row's name in the last set
//     of names by its id (attrib.KernelRow.NameID, an array index, checked
//     against the name; by a map where that fails) and counts the rows of
//     each; names are told apart again only when the set of names changed
//     (a name new or gone, or held by more or fewer rows).
//   - The column's fitter is made once per set of names and width.
//   - Shown and Fitted, per row drawn, are a slice lookup.
//
// Names alike even when told apart are numbered (" #2") in the order of
// the snapshot the set was first seen in, so the numbers stay on their
// rows while a live session's rows change places.
type kernelNames struct {
	names, disps []string               // the set's names, in the order first seen
	shown        []string               // per names: DistinctNames, escaped
	tags         map[int]string         // per names: the number tag DistinctNames added (" #2")
	idx          map[string]int32       // name → index into names (the first row with it)
	byID         []int32                // NameID → idx[name]; -1 none, -2 several names (ids dense)
	byIDMap      map[tracer.StrID]int32 // the same when the ids are sparse
	rows         int32                  // rows in the set
	want, got    []int32                // per names: rows with it in the set; in the rows being set (scratch)
	at           []int32                // per row of the last SetRows: index into names
	fitter       *attrib.NameFitter
	fitW         int
}

// SetRows takes a snapshot's rows, parts one after the other (the
// kernels, then the transfers), which must not change afterwards
// (snapshots are immutable); Shown and Fitted then take an index into
// them.
func (n *kernelNames) SetRows(parts ...[]attrib.KernelRow) {
	rows := 0
	for _, p := range parts {
		rows += len(p)
	}
	at := make([]int32, rows)
	if !n.same(parts, at) {
		n.set(parts, at)
	}
	n.at = at
}

// set tells the rows' names apart and fills at.
func (n *kernelNames) set(parts [][]attrib.KernelRow, at []int32) {
	n.names, n.disps = make([]string, 0, len(at)), make([]string, 0, len(at))
	maxID := attrib.KernelRow{}.NameID
	for _, p := range parts {
		for i := range p {
			n.names, n.disps = append(n.names, p[i].Name), append(n.disps, p[i].DisplayName)
			maxID = max(maxID, p[i].NameID)
		}
	}
	n.shown, n.tags = attrib.DistinctNamesNumbered(n.names, n.disps)
	idx := make(map[string]int32, len(at))
	n.idx = idx
	// A live session's table holds every string it was sent (ranges,
	// shapes): its kernels' ids can run into millions, an array of them
	// megabytes for a few rows.
	n.byID, n.byIDMap = nil, nil
	if int(maxID) <= 4*len(at)+1<<16 {
		n.byID = slices.Repeat([]int32{-1}, int(maxID)+1)
	} else {
		n.byIDMap = make(map[tracer.StrID]int32, len(at))
	}
	n.want, n.got = make([]int32, len(at)), make([]int32, len(at))
	n.rows = int32(len(at))
	i := 0
	for _, p := range parts {
		for k := range p {
			// Names are data: controls from a trace must not act on the terminal.
			n.shown[i] = escape.Control(n.shown[i])
			j, ok := idx[n.names[i]]
			if !ok {
				j = int32(i)
				idx[n.names[i]] = j
			}
			at[i] = j
			n.want[j]++
			if id := p[k].NameID; id != 0 {
				if b := n.hint(id); b == -1 {
					n.setHint(id, j)
				} else if b != j {
					n.setHint(id, -2) // two names (two sources' tables): no hint
				}
			}
			i++
		}
	}
	n.fitter = nil
}

// hint is the index into names of the name whose id is id: -1 none, -2
// several.
func (n *kernelNames) hint(id tracer.StrID) int32 {
	if n.byIDMap != nil {
		if j, ok := n.byIDMap[id]; ok {
			return j
		}
		return -1
	}
	if int(id) < len(n.byID) {
		return n.byID[id]
	}
	return -1
}

func (n *kernelNames) setHint(id tracer.StrID, j int32) {
	if n.byIDMap != nil {
		n.byIDMap[id] = j
	} else {
		n.byID[id] = j
	}
}

// same reports whether the rows hold the same names (and display names)
// as the last set, as a multiset, and fills at.
func (n *kernelNames) same(parts [][]attrib.KernelRow, at []int32) bool {
	if len(at) != int(n.rows) || n.idx == nil {
		return false
	}
	ok := true
	i := 0
	for _, p := range parts {
		for k := range p {
			r := &p[k]
			j := int32(-1)
			if id := int(r.NameID); id < len(n.byID) {
				j = n.byID[id]
			} else if n.byIDMap != nil {
				j = n.hint(r.NameID)
			}
			// A live session keeps one copy of each name, so these
			// compare by address (runtime.memequal's first test).
			if j < 0 || n.names[j] != r.Name {
				// No id, or of another table: by the name.
				m, found := n.idx[r.Name]
				if !found {
					ok = false
					break
				}
				j = m
			}
			if n.disps[j] != r.DisplayName {
				ok = false
				break
			}
			if n.got[j]++; n.got[j] > n.want[j] {
				ok = false
				break
			}
			at[i] = j
			i++
		}
		if !ok {
			break
		}
	}
	if !ok {
		return false // set makes got anew
	}
	// As many rows as the set, none of a name more often than there:
	// the multiset is the same.
	for _, j := range at {
		n.got[j] = 0
	}
	return true
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
