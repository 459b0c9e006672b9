package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// recordBin is the rlktop binary TestMain builds for the recording tests
// ("" with -short: those tests skip).
var (
	recordBin    string
	recordBinErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	var dir string
	if !testing.Short() {
		var err error
		dir, err = os.MkdirTemp("", "rlktop-record-test-")
		if err != nil {
			recordBinErr = err
		} else {
			recordBin = filepath.Join(dir, "rlktop")
			if out, err := exec.Command("go", "build", "-o", recordBin, ".").CombinedOutput(); err != nil {
				recordBinErr = fmt.Errorf("go build: %v\n%s", err, out)
			}
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func needRecordBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds rlktop and runs the built-in loop; skipped with -short")
	}
	if recordBinErr != nil {
		t.Fatal(recordBinErr)
	}
	return recordBin
}

// tinyLoop are the built-in loop's flags for fast steps (~15 ms on 2 cores).
var tinyLoop = []string{"--flag", "envs=8", "--flag", "layers=1", "--flag", "width=24"}

func countKind(t *tracer.Trace, k tracer.Kind) int {
	n := 0
	for i := range t.Events {
		if t.Events[i].Kind == k {
			n++
		}
	}
	return n
}

// TestRecordSurvivesKill9: a recording of the
// built-in loop survives `kill -9` of the recorder and replays; its export
// is valid trace JSON whose per-kernel totals equal the recording's; and
// `report --meta` shows the run record.
func TestRecordSurvivesKill9(t *testing.T) {
	bin := needRecordBin(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "killed.rlk")
	cmd := exec.Command(bin, append([]string{"record", "-o", rec, "--seconds", "60"}, tinyLoop...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const wantSteps = 4
	deadline := time.Now().Add(40 * time.Second)
	var steps int
	for {
		time.Sleep(200 * time.Millisecond)
		// The file is being written: it may end anywhere inside a frame.
		if tr, err := tracefile.Open(rec, tracefile.Options{}); err == nil {
			if steps = countKind(tr, tracer.KindStep); steps >= wantSteps {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("only %d steps in %s after 40 s; recorder stderr:\n%s", steps, rec, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("recorder was not killed by SIGKILL: %v", err)
	}

	tr, err := tracefile.Open(rec, tracefile.Options{})
	if err != nil {
		t.Fatalf("the killed recording does not open: %v", err)
	}
	if tr.Format != "rlktop" {
		t.Errorf("format %q, want rlktop", tr.Format)
	}
	if n := countKind(tr, tracer.KindStep); n < wantSteps {
		t.Errorf("%d steps after the kill, had %d before", n, wantSteps)
	}
	// The child is its own process group; with its socket gone it stops.
	if pid := tr.Meta["pid"]; pid != "" {
		t.Cleanup(func() {
			var p int
			fmt.Sscan(pid, &p)
			if p > 0 {
				syscall.Kill(-p, syscall.SIGKILL)
			}
		})
	}

	// Per-kernel totals of the recording (ns), from our importer.
	want := map[string]int64{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind == tracer.KindKernel {
			want[tr.Name(e)] += e.Dur
		}
	}
	if len(want) == 0 {
		t.Fatal("no kernels in the killed recording")
	}
	st, _ := os.Stat(rec)
	t.Logf("killed recording: %d bytes, %d steps, %d kernels (%d names), %d counters, warnings %q",
		st.Size(), countKind(tr, tracer.KindStep), countKind(tr, tracer.KindKernel), len(want), len(tr.Counters), tr.Warnings)

	out := filepath.Join(dir, "killed.json.gz")
	if b, err := exec.Command(bin, "export", rec, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("rlktop export: %v\n%s", err, b)
	}
	// Sum the exported kernels' durations (µs, exact decimals) with Go's
	// json.Number into big.Rat…
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(zr)
	dec.UseNumber()
	var doc struct {
		TraceEvents []struct {
			Ph, Cat, Name string
			Dur           json.Number
		} `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	f.Close()
	goSums := map[string]*big.Rat{}
	for _, e := range doc.TraceEvents {
		if e.Ph != "X" || e.Cat != "kernel" {
			continue
		}
		d, ok := new(big.Rat).SetString(e.Dur.String())
		if !ok {
			t.Fatalf("kernel %s: dur %q is not a decimal", e.Name, e.Dur)
		}
		if goSums[e.Name] == nil {
			goSums[e.Name] = new(big.Rat)
		}
		goSums[e.Name].Add(goSums[e.Name], d)
	}
	checkTotals(t, "Go json.Number", want, goSums)

	// …and with Python's json (Decimal), when python3 is here.
	if py, err := exec.LookPath("python3"); err != nil {
		t.Log("python3 not found: skipping the Python json check")
	} else {
		const script = `
import decimal, gzip, json, sys
doc = json.load(gzip.open(sys.argv[1], "rt"), parse_float=decimal.Decimal)
sums = {}
for e in doc["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "kernel":
        sums[e["name"]] = sums.get(e["name"], decimal.Decimal(0)) + decimal.Decimal(e["dur"])
json.dump({k: str(v) for k, v in sums.items()}, sys.stdout)
`
		b, err := exec.Command(py, "-c", script, out).Output()
		if err != nil {
			t.Fatalf("python3 json: %v", err)
		}
		var ps map[string]string
		if err := json.Unmarshal(b, &ps); err != nil {
			t.Fatal(err)
		}
		pySums := map[string]*big.Rat{}
		for k, v := range ps {
			r, ok := new(big.Rat).SetString(v)
			if !ok {
				t.Fatalf("python sum %q for %s", v, k)
			}
			pySums[k] = r
		}
		checkTotals(t, "python3 json", want, pySums)
	}

	// The run record: what ran, from where, which code; not finished.
	b, err := exec.Command(bin, "report", "--meta", rec).CombinedOutput()
	if err != nil {
		t.Fatalf("report --meta: %v\n%s", err, b)
	}
	meta := string(b)
	wd, _ := os.Getwd()
	for _, s := range []string{
		"command:       (built-in training loop)",
		"rlktop args:   " + bin + " record -o " + rec + " --seconds 60 --flag envs=8 --flag layers=1 --flag width=24",
		"directory:     " + wd,
		"started:       " + time.Now().UTC().Format("2006-01-02"),
		"ended:         (not finished",
		"flags:         envs=8 layers=1 width=24",
		"rlktop:        ",
		"go:            go1.",
		"set by rlktop: RLKTOP_SOCKET=",
	} {
		if !strings.Contains(meta, s) {
			t.Errorf("report --meta lacks %q:\n%s", s, meta)
		}
	}
	if rev, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		if s := "git revision:  " + strings.TrimSpace(string(rev)); !strings.Contains(meta, s) {
			t.Errorf("report --meta lacks %q:\n%s", s, meta)
		}
	} else {
		t.Log("git rev-parse HEAD failed; not checking the revision:", err)
	}
}

// checkTotals compares per-kernel totals: want in ns, got in µs.
func checkTotals(t *testing.T, how string, want map[string]int64, got map[string]*big.Rat) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d kernel names in the export, %d in the recording", how, len(got), len(want))
	}
	for name, ns := range want {
		g := got[name]
		w := big.NewRat(ns, 1000)
		if g == nil || g.Cmp(w) != 0 {
			t.Errorf("%s: kernel %s total %v µs in the export, %s µs in the recording", how, name, g, w.FloatString(3))
		}
	}
}

// TestRecordRunRecord records to the end (built-in loop with --steps; a
// command that exits 3) and checks the finished run record: end time and
// exit status, which becomes rlktop's; and the summary line.
func TestRecordRunRecord(t *testing.T) {
	bin := needRecordBin(t)
	dir := t.TempDir()
	fp := filepath.Join(dir, "weights.bin")
	if err := os.WriteFile(fp, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "steps.rlk")
	args := append([]string{"record", "-o", rec, "--steps", "3", "--fingerprint", fp}, tinyLoop...)
	b, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("rlktop record --steps 3: %v", err)
	}
	if s := string(b); !strings.HasPrefix(s, "recorded "+rec+": ") || !strings.Contains(s, " 3 steps, ") || !strings.Contains(s, " 0 dropped") {
		t.Errorf("summary %q", s)
	}
	tr, err := tracefile.Open(rec, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := countKind(tr, tracer.KindStep); n != 3 {
		t.Errorf("%d steps recorded, want 3", n)
	}
	if countKind(tr, tracer.KindKernel) == 0 {
		t.Error("no kernels recorded")
	}
	if len(tr.Counters) == 0 {
		t.Error("no telemetry counters recorded (proc.cpu_pct / proc.rss_bytes)")
	}
	b, err = exec.Command(bin, "report", "--meta", rec).CombinedOutput()
	if err != nil {
		t.Fatalf("report --meta: %v\n%s", err, b)
	}
	meta := string(b)
	// sha256("abc"), FIPS 180-2 appendix B.1.
	for _, s := range []string{"exit status:   0", "ended:         " + time.Now().UTC().Format("2006-01-02"),
		"fingerprint:   " + fp + " sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad (3 bytes)"} {
		if !strings.Contains(meta, s) {
			t.Errorf("report --meta lacks %q:\n%s", s, meta)
		}
	}

	rec3 := filepath.Join(dir, "exit3.rlk")
	c := exec.Command(bin, "record", "-o", rec3, "--untraced", "--", "sh", "-c", "exit 3")
	err = c.Run()
	if c.ProcessState == nil || c.ProcessState.ExitCode() != 3 {
		t.Fatalf("rlktop record -- sh -c 'exit 3': %v, want exit status 3", err)
	}
	b, err = exec.Command(bin, "report", "--meta", rec3).CombinedOutput()
	if err != nil {
		t.Fatalf("report --meta: %v\n%s", err, b)
	}
	for _, s := range []string{"exit status:   3", "command:       sh -c 'exit 3'"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report --meta lacks %q:\n%s", s, b)
		}
	}
}
