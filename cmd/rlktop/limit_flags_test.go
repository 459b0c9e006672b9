package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/spf13/pflag"

	"github.com/rlktop/rlktop/tracer/session"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// TestLimitFlags: each limit flag takes effect on the command that reads
// files (report) or runs a session (run), and wins over its environment
// variable: the real nsys export read under --sqlite-timeout 1ns and,
// gzipped, under --max-sqlite-copy 1000 fails with the flag named; a
// recording of 3 frames of 10 events under --max-recording-events 15
// keeps one frame and names the flag; run's connection flags reach
// session.DefaultLimits.
func readOrSkip(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Skip(err)
	}
	return b
}

func TestLimitFlags(t *testing.T) {
	t.Cleanup(func() {
		tracefile.ResetLimits()
		session.SetDefaultLimits(session.Limits{})
		for _, name := range []string{"report", "run"} {
			if c, _, err := rootCmd.Find([]string{name}); err == nil {
				c.Flags().VisitAll(func(f *pflag.Flag) {
					if strings.HasPrefix(f.Name, "max-") || f.Name == "sqlite-timeout" {
						f.Value.Set(f.DefValue)
						f.Changed = false
					}
				})
			}
		}
	})
	const nsys = "/work/shared/traces/nsys/pipit_saxpy_mpi_nsys2022.sqlite"
	raw, err := os.ReadFile(nsys)
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(tracefile.SQLiteTimeoutEnv, "10m")
	// report prints a damaged file's error on its error writer and
	// returns a bare exit status: capture that writer too.
	execRoot := func(t *testing.T, args ...string) (string, error) {
		var eb bytes.Buffer
		if c, _, err := rootCmd.Find(args[:1]); err == nil {
			c.SetErr(&eb)
			defer c.SetErr(nil)
		}
		out, err := execRoot(t, args...)
		return out + eb.String(), err
	}
	said := func(out string, err error, want ...string) bool {
		if err == nil {
			return false
		}
		for _, w := range want {
			if !strings.Contains(out+err.Error(), w) {
				return false
			}
		}
		return true
	}
	if out, err := execRoot(t, "report", "--sqlite-timeout", "1ns", nsys); !said(out, err, "--sqlite-timeout=1ns") {
		t.Errorf("report --sqlite-timeout 1ns: %v\n%s", err, out)
	}
	tracefile.ResetLimits()

	dir := t.TempDir()
	gzPath := filepath.Join(dir, "saxpy.sqlite.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execRoot(t, "report", "--max-sqlite-copy", "1000", gzPath); !said(out, err, "--max-sqlite-copy=1000") {
		t.Errorf("report --max-sqlite-copy 1000: %v\n%s", err, out)
	}
	tracefile.ResetLimits()

	// A recording: 3 frames of 10 events of 4 zero bytes each.
	var rec bytes.Buffer
	w := wire.NewWriter(&rec)
	w.Flags = wire.FlagRelayed
	if err := w.Hello(&msg.Hello{Source: "crafted", PID: 1}); err != nil {
		t.Fatal(err)
	}
	p := binary.AppendUvarint(nil, 10)
	p = append(p, make([]byte, 40)...)
	for range 3 {
		if err := w.WriteFrame(wire.TypeEvents, 0, p); err != nil {
			t.Fatal(err)
		}
	}
	recPath := filepath.Join(dir, "crafted.rlk")
	if err := os.WriteFile(recPath, rec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(tracefile.MaxRecordingEventsEnv, "0")
	if out, err := execRoot(t, "report", "--max-recording-events", "15", recPath); !said(out, err, "--max-recording-events=15", "kept the 10") {
		t.Errorf("report --max-recording-events 15: %v\n%s", err, out)
	}
	tracefile.ResetLimits()

	// A gzipped copy of the real nsys stats CSV (131 data rows, wc -l)
	// under --max-csv-rows 10.
	csvGz := filepath.Join(dir, "nvtx.csv.gz")
	gz.Reset()
	zw = gzip.NewWriter(&gz)
	zw.Write(readOrSkip(t, "/work/shared/traces/nsys/pipit_nbody_nvtx_stats.csv"))
	zw.Close()
	if err := os.WriteFile(csvGz, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execRoot(t, "report", "--max-csv-rows", "10", csvGz); !said(out, err, "--max-csv-rows=10", "more than 10 rows") {
		t.Errorf("report --max-csv-rows 10: %v\n%s", err, out)
	}
	tracefile.ResetLimits()

	// run: the checks after the flags stop it before anything starts.
	_, err = execRoot(t, "run", "--headless", "--steps", "-1", "--max-conns", "3", "--max-names-per-conn", "9", "--max-name-bytes-per-conn", "999")
	if err == nil || !strings.Contains(err.Error(), "--steps -1") {
		t.Fatalf("run --steps -1: %v", err)
	}
	if got, want := session.DefaultLimits(), (session.Limits{MaxConns: 3, MaxNamesPerConn: 9, MaxNameBytesPerConn: 999}); got != want {
		t.Errorf("session limits %+v, want %+v", got, want)
	}
	if _, err := execRoot(t, "run", "--headless", "--max-conns", "0"); err == nil || !strings.Contains(err.Error(), "--max-conns 0") {
		t.Errorf("run --max-conns 0: %v", err)
	}
}
