package tracefile

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rlktop/rlktop/tracer"

	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"
)

// SQLite plumbing shared by the nsys and rocpd importers.
//
// Both formats are SQLite databases, and the first 64 KiB of a real export
// need not hold the schema (in the shared nsys 2022 export the CUPTI tables
// are defined past it), so the sniffers only split on the "rocpd_" marker
// and readSQLite decides by the tables actually present.

var sqliteMagic = []byte("SQLite format 3\x00")

func isSQLite(head []byte) bool { return bytes.HasPrefix(head, sqliteMagic) }

// MaxSQLiteCopyBytes is the default cap on the temporary copy openSQLite
// makes of a compressed database: 8 GiB (--max-sqlite-copy,
// RLKTOP_MAX_SQLITE_COPY_BYTES).
const MaxSQLiteCopyBytes = 8 << 30

// openSQLite opens the database read-only. When path names a plain
// (uncompressed) SQLite file it is opened in place; otherwise (gzip input,
// or no usable path) the stream r is copied (at most maxSQLiteCopy)
// to a temporary file, unlinked as soon as SQLite has it open (cleanup
// removes it otherwise).
func openSQLite(r io.Reader, path string) (db *sql.DB, cleanup func(), err error) {
	cleanup = func() {}
	file := ""
	copied := false
	if path != "" {
		if f, err := os.Open(path); err == nil {
			var magic [16]byte
			n, _ := io.ReadFull(f, magic[:])
			f.Close()
			if n == 16 && bytes.Equal(magic[:], sqliteMagic) {
				file = path
			}
		}
	}
	if file == "" {
		// Watched from before the file exists: a signal between its
		// creation and the copy still removes it.
		watch := watchSignals()
		tmp, err := os.CreateTemp("", "rlktop-*.sqlite")
		if err != nil {
			watch("")()
		}
		if err != nil {
			return nil, cleanup, &Error{Path: path, Offset: -1, Msg: "cannot create a temporary copy of the SQLite database", Err: err,
				Hint: "set TMPDIR to a writable directory with room for the uncompressed file"}
		}
		name := tmp.Name()
		file, copied = name, true
		cleanup = func() { tmp.Close(); os.Remove(name) }
		limit, why := maxSQLiteCopy()
		src := r
		if limit >= 0 {
			src = io.LimitReader(r, limit+1)
		}
		stop := watch(name)
		n, err := io.Copy(tmp, src)
		stop()
		if err == nil && limit >= 0 && n > limit {
			err = fmt.Errorf("the uncompressed database is over the %d-byte limit of the temporary copy (%s)", limit, why)
		}
		if err != nil {
			cleanup()
			return nil, func() {}, &Error{Path: path, Offset: n, Msg: "cannot copy the SQLite database to a temporary file", Err: err,
				Hint: fmt.Sprintf("decompress it yourself (gunzip) and open the .sqlite file: it is read in place; or raise the limit with --%s BYTES or %s (0: none)", MaxSQLiteCopyFlag, MaxSQLiteCopyEnv)}
		}
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err = sql.Open("sqlite", u.String())
	if err != nil {
		cleanup()
		return nil, func() {}, &Error{Path: path, Offset: -1, Msg: "cannot open SQLite database", Err: err}
	}
	db.SetMaxOpenConns(1)
	if copied && db.Ping() == nil {
		// SQLite holds the copy open now (immutable: it never reopens it):
		// unlink it, so that no later exit path (Ctrl-C, kill -9) leaves it
		// behind on Unix. Only a kill during the copy itself can.
		os.Remove(file)
	}
	c := cleanup
	cleanup = func() { db.Close(); c() }
	return db, cleanup, nil
}

// watchSignals starts catching SIGINT and SIGTERM; the function it
// returns names the file to remove when one arrives (before the stop
// function it returns in turn is called), after which the signal is
// delivered again with the handling it had (by default the process ends,
// as it would have): a Ctrl-C during the copy of a large database left
// gigabytes in TMPDIR. A signal caught before the name is given is held
// until then.
func watchSignals() func(name string) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return func(name string) func() {
		done := make(chan struct{})
		go func() {
			select {
			case sig := <-ch:
				if name != "" {
					os.Remove(name)
				}
				signal.Stop(ch)
				if s, ok := sig.(syscall.Signal); ok {
					syscall.Kill(os.Getpid(), s)
				}
			case <-done:
			}
		}()
		return func() {
			signal.Stop(ch)
			close(done)
		}
	}
}

// sqliteSchema lists tables and views, and the columns of each on demand.
// Views other than plain ones (plainView) are left out of names, with a
// warning: a view can run any query (a recursive CTE that never ends),
// and rlktop only reads the tables it knows.
type sqliteSchema struct {
	db       *sql.DB
	ctx      context.Context // every query's deadline (sqliteTimeout)
	cancel   context.CancelFunc
	timeout  time.Duration
	path     string
	names    map[string]string // name → "table" / "view"
	cols     map[string]map[string]bool
	warnings []string
}

