package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// TestRecordNeverFollowsLinks: `record -o` at a dangling symbolic link
// fails without --force and creates nothing (the target was created);
// with --force the link itself is replaced by the recording and its
// target is still never created (it was truncated or created).
func TestRecordNeverFollowsLinks(t *testing.T) {
	bin := needRecordBin(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	link := filepath.Join(dir, "run.rlk")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, append([]string{"record", "-o", link, "--steps", "2"}, tinyLoop...)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "a symbolic link is there") {
		t.Errorf("without --force: %v\n%s", err, out)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("the link's target was created (%v)", err)
	}
	out, err = exec.Command(bin, append([]string{"record", "--force", "-o", link, "--steps", "2"}, tinyLoop...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("with --force: %v\n%s", err, out)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("with --force the link's target was created (%v)", err)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		t.Errorf("%s after --force: %v (%v), want the recording", link, fi.Mode(), err)
	}
}

// TestAgentEnvRefusesEmptyToken: an address whose token is empty is
// refused (it was accepted and printed).
func TestAgentEnvRefusesEmptyToken(t *testing.T) {
	for _, a := range []string{"tcp:127.0.0.1:29600#", "tcp:127.0.0.1:29600# ", "tcp:#abc"} {
		if out, err := execRoot(t, "agent-env", "--connect", a); err == nil {
			t.Errorf("--connect %q accepted:\n%s", a, out)
		}
	}
}

// TestDiffExportShowImportWarnings: the import warnings `report` shows
// (here a stray value among a Kineto file's events) are shown by diff and
// export too (they were dropped).
func TestDiffExportShowImportWarnings(t *testing.T) {
	dir := t.TempDir()
	ev := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0}}`
	p := filepath.Join(dir, "stray.json")
	js := `{"traceEvents":[` + strings.ReplaceAll(ev, "%d", "1") + `,42,` + strings.ReplaceAll(ev, "%d", "20") + `]}`
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "element 1 of the event array is '4', not an event object"
	rep, err := execRoot(t, "report", p)
	if err != nil || !strings.Contains(rep, want) {
		t.Fatalf("report: %v\n%s", err, rep)
	}
	for _, args := range [][]string{{"diff", p, p}, {"export", p, "--format", "chrome", "-o", filepath.Join(dir, "out.json")}} {
		out, err := execRoot(t, args...)
		if err != nil || !strings.Contains(out, "rlktop: warning: ") || !strings.Contains(out, want) {
			t.Errorf("%s: %v; want the import warning in\n%s", args[0], err, out)
		}
	}
}

// TestInterruptedSQLiteCopyRemoved: Ctrl-C (SIGINT) while `report` copies
// a gzipped database to its temporary file removes that file (a 2.8 GB
// copy was left in TMPDIR), and rlktop still ends by the signal.
func TestInterruptedSQLiteCopyRemoved(t *testing.T) {
	bin := needRecordBin(t)
	db, err := os.ReadFile("/work/shared/traces/nsys/pipit_saxpy_mpi_nsys2022.sqlite")
	if err != nil {
		t.Skipf("real input missing: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "big.sqlite.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(db)
	zero := make([]byte, 1<<20)
	for range 1024 { // 1 GiB after the database: the copy takes a while
		zw.Write(zero)
	}
	zw.Close()
	f.Close()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	cmd := exec.Command(bin, "report", p)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !seen; time.Sleep(5 * time.Millisecond) {
		ents, _ := os.ReadDir(tmp)
		seen = len(ents) > 0
	}
	if !seen {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("no temporary copy appeared")
	}
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("after SIGINT: %v, want ended by the signal", err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("%s left in TMPDIR after Ctrl-C", ents[0].Name())
	}
}
