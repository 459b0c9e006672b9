package tracefile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// This file holds the CSV plumbing shared by the rocprof and nsys-stats
// importers: header matching by column name (never by position), rows with
// their line numbers, and exact number parsing.

// csvTable reads a CSV file whose first record is a header.
type csvTable struct {
	path   string
	r      *csv.Reader
	header []string
	col    map[string]int // header name → index (first occurrence)
	line   int            // line of the current record
	rec    []string
	rowErr error // the last error about one row's values (errAt)
	bad    int   // rows skipped for a bad value (readRows)
	rows   int64 // data rows read
	// maxRows bounds the data rows (csvRowBudget;
	// 0: none); maxWhy says where the bound came from.
	maxRows int64
	maxWhy  string
	// names, when the importer sets it, is the table its rows' names go
	// to, held to nameMax.
	names   *tracer.Strings
	nameMax nameBudget
	// sub reads again the lines a quote left open swallowed (next);
	// subBase is the file line before its first, fromSub whether the
	// current record came from it, quoteCol the column of the open quote
	// in the current record (-1: none).
	sub      *csv.Reader
	subBase  int
	fromSub  bool
	quoteCol int
}

// newCSVTable reads the header. skip is the number of records before the
// header (nsys stats preambles).
func newCSVTable(r io.Reader, path string, skip int, opts Options) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	t := &csvTable{path: path, r: cr, col: map[string]int{}, quoteCol: -1}
	t.maxRows, t.maxWhy = csvRowBudget()
	t.nameMax = newNameBudget()
	for i := 0; ; i++ {
		rec, err := cr.Read()
		if err != nil {
			if err == io.EOF {
				return nil, &Error{Path: path, Offset: 0, Line: 1, Msg: "no CSV header line", Hint: "the file is empty or truncated"}
			}
			return nil, t.csvErr(err)
		}
		if i < skip {
			continue
		}
		t.header = rec
		break
	}
	for i, h := range t.header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		t.header[i] = h
		if _, dup := t.col[h]; !dup {
			t.col[h] = i
		}
	}
	return t, nil
}

func (t *csvTable) csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{Path: t.path, Offset: -1, Line: pe.Line, Msg: fmt.Sprintf("malformed CSV at column %d", pe.Column), Err: pe.Err,
			Hint: "the file may be truncated or not a profiler CSV"}
	}
	return &Error{Path: t.path, Offset: t.r.InputOffset(), Msg: "cannot read CSV", Err: err}
}

// find returns the index of the first header among names, or -1.
func (t *csvTable) find(names ...string) int {
	for _, n := range names {
		if i, ok := t.col[n]; ok {
			return i
		}
	}
	return -1
}

