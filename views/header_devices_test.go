package views_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/tracefile"
	"github.com/rlktop/rlktop/views"
)

// TestHeaderNamesWorkingDevices ("GPU 0–7" when only GPU 0
// did work): the V100 ResNet trace lists eight devices in
// deviceProperties; its kernel, gpu_memcpy and gpu_memset events (decoded
// here with encoding/json, not rlktop's importer) all have args.device 0.
// The header names GPU 0 and says 7 more did no work, at 80 and 160
// columns.
func TestHeaderNamesWorkingDevices(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_ns_resolution_v100.json.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Cat  string `json:"cat"`
			Args struct {
				Device *int32 `json:"device"`
			} `json:"args"`
		} `json:"traceEvents"`
		DeviceProperties []struct{ ID int32 } `json:"deviceProperties"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var want []int32
	for _, e := range doc.TraceEvents {
		switch e.Cat {
		case "kernel", "gpu_memcpy", "gpu_memset":
			if e.Args.Device != nil && !slices.Contains(want, *e.Args.Device) {
				want = append(want, *e.Args.Device)
			}
		}
	}
	if len(doc.DeviceProperties) != 8 || !slices.Equal(want, []int32{0}) {
		t.Fatalf("fixture changed: %d devices listed, work on %v", len(doc.DeviceProperties), want)
	}

	tr, err := tracefile.Open(path, tracefile.Options{})
	if tr == nil {
		t.Fatal(err)
	}
	a := attrib.NewAggregator(attrib.DefaultRules())
	a.AddTrace(tr)
	s := a.Snapshot()
	if !slices.Equal(s.WorkDevices, want) {
		t.Errorf("WorkDevices %v, want %v", s.WorkDevices, want)
	}
	for _, w := range widths {
		h := views.NewHeader(styles())
		h.SetWidth(w)
		h.SetSnapshot(s)
		out := ansi.Strip(h.View())
		if !strings.Contains(out, "GPU 0: Tesla V100-SXM2-32GB") || strings.Contains(out, "0–7") ||
			!strings.Contains(out, "7 more without work") {
			t.Errorf("w%d header:\n%s", w, out)
		}
	}
}
