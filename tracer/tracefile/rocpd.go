package tracefile

import (
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// rocpd SQLite databases: rocprofv3's default output since ROCm 7.0
// (rocprofiler-sdk's rocpd schema, schema_version 3 in
// source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql).
//
// Data lives in tables suffixed with a per-run GUID
// (rocpd_kernel_dispatch_<uuid>, …); rocprofv3 also creates views with the
// bare names (rocpd_kernel_dispatch AS SELECT * FROM …_<uuid>). A merged
// database can hold several suffixed sets. For each logical table the
// reader uses the bare-name view or table when present, else the UNION ALL
// of every suffixed table, and joins on (id, guid) as rocpd's own views do.
//
//   - rocpd_kernel_dispatch → KindKernel: start/end from rocpd_timestamp,
//     name = rocpd_info_kernel_symbol.display_name (else kernel_name), the
//     name rocpd's `kernels` view shows; correlation id from rocpd_event;
//     pid/tid/queue/stream from rocpd_track; Device = the agent's
//     type_index (GPU ordinal), else its absolute_index;
//   - rocpd_memory_copy → KindMemcpy named as written
//     ("MEMORY_COPY_HOST_TO_DEVICE"), Value = size in bytes;
//   - rocpd_region whose event category names a marker domain
//     ("MARKER_CORE_API" through rocpd_string in the first schema,
//     "marker_api" through rocpd_info_category in later ones) → KindRange
//     named by the roctx message (event extdata $.message, else the region
//     name; "ProfilerStep#N" → KindStep, Value N); other regions
//     (HIP_RUNTIME_API, HSA_CORE_API …) →
//     KindRuntime with their correlation id;
//   - rocpd_sample with a marker category → KindInstant;
//   - rocpd_info_agent (GPU rows) → Devices; rocpd_metadata → Meta.
//
// Times are rocprofiler ns (CLOCK_BOOTTIME) as stored. Correlation ids
// restart in every run, so in a merged database the n-th run's ids (n from
// 0, in the order rows are met) are offset by n<<48; a single-run file keeps
// them as written.

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

func readRocpd(s *sqliteSchema) (*tracer.Trace, error) {
	t := tracer.NewTrace("rocpd-sqlite", s.path)
	src := map[string]string{}
	var with []string
	for _, n := range rocpdTables {
		src[n] = rocpdSource(s, n)
		if src[n] != "" {
			with = append(with, fmt.Sprintf("%s AS (SELECT * FROM %s)", strings.TrimPrefix(n, "rocpd_"), src[n]))
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
	devExpr := "NULL"
	if need("rocpd_info_agent") {
		devExpr = "COALESCE(A.type_index, A.absolute_index)"
	}
	agentJoin := func(col string) string {
		if !need("rocpd_info_agent") {
			return ""
		}
		return fmt.Sprintf(" LEFT JOIN info_agent A ON A.id = %s AND A.guid = X.guid", col)
	}
	corrExpr, eventJoin := "NULL", ""
	if need("rocpd_event") {
		corrExpr, eventJoin = "E.correlation_id", " LEFT JOIN event E ON E.id = X.event_id AND E.guid = X.guid"
	}
	ts := " JOIN timestamp DS ON DS.id = X.start_id AND DS.guid = X.guid JOIN timestamp DE ON DE.id = X.end_id AND DE.guid = X.guid"

	if need("rocpd_kernel_dispatch", "rocpd_timestamp", "rocpd_track", "rocpd_info_kernel_symbol") {
		q := cte + `SELECT X.guid, DS.value, DE.value, S.display_name, S.kernel_name, ` + corrExpr + `, T.pid, T.tid, T.queue_id, T.stream_id, ` + devExpr +
			` FROM kernel_dispatch X` + ts +
			` LEFT JOIN info_kernel_symbol S ON S.id = X.kernel_id AND S.guid = X.guid` +
			` LEFT JOIN track T ON T.id = X.track_id AND T.guid = X.guid` + eventJoin + agentJoin("T.agent_id")
		if err := scanRows(s, "rocpd_kernel_dispatch", q, []any{&guid, &start, &end, &name, &alt, &corr, &pid, &tid, &queue, &stream, &dev}, func() error {
			n := name.String
			if n == "" {
				n = alt.String
			}
			if n == "" {
				n = "<unnamed kernel>"
				t.Warn(fmt.Sprintf("%s: kernel dispatch at %d has no kernel symbol", s.path, start.Int64))
			}
			e := rocpdEvent(t, tracer.KindKernel, n, start, end, corr, pid, tid, dev)
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
	}
	if need("rocpd_memory_copy", "rocpd_timestamp", "rocpd_track", "rocpd_string") {
		// The device side of a copy: the destination when it is a GPU,
		// else the source.
		dexpr := "NULL"
		joins := ""
		if need("rocpd_info_agent") {
			dexpr = "CASE WHEN DA.type = 'GPU' THEN COALESCE(DA.type_index, DA.absolute_index) ELSE COALESCE(SA.type_index, SA.absolute_index) END"
			joins = " LEFT JOIN info_agent DA ON DA.id = X.dst_agent_id AND DA.guid = X.guid LEFT JOIN info_agent SA ON SA.id = X.src_agent_id AND SA.guid = X.guid"
		}
		q := cte + `SELECT X.guid, DS.value, DE.value, NS.string, X.size, ` + corrExpr + `, T.pid, T.tid, T.queue_id, T.stream_id, ` + dexpr +
			` FROM memory_copy X` + ts +
			` LEFT JOIN string NS ON NS.id = X.name_id AND NS.guid = X.guid` +
			` LEFT JOIN track T ON T.id = X.track_id AND T.guid = X.guid` + eventJoin + joins
		if err := scanRows(s, "rocpd_memory_copy", q, []any{&guid, &start, &end, &name, &size, &corr, &pid, &tid, &queue, &stream, &dev}, func() error {
			e := rocpdEvent(t, tracer.KindMemcpy, name.String, start, end, corr, pid, tid, dev)
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
	}
	// An event's category names its domain ("MARKER_CORE_API" in the
	// first rocpd schema, where category_id points into rocpd_string;
	// "marker_api" in later ones, where it points into rocpd_info_category).
	catExpr, msgExpr, catJoin := "NULL", "NULL", ""
	if need("rocpd_event") {
		msgExpr = "CASE WHEN json_valid(E.extdata) THEN json_extract(E.extdata, '$.message') END"
		if need("rocpd_info_category") {
			catExpr = "C.name"
			catJoin = " LEFT JOIN info_category C ON C.id = E.category_id AND C.guid = X.guid"
		} else {
			catExpr = "C.string"
			catJoin = " LEFT JOIN string C ON C.id = E.category_id AND C.guid = X.guid"
		}
	}
	isMarker := func(cat string) bool { return strings.Contains(strings.ToLower(cat), "marker") }
	if need("rocpd_region", "rocpd_timestamp", "rocpd_track", "rocpd_string") {
		q := cte + `SELECT X.guid, DS.value, DE.value, NS.string, ` + catExpr + `, ` + msgExpr + `, ` + corrExpr + `, T.pid, T.tid` +
			` FROM region X` + ts +
			` LEFT JOIN string NS ON NS.id = X.name_id AND NS.guid = X.guid` +
			` LEFT JOIN track T ON T.id = X.track_id AND T.guid = X.guid` + eventJoin + catJoin
		if err := scanRows(s, "rocpd_region", q, []any{&guid, &start, &end, &name, &cat, &msg, &corr, &pid, &tid}, func() error {
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
	}
	if need("rocpd_sample", "rocpd_timestamp", "rocpd_track", "rocpd_string", "rocpd_event") {
		q := cte + `SELECT DS.value, NS.string, ` + catExpr + `, ` + msgExpr + `, T.pid, T.tid` +
			` FROM sample X JOIN timestamp DS ON DS.id = X.timestamp_id AND DS.guid = X.guid` +
			` LEFT JOIN string NS ON NS.id = X.name_id AND NS.guid = X.guid` +
			` LEFT JOIN track T ON T.id = X.track_id AND T.guid = X.guid` + eventJoin + catJoin
		if err := scanRows(s, "rocpd_sample", q, []any{&start, &name, &cat, &msg, &pid, &tid}, func() error {
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
	return t, nil
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
		t.Warn(fmt.Sprintf("%s: %s %q at %d ends before it starts; duration set to 0", t.Path, kind, name, start.Int64))
	}
	return e
}
