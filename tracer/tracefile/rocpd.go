package tracefile

import (
	"cmp"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// rocpd SQLite databases: rocprofv3's default output since ROCm 7.0
// (rocprofiler-sdk's rocpd schema; rocpd_metadata says schema_version 3).
//
// Data lives in tables suffixed with a per-run GUID
// (rocpd_kernel_dispatch_<uuid>, …); rocprofv3 also creates views with the
// bare names (rocpd_kernel_dispatch AS SELECT * FROM …_<uuid>). A merged
// database can hold several suffixed sets. For each logical table the
// reader uses the bare-name view or table when present, else the UNION ALL
// of every suffixed table, and joins on (id, guid) as rocpd's own views do.
//
// Two layouts of the same tables exist, and the reader asks each table
// which columns it has (PRAGMA table_info) rather than trusting a version:
//
//   - released rocprofv3 (ROCm 6.4–7.2; rocm-systems
//     projects/rocprofiler-sdk/source/share/rocprofiler-sdk-rocpd, schema
//     3.0.x): rocpd_kernel_dispatch, rocpd_memory_copy and rocpd_region
//     carry start/end (ns) and pid/tid (the OS ids: the writer keys
//     rocpd_info_process/thread by them) directly, kernels and copies their
//     agent_id/queue_id/stream_id; rocpd_sample has a timestamp column and
//     takes its name and thread from rocpd_track;
//   - the development schema (ROCm/rocprofiler-sdk
//     source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql): start_id/end_id
//     (and timestamp_id) point into rocpd_timestamp(value), and pid/tid,
//     agent, queue and stream come from rocpd_track via track_id;
//   - rocm-systems' schema 4.1.0 mixes them: start/end and
//     rocpd_sample.timestamp in the tables, the rest on rocpd_track.
//
// Mapping:
//
//   - rocpd_kernel_dispatch → KindKernel, name =
//     rocpd_info_kernel_symbol.display_name (else kernel_name), the name
//     rocpd's `kernels` view shows; Device = the agent's type_index (GPU
//     ordinal), else its absolute_index; Stream = stream_id, else queue_id;
//     TID = the dispatching thread;
//   - rocpd_memory_copy → KindMemcpy named as written
//     ("MEMORY_COPY_HOST_TO_DEVICE"), Value = size in bytes, Device = the
//     destination agent when it is a GPU, else the source;
//   - rocpd_region whose event category names a marker domain
//     ("MARKER_CORE_API", "MARKER_CORE_RANGE_API" through rocpd_string;
//     "marker_api" through rocpd_info_category) → KindRange named by the
//     roctx message (event extdata $.message, else the region name;
//     "ProfilerStep#N" → KindStep, Value N); other regions
//     (HIP_RUNTIME_API_EXT, HSA_CORE_API …) → KindRuntime;
//   - rocpd_sample with a marker category → KindInstant;
//   - rocpd_info_agent (GPU rows) → Devices; rocpd_metadata → Meta.
//
// Correlation: rocprofv3 stores the internal correlation id, the one a HIP
// call shares with the dispatch or copy it enqueued, in rocpd_event.stack_id,
// and the external (user) id in rocpd_event.correlation_id (generateRocpd.cpp,
// create_event); the reader links on stack_id when it is set, else on
// correlation_id.
//
// Times are rocprofiler ns (CLOCK_BOOTTIME) as stored. Correlation ids
// restart in every run, so in a merged database the n-th run's ids (n from
// 0, in the order rows are met) are offset by n<<48; a single-run file keeps
// them as written.
//
// A database that yields no kernel, copy or memset gets a warning with the
// row count of each rocpd data table (regions by category) and, for tables
// with rows that could not be read, the columns they have.

func init() {
	Register(Format{Name: "rocpd-sqlite", Sniff: sniffRocpdSQLite, Read: readSQLite})
}

var rocpdTables = []string{"rocpd_string", "rocpd_timestamp", "rocpd_track", "rocpd_event", "rocpd_kernel_dispatch",
	"rocpd_memory_copy", "rocpd_region", "rocpd_sample", "rocpd_info_kernel_symbol", "rocpd_info_agent", "rocpd_metadata",
	"rocpd_info_category"}

// rocpdSource returns a FROM-able SQL expression for logical table base,
// or "" when the database has none.
func rocpdSource(s *sqliteSchema, base string) string {
	if s.has(base) {
		return quoteIdent(base)
	}
	var parts []string
	for n, typ := range s.names {
		if typ == "table" && strings.HasPrefix(n, base+"_") && rocpdSuffixOK(strings.TrimPrefix(n, base+"_")) {
			parts = append(parts, "SELECT * FROM "+quoteIdent(n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return "(" + strings.Join(parts, " UNION ALL ") + ")"
}

// rocpdSuffixOK accepts GUID-like suffixes (hex digits and '_' / '-') so
// that rocpd_info_kernel_symbol is not taken for a suffixed rocpd_info.
func rocpdSuffixOK(s string) bool {
	if len(s) < 4 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isRocpd(s *sqliteSchema) bool {
	return rocpdSource(s, "rocpd_kernel_dispatch") != "" || rocpdSource(s, "rocpd_region") != ""
}

// rocpdCols returns the columns of logical table base as the database
// holds it: the bare-name view or table when present, else the first
// GUID-suffixed table (every run of one rocprofv3 writes the same layout).
func rocpdCols(s *sqliteSchema, base string) map[string]bool {
	if s.has(base) {
		return s.columns(base)
	}
	first := ""
	for n, typ := range s.names {
		if typ == "table" && strings.HasPrefix(n, base+"_") && rocpdSuffixOK(strings.TrimPrefix(n, base+"_")) && (first == "" || n < first) {
			first = n
		}
	}
	if first == "" {
		return map[string]bool{}
	}
	return s.columns(first)
}

func sortedCols(c map[string]bool) string {
	var n []string
	for k := range c {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// readRocpd reads a rocpd database in named steps: the tables and their
// layout (newRocpdReader), metadata and agents, the joins that link a row
// to its event (correlation, category, message: linkExprs), then kernels,
// copies, regions and samples, each with the SQL its table's layout
// needs, and the warnings gathered on the way (finish).
func readRocpd(s *sqliteSchema) (*tracer.Trace, error) {
	r := newRocpdReader(s)
	r.linkExprs()
	for _, step := range []func() error{r.readMeta, r.readAgents, r.readKernels, r.readCopies, r.readRegions, r.readSamples} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	r.finish()
	return r.t, nil
}

// rocpdReader is one rocpd database being read: for each logical table
// its source (rocpdSource) and columns, the WITH clause naming them, the
// SQL that joins a row to its event, and the warnings gathered.
type rocpdReader struct {
	s    *sqliteSchema
	t    *tracer.Trace
	src  map[string]string          // logical table → FROM-able SQL, "" absent
	cols map[string]map[string]bool // logical table → its columns
	with []string                   // the WITH clause's tables
	cte  string                     // "WITH …, " before every query

	haveAgent bool
	// corrExpr and eventJoin: a row's correlation id through rocpd_event
	// (stack_id, else correlation_id) and the join it needs.
	corrExpr, eventJoin string
	// catExpr, msgExpr, catJoin: a row's event category, its roctx
	// message, the category table's join (catTable names that table);
	// catMissing is 1 for a row whose category_id names no row there.
	catExpr, msgExpr, catJoin, catTable, catMissing string

	// runs numbers each run's guid, for its correlation id space.
	runs map[string]uint64
	// unread collects, per table with rows rlktop could not read, why.
	unread []string
	// dangling counts rows whose ids point at nothing (or whose times are
	// NULL), by what was done about them; one warning each at the end.
	dangling      map[string]int
	danglingOrder []string
}

// newRocpdReader finds the logical tables of s and their layout.
func newRocpdReader(s *sqliteSchema) *rocpdReader {
	r := &rocpdReader{s: s, t: tracer.NewTrace("rocpd-sqlite", s.path), src: map[string]string{}, cols: map[string]map[string]bool{},
		runs: map[string]uint64{}, dangling: map[string]int{}}
	for _, n := range rocpdTables {
		r.src[n] = rocpdSource(s, n)
		if r.src[n] != "" {
			r.with = append(r.with, fmt.Sprintf("%s AS (SELECT * FROM %s)", strings.TrimPrefix(n, "rocpd_"), r.src[n]))
			r.cols[n] = rocpdCols(s, n)
		}
	}
	r.cte = "WITH " + strings.Join(r.with, ", ") + " "
	r.haveAgent = r.need("rocpd_info_agent")
	return r
}

// need reports whether every table in names is present.
func (r *rocpdReader) need(names ...string) bool {
	for _, n := range names {
		if r.src[n] == "" {
			return false
		}
	}
	return true
}

// linkExprs sets the SQL that joins a row (aliased X) to its rocpd_event
// (E): the correlation id, and the event's category (C) and message.
func (r *rocpdReader) linkExprs() {
	r.corrExpr, r.eventJoin = "NULL", ""
	if r.need("rocpd_event") {
		r.corrExpr, r.eventJoin = "E.correlation_id", " LEFT JOIN event E ON E.id = X.event_id AND E.guid = X.guid"
		if r.cols["rocpd_event"]["stack_id"] {
			r.corrExpr = "COALESCE(NULLIF(E.stack_id, 0), E.correlation_id)"
		}
	}
	// An event's category names its domain ("MARKER_CORE_API" in the
	// rocpd_string of released rocprofv3; "marker_api" in
	// rocpd_info_category in the development schema).
	r.catExpr, r.msgExpr = "NULL", "NULL"
	if r.need("rocpd_event") {
		r.msgExpr = "CASE WHEN json_valid(E.extdata) THEN json_extract(E.extdata, '$.message') END"
		if r.need("rocpd_info_category") {
			r.catExpr, r.catTable = "C.name", "rocpd_info_category"
			r.catJoin = " LEFT JOIN info_category C ON C.id = E.category_id AND C.guid = X.guid"
		} else if r.need("rocpd_string") {
			r.catExpr, r.catTable = "C.string", "rocpd_string"
			r.catJoin = " LEFT JOIN string C ON C.id = E.category_id AND C.guid = X.guid"
		}
	}
	r.catMissing = "0"
	if r.catJoin != "" && r.cols["rocpd_event"]["category_id"] {
		r.catMissing = "(E.category_id IS NOT NULL AND C.id IS NULL)"
	}
}

// space is the correlation id space of run guid: runs after the first get
// their own (run index << 48), since ids restart in every run, so Link
// never pairs across runs.
func (r *rocpdReader) space(guid string) uint64 {
	i, ok := r.runs[guid]
	if !ok {
		i = uint64(len(r.runs))
		r.runs[guid] = i
	}
	return i << 48
}

// agentJoin is the device of agent column col (X's) and its join.
func (r *rocpdReader) agentJoin(col string) (string, string) {
	if !r.haveAgent || col == "NULL" {
		return "NULL", ""
	}
	return "COALESCE(A.type_index, A.absolute_index)", fmt.Sprintf(" LEFT JOIN info_agent A ON A.id = %s AND A.guid = X.guid", col)
}

// eventMissing is 1 for a row of table base whose event_id names no
// rocpd_event row (a dangling id: no correlation id, no category).
func (r *rocpdReader) eventMissing(base string) string {
	if r.eventJoin == "" || !r.cols[base]["event_id"] {
		return "0"
	}
	return "(X.event_id IS NOT NULL AND E.id IS NULL)"
}

// span: the start and end (ns) of table base's rows aliased X, and the
// joins they need; ok is false when the table has neither layout.
func (r *rocpdReader) span(base string) (st, en, join string, ok bool) {
	c := r.cols[base]
	switch {
	case c["start"] && c["end"]:
		return `X."start"`, `X."end"`, "", true
	case c["start_id"] && c["end_id"] && r.need("rocpd_timestamp"):
		return "DS.value", "DE.value", " LEFT JOIN timestamp DS ON DS.id = X.start_id AND DS.guid = X.guid LEFT JOIN timestamp DE ON DE.id = X.end_id AND DE.guid = X.guid", true
	}
	return "", "", "", false
}

// noLayout records that table base, present, has neither time layout.
func (r *rocpdReader) noLayout(base string) {
	if r.need(base) {
		r.unread = append(r.unread, fmt.Sprintf("%s has neither start/end nor start_id/end_id with rocpd_timestamp (columns: %s)", base, sortedCols(r.cols[base])))
	}
}

// field: the SQL for a per-row field that the released schema keeps in
// the table itself and the development schema in rocpd_track.
func (r *rocpdReader) field(base, c string) string {
	if r.cols[base][c] {
		return "X." + c
	}
	if r.cols[base]["track_id"] && r.need("rocpd_track") && r.cols["rocpd_track"][c] {
		return "T." + c
	}
	return "NULL"
}

func (r *rocpdReader) trackJoin(base string) string {
	if r.cols[base]["track_id"] && r.need("rocpd_track") {
		return " LEFT JOIN track T ON T.id = X.track_id AND T.guid = X.guid"
	}
	return ""
}

func (r *rocpdReader) stringJoin(alias, col string) (string, string) {
	if !r.need("rocpd_string") || col == "NULL" {
		return "NULL", ""
	}
	return alias + ".string", fmt.Sprintf(" LEFT JOIN string %s ON %s.id = %s AND %s.guid = X.guid", alias, alias, col, alias)
}

// dangle counts one row of the kind what describes.
func (r *rocpdReader) dangle(what string) {
	if r.dangling[what] == 0 {
		r.danglingOrder = append(r.danglingOrder, what)
	}
	r.dangling[what]++
}

// noTimes drops a row of table base whose start or end is NULL (a NULL
// column, or a start_id/end_id missing from rocpd_timestamp): it has no
// place in time, and 0 would put it at the epoch.
func (r *rocpdReader) noTimes(base string, start, end sql.NullInt64) bool {
	if start.Valid && end.Valid {
		return false
	}
	r.dangle(base + " rows have no start or end time (NULL, or a start_id/end_id not in rocpd_timestamp); dropped")
	return true
}

func (r *rocpdReader) readMeta() error {
	if !r.need("rocpd_metadata") {
		return nil
	}
	t := r.t
	var tag, val sql.NullString
	if err := scanRows(r.s, "rocpd_metadata", r.cte+`SELECT tag, value FROM metadata`, []any{&tag, &val}, func() error {
		t.Meta["rocpd_"+tag.String] = val.String
		return nil
	}); err != nil {
		return err
	}
	if v := t.Meta["rocpd_schema_version"]; v != "" {
		t.Meta["schema_version"] = v
	}
	return nil
}

func (r *rocpdReader) readAgents() error {
	if !r.need("rocpd_info_agent") {
		return nil
	}
	t := r.t
	var typ, name, product sql.NullString
	var typeIdx, absIdx sql.NullInt64
	seen := map[int32]bool{}
	return scanRows(r.s, "rocpd_info_agent", r.cte+`SELECT type, type_index, absolute_index, name, product_name FROM info_agent ORDER BY type_index`,
		[]any{&typ, &typeIdx, &absIdx, &name, &product}, func() error {
			if typ.String != "GPU" {
				return nil
			}
			id := int32(typeIdx.Int64)
			if !typeIdx.Valid {
				id = int32(absIdx.Int64)
			}
			if seen[id] {
				return nil
			}
			seen[id] = true
			d := tracer.Device{ID: id, Name: product.String, Vendor: "amd", ComputeCap: name.String,
				Props: map[string]string{"name": name.String, "product_name": product.String}}
			if d.Name == "" {
				d.Name = name.String
			}
			t.Devices = append(t.Devices, d)
			return nil
		})
}

func (r *rocpdReader) readKernels() error {
	const base = "rocpd_kernel_dispatch"
	st, en, tsJoin, ok := r.span(base)
	if !ok {
		r.noLayout(base)
		return nil
	}
	nameExpr, altExpr, symJoin, symMissing := "NULL", "NULL", "", "0"
	if r.need("rocpd_info_kernel_symbol") {
		nameExpr, altExpr = "S.display_name", "S.kernel_name"
		symJoin = " LEFT JOIN info_kernel_symbol S ON S.id = X.kernel_id AND S.guid = X.guid"
		if r.cols[base]["kernel_id"] {
			symMissing = "(X.kernel_id IS NOT NULL AND S.id IS NULL)"
		}
	}
	agentCol := r.field(base, "agent_id")
	devExpr, aJoin := r.agentJoin(agentCol)
	agentMissing := "0"
	if aJoin != "" {
		agentMissing = "(" + agentCol + " IS NOT NULL AND A.id IS NULL)"
	}
	var start, end, corr, pid, tid, queue, stream, dev sql.NullInt64
	var name, alt, guid sql.NullString
	var symGone, agentGone, eventGone bool
	q := r.cte + `SELECT X.guid, ` + st + `, ` + en + `, ` + nameExpr + `, ` + altExpr + `, ` + r.corrExpr + `, ` +
		r.field(base, "pid") + `, ` + r.field(base, "tid") + `, ` +
		r.field(base, "queue_id") + `, ` + r.field(base, "stream_id") + `, ` + devExpr + `, ` +
		symMissing + `, ` + agentMissing + `, ` + r.eventMissing(base) +
		` FROM kernel_dispatch X` + tsJoin + symJoin + r.trackJoin(base) + r.eventJoin + aJoin
	return scanRows(r.s, base, q, []any{&guid, &start, &end, &name, &alt, &corr, &pid, &tid, &queue, &stream, &dev, &symGone, &agentGone, &eventGone}, func() error {
		if r.noTimes(base, start, end) {
			return nil
		}
		if eventGone {
			r.dangle("kernel dispatches name an event_id not in rocpd_event; kept with no correlation id (not linked to their launch)")
		}
		n := name.String
		if n == "" {
			n = alt.String
		}
		if n == "" {
			n = "<unnamed kernel>"
			if symGone {
				r.dangle(`kernel dispatches name a kernel_id not in rocpd_info_kernel_symbol; kept, named "<unnamed kernel>"`)
			} else {
				r.dangle(`kernel dispatches have no kernel symbol name; kept, named "<unnamed kernel>"`)
			}
		}
		e := rocpdEvent(r.t, tracer.KindKernel, n, start, end, corr, pid, tid, dev)
		if agentGone {
			// Not GPU 0, which a NULL would have become.
			r.dangle("kernel dispatches name an agent_id not in rocpd_info_agent; kept on device -1 (unknown)")
			e.Device = -1
		}
		if e.Corr != 0 {
			e.Corr |= r.space(guid.String)
		}
		e.Stream = int32(stream.Int64)
		if !stream.Valid {
			e.Stream = int32(queue.Int64)
		}
		e.TID = int32(tid.Int64)
		if !tid.Valid {
			e.TID = -1
		}
		r.t.Events = append(r.t.Events, e)
		return nil
	})
}

func (r *rocpdReader) readCopies() error {
	const base = "rocpd_memory_copy"
	st, en, tsJoin, ok := r.span(base)
	if !ok {
		r.noLayout(base)
		return nil
	}
	// The device side of a copy: the destination when it is a GPU, else
	// the source.
	dexpr, joins := "NULL", ""
	if r.haveAgent {
		dexpr = "CASE WHEN DA.type = 'GPU' THEN COALESCE(DA.type_index, DA.absolute_index) ELSE COALESCE(SA.type_index, SA.absolute_index) END"
		joins = " LEFT JOIN info_agent DA ON DA.id = X.dst_agent_id AND DA.guid = X.guid LEFT JOIN info_agent SA ON SA.id = X.src_agent_id AND SA.guid = X.guid"
	}
	nameExpr, nJoin := r.stringJoin("NS", "X.name_id")
	var start, end, corr, pid, tid, queue, stream, dev, size sql.NullInt64
	var name, guid sql.NullString
	var eventGone bool
	q := r.cte + `SELECT X.guid, ` + st + `, ` + en + `, ` + nameExpr + `, X.size, ` + r.corrExpr + `, ` +
		r.field(base, "pid") + `, ` + r.field(base, "tid") + `, ` +
		r.field(base, "queue_id") + `, ` + r.field(base, "stream_id") + `, ` + dexpr + `, ` + r.eventMissing(base) +
		` FROM memory_copy X` + tsJoin + nJoin + r.trackJoin(base) + r.eventJoin + joins
	return scanRows(r.s, base, q, []any{&guid, &start, &end, &name, &size, &corr, &pid, &tid, &queue, &stream, &dev, &eventGone}, func() error {
		if r.noTimes(base, start, end) {
			return nil
		}
		if eventGone {
			r.dangle("memory copies name an event_id not in rocpd_event; kept with no correlation id (not linked to their API call)")
		}
		n := name.String
		if n == "" {
			n = "MEMORY_COPY"
			if nJoin != "" {
				r.dangle(`memory copies have no name (a name_id not in rocpd_string, or an empty one); kept, named "MEMORY_COPY"`)
			}
		}
		e := rocpdEvent(r.t, tracer.KindMemcpy, n, start, end, corr, pid, tid, dev)
		if e.Corr != 0 {
			e.Corr |= r.space(guid.String)
		}
		e.Value = size.Int64
		e.Stream = int32(stream.Int64)
		if !stream.Valid {
			e.Stream = int32(queue.Int64)
		}
		e.TID = -1
		r.t.Events = append(r.t.Events, e)
		return nil
	})
}

// isMarker reports whether an event category names a marker domain.
func isMarker(cat string) bool { return strings.Contains(strings.ToLower(cat), "marker") }

func (r *rocpdReader) readRegions() error {
	const base = "rocpd_region"
	st, en, tsJoin, ok := r.span(base)
	if !ok {
		r.noLayout(base)
		return nil
	}
	nameExpr, nJoin := r.stringJoin("NS", "X.name_id")
	var start, end, corr, pid, tid sql.NullInt64
	var name, cat, msg, guid sql.NullString
	var eventGone, catGone bool
	q := r.cte + `SELECT X.guid, ` + st + `, ` + en + `, ` + nameExpr + `, ` + r.catExpr + `, ` + r.msgExpr + `, ` + r.corrExpr + `, ` +
		r.field(base, "pid") + `, ` + r.field(base, "tid") + `, ` + r.eventMissing(base) + `, ` + r.catMissing +
		` FROM region X` + tsJoin + nJoin + r.trackJoin(base) + r.eventJoin + r.catJoin
	return scanRows(r.s, base, q, []any{&guid, &start, &end, &name, &cat, &msg, &corr, &pid, &tid, &eventGone, &catGone}, func() error {
		if r.noTimes(base, start, end) {
			return nil
		}
		switch {
		case eventGone:
			r.dangle("rocpd_region rows name an event_id not in rocpd_event; kept as API calls with no correlation id (a marker range among them is not shown as a range)")
		case catGone:
			r.dangle("rocpd_region rows have an event whose category_id is not in " + r.catTable + "; kept as API calls (a marker range among them is not shown as a range)")
		}
		kind, n := tracer.KindRuntime, name.String
		if isMarker(cat.String) {
			kind = tracer.KindRange
			if msg.Valid && msg.String != "" {
				n = msg.String
			}
		}
		e := rocpdEvent(r.t, kind, n, start, end, corr, pid, tid, sql.NullInt64{})
		if kind != tracer.KindRuntime {
			e.Corr = 0
		} else if e.Corr != 0 {
			e.Corr |= r.space(guid.String)
		}
		asStep(&e, n)
		r.t.Events = append(r.t.Events, e)
		return nil
	})
}

// readSamples reads marker samples: a timestamp column (released) or
// timestamp_id (development); the name from the sample's name_id, else
// its track's.
func (r *rocpdReader) readSamples() error {
	const base = "rocpd_sample"
	sc := r.cols[base]
	tsExpr, sJoin := "", ""
	switch {
	case sc["timestamp"]:
		tsExpr = "X.timestamp"
	case sc["timestamp_id"] && r.need("rocpd_timestamp"):
		tsExpr, sJoin = "DS.value", " JOIN timestamp DS ON DS.id = X.timestamp_id AND DS.guid = X.guid"
	}
	if tsExpr == "" || !r.need(base, "rocpd_event") {
		return nil
	}
	nameExpr, nJoin := r.stringJoin("NS", r.field(base, "name_id"))
	var start, pid, tid sql.NullInt64
	var name, cat, msg sql.NullString
	var eventGone, catGone bool
	q := r.cte + `SELECT ` + tsExpr + `, ` + nameExpr + `, ` + r.catExpr + `, ` + r.msgExpr + `, ` + r.field(base, "pid") + `, ` + r.field(base, "tid") + `, ` + r.eventMissing(base) + `, ` + r.catMissing +
		` FROM sample X` + sJoin + r.trackJoin(base) + nJoin + r.eventJoin + r.catJoin
	return scanRows(r.s, base, q, []any{&start, &name, &cat, &msg, &pid, &tid, &eventGone, &catGone}, func() error {
		switch {
		case eventGone:
			r.dangle("rocpd_sample rows name an event_id not in rocpd_event, so no category says whether they are markers; dropped")
			return nil
		case catGone:
			r.dangle("rocpd_sample rows have an event whose category_id is not in " + r.catTable + ", so nothing says whether they are markers; dropped")
			return nil
		}
		if !isMarker(cat.String) {
			return nil
		}
		n := name.String
		if msg.Valid && msg.String != "" {
			n = msg.String
		}
		r.t.Events = append(r.t.Events, rocpdEvent(r.t, tracer.KindInstant, n, start, start, sql.NullInt64{}, pid, tid, sql.NullInt64{}))
		return nil
	})
}

// finish adds the table count, the no-GPU-work warning and then the
// dangling-row warnings, in the order they were first met.
func (r *rocpdReader) finish() {
	t := r.t
	t.Meta["rocpd_tables"] = strconv.Itoa(len(r.with))
	if !hasGPUWork(t) {
		warnNoGPU(t, rocpdFound(r.s, r.src, r.cte, r.catExpr, r.catJoin, r.eventJoin, r.unread))
	}
	for _, w := range r.danglingOrder {
		t.Warn(fmt.Sprintf("%s: %d %s", r.s.path, r.dangling[w], w))
	}
}

// rocpdFound describes what a database that yielded no GPU work holds: the
// rows of each data table, regions by category, and the tables that could
// not be read.
func rocpdFound(s *sqliteSchema, src map[string]string, cte, catExpr, catJoin, eventJoin string, unread []string) string {
	var parts []string
	for _, n := range []string{"rocpd_kernel_dispatch", "rocpd_memory_copy", "rocpd_region", "rocpd_sample"} {
		if src[n] == "" {
			parts = append(parts, n+" absent")
			continue
		}
		var c int64
		if err := s.queryRow(cte + `SELECT count(*) FROM ` + strings.TrimPrefix(n, "rocpd_")).Scan(&c); err != nil {
			parts = append(parts, n+" unreadable ("+err.Error()+")")
			continue
		}
		p := fmt.Sprintf("%s %d rows", n, c)
		if n == "rocpd_region" && c > 0 && catExpr != "NULL" {
			var byCat []string
			rows, err := s.query(cte + `SELECT ` + catExpr + `, count(*) FROM region X` + eventJoin + catJoin + ` GROUP BY 1 ORDER BY 2 DESC, 1`)
			if err == nil {
				for rows.Next() {
					var cat sql.NullString
					var k int64
					if rows.Scan(&cat, &k) == nil {
						byCat = append(byCat, fmt.Sprintf("%s %d", cmp.Or(cat.String, "(no category)"), k))
					}
				}
				rows.Close()
			}
			if len(byCat) > 0 {
				p += " (" + strings.Join(byCat, ", ") + ")"
			}
		}
		parts = append(parts, p)
	}
	out := strings.Join(parts, ", ")
	if len(unread) > 0 {
		out += "; not read: " + strings.Join(unread, "; ")
	}
	return out
}

// rocpdEvent builds an event; the caller ORs the run's correlation space
// into Corr.
func rocpdEvent(t *tracer.Trace, kind tracer.Kind, name string, start, end, corr, pid, tid, dev sql.NullInt64) tracer.Event {
	e := tracer.Event{Kind: kind, Start: start.Int64, Corr: uint64(corr.Int64) & (1<<48 - 1), PID: int32(pid.Int64), TID: int32(tid.Int64),
		Device: -1, Name: t.Strings.Intern(name)}
	if kind.IsGPU() {
		e.Device = int32(dev.Int64)
	}
	var ok bool
	if e.Dur, ok = clampDur(start.Int64, end.Int64); !ok {
		t.Warn(fmt.Sprintf("%s: %s %q at %d %s; duration set to 0", t.Path, kind, name, start.Int64, durWhy(start.Int64, end.Int64)))
	}
	return e
}
