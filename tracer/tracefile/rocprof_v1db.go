package tracefile

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// rocprof v1's results.db: the SQLite database bin/tblextr.py (ROCm/rocprofiler,
// sqlitedb.py) builds before it writes results.json, one table per domain
// with plain column names:
//
//	HIP, HSA  (BeginNs, EndNs, pid, tid, Name, args, Index, Data, __section, __lane, DurationNs)
//	OPS, COPY (BeginNs, EndNs, dev-id, queue-id, Name, pid, tid, roctx-range, stream-id, Index, Data, …)
//	KERN      (Index, KernelName[, gpu-id, queue-id, pid, tid, BeginNs, EndNs, DurationNs, …]) for --timestamp
//	rocTX     (BeginNs, EndNs, pid, tid, Name, Index, __section, __lane)
//
// Times are ns; names are stripped of the double quotes the writer puts
// around KernelName. Device is gpu-id / dev-id as written. Index of HIP and OPS/COPY rows is the call's correlation id
// within its process (tblextr.py fill_api_db / fill_ops_db), so a HIP call
// and the op it enqueued share (pid, Index); the reader makes that Corr =
// pid<<32 | Index. Mapping as for results.json (rocprof_v1json.go): OPS and
// KERN rows with times → KindKernel (Device dev-id / gpu-id, Stream
// stream-id else queue-id; "Unknown command type" and barrier packets
// skipped), COPY → KindMemcpy, or KindMemset when the name holds "Fill";
// HIP and HSA → KindRuntime (only HIP rows carry Corr: HSA rows number
// their own records); rocTX → KindRange, or KindInstant for a mark
// (EndNs = BeginNs + 1). Columns are looked up by name; a table without
// BeginNs/EndNs is not read and is named in the no-GPU warning.

func init() {
	f := Format{Name: "rocprof-v1-sqlite", Sniff: sniffRocprofV1DB, Read: readRocprofV1DB}
	// Before nsys-sqlite, which takes every SQLite file without "rocpd_".
	if i := slices.IndexFunc(formats, func(f Format) bool { return f.Name == "nsys-sqlite" }); i >= 0 {
		formats = slices.Insert(formats, i, f)
		return
	}
	Register(f)
}

// sniffRocprofV1DB accepts a SQLite file whose schema (in the first page)
// declares tblextr.py's "__section" and "BeginNs" columns, or its kernel
// table alone (the --timestamp / counter runs write only KERN).
func sniffRocprofV1DB(head []byte) bool {
	return isSQLite(head) && (bytes.Contains(head, []byte(`"__section" INTEGER`)) && bytes.Contains(head, []byte(`"BeginNs" INTEGER`)) ||
		bytes.Contains(head, []byte(`CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT`)))
}

func readRocprofV1DB(r io.Reader, path string, _ Options) (*tracer.Trace, error) {
	// Every query runs under the import's deadline (openSchema,
	// RLKTOP_SQLITE_TIMEOUT), as in the nsys and rocpd readers.
	s, done, err := openSchema(r, path)
	if err != nil {
		return nil, err
	}
	defer done()
	t := tracer.NewTrace("rocprof-v1-sqlite", path)
	for _, w := range s.warnings {
		t.Warn(w)
	}
	var rowsBy, unread []string
	skipped := map[string]int{}
	for _, tb := range []string{"rocTX", "HIP", "HSA", "OPS", "COPY", "KERN"} {
		if !s.has(tb) {
			continue
		}
		var n int64
		if err := s.queryRow(`SELECT count(*) FROM ` + quoteIdent(tb)).Scan(&n); err != nil {
			return nil, s.queryErr(tb, err)
		}
		rowsBy = append(rowsBy, fmt.Sprintf("%s %d rows", tb, n))
		c := s.columns(tb)
		if !c["BeginNs"] || !c["EndNs"] {
			if n > 0 {
				unread = append(unread, fmt.Sprintf("%s has no BeginNs/EndNs (columns: %s)", tb, sortedCols(c)))
			}
			continue
		}
		col := func(name string) string { return s.col(tb, "X", name, "NULL") }
		name := col("Name")
		if tb == "KERN" {
			name = col("KernelName")
		}
		dev := col("dev-id")
		if dev == "NULL" {
			dev = col("gpu-id")
		}
		q := `SELECT X."BeginNs", X."EndNs", ` + name + `, ` + col("pid") + `, ` + col("tid") + `, ` + col("Index") + `, ` + dev + `, ` +
			col("stream-id") + `, ` + col("queue-id") + ` FROM ` + quoteIdent(tb) + ` X ORDER BY X."BeginNs"`
		var begin, end, pid, tid, index, d, stream, queue sql.NullInt64
		var nm sql.NullString
		if err := scanRows(s, tb, q, []any{&begin, &end, &nm, &pid, &tid, &index, &d, &stream, &queue}, func() error {
			// tblextr.py stores KernelName in double quotes ("\"name\"").
			n := strings.TrimSuffix(strings.TrimPrefix(nm.String, `"`), `"`)
			e := tracer.Event{Start: begin.Int64, Name: t.Strings.Intern(n), PID: int32Of(pid.Int64), TID: int32Of(tid.Int64), Device: -1}
			var ok bool
			if e.Dur, ok = clampDur(begin.Int64, end.Int64); !ok {
				t.Warn(fmt.Sprintf("%s: %s row %q at %d ns %s; duration set to 0", path, tb, nm.String, begin.Int64, durWhy(begin.Int64, end.Int64)))
			}
			corr := uint64(uint32(pid.Int64))<<32 | uint64(uint32(index.Int64))
			switch tb {
			case "rocTX":
				e.Kind = tracer.KindRange
				if end.Int64 == begin.Int64+1 {
					e.Kind, e.Dur = tracer.KindInstant, 0
				}
				asStep(&e, n)
			case "HIP", "HSA":
				e.Kind = tracer.KindRuntime
				if tb == "HIP" && index.Valid {
					e.Corr = corr
				}
			default:
				if n == "Unknown command type" || n == "<barrier packet>" {
					skipped[n]++
					return nil
				}
				e.Kind = tracer.KindKernel
				if tb == "COPY" {
					e.Kind = tracer.KindMemcpy
					if strings.Contains(n, "Fill") {
						e.Kind = tracer.KindMemset
					}
				}
				if tb != "KERN" && index.Valid {
					e.Corr = corr
				}
				e.TID = -1
				if d.Valid {
					e.Device = int32Of(d.Int64)
				}
				e.Stream = int32Of(queue.Int64)
				if stream.Valid {
					e.Stream = int32Of(stream.Int64)
				}
			}
			t.Events = append(t.Events, e)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if len(skipped) > 0 {
		var parts []string
		for k, n := range skipped {
			parts = append(parts, fmt.Sprintf("%s:%d", k, n))
		}
		slices.Sort(parts)
		t.Meta["skipped_events"] = strings.Join(parts, " ")
	}
	if !hasGPUWork(t) {
		found := "tables " + strings.Join(rowsBy, ", ")
		if len(rowsBy) == 0 {
			found = "none of the tables HIP, HSA, OPS, COPY, KERN, rocTX"
		}
		if len(unread) > 0 {
			found += "; not read: " + strings.Join(unread, "; ")
		}
		warnNoGPU(t, found)
	}
	return t, nil
}
