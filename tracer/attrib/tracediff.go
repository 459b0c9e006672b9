package attrib

import (
	"math"
	"sort"
)

// DiffRow compares one kernel, category or stage between two snapshots.
// Times are ns; Ratio is TotalB/TotalA (+Inf when only in B, 0 when only
// in A).
type DiffRow struct {
	Key      string // kernel name (as in A, else B), category or stage
	Display  string // display name for kernels; Key otherwise
	MatchBy  string // "name", "display_name" (templates differ), "only_a", "only_b"
	CountA   int64
	CountB   int64
	TotalA   int64
	TotalB   int64
	DeltaNs  int64 // TotalB - TotalA
	Ratio    float64
	NamesA   []string // the names merged into this row, when matched by display name
	NamesB   []string
	Category string // kernels: category in A (else B)
}

// Diff is the comparison of two snapshots.
type Diff struct {
	A, B       string // sources
	TotalsA    Totals
	TotalsB    Totals
	Kernels    []DiffRow // sorted by |Δ| descending, then key
	Categories []DiffRow
	Stages     []DiffRow
	OnlyA      int // kernel rows only in A
	OnlyB      int
}

// Compare diffs snapshot b against a: kernels matched by exact name, and the
// rest by display name (so kernels whose template arguments differ between
// the two builds still pair up); categories and stages by key.
func Compare(a, b *Snapshot) *Diff {
	d := &Diff{A: a.Source, B: b.Source, TotalsA: a.Totals, TotalsB: b.Totals}
	d.Kernels = diffKernels(a.Kernels, b.Kernels)
	for _, r := range d.Kernels {
		switch r.MatchBy {
		case "only_a":
			d.OnlyA++
		case "only_b":
			d.OnlyB++
		}
	}
	d.Categories = diffGroups(a.Categories, b.Categories)
	d.Stages = diffGroups(a.Stages, b.Stages)
	return d
}

func diffKernels(a, b []KernelRow) []DiffRow {
	// Rows match by name and category: a name has one row per category its
	// launches fall in (Snapshot.Kernels), and each is compared with the
	// same category's row on the other side.
	type nameCat struct{ name, cat string }
	byName := make(map[nameCat]int, len(b))
	for i := range b {
		byName[nameCat{b[i].Name, b[i].Category}] = i
	}
	usedB := make([]bool, len(b))
	var rows []DiffRow
	var restA []int
	for i := range a {
		if j, ok := byName[nameCat{a[i].Name, a[i].Category}]; ok && !usedB[j] {
			usedB[j] = true
			rows = append(rows, mkRow(a[i].Name, a[i].DisplayName, "name", a[i].Category,
				a[i].Count, b[j].Count, a[i].TotalNs, b[j].TotalNs, nil, nil))
			continue
		}
		restA = append(restA, i)
	}
	// Remaining kernels grouped by display name on each side.
	type group struct {
		count, total int64
		names        []string
		first        int
	}
	ga, gb := map[string]*group{}, map[string]*group{}
	var orderA, orderB []string
	for _, i := range restA {
		k := a[i].DisplayName
		g, ok := ga[k]
		if !ok {
			g = &group{first: i}
			ga[k] = g
			orderA = append(orderA, k)
		}
		g.count += a[i].Count
		g.total += a[i].TotalNs
		g.names = append(g.names, a[i].Name)
	}
	for j := range b {
		if usedB[j] {
			continue
		}
		k := b[j].DisplayName
		g, ok := gb[k]
		if !ok {
			g = &group{first: j}
			gb[k] = g
			orderB = append(orderB, k)
		}
		g.count += b[j].Count
		g.total += b[j].TotalNs
		g.names = append(g.names, b[j].Name)
	}
	for _, k := range orderA {
		x := ga[k]
		if y, ok := gb[k]; ok {
			key := a[x.first].Name
			if len(x.names) > 1 {
				key = k
			}
			rows = append(rows, mkRow(key, k, "display_name", a[x.first].Category,
				x.count, y.count, x.total, y.total, x.names, y.names))
			continue
		}
		for _, i := range restA {
			if a[i].DisplayName == k {
				rows = append(rows, mkRow(a[i].Name, k, "only_a", a[i].Category, a[i].Count, 0, a[i].TotalNs, 0, nil, nil))
			}
		}
	}
	for _, k := range orderB {
		if _, ok := ga[k]; ok {
			continue
		}
		for j := range b {
			if !usedB[j] && b[j].DisplayName == k {
				rows = append(rows, mkRow(b[j].Name, k, "only_b", b[j].Category, 0, b[j].Count, 0, b[j].TotalNs, nil, nil))
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
