package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestReportOwnParquet (user trial 5, item 7): `rlktop report X.parquet`
// of rlktop's own export says that Parquet is its export format, not an
// input, and names what reads it, in one short line: no escaped binary
// read as a CSV header. The file is checked to be Parquet by the
// format's own magic ("PAR1" at the start and in the last 4 bytes),
// not by rlktop.
func TestReportOwnParquet(t *testing.T) {
	f := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz")
	pq := filepath.Join(t.TempDir(), "big.parquet")
	if out, err := execRoot(t, "export", "--format", "parquet", "-o", pq, f); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	b, err := os.ReadFile(pq)
	if err != nil || len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		t.Fatalf("%s is not a Parquet file (%v)", pq, err)
	}
	_, err = runReport(t, pq)
	if err == nil {
		t.Fatal("report of a Parquet file: no error")
	}
	msg := err.Error()
	for _, want := range []string{pq + ": a Parquet file", "rlktop's export format", "not an input", "DuckDB", "read the trace files it was exported from"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, `\x`) || strings.Contains(msg, "CSV") {
		t.Errorf("message shows binary or CSV hints:\n%s", msg)
	}
}

// TestReportBinaryIsShort (user trial 5, item 7): no message about an
// unknown binary input prints more than a short quoted start of it. The
// input is this test's own executable (an ELF file: 0x7f 'E' 'L' 'F'),
// once whole and once with a comma line first, which made the CSV
// message quote 200 bytes of it (about 600 characters once escaped).
func TestReportBinaryIsShort(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		t.Skipf("%s is not an ELF file (%v)", exe, err)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "elf.json")
	comma := filepath.Join(dir, "elf.csv")
	os.WriteFile(whole, b[:64<<10], 0o644)
	os.WriteFile(comma, append([]byte("a,"), b[:64<<10]...), 0o644)
	for _, f := range []string{whole, comma} {
		_, err := runReport(t, f)
		if err == nil {
			t.Fatalf("%s: no error", f)
		}
		msg := err.Error()
		// The quoted start is at most 64 characters; the rest of the
		// message is the path and the list of formats rlktop reads.
		i := strings.Index(msg, `"`)
		j := strings.LastIndex(msg, `"`)
		if i < 0 || j-i+1 > 64 || strings.Count(msg, `\x`) > 16 {
			t.Errorf("%s: the quoted start is %d characters (want <= 64):\n%s", f, j-i+1, msg)
		}
		if strings.Contains(msg, "CSV file whose header") {
			t.Errorf("%s: binary data called a CSV header:\n%s", f, msg)
		}
	}
}
