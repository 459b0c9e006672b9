package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TorchRoot is a Debian trixie root with a real PyTorch (CPU) built by
// scripts/torch-root.sh, in which tests run a CGO_ENABLED=0 rlktop.
type TorchRoot struct {
	Dir string // the root's path on this machine
	Bin string // the rlktop binary inside the root (a path inside it)
	Dst string // a private folder inside the root (a path inside it)
}

// EnvTorchRoot overrides the root's path (default: scripts/torch-root.sh's
// /var/cache/rlktop/torch-root-trixie). EnvRequireTorch=1 (scripts/test.sh
// sets it) turns a missing root into a failure instead of a skip.
const (
	EnvTorchRoot    = "RLKTOP_TORCH_ROOT"
	EnvRequireTorch = "RLKTOP_REQUIRE_TORCH"
)

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// NeedTorchRoot returns the PyTorch root with a fresh CGO_ENABLED=0
// rlktop and the repository's examples/ copied into a private folder of
// it, and /proc mounted there. It skips the test, saying why, when the root
// is not built or this process cannot chroot (not root); with
// RLKTOP_REQUIRE_TORCH=1 those are failures.
func NeedTorchRoot(t testing.TB) *TorchRoot {
	t.Helper()
	skip := t.Skipf
	if os.Getenv(EnvRequireTorch) == "1" {
		skip = t.Fatalf
	}
	dir := os.Getenv(EnvTorchRoot)
	if dir == "" {
		dir = "/var/cache/rlktop/torch-root-trixie"
	}
	if _, err := os.Stat(filepath.Join(dir, ".rlktop-ready")); err != nil {
		skip("no PyTorch root at %s (build it with scripts/torch-root.sh; scripts/test.sh does): the real-PyTorch tests need it", dir)
	}
	if os.Getuid() != 0 {
		skip("the real-PyTorch tests chroot into %s and so need root", dir)
	}
	if out, err := exec.Command("mountpoint", "-q", filepath.Join(dir, "proc")).CombinedOutput(); err != nil {
		if out, err := exec.Command("mount", "-t", "proc", "proc", filepath.Join(dir, "proc")).CombinedOutput(); err != nil {
			t.Fatalf("mounting /proc in %s: %v %s", dir, err, out)
		}
		_ = out
	}
	buildOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "rlktop-static-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(tmp, "rlktop")
		cmd := exec.Command("go", "build", "-o", buildBin, "./cmd/rlktop")
		cmd.Dir = RepoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("CGO_ENABLED=0 go build ./cmd/rlktop: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	priv, err := os.MkdirTemp(filepath.Join(dir, "tmp"), "rlktop-test-")
	if err != nil {
		t.Fatal(err)
	}
	inside0 := "/" + strings.TrimPrefix(strings.TrimPrefix(priv, dir), "/")
	t.Cleanup(func() {
		// rlktop puts its command in a process group of its own and leaves
		// it running when it is killed (by design: the traced process is
		// never harmed), so a test that kills rlktop would leave the child
		// behind; end every process still running from this folder.
		killRunningFrom(inside0 + "/")
		os.RemoveAll(priv)
	})
	copyFile(t, buildBin, filepath.Join(priv, "rlktop"), 0o755)
	ex := filepath.Join(RepoRoot(t), "examples")
	ents, _ := os.ReadDir(ex)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".py") {
			copyFile(t, filepath.Join(ex, e.Name()), filepath.Join(priv, e.Name()), 0o644)
		}
	}
	inside := "/" + strings.TrimPrefix(strings.TrimPrefix(priv, dir), "/")
	return &TorchRoot{Dir: dir, Bin: inside + "/rlktop", Dst: inside}
}

// Command returns a command running argv inside the root (chroot), in
// the root's /tmp, with HOME=/tmp and no PYTHONPATH from this process.
func (r *TorchRoot) Command(argv ...string) *exec.Cmd {
	cmd := exec.Command("chroot", append([]string{r.Dir, "/usr/bin/env", "-C", "/tmp"}, argv...)...)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "TERM=xterm-256color"}
	cmd.Env = env
	return cmd
}

// killRunningFrom sends SIGKILL to every process whose command line
// names a path under dir (read from /proc/PID/cmdline).
func killRunningFrom(dir string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func copyFile(t testing.TB, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// CopyIntoRoot copies the repository file rel (relative to the calling
// test's package directory) into r's private folder and returns its path
// inside the root.
func CopyIntoRoot(t testing.TB, r *TorchRoot, rel string) string {
	t.Helper()
	dst := filepath.Join(r.Dir, strings.TrimPrefix(r.Dst, "/"), filepath.Base(rel))
	copyFile(t, rel, dst, 0o644)
	return r.Dst + "/" + filepath.Base(rel)
}