// SQLiteTimeoutEnv names the environment variable that sets how long one
// SQLite import may run its queries (a Go duration: "30m"; "0" for no
// limit) in place of DefaultSQLiteTimeout.
const SQLiteTimeoutEnv = "RLKTOP_SQLITE_TIMEOUT"

// DefaultSQLiteTimeout bounds the queries of one SQLite import (nsys,
// rocpd): 10 minutes, far beyond the seconds a real export of millions of
// rows takes, so that a database crafted to run forever stops with an error.
const DefaultSQLiteTimeout = 10 * time.Minute

func sqliteTimeout() (time.Duration, string) {
	if p := setSQLiteTimeout.Load(); p != nil {
		if *p <= 0 {
			return 0, "--" + SQLiteTimeoutFlag + "=0"
		}
		return *p, "--" + SQLiteTimeoutFlag + "=" + p.String()
	}
	if v := os.Getenv(SQLiteTimeoutEnv); v != "" {
		if v == "0" {
			return 0, SQLiteTimeoutEnv + "=0"
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d, SQLiteTimeoutEnv + "=" + v
		}
		return DefaultSQLiteTimeout, fmt.Sprintf("%s=%q is not a Go duration, so the default", SQLiteTimeoutEnv, v)
	}
	return DefaultSQLiteTimeout, "the default"
}

// identRE is one SQLite identifier as CREATE VIEW may write it.
const identRE = "(?:\"[^\"]*\"|`[^`]*`|\\[[^\\]]*\\]|[A-Za-z_][A-Za-z0-9_$]*)"

// plainViewRE is a view that only selects every column of tables:
// rocprofv3's bare-name views (CREATE VIEW `rocpd_kernel_dispatch` AS
// SELECT * FROM `rocpd_kernel_dispatch_<guid>`), or a UNION ALL of such.
var (
	plainViewRE = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?` + identRE +
		`\s+AS\s+SELECT\s+\*\s+FROM\s+` + identRE + `(?:\s+UNION\s+ALL\s+SELECT\s+\*\s+FROM\s+` + identRE + `)*\s*;?\s*$`)
	viewFromRE = regexp.MustCompile(`(?is)\bFROM\s+(` + identRE + `)`)
)

// plainView reports whether a view's SQL is plainViewRE over tables of
// the database (types: name → "table"/"view").
func plainView(def string, types map[string]string) bool {
	if !plainViewRE.MatchString(def) {
		return false
	}
	for _, m := range viewFromRE.FindAllStringSubmatch(def, -1) {
		n := m[1]
		if len(n) >= 2 && (n[0] == '"' || n[0] == '`' || n[0] == '[') {
			n = n[1 : len(n)-1]
		}
		if types[n] != "table" {
			return false
		}
	}
	return true
}

func loadSchema(db *sql.DB, path string) (*sqliteSchema, error) {
	s := &sqliteSchema{db: db, path: path, names: map[string]string{}, cols: map[string]map[string]bool{}}
	s.timeout, _ = sqliteTimeout()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.timeout > 0 {
		// The deadline covers the whole import; modernc.org/sqlite
		// interrupts a running statement when it passes.
		s.cancel()
		s.ctx, s.cancel = context.WithTimeout(context.Background(), s.timeout)
	}
	rows, err := db.QueryContext(s.ctx, `SELECT name, type, coalesce(sql, '') FROM sqlite_master WHERE type IN ('table','view')`)
	if err != nil && s.ctx.Err() != nil {
		s.cancel()
		return nil, s.queryErr("sqlite_master", err)
	}
	if err != nil {
		s.cancel()
		return nil, &Error{Path: path, Offset: -1, Msg: "not a readable SQLite database", Err: err,
			Hint: "the file may be truncated or corrupt; check it with `sqlite3 FILE 'PRAGMA integrity_check'`"}
	}
	defer rows.Close()
	views := map[string]string{}
	for rows.Next() {
		var n, typ, def string
		if err := rows.Scan(&n, &typ, &def); err != nil {
			s.cancel()
			return nil, &Error{Path: path, Offset: -1, Msg: "cannot read the SQLite schema", Err: err}
		}
		s.names[n] = typ
		if typ == "view" {
			views[n] = def
		}
	}
	if err := rows.Err(); err != nil {
		s.cancel()
		return nil, &Error{Path: path, Offset: -1, Msg: "cannot read the SQLite schema", Err: err,
			Hint: "the file may be truncated or corrupt"}
	}
	var skipped []string
	for n, def := range views {
		if !plainView(def, s.names) {
			skipped = append(skipped, n)
		}
	}
	slices.Sort(skipped)
	for _, n := range skipped {
		delete(s.names, n)
		if !readsSQLiteName(n) {
			continue // rocprofv3's own convenience views (kernels, regions…): never read
		}
		s.warnings = append(s.warnings, fmt.Sprintf("%s: view %s is not a plain SELECT * over tables, so rlktop does not run it (a view can run any query); "+
			"its data is read from the tables it names when rlktop knows them", path, quoteIdent(n)))
	}
	return s, nil
}

