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
//	--max-recording-events  RLKTOP_MAX_RECORDING_EVENTS     MaxRecordingEvents (events+counters; 0 = none)
//	--sqlite-timeout        RLKTOP_SQLITE_TIMEOUT           DefaultSQLiteTimeout (Go duration; 0 = none)
//	--max-sqlite-copy       RLKTOP_MAX_SQLITE_COPY_BYTES    MaxSQLiteCopyBytes (bytes; 0 = none)
//	--max-csv-rows          RLKTOP_MAX_CSV_ROWS             MaxCSVRows, MaxJSONRecords (rows of a CSV, records of a rocprofv3 JSON; 0 = none)
//	--max-events            RLKTOP_MAX_EVENTS               MaxKinetoEvents (events of a Kineto JSON read whole; 0 = none)
//	--max-import-name-bytes RLKTOP_MAX_IMPORT_NAME_BYTES    MaxImportNameBytes (bytes of distinct names; 0 = none)
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

// Default budgets. Memory is bounded by what an import decodes, never by
// the size of the file as stored: a 7 MB gzip can hold 20 M events, and
// 135 KB of a recording 4 M. Each default is DefaultImportBytes divided
// by what one event of that format costs at the peak of `rlktop report`
// (RSS of /usr/bin/time -f %M over a file of millions of the smallest
// records, less the ~25 MB of an empty report):
//
//	format                    bytes per event   default events
//	Kineto JSON (whole read)  KinetoEventBytes  MaxKinetoEvents
//	rlktop recording          RecordingEventBytes MaxRecordingEvents
//	CSV (plain or gzipped)    CSVRowBytes       MaxCSVRows
//	rocprofv3 JSON            JSONRecordBytes   MaxJSONRecords
//
// so that any input stays under 500 MB by default. A Kineto file whose
// decoded size reaches the streaming threshold is streamed window by
// window by `report` and `export --format parquet` and needs no event
// limit (kineto_stream.go).
const (
	DefaultImportBytes  = 400 << 20
	KinetoEventBytes    = 160
	RecordingEventBytes = 256
	CSVRowBytes         = 320
	JSONRecordBytes     = 400

	MaxKinetoEvents    = DefaultImportBytes / KinetoEventBytes    // 2,621,440
	MaxRecordingEvents = DefaultImportBytes / RecordingEventBytes // 1,638,400
	MaxCSVRows         = DefaultImportBytes / CSVRowBytes         // 1,310,720
	MaxJSONRecords     = DefaultImportBytes / JSONRecordBytes     // 1,048,576
)

// SetMaxCSVRows sets how many data rows one CSV import, and how many
// records one import of a rocprofv3 JSON, may read, over
// RLKTOP_MAX_CSV_ROWS and the defaults (MaxCSVRows, MaxJSONRecords);
// 0 means no limit.
func SetMaxCSVRows(n uint64) { setCSVRows.Store(&n) }

// csvRowBudget returns how many rows one CSV import may read, and why
// (for the message): the flag, else RLKTOP_MAX_CSV_ROWS, else MaxCSVRows.
// 0 means no limit.
func csvRowBudget() (int64, string) {
	return recordBudget(MaxCSVRows, CSVRowBytes, "a CSV")
}

// rocprofJSONBudget returns how many buffer records (each one event) one
// import of a rocprofv3 JSON may read, and why: the flag, else
// RLKTOP_MAX_CSV_ROWS, else MaxJSONRecords. 0 means no limit.
func rocprofJSONBudget() (int64, string) {
	return recordBudget(MaxJSONRecords, JSONRecordBytes, "a rocprofv3 JSON")
}

// recordBudget is the budget rule shared by csvRowBudget and
// rocprofJSONBudget: the flag, else the variable, else def, with the
// reason naming what (the kind of file) and its cost per record.
func recordBudget(def, bytesPer int64, what string) (int64, string) {
	if p := setCSVRows.Load(); p != nil {
		return int64(min(*p, 1<<62)), fmt.Sprintf("--%s=%d", MaxCSVRowsFlag, *p)
	}
	if v := os.Getenv(MaxCSVRowsEnv); v != "" {
		if n, err := strconv.ParseUint(v, 10, 62); err == nil {
			return int64(n), MaxCSVRowsEnv + "=" + v
		}
	}
	why := fmt.Sprintf("the default limit for %s: %d MiB at about %d bytes a record", what, DefaultImportBytes>>20, bytesPer)
	if v := os.Getenv(MaxCSVRowsEnv); v != "" {
		why = fmt.Sprintf("%s=%q is not a whole number, so %s", MaxCSVRowsEnv, v, why)
	}
	return def, why
}

// MaxEventsFlag and MaxEventsEnv set how many events one Kineto JSON
// import read whole (not streamed) may hold; 0 means no limit.
const (
	MaxEventsFlag = "max-events"
	MaxEventsEnv  = "RLKTOP_MAX_EVENTS"
)

var setEvents atomic.Pointer[uint64]

// SetMaxEvents sets how many events one Kineto JSON import read whole
// may hold, over RLKTOP_MAX_EVENTS and MaxKinetoEvents; 0 means no limit.
func SetMaxEvents(n uint64) { setEvents.Store(&n) }

