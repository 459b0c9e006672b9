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
//	--max-csv-rows          RLKTOP_MAX_CSV_ROWS             csvRowBudget (rows of a gzipped CSV; 0 = none)
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

// Default row budget of a gzipped CSV (csvRowBudget): about 300 MB at a
// report's peak for the floor.
const (
	MinCSVRows     = 1 << 20
	CSVRowsPerByte = 1
)

// SetMaxCSVRows sets how many data rows one import of a gzipped CSV may
// read, over RLKTOP_MAX_CSV_ROWS and csvRowBudget; 0 means no limit.
func SetMaxCSVRows(n uint64) { setCSVRows.Store(&n) }

// csvRowBudget returns how many rows one import of a gzipped CSV file of
// fileSize bytes (as stored) may read, and why (for the message): the
// flag, else RLKTOP_MAX_CSV_ROWS, else the larger of MinCSVRows and
// CSVRowsPerByte per stored byte. A real profiler CSV gzips to about 0.1
// rows per byte (rows of 100+ bytes, 5–10 times smaller gzipped);
// repeated identical rows gzip about 3,000 times (1 MB held 3,000,000 nsys
// stats rows, 872 MB at a report's peak), which an uncompressed file
// cannot do, so plain files have no row limit. 0 means no limit.
func csvRowBudget(fileSize int64) (int64, string) {
	if p := setCSVRows.Load(); p != nil {
		return int64(min(*p, 1<<62)), fmt.Sprintf("--%s=%d", MaxCSVRowsFlag, *p)
	}
	if v := os.Getenv(MaxCSVRowsEnv); v != "" {
		if n, err := strconv.ParseUint(v, 10, 62); err == nil {
			return int64(n), MaxCSVRowsEnv + "=" + v
		}
	}
	b := int64(MinCSVRows)
	if fileSize > b/CSVRowsPerByte {
		b = fileSize * CSVRowsPerByte
	}
	why := fmt.Sprintf("the default limit for a gzipped CSV: the larger of %d and %d per byte of the %d-byte file", MinCSVRows, CSVRowsPerByte, fileSize)
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
