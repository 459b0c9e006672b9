package tracefile

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Import limits set on the command line. Each limit is, in order of
// precedence: its flag (set here by the command before it imports), its
// environment variable, its default. They are process-wide, as the
// environment is: set them before the first import.
//
//	flag                    variable                        default
//	--max-recording-events  RLKTOP_MAX_RECORDING_EVENTS     recordingBudget (events+counters; 0 = none)
//	--sqlite-timeout        RLKTOP_SQLITE_TIMEOUT           DefaultSQLiteTimeout (Go duration; 0 = none)
//	--max-sqlite-copy       RLKTOP_MAX_SQLITE_COPY_BYTES    MaxSQLiteCopyBytes (bytes; 0 = none)
//	--max-csv-rows          RLKTOP_MAX_CSV_ROWS             csvRowBudget, rocprofJSONBudget (rows of a gzipped CSV, records of a rocprofv3 JSON; 0 = none)
const (
	MaxCSVRowsFlag         = "max-csv-rows"
	MaxCSVRowsEnv          = "RLKTOP_MAX_CSV_ROWS"
	MaxRecordingEventsFlag = "max-recording-events"
	SQLiteTimeoutFlag      = "sqlite-timeout"
	MaxSQLiteCopyFlag      = "max-sqlite-copy"
	// MaxSQLiteCopyEnv names the environment variable that sets the cap
	// (bytes; 0 = none) on the temporary copy of a compressed database.
	MaxSQLiteCopyEnv = "RLKTOP_MAX_SQLITE_COPY_BYTES"
)

var (
	setCSVRows         atomic.Pointer[uint64]
	setRecordingEvents atomic.Pointer[uint64]
	setSQLiteTimeout   atomic.Pointer[time.Duration]
	setSQLiteCopy      atomic.Pointer[int64]
)

// SetMaxRecordingEvents sets how many events and counters (together) one
// recording import may hold, over RLKTOP_MAX_RECORDING_EVENTS and the
// default; 0 means no limit.
func SetMaxRecordingEvents(n uint64) { setRecordingEvents.Store(&n) }

// SetSQLiteTimeout sets how long one SQLite import may run its queries,
// over RLKTOP_SQLITE_TIMEOUT and DefaultSQLiteTimeout; 0 means no limit.
func SetSQLiteTimeout(d time.Duration) { setSQLiteTimeout.Store(&d) }

// SetMaxSQLiteCopyBytes sets the cap (bytes) on the temporary uncompressed
// copy of a compressed SQLite database, over RLKTOP_MAX_SQLITE_COPY_BYTES
// and MaxSQLiteCopyBytes; 0 means no limit.
func SetMaxSQLiteCopyBytes(n int64) { setSQLiteCopy.Store(&n) }

// Default budgets of the record formats, as the larger of a floor and a
// number per byte of the file as stored (compressed when gzipped): about
// 200 MB at a report's peak for each floor (a CSV row or rocprofv3 JSON
// record is 72 bytes as an event, 300-400 at a report's peak).
//
// Rates, from record sizes: real profiler CSVs in the shared traces gzip
// to 0.005-0.04 rows per byte; synthetic nsys gpu_trace rows with one
// kernel name gzip to 0.10 rows per byte with jittered times and 0.19 with
// perfectly regular ones, so one row per CSVBytesPerRow = 2 bytes keeps a
// margin of 2.7 over the most compressible case and 12 over real files.
// A rocprofv3 JSON record is 166 bytes (an API call, compact) to 460 (a
// kernel dispatch) as written; one per JSONBytesPerRecord = 16 bytes of a
// plain file keeps a margin of 10, and those records (hip_api, jittered
// or regular times) gzip to 0.08-0.11 records per byte, so one per
// JSONGzBytesPerRecord = 2 bytes of a gzipped file keeps 4.5. Repeated
// identical rows gzip about 3,000 times (1 MB held 3,000,000 nsys stats
// rows, 872 MB at a report's peak) and 4.7 MB of plain JSON held 1.5 M
// records `{}` (634 MB): the issue-16 trial's inputs.
const (
	MinCSVRows           = 1 << 19
	CSVBytesPerRow       = 2
	MinJSONRecords       = 1 << 19
	JSONBytesPerRecord   = 16
	JSONGzBytesPerRecord = 2
)

