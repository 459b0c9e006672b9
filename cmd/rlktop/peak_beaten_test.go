package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// TestPeakBeatenForgetsCache: a GEMM row of 2e10 FP32 FLOPs in 1 s (20
// GFLOP/s, 1 MB) against a measured peak of 5 GFLOP/s and 8 GB/s runs at
// 400.0% of the compute roof (by hand: 20/5); the note says so and the
// cached measurement is removed so the next start measures again. A row
// under the measured peak, or one beyond it over less than 10 ms, leaves
// the cache and the note alone.
func TestPeakBeatenForgetsCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	cache, _ := os.UserCacheDir()
	path := filepath.Join(cache, "rlktop", "cpu-peak.json")
	write := func() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	peak := &attrib.Peak{Device: "CPU test", Measured: true, BytesPerS: 8e9}
	peak.FlopsPerS[tracer.DTypeFP32] = 5e9
	row := func(flops float64, ns int64) *attrib.Snapshot {
		w := attrib.Work{Flops: flops, Bytes: 1e6, Ns: ns}
		w.FlopsByDType[tracer.DTypeFP32] = flops
		return &attrib.Snapshot{Peak: peak, Kernels: []attrib.KernelRow{{Name: "gemm_fwd", Work: w}}}
	}

	write()
	for _, s := range []*attrib.Snapshot{row(4e9, 1e9), row(2e10, 5e6)} {
		notePeakBeaten(s, true)
		if s.PeakNote != "" {
			t.Errorf("note %q for a row within the peak or too short", s.PeakNote)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("cache removed for a row within the peak: %v", err)
		}
	}
	s := row(2e10, 1e9)
	notePeakBeaten(s, true)
	if !strings.Contains(s.PeakNote, "gemm_fwd ran at 400.0% of the measured compute peak") {
		t.Errorf("note = %q", s.PeakNote)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("cache still there after a kernel beat it: %v", err)
	}
}

// TestAttachPeakNeverMeasures: a CPU run rlktop attached to, on a machine
// with no cached CPU peak, gets no peak and a note saying why; nothing is
// measured beside the job (no cache file is written).
func TestAttachPeakNeverMeasures(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	w := attrib.Work{Flops: 1e9, Bytes: 1e6, Ns: 1e6}
	w.FlopsByDType[tracer.DTypeFP32] = 1e9
	s := &attrib.Snapshot{Work: w, WorkDevices: []int32{0},
		Devices: []tracer.Device{{ID: 0, Name: "CPU", Vendor: "cpu"}}}
	attachPeak(s)
	if s.Peak != nil || !strings.Contains(s.PeakNote, "never beside a job it attached to") {
		t.Errorf("peak %+v, note %q: want none, and why", s.Peak, s.PeakNote)
	}
	if _, err := os.Stat(filepath.Join(dir, "rlktop", "cpu-peak.json")); !os.IsNotExist(err) {
		t.Errorf("a CPU peak was measured beside an attached job: %v", err)
	}
}