// openSchema opens a SQLite import (openSQLite: read-only, in place or a
// temporary copy) and loads its schema (loadSchema), whose deadline then
// bounds every query of the import (sqliteTimeout). done cancels that
// deadline and closes the database (removing any copy); call it once the
// import has read what it needs. The errors are openSQLite's and
// loadSchema's, with nothing left open.
func openSchema(r io.Reader, path string) (s *sqliteSchema, done func(), err error) {
	db, cleanup, err := openSQLite(r, path)
	if err != nil {
		return nil, nil, err
	}
	if s, err = loadSchema(db, path); err != nil {
		cleanup()
		return nil, nil, err
	}
	return s, func() { s.cancel(); cleanup() }, nil
}

// readsSQLiteName reports whether the nsys or rocpd reader reads a table
// or view of this name (rocpd_*, nsys's StringIds, CUPTI_*, NVTX_*,
// TARGET_INFO_*, ENUM_NSYS_*, export metadata).
func readsSQLiteName(n string) bool {
	if n == "StringIds" || n == "EXPORT_META_DATA" || n == "META_DATA_EXPORT" {
		return true
	}
	for _, p := range []string{"rocpd_", "CUPTI_", "NVTX_", "TARGET_INFO_", "ENUM_NSYS_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// query runs q under the import's deadline.
func (s *sqliteSchema) query(q string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(s.ctx, q, args...)
}

func (s *sqliteSchema) queryRow(q string, args ...any) *sql.Row {
	return s.db.QueryRowContext(s.ctx, q, args...)
}

func (s *sqliteSchema) has(name string) bool { _, ok := s.names[name]; return ok }

// columns returns the column names of a table or view.
func (s *sqliteSchema) columns(name string) map[string]bool {
	if c, ok := s.cols[name]; ok {
		return c
	}
	c := map[string]bool{}
	rows, err := s.query(`SELECT name FROM pragma_table_info(?)`, name)
	if err == nil {
		for rows.Next() {
			var n string
			if rows.Scan(&n) == nil {
				c[n] = true
			}
		}
		rows.Close()
	}
	s.cols[name] = c
	return c
}

// col returns the SQL for column c of alias a when the table has it, else
// the SQL literal def.
func (s *sqliteSchema) col(table, alias, c, def string) string {
	if s.columns(table)[c] {
		return alias + `."` + c + `"`
	}
	return def
}

func (s *sqliteSchema) queryErr(table string, err error) error {
	if s.ctx.Err() != nil {
		_, why := sqliteTimeout()
		return &Error{Path: s.path, Offset: -1, Field: table, Msg: fmt.Sprintf("the SQLite queries ran past their %s limit (%s)", s.timeout, why), Err: s.ctx.Err(),
			Hint: fmt.Sprintf("a real export reads in far less; if this one is that large, pass --%s or set %s to a longer Go duration (\"1h\"; \"0\" for no limit)", SQLiteTimeoutFlag, SQLiteTimeoutEnv)}
	}
	return &Error{Path: s.path, Offset: -1, Field: table, Msg: "cannot read table", Err: err,
		Hint: "the database may be corrupt, or from an export schema rlktop does not know"}
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func sniffNsysSQLite(head []byte) bool {
	return isSQLite(head) && !bytes.Contains(head, []byte("rocpd_"))
}

func sniffRocpdSQLite(head []byte) bool {
	return isSQLite(head) && bytes.Contains(head, []byte("rocpd_"))
}

// readSQLite reads an nsys export or a rocpd database, whichever the
// tables say it is.
func readSQLite(r io.Reader, path string, _ Options) (*tracer.Trace, error) {
	s, done, err := openSchema(r, path)
	if err != nil {
		return nil, err
	}
	defer done()
	var t *tracer.Trace
	switch {
	case isRocpd(s):
		t, err = readRocpd(s)
	case isNsys(s):
		t, err = readNsys(s)
	case s.has("rocpd_op") && s.has("rocpd_api"):
		return nil, &Error{Path: path, Offset: 0, Msg: "a rocmProfileData (.rpd) database (rocpd_op, rocpd_api), not rocprofv3's rocpd", Err: ErrUnknownFormat,
			Hint: "rlktop does not read .rpd; profile with rocprofv3 (its rocpd .db, CSV or JSON) or torch.profiler"}
	default:
		return nil, &Error{Path: path, Offset: 0, Msg: fmt.Sprintf("SQLite database with %d tables and views (%s), but neither an Nsight Systems export nor a rocpd database", len(s.names), someNames(s.names, 12)),
			Err: ErrUnknownFormat,
			Hint: "expected nsys tables (StringIds, CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS) or rocpd tables (rocpd_kernel_dispatch…); " +
				"export a .nsys-rep with `nsys export --type sqlite`"}
	}
	if err != nil {
		return nil, err
	}
	for _, w := range s.warnings {
		t.Warn(w)
	}
	return t, nil
}

// someNames lists up to n of the keys of m, sorted, with "…" when there
// are more, for messages about what a database holds.
func someNames(m map[string]string, n int) string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	slices.Sort(k)
	if len(k) > n {
		k = append(k[:n:n], "…")
	}
	return strings.Join(k, ", ")
}