// next reads the next non-empty record; ok is false at EOF.
//
// A quote opened in a field and not closed on its line swallows the
// lines after it into that field (the CSV reader, with LazyQuotes, reads
// on until a closing quote or the end of the file). Such a record, with
// fewer fields than the header, is cut at the field's first line break
// (the row then fails with a message naming the quote and its line) and
// the lines it swallowed are read again as rows of their own: one bad
// quote costs its row only.
func (t *csvTable) next() (ok bool, err error) {
	for {
		var rec []string
		t.quoteCol = -1
		if t.sub != nil {
			rec, err = t.sub.Read()
			if err != nil {
				t.sub = nil // the swallowed lines are read; back to the file
				continue
			}
		} else {
			rec, err = t.r.Read()
			if err == io.EOF {
				return false, nil
			}
			if err != nil {
				return false, t.csvErr(err)
			}
		}
		t.fromSub = t.sub != nil
		t.line = t.fieldLine(0)
		if !t.fromSub && len(rec) != len(t.header) {
			for i, f := range rec {
				j := strings.IndexByte(f, '\n')
				if j < 0 {
					continue
				}
				rest := f[j+1:]
				if i+1 < len(rec) {
					rest += "," + strings.Join(rec[i+1:], ",")
				}
				t.subBase = t.fieldLine(i) + strings.Count(f[:j], "\n")
				t.sub = csv.NewReader(strings.NewReader(rest))
				t.sub.FieldsPerRecord = -1
				t.sub.LazyQuotes = true
				t.quoteCol = i
				rec = append(rec[:i:i], strings.TrimRight(f[:j], "\r"))
				break
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if t.rows++; t.maxRows > 0 && t.rows > t.maxRows {
			return false, &Error{Path: t.path, Offset: -1, Line: t.line, Msg: fmt.Sprintf("the file holds more than %d rows (%s): the rows before this line are kept", t.maxRows, t.maxWhy),
				Hint: fmt.Sprintf("to read it all, pass --%s N or set %s to a larger number (0: no limit; each row takes about %d bytes at a report's peak)", MaxCSVRowsFlag, MaxCSVRowsEnv, CSVRowBytes)}
		}
		if t.names != nil {
			if msg, hint, over := t.nameMax.over(t.names.Bytes(), "rows"); over {
				return false, &Error{Path: t.path, Offset: -1, Line: t.line, Msg: msg, Hint: hint}
			}
		}
		t.rec = rec
		return true, nil
	}
}

// field returns the current record's value in column i ("" when the row is
// shorter or i < 0).
func (t *csvTable) field(i int) string {
	if i < 0 || i >= len(t.rec) {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// fieldLine is the line (from 1) where field i of the current record
// starts: in the file, or in the lines a bad quote swallowed.
func (t *csvTable) fieldLine(i int) int {
	if t.sub != nil && t.fromSub {
		l, _ := t.sub.FieldPos(i)
		return t.subBase + l
	}
	l, _ := t.r.FieldPos(i)
	return l
}

func (t *csvTable) errAt(i int, msg, hint string, err error) error {
	name := ""
	if i >= 0 && i < len(t.header) {
		name = t.header[i]
	}
	line := t.line
	if i >= 0 && i < len(t.rec) {
		line = t.fieldLine(i)
	}
	e := &Error{Path: t.path, Offset: -1, Line: line, Field: name, Msg: msg, Hint: hint, Err: err}
	t.rowErr = e
	return e
}

// MaxEventNs is the longest duration an importer keeps: 30 days in ns.
// Longer ones are corrupt values (a damaged file can hold kernels of 5e15 µs,
// whose sum overflowed int64) and their event or row is skipped with a
// warning.
const MaxEventNs = 30 * 24 * 3600 * int64(1e9)

// checkTimes rejects, as an error about this row, a negative start (profiler
// clocks count from boot or from the session's start) and a duration over
// MaxEventNs; col is the column named in the error.
func (t *csvTable) checkTimes(col int, start, dur int64) error {
	switch {
	case start < 0:
		return t.errAt(col, fmt.Sprintf("negative timestamp %d ns", start), "", nil)
	case dur > MaxEventNs:
		return t.errAt(col, fmt.Sprintf("duration %d ns is over 30 days", dur), "", nil)
	}
	return nil
}

// unknownCSV is the error for a file that looks like CSV (its first line
// has a comma and does not start a JSON value) but whose header matches no
// importer: it shows the header found and the columns each CSV format
// needs, so that a missing or renamed column is findable. nil when head
// does not look like CSV.
func unknownCSV(head []byte, path string) *Error {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '{' || line[0] == '[' || bytes.IndexByte(line, ',') < 0 || isBinary(head) {
		return nil
	}
	return &Error{Path: path, Offset: -1, Line: 1, Err: ErrUnknownFormat,
		Msg: "a CSV file whose header matches no format rlktop reads: " + quoteShort(string(line)),
		Hint: "a column is missing or renamed? rocprofv3 kernel_trace.csv needs Kernel_Name, Start_Timestamp, End_Timestamp; " +
			"memory_copy_trace.csv Direction and the timestamps; an API trace Domain, Function; --stats Name, Calls, TotalDurationNs; " +
			"rocprof v1/v2 KernelName, BeginNs, EndNs; nsys stats a trace (Start (ns), Name) or a summary (Total Time (ns), Instances, Name)"}
}

// csvBadShown is how many skipped rows get a warning each; the rest are
// counted in one.
const csvBadShown = 10

// readRows runs read, a loop over the table's rows, and runs it again after
// every error about one row's values (errAt: a value that does not parse,
// a row shorter than the header, an empty name), skipping that row with a
// warning giving its line and column: one bad row costs that row only. An
// error about the stream itself (malformed CSV, a read error) ends it and
// is returned; the rows before it are in tr. Devices added twice by the
// rerun are merged.
func (t *csvTable) readRows(tr *tracer.Trace, read func() error) error {
	t.names = tr.Strings
	var err error
	for {
		err = read()
		if err == nil || err != t.rowErr {
			break
		}
		t.bad++
		if t.bad <= csvBadShown {
			tr.Warn(err.Error() + "; row skipped")
		}
	}
	if t.bad > csvBadShown {
		tr.Warn(fmt.Sprintf("%s: %d more rows with a bad value skipped (%d in all)", t.path, t.bad-csvBadShown, t.bad))
	}
	if t.bad > 0 {
		tr.Meta["skipped_bad_rows"] = strconv.Itoa(t.bad)
		seen := map[int32]bool{}
		devs := tr.Devices[:0]
		for _, d := range tr.Devices {
			if !seen[d.ID] {
				seen[d.ID] = true
				devs = append(devs, d)
			}
		}
		tr.Devices = devs
	}
	return err
}

// need returns the value of column i, failing when the column is missing
// from this row.
func (t *csvTable) need(i int) (string, error) {
	if i >= len(t.rec) {
		if q := t.quoteCol; q >= 0 && q < len(t.header) {
			return "", t.errAt(-1, fmt.Sprintf("a quote opened in column %q is not closed on this line (column %q missing)", t.header[q], t.header[i]),
				"the lines after it are read as rows of their own", nil)
		}
		return "", t.errAt(-1, fmt.Sprintf("row has %d fields, the header has %d (column %q missing)", len(t.rec), len(t.header), t.header[i]),
			"the file may be truncated", nil)
	}
	return t.field(i), nil
}

// int64At parses column i as a base-10 integer (ns, ids).
func (t *csvTable) int64At(i int) (int64, error) {
	s, err := t.need(i)
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil {
		// Accept integral values written as decimals or in scientific
		// notation ("1.2e+03"), exactly.
		if n, ok := parseExactInt(s); ok {
			return n, nil
		}
		return 0, t.errAt(i, "expected an integer, found "+quoteShort(s), "", nil)
	}
	return v, nil
}

// optInt64At is int64At that returns def for a missing column or empty value.
func (t *csvTable) optInt64At(i int, def int64) (int64, error) {
	if i < 0 || t.field(i) == "" {
		return def, nil
	}
	return t.int64At(i)
}

// roundAt parses column i as a decimal number (scientific notation allowed)
// and rounds it half-to-even to an int64. Used for averages and
// scientific-notation totals in summaries.
func (t *csvTable) roundAt(i int) (int64, error) {
	s, err := t.need(i)
	if err != nil {
		return 0, err
	}
	v, ok := roundDecimal(s)
	if !ok {
		return 0, t.errAt(i, "expected a number, found "+quoteShort(s), "", nil)
	}
	return v, nil
}

func (t *csvTable) optRoundAt(i int) (int64, error) {
	if i < 0 || t.field(i) == "" {
		return 0, nil
	}
	return t.roundAt(i)
}

// summaryCols are the columns of a stats file (rocprofv3 --stats, nsys
// stats summaries); -1 for an optional column the file does not have.
type summaryCols struct {
	name                int // the row's name (required)
	count               int // calls or instances (an integer; required)
	total               int // total ns (required)
	mean, p50, min, max int // ns (optional: 0 when absent or empty)
}

// readSummary reads a stats file's rows into tr.Summary and marks tr
// SummaryOnly: each row's name, its kind by kindOf(name) (each format's
// rule), then its numbers in the order count, total, mean, p50, min, max,
// so that a row with several bad values is reported at the first. ns
// values may be decimals or in scientific notation and are rounded half to
// even (roundAt). It is a row loop for readRows: a bad value is a row
// error.
func (t *csvTable) readSummary(tr *tracer.Trace, c summaryCols, kindOf func(name string) tracer.Kind) error {
	tr.SummaryOnly = true
	for {
		ok, err := t.next()
		if err != nil || !ok {
			return err
		}
		var row tracer.SummaryRow
		if row.Name, err = t.need(c.name); err != nil {
			return err
		}
		row.Kind = kindOf(row.Name)
		if row.Count, err = t.int64At(c.count); err != nil {
			return err
		}
		if row.TotalNs, err = t.roundAt(c.total); err != nil {
			return err
		}
		for _, f := range []struct {
			col int
			dst *int64
		}{{c.mean, &row.MeanNs}, {c.p50, &row.P50Ns}, {c.min, &row.MinNs}, {c.max, &row.MaxNs}} {
			if *f.dst, err = t.optRoundAt(f.col); err != nil {
				return err
			}
		}
		tr.Summary = append(tr.Summary, row)
	}
}

// parseExactInt parses a decimal or scientific-notation number that must be
// an integer exactly ("1.5e3" → 1500; "1.25" → false).
func parseExactInt(s string) (int64, bool) {
	if !saneNumber(s) {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return 0, false
	}
	n := r.Num()
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

// roundDecimal parses s exactly and rounds half-to-even to an int64.
func roundDecimal(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if !saneNumber(s) {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	// Round half to even: floor(r + 1/2), adjusted on exact halves.
	num, den := new(big.Int).Set(r.Num()), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// q truncates toward zero; m has num's sign.
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	switch twice.Cmp(den) {
	case 1:
		q.Add(q, big.NewInt(int64(num.Sign())))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(int64(num.Sign())))
		}
	}
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// sniffCSVHeader parses up to maxLines lines of head as CSV records and
// returns the first one (and its index) for which match is true.
func sniffCSVHeader(head []byte, maxLines int, match func(h map[string]bool) bool) (int, bool) {
	rest := head
	for i := 0; i < maxLines && len(rest) > 0; i++ {
		line := rest
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			// csv.Reader skips blank lines too, so they are not counted.
			i--
			continue
		}
		cr := csv.NewReader(bytes.NewReader(line))
		cr.FieldsPerRecord = -1
		cr.LazyQuotes = true
		rec, err := cr.Read()
		if err != nil || len(rec) < 2 {
			continue
		}
		h := make(map[string]bool, len(rec))
		for _, f := range rec {
			h[strings.TrimSpace(strings.TrimPrefix(f, "\ufeff"))] = true
		}
		if match(h) {
			return i, true
		}
	}
	return 0, false
}

func hasAny(h map[string]bool, names ...string) bool {
	for _, n := range names {
		if h[n] {
			return true
		}
	}
	return false
}

// clampDur returns end-start, or 0 with ok=false when end < start.
// durWhy says why clampDur refused start and end: the end is before the
// start, or the duration is past 2^62 ns (146 years: not a measurement).
func durWhy(start, end int64) string {
	if end < start {
		return "ends before it starts"
	}
	return fmt.Sprintf("lasts %d ns (over 146 years: not a real duration)", uint64(end)-uint64(start))
}

func clampDur(start, end int64) (int64, bool) {
	if end < start {
		return 0, false
	}
	d := end - start
	if d < 0 || d > math.MaxInt64/2 {
		return 0, false
	}
	return d, true
}

// saneNumber rejects what big.Rat would accept at great cost: exponents
// beyond ±40 and overlong strings.
func saneNumber(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 40 || e < -40 {
			return false
		}
	}
	return true
}

// asStep turns an annotation range named "ProfilerStep#N" (PyTorch's step
// marker, which reaches NVTX/roctx under emit_nvtx or record_function) into
// a KindStep event with Value N, as the Kineto importer does.
func asStep(e *tracer.Event, name string) {
	const p = "ProfilerStep#"
	if e.Kind != tracer.KindRange || !strings.HasPrefix(name, p) {
		return
	}
	n, err := strconv.ParseInt(name[len(p):], 10, 64)
	if err != nil || n < 0 {
		return
	}
	e.Kind, e.Value = tracer.KindStep, n
}
