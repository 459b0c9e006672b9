package attrib

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// KernelFilter selects kernel rows; the TUI's kernels view (/ and the
// drill-down from a category or stage) and `rlktop report --filter` use
// the same one. The zero value matches every row.
type KernelFilter struct {
	// Category and Stage, when set, must equal the row's (Stage is the
	// stage most of the row's time was launched in).
	Category, Stage string
	// Name, when set, must match the row's original or display name.
	Name *regexp.Regexp
}

// ParseKernelFilter parses a filter: space-separated words, "cat:NAME"
// and "stage:NAME" select a category and a stage (a NAME with spaces in
// double quotes: stage:"## backward ##"; FilterTerm writes one), the rest is a regular
// expression (RE2 syntax, case-insensitive) on the kernel name. A
// pattern that is not a valid expression is matched as plain text, so
// typing "foo(" part way still filters. "" matches everything.
func ParseKernelFilter(s string) KernelFilter {
	f, _ := parseKernelFilter(s)
	return f
}

// ParseKernelFilterStrict is ParseKernelFilter for a filter given whole
// (`rlktop report --filter`): a name pattern that is not a valid regular
// expression is an error (regexp's, naming what is wrong, e.g. "missing
// closing )"), not plain text.
func ParseKernelFilterStrict(s string) (KernelFilter, error) {
	return parseKernelFilter(s)
}

// parseKernelFilter parses s; err is the name pattern's regexp error, in
// which case the pattern is matched as plain text.
func parseKernelFilter(s string) (KernelFilter, error) {
	var f KernelFilter
	var reErr error
	var rest []string
	for _, w := range filterWords(s) {
		switch {
		case strings.HasPrefix(w, "cat:"):
			f.Category = unquoteTerm(strings.TrimPrefix(w, "cat:"))
		case strings.HasPrefix(w, "stage:"):
			f.Stage = unquoteTerm(strings.TrimPrefix(w, "stage:"))
		default:
			rest = append(rest, w)
		}
	}
	if p := strings.Join(rest, " "); p != "" {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			// The error of p alone: "(?i)" is not the user's.
			if _, reErr = regexp.Compile(p); reErr == nil {
				reErr = err
			}
			re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(p))
		}
		f.Name = re
	}
	return f, reErr
}

// FilterTerm is the filter word that selects category (what "cat") or
// stage (what "stage") key: what:key, with key in double quotes when it
// holds a space or a quote (a stage named "## backward ##").
func FilterTerm(what, key string) string {
	if strings.ContainsAny(key, " \t\"") {
		return what + ":" + strconv.Quote(key)
	}
	return what + ":" + key
}

// filterWords splits s at white space, keeping a double-quoted value of a
// cat: or stage: word (which may hold spaces) in its word.
func filterWords(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			return out
		}
		end := strings.IndexAny(s, " \t\n")
		for _, p := range []string{`cat:"`, `stage:"`} {
			if strings.HasPrefix(s, p) {
				// The closing quote not escaped by a backslash.
				for i := len(p); i < len(s); i++ {
					if s[i] == '\\' {
						i++
					} else if s[i] == '"' {
						end = i + 1
						break
					}
				}
			}
		}
		if end < 0 || end > len(s) {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
}

// unquoteTerm is a cat:/stage: value without its double quotes (as
// FilterTerm writes them); a value that is not quoted is itself.
func unquoteTerm(v string) string {
	if len(v) >= 2 && v[0] == '"' {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	return v
}

// Match reports whether r passes the filter.
func (f KernelFilter) Match(r *KernelRow) bool {
	if f.Category != "" && r.Category != f.Category {
		return false
	}
	if f.Stage != "" && r.Stage != f.Stage && !(f.Stage == StageNone && r.Stage == "") {
		return false
	}
	return f.Name == nil || f.Name.MatchString(r.Name) || f.Name.MatchString(r.DisplayName)
}

// KernelSort is a column kernel rows can be ordered by.
type KernelSort int

// Sort columns, in the order of KernelSorts.
const (
	ByTotal KernelSort = iota
	ByCount
	ByMean
	ByName
	ByP50
	ByP99
	ByShare
)

var kernelSortNames = [...]string{"total", "count", "mean", "name", "p50", "p99", "share"}

func (k KernelSort) String() string {
	if int(k) < len(kernelSortNames) {
		return kernelSortNames[k]
	}
	return fmt.Sprintf("sort(%d)", int(k))
}

// KernelSorts lists the sort column names ("total", "count", …).
func KernelSorts() []string { return kernelSortNames[:] }

// ParseKernelSort returns the column named s, or an error listing the
// names.
func ParseKernelSort(s string) (KernelSort, error) {
	for i, n := range kernelSortNames {
		if n == s {
			return KernelSort(i), nil
		}
	}
	return 0, fmt.Errorf("unknown sort column %q: use one of %s", s, strings.Join(kernelSortNames[:], ", "))
}

// CompareKernels orders a before b by column k, ascending (callers
// reverse it for descending); Name compares display names. Ties are left
// to the caller.
func CompareKernels(a, b *KernelRow, k KernelSort) int {
	switch k {
	case ByCount:
		return cmp.Compare(a.Count, b.Count)
	case ByMean:
		return cmp.Compare(a.MeanNs, b.MeanNs)
	case ByName:
		return cmp.Compare(a.DisplayName, b.DisplayName)
	case ByP50:
		return cmp.Compare(a.P50Ns, b.P50Ns)
	case ByP99:
		return cmp.Compare(a.P99Ns, b.P99Ns)
	case ByShare:
		return cmp.Compare(a.Share, b.Share)
	}
	return cmp.Compare(a.TotalNs, b.TotalNs)
}

// SortKernels sorts rows by k (descending when desc), ties by name then
// category.
func SortKernels(rows []KernelRow, k KernelSort, desc bool) {
	slices.SortStableFunc(rows, func(a, b KernelRow) int {
		c := CompareKernels(&a, &b, k)
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Name, b.Name), cmp.Compare(a.Category, b.Category))
	})
}
