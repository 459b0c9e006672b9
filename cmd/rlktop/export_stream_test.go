package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/tracer/load"
	"github.com/rlktop/rlktop/tracer/tracefile"
)

// parquetBothWays exports paths as Parquet on the whole-file path and on
// the streaming path (exportParquetStream, windows held whole and every
// window read in parts) and fails unless the two ops files and the two
// steps files are byte for byte equal, or unless the stream took them
// (ok) exactly when wantStream says.
func parquetBothWays(t *testing.T, wantStream bool, paths ...string) {
	t.Helper()
	dir := t.TempDir()
	var errw bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&errw)
	wholeOps, wholeSteps := filepath.Join(dir, "whole.parquet"), filepath.Join(dir, "whole.steps.parquet")
	if err := exportParquet(cmd, paths, wholeOps, wholeSteps, load.Options{StreamMinBytes: -1}); err != nil {
		t.Fatalf("%v: whole-file export: %v\n%s", paths, err, errw.String())
	}
	for _, parts := range []bool{false, true} {
		lo := load.Options{ReadWhole: readWholeSaid(&errw)}
		if parts {
			lo.PartWindow = -1 // every window read in parts
		}
		ops, steps := filepath.Join(dir, fmt.Sprint("s", parts, ".parquet")), filepath.Join(dir, fmt.Sprint("s", parts, ".steps.parquet"))
		errw.Reset()
		ok, err := exportParquetStream(&errw, paths, ops, steps, lo)
		if err != nil {
			t.Fatalf("%v: streamed export: %v\n%s", paths, err, errw.String())
		}
		if ok != wantStream {
			t.Fatalf("%v (parts %v): streamed %v, want %v; stderr: %s", paths, parts, ok, wantStream, errw.String())
		}
		if !ok {
			if _, err := os.Stat(ops); err == nil {
				t.Errorf("%v: a refused stream left %s", paths, ops)
			}
			continue
		}
		for _, f := range [][2]string{{wholeOps, ops}, {wholeSteps, steps}} {
			a, err1 := os.ReadFile(f[0])
			b, err2 := os.ReadFile(f[1])
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%v (parts %v): %s (%d bytes) differs from the whole-file export (%d bytes)", paths, parts, filepath.Base(f[1]), len(b), len(a))
			}
		}
	}
}

// TestExportParquetStream: `export --format parquet` of large Kineto
// inputs reads them window by window (exportParquetStream) and writes the
// same two files, byte for byte, as the whole-file path (whose totals
// DuckDB checks against report: TestExportParquetReadByDuckDB): every real
// Kineto trace with GPU work; several files (ranks) with their own
// source, file and rank columns; files of several windows (copies); one
// long window read in parts. A file without GPU work is refused and
// exported whole.
func TestExportParquetStream(t *testing.T) {
	dir, paths := sharedKineto(t)
	for _, p := range paths {
		parquetBothWays(t, !strings.HasPrefix(filepath.Base(p), "hta_cpu_only"), p)
	}
	a := filepath.Join(dir, "hta_diff_control_a100.json.gz")
	v := filepath.Join(dir, "hta_diff_test_v100.json.gz")
	s := filepath.Join(dir, "hta_sampled_rank0.json.gz")
	parquetBothWays(t, true, s, a, v)
	tmp := t.TempDir()
	write := func(name string, src string, copies int, oneWindow bool) string {
		out := filepath.Join(tmp, name)
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		replicate := tracefile.ReplicateKineto
		if oneWindow {
			replicate = tracefile.ReplicateKinetoOneWindow
		}
		if _, err := replicate(f, readTraceBytes(t, src), copies); err != nil {
			t.Fatal(err)
		}
		return out
	}
	parquetBothWays(t, true, write("a2.json", a, 2, false), write("s3.json", s, 3, false))
	h := filepath.Join(dir, "tracelens_h100_qwen15_sdpa_flash.json.gz")
	parquetBothWays(t, true, write("h3one.json", h, 3, true))
	// Not Kineto with a Kineto file: the stream is refused, the whole path
	// exports both.
	parquetBothWays(t, false, a, filepath.Join(testutil.SharedTraces(t), "rocprof", "kernel_trace_2025.csv"))
}

// TestReportMetaStream: `report --meta` of large Kineto files reads them
// window by window keeping no event (load.Meta) and prints what reading
// them whole prints (the metadata: distributedInfo, deviceProperties, the
// header keys), for every shared Kineto trace with GPU work and several
// together; a file without GPU work is refused and read whole.
func TestReportMetaStream(t *testing.T) {
	_, paths := sharedKineto(t)
	meta := func(stream bool, files ...string) string {
		min := "-1"
		if stream {
			min = "1"
		}
		cmd := newReportCmd()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"--meta", "--stream-min-bytes", min}, files...))
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		if err := cmd.Execute(); err != nil {
			t.Fatalf("report --meta %v: %v\n%s", files, err, errOut.String())
		}
		return out.String()
	}
	var gpu []string
	for _, p := range paths {
		f, err := load.Meta([]string{p}, load.Options{StreamMinBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		ok := f.Streamed
		if want := !strings.HasPrefix(filepath.Base(p), "hta_cpu_only"); ok != want {
			t.Errorf("%s: streamed %v, want %v", filepath.Base(p), ok, want)
		}
		if ok {
			gpu = append(gpu, p)
		}
		whole, streamed := meta(false, p), meta(true, p)
		if whole != streamed {
			t.Errorf("%s: --meta streamed\n%s\nwhole\n%s", filepath.Base(p), streamed, whole)
		}
		if !strings.Contains(whole, "run record: none") {
			t.Errorf("%s: --meta printed\n%s", filepath.Base(p), whole)
		}
	}
	if whole, streamed := meta(false, gpu...), meta(true, gpu...); whole != streamed || strings.Count(whole, "== ") != len(gpu) {
		t.Errorf("%d files: --meta streamed\n%s\nwhole\n%s", len(gpu), streamed, whole)
	}
}
