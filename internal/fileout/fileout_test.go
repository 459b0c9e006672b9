package fileout

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: a finished file holds what was written, mode 0644, and no
// temporary file is left; a failed write leaves an existing file as it
// was and no temporary file either.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat %v, mode %v: want 0644", err, fi.Mode().Perm())
	}
	boom := errors.New("boom")
	err = Write(path, func(w io.Writer) error { io.WriteString(w, "second, half"); return boom })
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom wrapped", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("after a failed write the file holds %q, want the first one", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d entries in the folder, want only out.json", len(es))
	}
}
