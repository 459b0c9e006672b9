package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tui"
)

// TestReportByFinding: `rlktop report --by finding` on HTA's rank-0
// trace quotes the idle share, the collective category's share and the
// exposed communication's share that
// tracer/attrib/testdata/findings_oracle.py (python3, stdlib, exact
// decimals, run here) computes from the raw events: per ProfilerStep the
// step wall time not covered by any GPU op, the NCCL kernels' time over
// all GPU op time, and the NCCL kernels' union not under other kernels
// over the span.
func TestReportByFinding(t *testing.T) {
	path := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_sampled_rank0.json.gz")
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: no independent figures")
	}
	raw, err := exec.Command(py, "../../tracer/attrib/testdata/findings_oracle.py", path, "nccl").Output()
	if err != nil {
		t.Fatal(err)
	}
	var ro struct {
		Steps []struct {
			DurNs  int64 `json:"dur_ns"`
			IdleNs int64 `json:"idle_ns"`
		} `json:"steps"`
		MatchNs   int64 `json:"match_ns"`
		GPUNs     int64 `json:"gpu_ns"`
		ExposedNs int64 `json:"exposed_ns"`
		SpanNs    int64 `json:"span_ns"`
	}
	if err := json.Unmarshal(raw, &ro); err != nil {
		t.Fatal(err)
	}
	var idle, dur int64
	for _, s := range ro.Steps {
		idle += s.IdleNs
		dur += s.DurNs
	}
	out, err := runReport(t, path, "--by", "finding", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc report.FindingsDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]float64{}
	for _, f := range doc.Findings {
		got[f.ID] = f.Share
	}
	if want := float64(idle) / float64(dur); math.Abs(got["gpu-idle"]-want) > 1e-12 {
		t.Errorf("idle share %v, oracle %v (%d of %d ns)", got["gpu-idle"], want, idle, dur)
	}
	if want := float64(ro.MatchNs) / float64(ro.GPUNs); math.Abs(got["dominant-category"]-want) > 1e-12 {
		t.Errorf("collective share %v, oracle %v", got["dominant-category"], want)
	}
	// Communication not under compute on the same device: 336,983,000 of
	// 1,222,847,000 ns of span (the oracle's union arithmetic).
	if want := float64(ro.ExposedNs) / float64(ro.SpanNs); ro.ExposedNs == 0 || math.Abs(got["exposed-communication"]-want) > 1e-12 {
		t.Errorf("exposed communication share %v, oracle %v (%d of %d ns)", got["exposed-communication"], want, ro.ExposedNs, ro.SpanNs)
	}
	txt, err := runReport(t, path, "--by", "finding")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. one category owns most of the GPU time — 65.2% of GPU time  [dominant-category]", "2. the GPU is idle between kernels — 55.5% of step wall time  [gpu-idle]", "idle per step: 551: 54%, 552: 57%"} {
		if !strings.Contains(txt, want) {
			t.Errorf("table lacks %q:\n%s", want, txt)
		}
	}
	// A user file on top: the idle and communication rules off, the
	// category threshold up: nothing fires.
	user := filepath.Join(t.TempDir(), "f.toml")
	os.WriteFile(user, []byte("[[finding]]\nid = \"gpu-idle\"\noff = true\n\n[[finding]]\nid = \"exposed-communication\"\noff = true\n\n[[finding]]\nid = \"dominant-category\"\nkind = \"dominant\"\ngroup = \"category\"\ntitle = \"t\"\nmin_share = 0.7\nsource = \"test\"\n"), 0o600)
	txt, err = runReport(t, path, "--by", "finding", "--findings", user)
	if err != nil || !strings.Contains(txt, "no findings") {
		t.Errorf("with %s: %v\n%s", user, err, txt)
	}
}

// TestReportByFindingRecording: a recording of the built-in loop (its
// default, the math attention path) names the math fallback (first or
// second) with
// the flag to test from the recording's flag.* metadata: attention, now
// math, try fused.
func TestReportByFindingRecording(t *testing.T) {
	bin := needRecordBin(t)
	rec := filepath.Join(t.TempDir(), "demo.rlk")
	if out, err := exec.Command(bin, append([]string{"record", "-o", rec, "--steps", "4"}, attentionLoop...)...).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	out, err := runReport(t, rec, "--by", "finding", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc report.FindingsDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// Its rank beside "attention is memory-bound" (the same flag to
	// test) depends on the machine's measured peak: found by its id.
	i := slices.IndexFunc(doc.Findings, func(f attrib.Finding) bool { return f.ID == "attention-math-fallback" })
	if i < 0 || i > 1 {
		t.Fatalf("findings %+v: want the math fallback among the first two", doc.Findings)
	}
	if fl := doc.Findings[i].Flag; fl == nil || fl.Key != "attention" || fl.Current != "math" || fl.Value != "fused" {
		t.Errorf("flag %+v: want attention math → fused", fl)
	}
}

// TestOpenFindingsSeeRecordingFlags: `open` hands the Findings view the
// same input `report --by finding` uses — for a recording of the built-in
// loop on the math path, its flags (attention=math from the recording's
// flag.* metadata), so the math-fallback finding names its test there too
// (before, the view saw only the snapshot and offered no flag).
func TestOpenFindingsSeeRecordingFlags(t *testing.T) {
	bin := needRecordBin(t)
	rec := filepath.Join(t.TempDir(), "demo.rlk")
	if out, err := exec.Command(bin, append([]string{"record", "-o", rec, "--steps", "4"}, attentionLoop...)...).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	msgs, perr := drain(t, rec)
	if perr != nil {
		t.Fatal(perr)
	}
	last, ok := msgs[len(msgs)-1].(tui.SnapshotMsg)
	if !ok || last.Findings == nil {
		t.Fatalf("last message %T (findings input %v), want a SnapshotMsg with the findings input", msgs[len(msgs)-1], ok)
	}
	if got := last.Findings.Flags["attention"]; got != "math" {
		t.Errorf("flags %v: want attention=math from the recording", last.Findings.Flags)
	}
	in := *last.Findings
	in.Snapshot = last.Snapshot
	// Where it ranks depends on the machine's measured peak (beside it,
	// "attention is memory-bound" offers the same flag): found by its id.
	fs := attrib.EvaluateFindings(nil, in)
	i := slices.IndexFunc(fs, func(f attrib.Finding) bool { return f.ID == "attention-math-fallback" })
	if i < 0 || fs[i].Flag == nil || fs[i].Flag.Value != "fused" {
		t.Fatalf("findings %+v: want the math fallback, offering attention=fused", fs)
	}
}

// TestReportByFindingMergedJSON: `report --by finding` over JSON reports
// of separate files gives the findings their merged snapshot supports
// (before: "unknown view"): on HTA's rank-0 trace alone, the collective
// category owns 65.2% of GPU time (findings_oracle.py's 396,199,000 of
// 607,844,000 ns), and the same share comes out of its JSON report.
func TestReportByFindingMergedJSON(t *testing.T) {
	trace := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_sampled_rank0.json.gz")
	js, err := runReport(t, trace, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(t.TempDir(), "r0.json")
	if err := os.WriteFile(doc, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runReport(t, doc, "--by", "finding", "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var fd report.FindingsDoc
	if err := json.Unmarshal([]byte(out), &fd); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range fd.Findings {
		if f.ID == "dominant-category" {
			if want := 396199000.0 / 607844000.0; math.Abs(f.Share-want) > 1e-9 {
				t.Errorf("collective share %v, want %v", f.Share, want)
			}
			return
		}
	}
	t.Errorf("no dominant-category finding in %+v", fd.Findings)
}
