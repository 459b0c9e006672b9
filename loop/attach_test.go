package loop

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

func TestStatFields(t *testing.T) {
	// A command name with spaces and parentheses, as a thread may set it.
	stat := []byte("4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 200 18446744073709551615")
	st, err := statStartTime(stat)
	if err != nil || st != 987654 || statState(stat) != "S" {
		t.Errorf("start %d, state %q, err %v: want 987654, S", st, statState(stat), err)
	}
	if _, err := statStartTime([]byte("4242 (x) S 1")); err == nil {
		t.Error("a short stat line parsed")
	}
}

func TestPythonVersionOf(t *testing.T) {
	for path, want := range map[string]int{
		"/usr/bin/python3.13":                                  313,
		"/opt/conda/bin/python3.12":                            312,
		"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0":       311,
		"/home/u/.pyenv/versions/3.14.0/lib/libpython3.14t.so": 314,
		"/usr/bin/python3":                                     0,
		"/usr/bin/sleep":                                       0,
		"/usr/bin/python3.13-config":                           313,
		"/usr/lib/python3.13/lib-dynload/_ssl.so":              0,
	} {
		if got := versionOf(path); got != want {
			t.Errorf("versionOf(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestAttachKineto(t *testing.T) {
	for env, want := range map[string][2]int{"": {10, 2}, "1": {10, 2}, "0": {0, 0}, "3:1": {3, 1}, "5:5": {10, 2}, "x": {10, 2}} {
		t.Setenv("RLKTOP_KINETO", env)
		if e, l := attachKineto(""); e != want[0] || l != want[1] {
			t.Errorf("RLKTOP_KINETO=%q: %d:%d, want %d:%d", env, e, l, want[0], want[1])
		}
	}
	if e, _ := attachKineto(TracerNone); e != 0 {
		t.Errorf("--tracer none: windows every %d steps, want none", e)
	}
}

func TestGDBScript(t *testing.T) {
	s := gdbScript("/tmp/rlktop-attach-0/1-2/boot.py", "")
	// The calls run only at the breakpoint; after continue (rlktop
	// interrupted the wait), the script only deletes it and detaches.
	calls, rest, ok := strings.Cut(s, "\ncontinue\n")
	if !ok || !strings.Contains(calls, "break PyEval_SaveThread\ncommands 1\n") ||
		!strings.Contains(calls, `PyRun_SimpleStringFlags("(lambda f: [exec(f.read(), {}), f.close()])(open('/tmp/rlktop-attach-0/1-2/boot.py'))", 0)`) ||
		strings.Contains(rest, "call ") || !strings.Contains(rest, "delete\ndetach\n") || strings.Contains(s, "sharedlibrary") {
		t.Errorf("script:\n%s", s)
	}
	if s := gdbScript("/b.py", "/usr/lib/libpython3.12.so.1.0"); !strings.Contains(s, `sharedlibrary libpython3\.12\.so\.1\.0`) {
		t.Errorf("a libpython process: no sharedlibrary line:\n%s", s)
	}
	if safePath(`/tmp/a'b`) || safePath("/tmp/a b") || !safePath("/tmp/rlktop-attach-0/12-34/boot.py") {
		t.Error("safePath")
	}
}

// TestClaimAttachFolder: the folder is the attach marker: a second claim
// while its rlktop lives is refused, one whose rlktop is gone is taken
// over.
func TestClaimAttachFolder(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	tg := Target{PID: 12345, StartTime: 678}
	f, err := claimAttachFolder(tg)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o700 || filepath.Base(f) != "12345-678" {
		t.Fatalf("folder %s: %v %v", f, fi.Mode(), err)
	}
	if _, err := writeAgentFolder(f, "unix:/tmp/x/s", time.Now(), 10, 2, agentGPU{}); err != nil {
		t.Fatal(err)
	}
	var ae *AttachError
	if _, err := claimAttachFolder(tg); !errors.As(err, &ae) || !strings.Contains(err.Error(), "is attached to it already") {
		t.Errorf("second claim: %v, want refused", err)
	}
	// The owner gone: a pid that cannot be alive.
	os.WriteFile(filepath.Join(f, "owner"), []byte(`{"pid": 2147483646}`), 0o600)
	if f2, err := claimAttachFolder(tg); err != nil || f2 != f {
		t.Errorf("claim after the owner died: %v %v", f2, err)
	}
	if _, err := os.Stat(filepath.Join(f, "owner")); err == nil {
		t.Error("the stale folder's files were kept")
	}
}

// plainLoop prints, every 50 ms, what an agent could leave behind in a
// Python process without torch: its threads, modules named rlktop,
// sys.meta_path and sys.path lengths, and __main__'s global names.
const plainLoop = `
import sys, threading, time
while True:
    mods = sum(1 for m in list(sys.modules) if m == "rlktop" or m.startswith("rlktop."))
    print("threads", threading.active_count(), "mods", mods, "meta", len(sys.meta_path), "path", len(sys.path),
          "globals", ",".join(sorted(globals())), flush=True)
    time.sleep(0.05)
`

// TestAttachPlainPython: the gdb route on this machine's python3 (no
// torch): StartAttach gets the agent's hello; detaching (Stop, which never
// signals) or the connection ending (rlktop killed) leaves the process as
// its own lines said it was before: threads, modules, import hooks,
// sys.path, globals; and the agent's folder is gone. It skips without gdb
// or python3, or where ptrace is not allowed.
func TestAttachPlainPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not found: the injection before Python 3.14 needs it")
	}
	t.Setenv("TMPDIR", t.TempDir())
	for _, how := range []string{"detach", "connection closed"} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(py, "-c", plainLoop)
			out, _ := cmd.StdoutPipe()
			var mu sync.Mutex
			var lines []string
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					mu.Lock()
					lines = append(lines, sc.Text())
					mu.Unlock()
				}
			}()
			last := func() string {
				mu.Lock()
				defer mu.Unlock()
				if len(lines) == 0 {
					return ""
				}
				return lines[len(lines)-1]
			}
			waitLine := func(what string, ok func(string) bool) {
				t.Helper()
				for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
					if l := last(); l != "" && ok(l) {
						return
					}
				}
				t.Fatalf("%s: last line %q", what, last())
			}
			waitLine("the loop's first line", func(string) bool { return true })
			before := last()
			l, err := StartAttach(context.Background(), LiveOptions{Attach: cmd.Process.Pid, Telemetry: -1, Session: session.Options{Source: "test"}})
			if err != nil {
				var ae *AttachError
				if errors.As(err, &ae) && strings.Contains(err.Error(), "ptrace") {
					t.Skipf("ptrace not allowed here: %v", err)
				}
				if errors.As(err, &ae) && strings.Contains(ae.Reason, errGDBXState) {
					// The torch-root tests (cmd/rlktop) run the route with trixie's gdb.
					t.Skipf("this machine's gdb cannot call into a process on this CPU: %v", err)
				}
				t.Fatal(err)
			}
			folder := l.att.folder
			waitLine("the agent's threads", func(s string) bool {
				return s != before && strings.Contains(s, "mods ") && !strings.Contains(s, "mods 0 ")
			})
			during := last()
			if how == "detach" {
				l.Sup.Stop(3 * time.Second)
				if st := l.Sup.Status(); st.State != livestate.Running {
					t.Errorf("after detaching the process is %s", st.Describe())
				}
				l.Close()
			} else {
				l.Session.Close() // as rlktop's death closes the connection
				defer l.Close()
			}
			waitLine("the process as before", func(s string) bool { return s == before })
			t.Logf("before %q; attached %q", before, during)
			if _, err := os.Stat(folder); err == nil {
				t.Errorf("the agent's folder %s is left", folder)
			}
		})
	}
}
