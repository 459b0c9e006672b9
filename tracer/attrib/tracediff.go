package attrib

import (
	"math"
	"slices"
	"sort"
)

// DiffRow compares one kernel, category or stage between two snapshots.
// Times are ns; Ratio is TotalB/TotalA (+Inf when only in B, 0 when only
// in A).
type DiffRow struct {
	Key     string // kernel name (as in A, else B), category or stage
	Display string // display name for kernels; Key otherwise
	MatchBy string // "name", "display_name" (templates differ), "only_a", "only_b"
	CountA  int64
	CountB  int64
	TotalA  int64
	TotalB  int64
	DeltaNs int64 // TotalB - TotalA
	Ratio   float64
	NamesA  []string // the names merged into this row, when matched by display name
	NamesB  []string
	// Category: kernels are compared per (name, category), so this is the
	// row's category on both sides (display-name rows: A's first name's).
	Category string
}

// Diff is DiffSnapshots' result: two snapshots side by side.
type Diff struct {
	A, B       string // sources
	TotalsA    Totals
	TotalsB    Totals
	Kernels    []DiffRow // sorted by |Δ| descending, then key
	Categories []DiffRow
	Stages     []DiffRow
	OnlyA      int // kernel names only in A (one row per category each)
	OnlyB      int
	// Warnings are A's snapshot warnings, then B's (their importers'
	// among them): what `report` of each would say.
	Warnings []string
}

// DiffSnapshots diffs snapshot b against a: kernels matched by exact
// name, and the rest by display name (so kernels whose template arguments
// differ between the two builds still pair up); categories and stages by
// key.
func DiffSnapshots(a, b *Snapshot) *Diff {
	d := &Diff{A: a.Source, B: b.Source, TotalsA: a.Totals, TotalsB: b.Totals,
		Warnings: append(slices.Clone(a.Warnings), b.Warnings...)}
	d.Kernels = diffKernels(a.Kernels, b.Kernels)
	onlyA, onlyB := map[string]bool{}, map[string]bool{}
	for _, r := range d.Kernels {
		switch r.MatchBy {
		case "only_a":
			onlyA[r.Key] = true
		case "only_b":
			onlyB[r.Key] = true
		}
	}
	d.OnlyA, d.OnlyB = len(onlyA), len(onlyB)
	d.Categories = diffGroups(a.Categories, b.Categories)
	d.Stages = diffGroups(a.Stages, b.Stages)
	return d
}

