package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// `run --headless` interrupted by SIGINT or SIGTERM prints the report of
// what it received (it printed nothing) and exits 1 saying so.
func TestRunHeadlessInterruptedPrintsReport(t *testing.T) {
	bin := needRecordBin(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			args := append([]string{"run", "--headless", "--steps", "100000"}, tinyLoop...)
			cmd := exec.Command(bin, args...)
			var stdout bytes.Buffer
			var stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The built-in loop logs "step 10: …" on stderr (copied by rlktop).
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(stderr.String(), "step 10:") {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no step 10 in 60 s:\n%s", stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1\nstderr:\n%s", err, stderr.String())
			}
			m := regexp.MustCompile(`(?m)^steps: (\d+) `).FindStringSubmatch(stdout.String())
			if m == nil {
				t.Fatalf("no report on stdout after %v:\n%s", sig, stdout.String())
			}
			n, _ := strconv.Atoi(m[1])
			if n < 10 || !strings.Contains(stdout.String(), "kernels: ") {
				t.Errorf("report holds %d steps (the loop had logged step 10):\n%s", n, stdout.String())
			}
			if want := fmt.Sprintf("interrupted: the report above holds the %d steps", n); !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
			}
		})
	}
}

// `record` stops at the first write error and says what the file holds
// (a full disk ran all steps and then claimed all of them):
// RLIMIT_FSIZE of 40 blocks (20 KiB in dash) cuts the file; /dev/full
// takes nothing.
func TestRecordStopsAtWriteError(t *testing.T) {
	bin := needRecordBin(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "small.rlk")
	loopFlags := strings.Join(tinyLoop, " ")
	cmd := exec.Command("/bin/sh", "-c", "ulimit -f 40 && exec \"$0\" record -o \"$1\" --steps 3000 "+loopFlags, bin, rec)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\nstdout: %s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "file too large") {
		t.Errorf("stderr does not name the write error:\n%s", stderr.String())
	}
	tr, _ := tracefile.Open(rec, tracefile.Options{})
	if tr == nil {
		t.Fatalf("%s does not read back", rec)
	}
	steps := 0
	for i := range tr.Events {
		if tr.Events[i].Kind == tracer.KindStep {
			steps++
		}
	}
	want := fmt.Sprintf("it holds %d steps, %d events", steps, len(tr.Events))
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout %q lacks %q", stdout.String(), want)
	}
	if steps == 0 || steps >= 3000 {
		t.Errorf("the file holds %d steps; want some, and far fewer than 3000 (took %v)", steps, time.Since(start))
	}

	cmd = exec.Command(bin, append([]string{"record", "--force", "-o", "/dev/full", "--steps", "3000"}, tinyLoop...)...)
	stderr.Reset()
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Fatalf("/dev/full: %v\n%s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), "it holds nothing") {
		t.Errorf("/dev/full: stdout %q", out)
	}
}

// A connection rlktop closes on an error (here a stream that is not the
// wire protocol) is named in `run --headless`'s output (only
// stored, never shown).
func TestRunHeadlessShowsConnectionError(t *testing.T) {
	bin := needRecordBin(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 to connect to the session's Unix socket")
	}
	script := `import os, socket, time
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["RLKTOP_SOCKET"])
s.sendall(b"garbage" * 100); s.close(); time.sleep(0.3)`
	cmd := exec.Command(bin, "run", "--headless", "--untraced", "--", py, "-c", script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	want := `rlktop: warning: a connection that sent no hello was closed: wire: byte 0, field magic: stream starts with "garb"`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

// export and diff of a damaged input (a Kineto file cut inside its 7th
// event) write what its reader kept — the 6 kernels before the cut — say
// so, and exit 1 (they said the data was kept, then wrote
// nothing).
func TestExportAndDiffKeepWhatWasRead(t *testing.T) {
	bin := needRecordBin(t)
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":500,"args":{"device":0,"stream":7}}`, i, 1000*(i+1))
	}
	b.WriteString("]}")
	full := b.String()
	cutAt := strings.Index(full, `"name":"k6"`) // inside the 7th event
	good, cut := filepath.Join(dir, "good.json"), filepath.Join(dir, "cut.json")
	os.WriteFile(good, []byte(full), 0o644)
	os.WriteFile(cut, []byte(full[:cutAt]), 0o644)

	out := filepath.Join(dir, "out.json")
	cmd := exec.Command(bin, "export", cut, "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("export: %v, want exit 1\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "exporting what was read before the damage: 6 events") {
		t.Errorf("export stderr:\n%s", stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("export wrote nothing: %v", err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Cat, Name string
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && e.Cat == "kernel" {
			names[e.Name] = true
		}
	}
	if len(names) != 6 || !names["k0"] || !names["k5"] || names["k6"] {
		t.Errorf("exported kernels %v, want k0..k5", names)
	}

	cmd = exec.Command(bin, "diff", good, cut, "--format", "json")
	stderr.Reset()
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("diff: %v, want exit 1\n%s", err, stderr.String())
	}
	var d struct {
		OnlyA int `json:"only_a"`
	}
	if err := json.Unmarshal(stdout, &d); err != nil || d.OnlyA != 4 {
		t.Errorf("diff JSON only_a = %d (%v), want k6..k9 = 4\n%s", d.OnlyA, err, stdout)
	}
	if !strings.Contains(stderr.String(), "the diff below covers what the damaged input held before the damage") {
		t.Errorf("diff stderr:\n%s", stderr.String())
	}
}
