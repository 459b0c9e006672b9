package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden pins the exact text of every format and view for the
// hand-written snapshot (its numbers are checked independently in
// report_test.go). Files are named hand.<by>.<format>; rewrite them with
// go test ./report -run Golden -update.
func TestGolden(t *testing.T) {
	for _, by := range Views() {
		for _, f := range Formats() {
			if f == "json" && by != ByKernel {
				continue // the JSON document is the same for every view
			}
			name := "hand." + by + "." + f
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(&b, snap(), Options{By: by, Format: f, Top: -1}); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, name, b.Bytes())
			})
		}
	}
}

// checkGolden compares got with testdata/name, or writes it there with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
