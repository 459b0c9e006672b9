package tracefile

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Nsight Systems SQLite exports (`nsys export --type sqlite`), export
// schema 2.x (nsys 2021–2023, metadata table EXPORT_META_DATA) and 3.x
// (META_DATA_EXPORT). Tables read, each only when present, columns by name:
//
//   - CUPTI_ACTIVITY_KIND_KERNEL → KindKernel, named by StringIds through
//     demangledName, else shortName, else mangledName (the demangled
//     signature is what nsys and Kineto show);
//   - CUPTI_ACTIVITY_KIND_MEMCPY → KindMemcpy named "Memcpy HtoD" … by
//     copyKind (CUPTI's CUpti_ActivityMemcpyKind), Value = bytes;
//   - CUPTI_ACTIVITY_KIND_MEMSET → KindMemset "Memset", Value = bytes;
//   - CUPTI_ACTIVITY_KIND_RUNTIME → KindRuntime (KindDriver for the driver
//     event class) carrying correlationId, so Link ties kernels to the
//     launching thread. nsys 2022 writes some calls twice with the same
//     correlationId (eventClass 0, the CUPTI record with a "_v3020"-style
//     name, and eventClass 67, the copy with a backtrace); one event is
//     kept per (globalTid, correlationId): the lowest eventClass;
//   - NVTX_EVENTS eventType 59 (push/pop), 60 (start/end) and 70/71 (the
//     same from NVTXT) → KindRange, 34 (mark) → KindInstant, plus whatever
//     the export's ENUM_NSYS_EVENT_TYPE names *PushPopRange,
//     *StartEndRange or NvtxMark; named by the inline text or
//     StringIds[textId];
//     other types (domain creation, thread names) are skipped; a range
//     named "ProfilerStep#N" becomes KindStep with Value N;
//   - TARGET_INFO_GPU → Devices; the metadata table and
//     TARGET_INFO_SESSION_START_TIME → Meta.
//
// Times are nsys's session ns as written. globalTid/globalPid serialise
// pid and tid: pid = globalTid>>24 & 0xFFFFFF, tid = globalTid & 0xFFFFFF.
// Correlation ids are kept as written for one process; with several, each
// becomes corr | pid<<40, since CUPTI numbers them per process.

func init() {
	Register(Format{Name: "nsys-sqlite", Sniff: sniffNsysSQLite, Read: readSQLite})
}

func isNsys(s *sqliteSchema) bool {
	return s.has("StringIds") && (s.has("CUPTI_ACTIVITY_KIND_KERNEL") || s.has("CUPTI_ACTIVITY_KIND_RUNTIME") ||
		s.has("NVTX_EVENTS") || s.has("EXPORT_META_DATA") || s.has("META_DATA_EXPORT"))
}

func nsysPID(g int64) int32 { return int32((g >> 24) & 0xFFFFFF) }
func nsysTID(g int64) int32 { return int32(g & 0xFFFFFF) }

// memcpyKindNames follows CUPTI's CUpti_ActivityMemcpyKind numbering.
var memcpyKindNames = map[int64]string{
	1: "Memcpy HtoD", 2: "Memcpy DtoH", 3: "Memcpy HtoA", 4: "Memcpy AtoH", 5: "Memcpy AtoA",
	6: "Memcpy AtoD", 7: "Memcpy DtoA", 8: "Memcpy DtoD", 9: "Memcpy HtoH", 10: "Memcpy PtoP",
}

// scanRows runs q and calls fn for each row with the values as
// sql.NullInt64 / sql.NullString per the dest template.
func scanRows(s *sqliteSchema, table, q string, dest []any, fn func() error) error {
	rows, err := s.query(q)
	if err != nil {
		return s.queryErr(table, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return s.queryErr(table, err)
		}
		if err := fn(); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.queryErr(table, err)
	}
	return nil
}

