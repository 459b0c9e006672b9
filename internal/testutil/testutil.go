// Package testutil holds helpers shared by tests.
package testutil

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the directory holding go.mod, walking up from the
// current directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// SharedTraces returns the path of the shared third-party traces
// (../shared/traces beside the repository root; RLKTOP_SHARED_TRACES
// overrides). It skips the test, saying so, when they are absent.
func SharedTraces(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("RLKTOP_SHARED_TRACES")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared", "traces")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared traces not found at %s (they live beside the repository, see README): %v", dir, err)
	}
	return dir
}

// ReadTrace returns the bytes of the trace at path, gunzipped when its
// name ends in .gz; an error fails t.
func ReadTrace(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return b
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}
