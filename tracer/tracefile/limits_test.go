package tracefile

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// TestLimitSetters: each Set function (what the command-line flags call)
// takes effect, wins over its environment variable, and is named in the
// error it causes.
func TestLimitSetters(t *testing.T) {
	t.Cleanup(ResetLimits)

	// --max-recording-events: 5 frames of 500,000 events; at 750,000 one
	// frame is kept (as with the variable in TestRecordingEventBudget),
	// even with the variable asking for all five; at 0 all five.
	const perFrame = 500_000
	rec := zeroEventsRecording(t, 5, perFrame)
	t.Setenv(MaxRecordingEventsEnv, "2500000")
	SetMaxRecordingEvents(750_000)
	tr, err := Read(bytes.NewReader(rec), "crafted.rlk.gz", int64(len(rec)), Options{})
	if tr == nil || len(tr.Events) != perFrame || err == nil || !strings.Contains(err.Error(), "--max-recording-events=750000") {
		t.Errorf("--max-recording-events 750000: trace %v, err %v; want %d events and an error naming the flag", tr != nil, err, perFrame)
	}
	SetMaxRecordingEvents(0)
	if tr, err = Read(bytes.NewReader(rec), "crafted.rlk.gz", int64(len(rec)), Options{}); err != nil || len(tr.Events) != 5*perFrame {
		t.Errorf("--max-recording-events 0: err %v; want all %d events", err, 5*perFrame)
	}

	// --sqlite-timeout: 1ns fails even with the variable at 1m.
	db := buildRocpdFixture(t, true, "0000a1b2_c3d4_e5f6_0718_293a4b5c6d7e")
	t.Setenv(SQLiteTimeoutEnv, "1m")
	SetSQLiteTimeout(time.Nanosecond)
	if _, err := openWithin(t, db, 60*time.Second); err == nil || !strings.Contains(err.Error(), "--sqlite-timeout=1ns") {
		t.Errorf("--sqlite-timeout 1ns: err %v, want one naming the flag", err)
	}
	SetSQLiteTimeout(0)
	if _, err := openWithin(t, db, 60*time.Second); err != nil {
		t.Errorf("--sqlite-timeout 0: %v", err)
	}

	// --max-sqlite-copy: a gzipped database larger than 1,000 bytes is
	// refused at a 1,000-byte cap (flag or variable), read at 0.
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	read := func() error {
		_, err := Read(bytes.NewReader(gz.Bytes()), "run.db.gz", int64(gz.Len()), Options{})
		return err
	}
	t.Setenv(MaxSQLiteCopyEnv, "1000")
	if err := read(); err == nil || !strings.Contains(err.Error(), "RLKTOP_MAX_SQLITE_COPY_BYTES=1000") {
		t.Errorf("%s=1000: err %v, want one naming the variable", MaxSQLiteCopyEnv, err)
	}
	SetMaxSQLiteCopyBytes(1000)
	t.Setenv(MaxSQLiteCopyEnv, "0")
	if err := read(); err == nil || !strings.Contains(err.Error(), "--max-sqlite-copy=1000") || !strings.Contains(err.Error(), "1000-byte limit") {
		t.Errorf("--max-sqlite-copy 1000: err %v, want one naming the flag", err)
	}
	SetMaxSQLiteCopyBytes(0)
	if err := read(); err != nil {
		t.Errorf("--max-sqlite-copy 0 (%d bytes uncompressed): %v", len(raw), err)
	}
}