func readNsys(s *sqliteSchema) (*tracer.Trace, error) {
	t := tracer.NewTrace("nsys-sqlite", s.path)
	strs := map[int64]string{}
	var id sql.NullInt64
	var val sql.NullString
	if err := scanRows(s, "StringIds", `SELECT id, value FROM StringIds`, []any{&id, &val}, func() error {
		strs[id.Int64] = val.String
		return nil
	}); err != nil {
		return nil, err
	}
	if err := nsysMeta(s, t); err != nil {
		return nil, err
	}
	if err := nsysDevices(s, t); err != nil {
		return nil, err
	}
	var start, end, dev, stream, corr, gpid, a, b, c sql.NullInt64
	nullTimes := 0 // GPU rows with a NULL start or end: skipped, counted
	defer func() {
		if nullTimes > 0 {
			t.Warn(fmt.Sprintf("%s: %d kernel/memcpy/memset rows have a NULL start or end; skipped (they would be GPU work at ts 0)", s.path, nullTimes))
		}
	}()
	gpu := func(kind tracer.Kind, name string, value int64) {
		if !start.Valid || !end.Valid {
			nullTimes++
			return
		}
		e := tracer.Event{Kind: kind, Start: start.Int64, Device: int32(dev.Int64), Stream: int32(stream.Int64),
			Corr: uint64(corr.Int64), TID: -1, Value: value, Name: t.Strings.Intern(name)}
		if gpid.Valid {
			e.PID = nsysPID(gpid.Int64)
		}
		var ok bool
		if e.Dur, ok = clampDur(start.Int64, end.Int64); !ok {
			t.Warn(fmt.Sprintf("%s: %s at %d %s; duration set to 0", s.path, name, start.Int64, durWhy(start.Int64, end.Int64)))
		}
		t.Events = append(t.Events, e)
	}
	const kt = "CUPTI_ACTIVITY_KIND_KERNEL"
	if s.has(kt) {
		q := fmt.Sprintf(`SELECT k.start, k.end, k.deviceId, k.streamId, %s, %s, %s, %s, %s FROM %s AS k`,
			s.col(kt, "k", "correlationId", "0"), s.col(kt, "k", "globalPid", "NULL"),
			s.col(kt, "k", "demangledName", "NULL"), s.col(kt, "k", "shortName", "NULL"), s.col(kt, "k", "mangledName", "NULL"), kt)
		if err := scanRows(s, kt, q, []any{&start, &end, &dev, &stream, &corr, &gpid, &a, &b, &c}, func() error {
			name := ""
			for _, n := range []sql.NullInt64{a, b, c} {
				if n.Valid && strs[n.Int64] != "" {
					name = strs[n.Int64]
					break
				}
			}
			if name == "" {
				name = "<unnamed kernel>"
				t.Warn(fmt.Sprintf("%s: kernel at %d has no name in StringIds", s.path, start.Int64))
			}
			gpu(tracer.KindKernel, name, 0)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	const mt = "CUPTI_ACTIVITY_KIND_MEMCPY"
	if s.has(mt) {
		q := fmt.Sprintf(`SELECT m.start, m.end, m.deviceId, m.streamId, %s, %s, m.bytes, %s FROM %s AS m`,
			s.col(mt, "m", "correlationId", "0"), s.col(mt, "m", "globalPid", "NULL"), s.col(mt, "m", "copyKind", "0"), mt)
		if err := scanRows(s, mt, q, []any{&start, &end, &dev, &stream, &corr, &gpid, &a, &b}, func() error {
			name, ok := memcpyKindNames[b.Int64]
			if !ok {
				name = "Memcpy"
			}
			gpu(tracer.KindMemcpy, name, a.Int64)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	const st = "CUPTI_ACTIVITY_KIND_MEMSET"
	if s.has(st) {
		q := fmt.Sprintf(`SELECT m.start, m.end, m.deviceId, m.streamId, %s, %s, m.bytes FROM %s AS m`,
			s.col(st, "m", "correlationId", "0"), s.col(st, "m", "globalPid", "NULL"), st)
		if err := scanRows(s, st, q, []any{&start, &end, &dev, &stream, &corr, &gpid, &a}, func() error {
			gpu(tracer.KindMemset, "Memset", a.Int64)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if err := nsysRuntime(s, t, strs); err != nil {
		return nil, err
	}
	if err := nsysNVTX(s, t, strs); err != nil {
		return nil, err
	}
	nsysCorrSpaces(t)
	return t, nil
}

// nsysCorrSpaces: CUPTI correlation ids are per process, so in an export
// of several processes (MPI ranks, torchrun workers) the same id launches
// different kernels. With more than one process, every correlation id is
// put in its process's space: corr | pid<<40.
func nsysCorrSpaces(t *tracer.Trace) {
	pids := map[int32]bool{}
	for i := range t.Events {
		if t.Events[i].Corr != 0 {
			pids[t.Events[i].PID] = true
		}
	}
	if len(pids) < 2 {
		return
	}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Corr != 0 {
			e.Corr |= uint64(uint32(e.PID)) << 40
		}
	}
	t.Meta["nsys_correlation_ids"] = "per process: corr | pid<<40"
}

func nsysRuntime(s *sqliteSchema, t *tracer.Trace, strs map[int64]string) error {
	const rt = "CUPTI_ACTIVITY_KIND_RUNTIME"
	if !s.has(rt) {
		return nil
	}
	// Event classes named *DRIVER* are driver calls (schema 3.x ships the
	// enum table); without it class 1 is the CUDA driver, as in the shared
	// nsys 2022 export (cuModuleGetLoadingMode).
	driver := map[int64]bool{1: true}
	if s.has("ENUM_NSYS_EVENT_CLASS") {
		driver = map[int64]bool{}
		var id sql.NullInt64
		var name sql.NullString
		if err := scanRows(s, "ENUM_NSYS_EVENT_CLASS", `SELECT id, name FROM ENUM_NSYS_EVENT_CLASS`, []any{&id, &name}, func() error {
			if strings.Contains(strings.ToUpper(name.String), "DRIVER") {
				driver[id.Int64] = true
			}
			return nil
		}); err != nil {
			return err
		}
	}
	type key struct {
		tid  int64
		corr int64
	}
	kept := map[key]int{} // → index in t.Events
	class := map[int]int64{}
	var start, end, ec, gtid, corr, nameID sql.NullInt64
	q := fmt.Sprintf(`SELECT r.start, r.end, %s, %s, %s, r.nameId FROM %s AS r`,
		s.col(rt, "r", "eventClass", "0"), s.col(rt, "r", "globalTid", "NULL"), s.col(rt, "r", "correlationId", "0"), rt)
	dups := 0
	err := scanRows(s, rt, q, []any{&start, &end, &ec, &gtid, &corr, &nameID}, func() error {
		e := tracer.Event{Kind: tracer.KindRuntime, Start: start.Int64, Corr: uint64(corr.Int64), Device: -1,
			PID: nsysPID(gtid.Int64), TID: nsysTID(gtid.Int64), Name: t.Strings.Intern(strs[nameID.Int64])}
		if driver[ec.Int64] {
			e.Kind = tracer.KindDriver
		}
		e.Dur, _ = clampDur(start.Int64, end.Int64)
		if corr.Int64 != 0 {
			k := key{gtid.Int64, corr.Int64}
			if i, dup := kept[k]; dup {
				dups++
				if ec.Int64 < class[i] {
					t.Events[i], class[i] = e, ec.Int64
				}
				return nil
			}
			kept[k] = len(t.Events)
			class[len(t.Events)] = ec.Int64
		}
		t.Events = append(t.Events, e)
		return nil
	})
	if dups > 0 {
		t.Meta["nsys_runtime_duplicates_merged"] = strconv.Itoa(dups)
	}
	return err
}

func nsysNVTX(s *sqliteSchema, t *tracer.Trace, strs map[int64]string) error {
	const nt = "NVTX_EVENTS"
	if !s.has(nt) {
		return nil
	}
	// Event types: 59/60 push-pop and start-end ranges, 70/71 the same
	// imported from NVTXT, 34 marks; the export's own ENUM_NSYS_EVENT_TYPE
	// (schema 3.x) adds any other ids it names as such.
	ranges := map[int64]bool{59: true, 60: true, 70: true, 71: true}
	marks := map[int64]bool{34: true}
	if s.has("ENUM_NSYS_EVENT_TYPE") {
		var id sql.NullInt64
		var name sql.NullString
		if err := scanRows(s, "ENUM_NSYS_EVENT_TYPE", `SELECT id, name FROM ENUM_NSYS_EVENT_TYPE`, []any{&id, &name}, func() error {
			switch n := name.String; {
			case strings.HasSuffix(n, "PushPopRange") || strings.HasSuffix(n, "StartEndRange"):
				ranges[id.Int64] = true
			case n == "NvtxMark":
				marks[id.Int64] = true
			}
			return nil
		}); err != nil {
			return err
		}
	}
	var start, end, typ, textID, gtid sql.NullInt64
	var text sql.NullString
	q := fmt.Sprintf(`SELECT n.start, n.end, n.eventType, %s, %s, %s FROM %s AS n`,
		s.col(nt, "n", "text", "NULL"), s.col(nt, "n", "textId", "NULL"), s.col(nt, "n", "globalTid", "NULL"), nt)
	return scanRows(s, nt, q, []any{&start, &end, &typ, &text, &textID, &gtid}, func() error {
		var kind tracer.Kind
		switch {
		case ranges[typ.Int64] && end.Valid:
			kind = tracer.KindRange
		case marks[typ.Int64]:
			kind = tracer.KindInstant
		default:
			return nil
		}
		name := text.String
		if !text.Valid {
			name = strs[textID.Int64]
		}
		e := tracer.Event{Kind: kind, Start: start.Int64, Device: -1, PID: nsysPID(gtid.Int64), TID: nsysTID(gtid.Int64),
			Name: t.Strings.Intern(name)}
		if kind == tracer.KindRange {
			var ok bool
			if e.Dur, ok = clampDur(start.Int64, end.Int64); !ok {
				t.Warn(fmt.Sprintf("%s: NVTX range %q at %d %s; duration set to 0", s.path, name, start.Int64, durWhy(start.Int64, end.Int64)))
			}
		}
		asStep(&e, name)
		t.Events = append(t.Events, e)
		return nil
	})
}

func nsysMeta(s *sqliteSchema, t *tracer.Trace) error {
	for _, mt := range []string{"EXPORT_META_DATA", "META_DATA_EXPORT"} {
		if !s.has(mt) {
			continue
		}
		t.Meta["nsys_metadata_table"] = mt
		var n, v sql.NullString
		if err := scanRows(s, mt, `SELECT name, value FROM `+quoteIdent(mt), []any{&n, &v}, func() error {
			t.Meta[n.String] = v.String
			return nil
		}); err != nil {
			return err
		}
	}
	if v, ok := t.Meta["EXPORT_SCHEMA_VERSION"]; ok {
		t.Meta["schema_version"] = v
	}
	const ss = "TARGET_INFO_SESSION_START_TIME"
	if s.has(ss) && s.columns(ss)["utcEpochNs"] {
		var ns sql.NullInt64
		if err := scanRows(s, ss, `SELECT utcEpochNs FROM `+ss, []any{&ns}, func() error {
			t.Meta["session_start_utc_ns"] = strconv.FormatInt(ns.Int64, 10)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func nsysDevices(s *sqliteSchema, t *tracer.Trace) error {
	const gt = "TARGET_INFO_GPU"
	if !s.has(gt) {
		return nil
	}
	rows, err := s.query(`SELECT * FROM ` + gt)
	if err != nil {
		return s.queryErr(gt, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return s.queryErr(gt, err)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return s.queryErr(gt, err)
		}
		d := tracer.Device{Vendor: "nvidia", Props: map[string]string{}}
		for i, c := range cols {
			if vals[i].Valid {
				d.Props[c] = vals[i].String
			}
		}
		num := func(k string) int64 { v, _ := strconv.ParseInt(d.Props[k], 10, 64); return v }
		idKey := "id" // matches the deviceId of kernel records
		if _, ok := d.Props["id"]; !ok {
			idKey = "cuDevice"
		}
		d.ID = int32(num(idKey))
		d.Name = d.Props["name"]
		d.TotalMemory = num("totalMemory")
		d.SMs = int(num("smCount"))
		if d.Props["computeMajor"] != "" {
			d.ComputeCap = d.Props["computeMajor"] + "." + d.Props["computeMinor"]
		}
		t.Devices = append(t.Devices, d)
	}
	if err := rows.Err(); err != nil {
		return s.queryErr(gt, err)
	}
	return nil
}