// SetMaxCSVRows sets how many data rows one import of a gzipped CSV, and
// how many records one import of a rocprofv3 JSON, may read, over
// RLKTOP_MAX_CSV_ROWS and the defaults (csvRowBudget, rocprofJSONBudget);
// 0 means no limit.
func SetMaxCSVRows(n uint64) { setCSVRows.Store(&n) }

// csvRowBudget returns how many rows one import of a gzipped CSV file of
// fileSize bytes (as stored) may read, and why (for the message): the
// flag, else RLKTOP_MAX_CSV_ROWS, else the larger of MinCSVRows and one
// row per CSVBytesPerRow stored bytes. An uncompressed file cannot hold
// more rows than its bytes allow (a row costs about its size), so plain
// files have no row limit. 0 means no limit.
func csvRowBudget(fileSize int64) (int64, string) {
	return recordBudget(fileSize, MinCSVRows, CSVBytesPerRow, "a gzipped CSV")
}

// rocprofJSONBudget returns how many buffer records (each one event) one
// import of a rocprofv3 JSON file of fileSize bytes (as stored) may read,
// and why: the flag, else RLKTOP_MAX_CSV_ROWS, else the larger of
// MinJSONRecords and one per JSONBytesPerRecord stored bytes
// (JSONGzBytesPerRecord when gzipped). Unlike CSV, plain files are
// bounded too: a record as small as `{}` is still an event of 72 bytes
// plus the record held before conversion. 0 means no limit.
func rocprofJSONBudget(fileSize int64, gzipped bool) (int64, string) {
	if gzipped {
		return recordBudget(fileSize, MinJSONRecords, JSONGzBytesPerRecord, "a gzipped rocprofv3 JSON")
	}
	return recordBudget(fileSize, MinJSONRecords, JSONBytesPerRecord, "a rocprofv3 JSON")
}

// recordBudget is the budget rule shared by csvRowBudget and
// rocprofJSONBudget: the flag, else the variable, else the larger of
// floor and fileSize/bytesPer, with the reason naming what (the kind of
// file).
func recordBudget(fileSize, floor, bytesPer int64, what string) (int64, string) {
	if p := setCSVRows.Load(); p != nil {
		return int64(min(*p, 1<<62)), fmt.Sprintf("--%s=%d", MaxCSVRowsFlag, *p)
	}
	if v := os.Getenv(MaxCSVRowsEnv); v != "" {
		if n, err := strconv.ParseUint(v, 10, 62); err == nil {
			return int64(n), MaxCSVRowsEnv + "=" + v
		}
	}
	b := max(floor, fileSize/bytesPer)
	why := fmt.Sprintf("the default limit for %s: the larger of %d and 1 per %d bytes of the %d-byte file", what, floor, bytesPer, fileSize)
	if v := os.Getenv(MaxCSVRowsEnv); v != "" {
		why = fmt.Sprintf("%s=%q is not a whole number, so %s", MaxCSVRowsEnv, v, why)
	}
	return b, why
}

// ResetLimits forgets what the Set functions set (for tests).
func ResetLimits() {
	setCSVRows.Store(nil)
	setRecordingEvents.Store(nil)
	setSQLiteTimeout.Store(nil)
	setSQLiteCopy.Store(nil)
}

// maxSQLiteCopy returns the copy cap in bytes (-1: none) and where it
// came from, for the message.
func maxSQLiteCopy() (int64, string) {
	if p := setSQLiteCopy.Load(); p != nil {
		if *p == 0 {
			return -1, "--" + MaxSQLiteCopyFlag + "=0"
		}
		return *p, fmt.Sprintf("--%s=%d", MaxSQLiteCopyFlag, *p)
	}
	if v := os.Getenv(MaxSQLiteCopyEnv); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			if n == 0 {
				return -1, MaxSQLiteCopyEnv + "=0"
			}
			return n, MaxSQLiteCopyEnv + "=" + v
		}
		return MaxSQLiteCopyBytes, fmt.Sprintf("%s=%q is not a whole number of bytes, so the default", MaxSQLiteCopyEnv, v)
	}
	return MaxSQLiteCopyBytes, "the default"
}
