package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestReportOwnParquet: `rlktop report X.parquet`
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

// TestReportBinaryIsShort: no message about an
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

// TestReportDirectory: `rlktop report DIR` says
// that DIR is a directory and a trace file is wanted, with no gzip hint
// (it said "cannot read the start of the file: read /tmp: is a directory
// (the file may be truncated or not gzip; check it with `gzip -t`)").
func TestReportDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := runReport(t, dir)
	if err == nil {
		t.Fatal("report of a directory: no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, dir+": is a directory, not a trace file") || !strings.Contains(msg, "give the trace files in it") || strings.Contains(msg, "gzip") {
		t.Errorf("report of a directory:\n%s", msg)
	}
}

// TestReportCutGzipOffset: a .gz cut at 500,000
// bytes (as `head -c 500000 hta_diff_control_a100.json.gz`) fails with an
// offset far past the 500,000 bytes of the file, so it must be labelled an
// offset in the uncompressed data. The test gunzips the cut file with the
// standard library's compress/gzip (rlktop uses klauspost's) and checks
// that the event the message names starts ('{') at that uncompressed
// offset and that the labelled offset lies inside the data gunzip gave.
func TestReportCutGzipOffset(t *testing.T) {
	src := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_diff_control_a100.json.gz")
	b, err := os.ReadFile(src)
	if err != nil || len(b) < 500000 {
		t.Fatalf("%s: %v (%d bytes)", src, err, len(b))
	}
	cut := filepath.Join(t.TempDir(), "cut.json.gz")
	os.WriteFile(cut, b[:500000], 0o644)
	zr, err := gzip.NewReader(bytes.NewReader(b[:500000]))
	if err != nil {
		t.Fatal(err)
	}
	raw, rerr := io.ReadAll(zr)
	if !errors.Is(rerr, io.ErrUnexpectedEOF) {
		t.Fatalf("gunzip of the cut file: %v, want unexpected EOF", rerr)
	}

	out, err := runReport(t, cut)
	if err == nil {
		t.Fatalf("no error:\n%s", out)
	}
	// The error is printed above the report (exit 1): "PATH (byte N of
	// the uncompressed data): … inside event E starting at byte S: …".
	m := regexp.MustCompile(regexp.QuoteMeta(cut) + ` \(byte (\d+) of the uncompressed data\): .* starting at byte (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no labelled uncompressed offset:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	start, _ := strconv.Atoi(m[2])
	if n <= 500000 || n > len(raw) || start > n || raw[start] != '{' {
		t.Errorf("offset %d, event start %d: want 500000 < start <= offset <= %d (the gunzipped bytes) and '{' at the start (found %q)", n, start, len(raw), raw[min(start, len(raw)-1)])
	}
	if !strings.Contains(out, "the report below holds what was read before that point: ") || !strings.Contains(out, "metadata, counter and flow records are not events") {
		t.Errorf("no line saying what the report holds:\n%s", out)
	}
}