// kinetoBudget returns how many events one whole Kineto import may hold
// (0: no limit) and why.
func kinetoBudget() (int, string) {
	if p := setEvents.Load(); p != nil {
		return int(min(*p, 1<<62)), fmt.Sprintf("--%s=%d", MaxEventsFlag, *p)
	}
	why := fmt.Sprintf("the default limit: %d MiB at about %d bytes an event", DefaultImportBytes>>20, KinetoEventBytes)
	if v := os.Getenv(MaxEventsEnv); v != "" {
		if n, err := strconv.ParseUint(v, 10, 62); err == nil {
			return int(n), MaxEventsEnv + "=" + v
		}
		why = fmt.Sprintf("%s=%q is not a whole number, so %s", MaxEventsEnv, v, why)
	}
	return MaxKinetoEvents, why
}

// MaxImportNameBytesFlag and MaxImportNameBytesEnv set how many bytes of
// distinct names (kernels, operators, ranges: tracer.Strings.Bytes) one
// import of a Kineto JSON, rocprofv3 JSON, CSV or recording may hold;
// 0 means no limit.
const (
	MaxImportNameBytesFlag = "max-import-name-bytes"
	MaxImportNameBytesEnv  = "RLKTOP_MAX_IMPORT_NAME_BYTES"
)

// NameByteCost is what one byte of a distinct name costs at the peak of
// `rlktop report` (the name interned, its row's label, the category and
// stage lookups that copy it): 1.2 M rows of distinct 1 KB kernel names
// in a CSV (1.2 GB of names, 14.8 MB gzipped) peaked at 9.1 GB of RSS,
// about 7.5 bytes for each byte of name. MaxImportNameBytes keeps such a
// file under DefaultImportBytes like the event budgets do.
const (
	NameByteCost       = 8
	MaxImportNameBytes = DefaultImportBytes / NameByteCost // 52,428,800
)

var setNameBytes atomic.Pointer[uint64]

// SetMaxImportNameBytes sets how many bytes of distinct names one import
// may hold, over RLKTOP_MAX_IMPORT_NAME_BYTES and MaxImportNameBytes;
// 0 means no limit.
func SetMaxImportNameBytes(n uint64) { setNameBytes.Store(&n) }

// nameBudget bounds the bytes of distinct names one import holds.
type nameBudget struct {
	max int64 // 0: none
	why string
}

// newNameBudget is the flag, else RLKTOP_MAX_IMPORT_NAME_BYTES, else
// MaxImportNameBytes, with the reason for the message.
func newNameBudget() nameBudget {
	if p := setNameBytes.Load(); p != nil {
		return nameBudget{int64(min(*p, 1<<62)), fmt.Sprintf("--%s=%d", MaxImportNameBytesFlag, *p)}
	}
	why := fmt.Sprintf("the default limit: %d MiB at about %d bytes of memory a byte of name", DefaultImportBytes>>20, NameByteCost)
	if v := os.Getenv(MaxImportNameBytesEnv); v != "" {
		if n, err := strconv.ParseUint(v, 10, 62); err == nil {
			return nameBudget{int64(n), MaxImportNameBytesEnv + "=" + v}
		}
		why = fmt.Sprintf("%s=%q is not a whole number, so %s", MaxImportNameBytesEnv, v, why)
	}
	return nameBudget{MaxImportNameBytes, why}
}

// over returns, once n bytes of names (tracer.Strings.Bytes, or the
// names an importer decoded before interning them) pass the budget, the
// message and hint of the *Error the importer returns with what it read
// before kept; ok is false while n is within it. where names the unit
// kept ("rows", "events", "records").
func (b nameBudget) over(n int64, where string) (msg, hint string, ok bool) {
	if b.max <= 0 || n <= b.max {
		return "", "", false
	}
	return fmt.Sprintf("the names in the file (kernels, operators, ranges) take more than %d bytes (%s): the %s before this point are kept", b.max, b.why, where),
		fmt.Sprintf("to read it all, pass --%s N or set %s to a larger number (0: no limit; each byte of name takes about %d bytes at a report's peak)", MaxImportNameBytesFlag, MaxImportNameBytesEnv, NameByteCost), true
}

// ResetLimits forgets what the Set functions set (for tests).
func ResetLimits() {
	setCSVRows.Store(nil)
	setEvents.Store(nil)
	setNameBytes.Store(nil)
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

// StreamMinBytes is the decoded size (DecodedSize) from which `rlktop
// report` and `export --format parquet` stream Kineto inputs window by
// window instead of reading them whole.
const StreamMinBytes = 256 << 20

// maxDeflateRatio bounds how much deflate can expand: 1032 bytes out per
// byte in (a 258-byte match coded in 2 bits; zlib's technical details,
// "Maximum compression factor").
const maxDeflateRatio = 1032

// DecodedSize returns the bytes path decodes to: its size, or for a gzip
// file the larger of that and the size its trailer records (ISIZE, the
// uncompressed length modulo 2^32, RFC 1952 §2.3.1; of the last member
// only). It is an estimate for choosing how to read a file, never a
// bound: a file whose trailer lies is still held to the import limits,
// and a trailer more than maxDeflateRatio times the file (a cut file's
// last data bytes) counts as no size. A path that is not a regular file
// is an error.
func DecodedSize(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	var magic [2]byte
	if size < 18 {
		return size, nil
	}
	if _, err := f.ReadAt(magic[:], 0); err != nil || magic != [2]byte{0x1f, 0x8b} {
		return size, nil
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return size, nil
	}
	isize := int64(tail[0]) | int64(tail[1])<<8 | int64(tail[2])<<16 | int64(tail[3])<<24
	if isize > maxDeflateRatio*size {
		// Not a size: the file is cut, and its last bytes are data.
		return size, nil
	}
	return max(size, isize), nil
}
