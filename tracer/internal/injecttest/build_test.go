package injecttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHashFiles: the hash changes when a header's content changes (what
// makes Go's cache rebuild the library), not when nothing does, and a glob
// matching nothing is an error.
func TestHashFiles(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "a.h")
	write := func(s string) {
		if err := os.WriteFile(h, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("static inline int f(void) { return 1; }\n")
	glob := []string{filepath.Join(dir, "*.h")}
	a, err := hashFiles(glob)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := hashFiles(glob); again != a {
		t.Errorf("same files, different hashes %s, %s", a, again)
	}
	write("static inline int f(void) { return 2; }\n")
	if b, _ := hashFiles(glob); b == a || len(b) != 16 {
		t.Errorf("edited header: hash %q, before %q (want another 16-digit hash)", b, a)
	}
	if _, err := hashFiles([]string{filepath.Join(dir, "*.missing")}); err == nil || !strings.Contains(err.Error(), "no header matches") {
		t.Errorf("glob matching nothing: err %v, want 'no header matches …'", err)
	}
}
