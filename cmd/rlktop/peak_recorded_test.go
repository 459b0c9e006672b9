package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRecordingKeepsItsPeak: a built-in loop recorded with this
// machine's measured CPU peak (its cache file, cpupeak's
// rlktop/cpu-peak.json) and read where the cache holds another figure
// (a copy with the FLOP rate and bandwidth set to 1e9) is read against
// the peak it was recorded with — the cache file's own figures — not the
// reading machine's.
func TestRecordingKeepsItsPeak(t *testing.T) {
	bin := needRecordBin(t)
	dir := t.TempDir()
	recCache, readCache := filepath.Join(dir, "rec"), filepath.Join(dir, "read")
	rec := filepath.Join(dir, "loop.rlk")
	run := func(cache string, args ...string) []byte {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	run(recCache, append([]string{"record", "-o", rec, "--steps", "6"}, tinyLoop...)...)
	var cache map[string]any
	b, err := os.ReadFile(filepath.Join(recCache, "rlktop", "cpu-peak.json"))
	if err != nil || json.Unmarshal(b, &cache) != nil {
		t.Fatalf("the recording's peak cache: %v\n%s", err, b)
	}
	flops, bw := cache["flops_per_s"].(float64), cache["bytes_per_s"].(float64)
	cache["flops_per_s"], cache["bytes_per_s"] = 1e9, 1e9
	other, _ := json.Marshal(cache)
	if err := os.MkdirAll(filepath.Join(readCache, "rlktop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(readCache, "rlktop", "cpu-peak.json"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Work struct {
			PeakFlopsPerS float64 `json:"peak_flops_per_s"`
			PeakBytesPerS float64 `json:"peak_bytes_per_s"`
			PeakMeasured  bool    `json:"peak_measured"`
		} `json:"work"`
	}
	if err := json.Unmarshal(run(readCache, "report", "--format", "json", rec), &doc); err != nil {
		t.Fatal(err)
	}
	if w := doc.Work; w.PeakFlopsPerS != flops || w.PeakBytesPerS != bw || !w.PeakMeasured {
		t.Errorf("peak read: %g FLOP/s, %g B/s (measured %v); want the recording's %g, %g (the reading machine's cache says 1e9)", w.PeakFlopsPerS, w.PeakBytesPerS, w.PeakMeasured, flops, bw)
	}
}
