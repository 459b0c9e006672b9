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
const (
	MaxRecordingEventsFlag = "max-recording-events"
	SQLiteTimeoutFlag      = "sqlite-timeout"
	MaxSQLiteCopyFlag      = "max-sqlite-copy"
	// MaxSQLiteCopyEnv names the environment variable that sets the cap
	// (bytes; 0 = none) on the temporary copy of a compressed database.
	MaxSQLiteCopyEnv = "RLKTOP_MAX_SQLITE_COPY_BYTES"
)

var (
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

// ResetLimits forgets what the Set functions set (for tests).
func ResetLimits() {
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