func diffKernels(a, b []KernelRow) []DiffRow {
	// A name has one row per category its launches fall in
	// (Snapshot.Kernels). A name found on both sides gives one "name" row
	// per category of either side (0 on a side without that category); a
	// name found on one side only is paired by display name with the other
	// side's lone names (its category rows summed), else listed per
	// category as only_a / only_b.
	type nameRows struct {
		rows  []int
		count int64
		total int64
	}
	index := func(rs []KernelRow) (map[string]*nameRows, []string) {
		m := map[string]*nameRows{}
		var order []string
		for i := range rs {
			n := m[rs[i].Name]
			if n == nil {
				n = &nameRows{}
				m[rs[i].Name] = n
				order = append(order, rs[i].Name)
			}
			n.rows = append(n.rows, i)
			n.count += rs[i].Count
			n.total += rs[i].TotalNs
		}
		return m, order
	}
	na, orderNA := index(a)
	nb, orderNB := index(b)
	var rows []DiffRow
	var loneA, loneB []string
	for _, name := range orderNA {
		xb, ok := nb[name]
		if !ok {
			loneA = append(loneA, name)
			continue
		}
		xa := na[name]
		catB := map[string]int{}
		for _, j := range xb.rows {
			catB[b[j].Category] = j
		}
		seen := map[string]bool{}
		for _, i := range xa.rows {
			r := &a[i]
			seen[r.Category] = true
			var cb, tb int64
			if j, ok := catB[r.Category]; ok {
				cb, tb = b[j].Count, b[j].TotalNs
			}
			rows = append(rows, mkRow(name, r.DisplayName, "name", r.Category, r.Count, cb, r.TotalNs, tb, nil, nil))
		}
		for _, j := range xb.rows {
			if r := &b[j]; !seen[r.Category] {
				rows = append(rows, mkRow(name, r.DisplayName, "name", r.Category, 0, r.Count, 0, r.TotalNs, nil, nil))
			}
		}
	}
	for _, name := range orderNB {
		if _, ok := na[name]; !ok {
			loneB = append(loneB, name)
		}
	}
	// Lone names grouped by display name on each side.
	type group struct {
		count, total int64
		names        []string
	}
	groups := func(rs []KernelRow, m map[string]*nameRows, lone []string) (map[string]*group, []string) {
		g := map[string]*group{}
		var order []string
		for _, name := range lone {
			x := m[name]
			k := rs[x.rows[0]].DisplayName
			gr := g[k]
			if gr == nil {
				gr = &group{}
				g[k] = gr
				order = append(order, k)
			}
			gr.count += x.count
			gr.total += x.total
			gr.names = append(gr.names, name)
		}
		return g, order
	}
	ga, orderA := groups(a, na, loneA)
	gb, orderB := groups(b, nb, loneB)
	for _, k := range orderA {
		x := ga[k]
		if y, ok := gb[k]; ok {
			key := x.names[0]
			if len(x.names) > 1 {
				key = k
			}
			rows = append(rows, mkRow(key, k, "display_name", a[na[x.names[0]].rows[0]].Category,
				x.count, y.count, x.total, y.total, x.names, y.names))
			continue
		}
		for _, name := range x.names {
			for _, i := range na[name].rows {
				rows = append(rows, mkRow(name, k, "only_a", a[i].Category, a[i].Count, 0, a[i].TotalNs, 0, nil, nil))
			}
		}
	}
	for _, k := range orderB {
		if _, ok := ga[k]; ok {
			continue
		}
		for _, name := range gb[k].names {
			for _, j := range nb[name].rows {
				rows = append(rows, mkRow(name, k, "only_b", b[j].Category, 0, b[j].Count, 0, b[j].TotalNs, nil, nil))
			}
		}
	}
	sortDiff(rows)
	return rows
}

func diffGroups(a, b []GroupRow) []DiffRow {
	idx := map[string]int{}
	for i := range b {
		idx[b[i].Key] = i
	}
	seen := map[string]bool{}
	var rows []DiffRow
	for _, x := range a {
		seen[x.Key] = true
		if j, ok := idx[x.Key]; ok {
			rows = append(rows, mkRow(x.Key, x.Key, "name", "", x.Count, b[j].Count, x.TotalNs, b[j].TotalNs, nil, nil))
		} else {
			rows = append(rows, mkRow(x.Key, x.Key, "only_a", "", x.Count, 0, x.TotalNs, 0, nil, nil))
		}
	}
	for _, y := range b {
		if !seen[y.Key] {
			rows = append(rows, mkRow(y.Key, y.Key, "only_b", "", 0, y.Count, 0, y.TotalNs, nil, nil))
		}
	}
	sortDiff(rows)
	return rows
}

func mkRow(key, display, by, cat string, ca, cb, ta, tb int64, na, nb []string) DiffRow {
	r := DiffRow{Key: key, Display: display, MatchBy: by, Category: cat,
		CountA: ca, CountB: cb, TotalA: ta, TotalB: tb, DeltaNs: tb - ta, NamesA: na, NamesB: nb}
	switch {
	case ta > 0:
		r.Ratio = float64(tb) / float64(ta)
	case tb > 0:
		r.Ratio = math.Inf(1)
	}
	return r
}

func sortDiff(rows []DiffRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		ai, aj := abs64(rows[i].DeltaNs), abs64(rows[j].DeltaNs)
		if ai != aj {
			return ai > aj
		}
		return rows[i].Key < rows[j].Key
	})
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
