package injecttest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Build compiles what an end-to-end test runs (the c-shared library and
// the stand-in host programs) once per test binary, into a temporary
// folder that Remove deletes (call it from TestMain).
type Build struct {
	once sync.Once
	dir  string
	skip string
	err  error
}

// Dir returns the build folder, building it on the first call: steps gets
// a fresh temporary folder (named after prefix) and returns the commands
// to run there, or a reason to skip (no compiler, no headers). Each
// command runs in the test's package folder with CGO_ENABLED=1, and with
// CGO_CFLAGS extended by -DRLKTOP_TEST_HEADERS=<hash of the files that
// match headers> (globs relative to the package folder): Go's build cache
// does not notice edits to C headers outside a package's folder (such as
// tracer/pump/include/rlk_handoff.h), but it does notice CGO_CFLAGS, so a
// changed header rebuilds the library instead of testing a stale one.
// Later calls return the same folder, skip or failure. Dir skips or fails
// t when the build was skipped or failed.
func (b *Build) Dir(t testing.TB, prefix string, headers []string, steps func(dir string) (cmds [][]string, skip string)) string {
	t.Helper()
	b.once.Do(func() {
		sum, err := hashFiles(headers)
		if err != nil {
			b.err = err
			return
		}
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			b.err = err
			return
		}
		b.dir = dir
		cmds, skip := steps(dir)
		if skip != "" {
			b.skip = skip
			return
		}
		cflags := os.Getenv("CGO_CFLAGS")
		if cflags == "" {
			cflags = "-O2 -g" // Go's default
		}
		env := append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS="+cflags+" -DRLKTOP_TEST_HEADERS="+sum)
		for _, s := range cmds {
			cmd := exec.Command(s[0], s[1:]...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.err = fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
				return
			}
		}
	})
	if b.skip != "" {
		t.Skip(b.skip)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir
}

// Remove deletes the build folder, if any.
func (b *Build) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// hashFiles returns the first 16 hex digits of the SHA-256 of the names
// and contents of the files matching globs, in name order. A glob that
// matches nothing is an error (a moved header must not go unhashed).
func hashFiles(globs []string) (string, error) {
	var names []string
	for _, g := range globs {
		m, err := filepath.Glob(g)
		if err != nil {
			return "", err
		}
		if len(m) == 0 {
			return "", fmt.Errorf("injecttest: no header matches %s (from %s)", g, mustGetwd())
		}
		names = append(names, m...)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
