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

func readRocpd(s *sqliteSchema) (*tracer.Trace, error) {
	t := tracer.NewTrace("rocpd-sqlite", s.path)
	src := map[string]string{}
	cols := map[string]map[string]bool{}
	var with []string
	for _, n := range rocpdTables {
		src[n] = rocpdSource(s, n)
		if src[n] != "" {
			with = append(with, fmt.Sprintf("%s AS (SELECT * FROM %s)", strings.TrimPrefix(n, "rocpd_"), src[n]))
			cols[n] = rocpdCols(s, n)
		}
	}
	need := func(names ...string) bool {
		for _, n := range names {
			if src[n] == "" {
				return false
			}
		}
		return true
	}
	cte := "WITH " + strings.Join(with, ", ") + " "

	if need("rocpd_metadata") {
		var tag, val sql.NullString
		if err := scanRows(s, "rocpd_metadata", cte+`SELECT tag, value FROM metadata`, []any{&tag, &val}, func() error {
			t.Meta["rocpd_"+tag.String] = val.String
			return nil
		}); err != nil {
			return nil, err
		}
		if v := t.Meta["rocpd_schema_version"]; v != "" {
			t.Meta["schema_version"] = v
		}
	}
	if need("rocpd_info_agent") {
		var typ, name, product sql.NullString
		var typeIdx, absIdx sql.NullInt64
		seen := map[int32]bool{}
		if err := scanRows(s, "rocpd_info_agent", cte+`SELECT type, type_index, absolute_index, name, product_name FROM info_agent ORDER BY type_index`,
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
			}); err != nil {
			return nil, err
		}
	}

	var start, end, corr, pid, tid, queue, stream, dev, size sql.NullInt64
	var name, alt, cat, msg, guid sql.NullString
	// Correlation ids restart in every run: runs after the first get their
	// own id space (run index << 48) so Link never pairs across runs.
	runs := map[string]uint64{}
	space := func() uint64 {
		i, ok := runs[guid.String]
		if !ok {
			i = uint64(len(runs))
			runs[guid.String] = i
		}
		return i << 48
	}
	haveAgent := need("rocpd_info_agent")
	agentJoin := func(col string) (string, string) {
		if !haveAgent || col == "NULL" {
			return "NULL", ""
		}
		return "COALESCE(A.type_index, A.absolute_index)", fmt.Sprintf(" LEFT JOIN info_agent A ON A.id = %s AND A.guid = X.guid", col)
	}
	corrExpr, eventJoin := "NULL", ""
	if need("rocpd_event") {
		corrExpr, eventJoin = "E.correlation_id", " LEFT JOIN event E ON E.id = X.event_id AND E.guid = X.guid"
		if cols["rocpd_event"]["stack_id"] {
			corrExpr = "COALESCE(NULLIF(E.stack_id, 0), E.correlation_id)"
		}
	}
	// eventMissing is 1 for a row of table base whose event_id names no
	// rocpd_event row (a dangling id: no correlation id, no category).
	eventMissing := func(base string) string {
		if eventJoin == "" || !cols[base]["event_id"] {
			return "0"
		}
		return "(X.event_id IS NOT NULL AND E.id IS NULL)"
	}
	var eventGone, catGone bool
	trackCols := cols["rocpd_track"]
	// span: the start and end (ns) of table base's rows aliased X, and the
	// joins they need; ok is false when the table has neither layout.
	span := func(base string) (st, en, join string, ok bool) {
		c := cols[base]
		switch {
		case c["start"] && c["end"]:
			return `X."start"`, `X."end"`, "", true
		case c["start_id"] && c["end_id"] && need("rocpd_timestamp"):
			return "DS.value", "DE.value", " LEFT JOIN timestamp DS ON DS.id = X.start_id AND DS.guid = X.guid LEFT JOIN timestamp DE ON DE.id = X.end_id AND DE.guid = X.guid", true
		}
		return "", "", "", false
	}
	// field: the SQL for a per-row field that the released schema keeps in
	// the table itself and the development schema in rocpd_track.
	field := func(base, c string) string {
		if cols[base][c] {
			return "X." + c
		}
		if cols[base]["track_id"] && need("rocpd_track") && trackCols[c] {
			return "T." + c
		}
		return "NULL"
	}
	trackJoin := func(base string) string {
		if cols[base]["track_id"] && need("rocpd_track") {
			return " LEFT JOIN track T ON T.id = X.track_id AND T.guid = X.guid"
		}
		return ""
	}
	stringJoin := func(alias, col string) (string, string) {
		if !need("rocpd_string") || col == "NULL" {
			return "NULL", ""
		}
		return alias + ".string", fmt.Sprintf(" LEFT JOIN string %s ON %s.id = %s AND %s.guid = X.guid", alias, alias, col, alias)
	}
	// unread collects, per table with rows rlktop could not read, why.
	var unread []string
	// dangling counts rows whose ids point at nothing (or whose times are
	// NULL), by what was done about them; one warning each at the end.
	dangling := map[string]int{}
	var danglingOrder []string
	dangle := func(what string) {
		if dangling[what] == 0 {
			danglingOrder = append(danglingOrder, what)
		}
		dangling[what]++
	}
	defer func() {
		for _, w := range danglingOrder {
			t.Warn(fmt.Sprintf("%s: %d %s", s.path, dangling[w], w))
		}
	}()
	// noTimes drops a row of table base whose start or end is NULL (a NULL
	// column, or a start_id/end_id missing from rocpd_timestamp): it has
	// no place in time, and 0 would put it at the epoch.
	noTimes := func(base string) bool {
		if start.Valid && end.Valid {
			return false
		}
		dangle(base + " rows have no start or end time (NULL, or a start_id/end_id not in rocpd_timestamp); dropped")
		return true
	}

	if st, en, tsJoin, ok := span("rocpd_kernel_dispatch"); ok {
		nameExpr, altExpr, symJoin, symMissing := "NULL", "NULL", "", "0"
		if need("rocpd_info_kernel_symbol") {
			nameExpr, altExpr = "S.display_name", "S.kernel_name"
			symJoin = " LEFT JOIN info_kernel_symbol S ON S.id = X.kernel_id AND S.guid = X.guid"
			if cols["rocpd_kernel_dispatch"]["kernel_id"] {
				symMissing = "(X.kernel_id IS NOT NULL AND S.id IS NULL)"
			}
		}
		agentCol := field("rocpd_kernel_dispatch", "agent_id")
		devExpr, aJoin := agentJoin(agentCol)
		agentMissing := "0"
		if aJoin != "" {
			agentMissing = "(" + agentCol + " IS NOT NULL AND A.id IS NULL)"
		}
		var symGone, agentGone bool
		q := cte + `SELECT X.guid, ` + st + `, ` + en + `, ` + nameExpr + `, ` + altExpr + `, ` + corrExpr + `, ` +
			field("rocpd_kernel_dispatch", "pid") + `, ` + field("rocpd_kernel_dispatch", "tid") + `, ` +
			field("rocpd_kernel_dispatch", "queue_id") + `, ` + field("rocpd_kernel_dispatch", "stream_id") + `, ` + devExpr + `, ` +
			symMissing + `, ` + agentMissing + `, ` + eventMissing("rocpd_kernel_dispatch") +
			` FROM kernel_dispatch X` + tsJoin + symJoin + trackJoin("rocpd_kernel_dispatch") + eventJoin + aJoin
		if err := scanRows(s, "rocpd_kernel_dispatch", q, []any{&guid, &start, &end, &name, &alt, &corr, &pid, &tid, &queue, &stream, &dev, &symGone, &agentGone, &eventGone}, func() error {
			if noTimes("rocpd_kernel_dispatch") {
				return nil
			}
			if eventGone {
				dangle("kernel dispatches name an event_id not in rocpd_event; kept with no correlation id (not linked to their launch)")
			}
			n := name.String
			if n == "" {
				n = alt.String
			}
			if n == "" {
				n = "<unnamed kernel>"
				if symGone {
					dangle(`kernel dispatches name a kernel_id not in rocpd_info_kernel_symbol; kept, named "<unnamed kernel>"`)
				} else {
					dangle(`kernel dispatches have no kernel symbol name; kept, named "<unnamed kernel>"`)
				}
			}
			e := rocpdEvent(t, tracer.KindKernel, n, start, end, corr, pid, tid, dev)
			if agentGone {
				// Not GPU 0, which a NULL would have become.
				dangle("kernel dispatches name an agent_id not in rocpd_info_agent; kept on device -1 (unknown)")
				e.Device = -1
			}
			if e.Corr != 0 {
				e.Corr |= space()
			}
			e.Stream = int32(stream.Int64)
			if !stream.Valid {
				e.Stream = int32(queue.Int64)
			}
			e.TID = int32(tid.Int64)
			if !tid.Valid {
				e.TID = -1
			}
			t.Events = append(t.Events, e)
			return nil
		}); err != nil {
			return nil, err
		}
	} else if need("rocpd_kernel_dispatch") {
		unread = append(unread, fmt.Sprintf("rocpd_kernel_dispatch has neither start/end nor start_id/end_id with rocpd_timestamp (columns: %s)", sortedCols(cols["rocpd_kernel_dispatch"])))
	}
	if st, en, tsJoin, ok := span("rocpd_memory_copy"); ok {
		// The device side of a copy: the destination when it is a GPU,
		// else the source.
		dexpr, joins := "NULL", ""
		if haveAgent {
			dexpr = "CASE WHEN DA.type = 'GPU' THEN COALESCE(DA.type_index, DA.absolute_index) ELSE COALESCE(SA.type_index, SA.absolute_index) END"
			joins = " LEFT JOIN info_agent DA ON DA.id = X.dst_agent_id AND DA.guid = X.guid LEFT JOIN info_agent SA ON SA.id = X.src_agent_id AND SA.guid = X.guid"
		}
		nameExpr, nJoin := stringJoin("NS", "X.name_id")
		q := cte + `SELECT X.guid, ` + st + `, ` + en + `, ` + nameExpr + `, X.size, ` + corrExpr + `, ` +
			field("rocpd_memory_copy", "pid") + `, ` + field("rocpd_memory_copy", "tid") + `, ` +
			field("rocpd_memory_copy", "queue_id") + `, ` + field("rocpd_memory_copy", "stream_id") + `, ` + dexpr + `, ` + eventMissing("rocpd_memory_copy") +
			` FROM memory_copy X` + tsJoin + nJoin + trackJoin("rocpd_memory_copy") + eventJoin + joins
		if err := scanRows(s, "rocpd_memory_copy", q, []any{&guid, &start, &end, &name, &size, &corr, &pid, &tid, &queue, &stream, &dev, &eventGone}, func() error {
			if noTimes("rocpd_memory_copy") {
				return nil
			}
			if eventGone {
				dangle("memory copies name an event_id not in rocpd_event; kept with no correlation id (not linked to their API call)")
			}
			n := name.String
			if n == "" {
				n = "MEMORY_COPY"
				if nJoin != "" {
					dangle(`memory copies have no name (a name_id not in rocpd_string, or an empty one); kept, named "MEMORY_COPY"`)
				}
			}
			e := rocpdEvent(t, tracer.KindMemcpy, n, start, end, corr, pid, tid, dev)
			if e.Corr != 0 {
				e.Corr |= space()
			}
			e.Value = size.Int64
			e.Stream = int32(stream.Int64)
			if !stream.Valid {
				e.Stream = int32(queue.Int64)
			}
			e.TID = -1
			t.Events = append(t.Events, e)
			return nil
		}); err != nil {
			return nil, err
		}
	} else if need("rocpd_memory_copy") {
		unread = append(unread, fmt.Sprintf("rocpd_memory_copy has neither start/end nor start_id/end_id with rocpd_timestamp (columns: %s)", sortedCols(cols["rocpd_memory_copy"])))
	}
	// An event's category names its domain ("MARKER_CORE_API" in the
	// rocpd_string of released rocprofv3; "marker_api" in
	// rocpd_info_category in the development schema).
	catExpr, msgExpr, catJoin, catTable := "NULL", "NULL", "", ""
	if need("rocpd_event") {
		msgExpr = "CASE WHEN json_valid(E.extdata) THEN json_extract(E.extdata, '$.message') END"
		if need("rocpd_info_category") {
			catExpr, catTable = "C.name", "rocpd_info_category"
			catJoin = " LEFT JOIN info_category C ON C.id = E.category_id AND C.guid = X.guid"
		} else if need("rocpd_string") {
			catExpr, catTable = "C.string", "rocpd_string"
			catJoin = " LEFT JOIN string C ON C.id = E.category_id AND C.guid = X.guid"
		}
	}
	// catMissing is 1 for a row whose event names a category_id with no
	// row in the category table (a dangling id: the domain is unknown).
	catMissing := "0"
	if catJoin != "" && cols["rocpd_event"]["category_id"] {
		catMissing = "(E.category_id IS NOT NULL AND C.id IS NULL)"
	}
	isMarker := func(cat string) bool { return strings.Contains(strings.ToLower(cat), "marker") }
	if st, en, tsJoin, ok := span("rocpd_region"); ok {
		nameExpr, nJoin := stringJoin("NS", "X.name_id")
		q := cte + `SELECT X.guid, ` + st + `, ` + en + `, ` + nameExpr + `, ` + catExpr + `, ` + msgExpr + `, ` + corrExpr + `, ` +
			field("rocpd_region", "pid") + `, ` + field("rocpd_region", "tid") + `, ` + eventMissing("rocpd_region") + `, ` + catMissing +
			` FROM region X` + tsJoin + nJoin + trackJoin("rocpd_region") + eventJoin + catJoin
		if err := scanRows(s, "rocpd_region", q, []any{&guid, &start, &end, &name, &cat, &msg, &corr, &pid, &tid, &eventGone, &catGone}, func() error {
			if noTimes("rocpd_region") {
				return nil
			}
			switch {
			case eventGone:
				dangle("rocpd_region rows name an event_id not in rocpd_event; kept as API calls with no correlation id (a marker range among them is not shown as a range)")
			case catGone:
				dangle("rocpd_region rows have an event whose category_id is not in " + catTable + "; kept as API calls (a marker range among them is not shown as a range)")
			}
			kind, n := tracer.KindRuntime, name.String
			if isMarker(cat.String) {
				kind = tracer.KindRange
				if msg.Valid && msg.String != "" {
					n = msg.String
				}
			}
			e := rocpdEvent(t, kind, n, start, end, corr, pid, tid, sql.NullInt64{})
			if kind != tracer.KindRuntime {
				e.Corr = 0
			} else if e.Corr != 0 {
				e.Corr |= space()
			}
			asStep(&e, n)
			t.Events = append(t.Events, e)
			return nil
		}); err != nil {
			return nil, err
		}
	} else if need("rocpd_region") {
		unread = append(unread, fmt.Sprintf("rocpd_region has neither start/end nor start_id/end_id with rocpd_timestamp (columns: %s)", sortedCols(cols["rocpd_region"])))
	}
	// Samples: a timestamp column (released) or timestamp_id (development);
	// the name from the sample's name_id, else its track's.
	sc := cols["rocpd_sample"]
	tsExpr, sJoin := "", ""
	switch {
	case sc["timestamp"]:
		tsExpr = "X.timestamp"
	case sc["timestamp_id"] && need("rocpd_timestamp"):
		tsExpr, sJoin = "DS.value", " JOIN timestamp DS ON DS.id = X.timestamp_id AND DS.guid = X.guid"
	}
	if tsExpr != "" && need("rocpd_sample", "rocpd_event") {
		nameCol := field("rocpd_sample", "name_id")
		nameExpr, nJoin := stringJoin("NS", nameCol)
		q := cte + `SELECT ` + tsExpr + `, ` + nameExpr + `, ` + catExpr + `, ` + msgExpr + `, ` + field("rocpd_sample", "pid") + `, ` + field("rocpd_sample", "tid") + `, ` + eventMissing("rocpd_sample") + `, ` + catMissing +
			` FROM sample X` + sJoin + trackJoin("rocpd_sample") + nJoin + eventJoin + catJoin
		if err := scanRows(s, "rocpd_sample", q, []any{&start, &name, &cat, &msg, &pid, &tid, &eventGone, &catGone}, func() error {
			switch {
			case eventGone:
				dangle("rocpd_sample rows name an event_id not in rocpd_event, so no category says whether they are markers; dropped")
				return nil
			case catGone:
				dangle("rocpd_sample rows have an event whose category_id is not in " + catTable + ", so nothing says whether they are markers; dropped")
				return nil
			}
			if !isMarker(cat.String) {
				return nil
			}
			n := name.String
			if msg.Valid && msg.String != "" {
				n = msg.String
			}
			t.Events = append(t.Events, rocpdEvent(t, tracer.KindInstant, n, start, start, sql.NullInt64{}, pid, tid, sql.NullInt64{}))
			return nil
		}); err != nil {
			return nil, err
		}
	}
	t.Meta["rocpd_tables"] = strconv.Itoa(len(with))
	if !hasGPUWork(t) {
		warnNoGPU(t, rocpdFound(s, src, cte, catExpr, catJoin, eventJoin, unread))
	}
	return t, nil
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
