package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

// TestExportParquetNames: export --format parquet
// refuses an output (or --steps-output) name that does not end in
// .parquet, writing nothing (it wrote Parquet into x.json and
// x.json.steps.parquet), and says what it wrote for a trace without GPU
// work: hta_cpu_only holds 4 "cpu_op" X events and no kernel, memcpy or
// memset (python3's json module), so its 4 rows are CPU operators, not
// "4 GPU ops"; hta_triton_example holds 1 "kernel" event and no memcpy
// or memset: "1 GPU op".
// runExport runs a fresh `rlktop export` with args; stdout and stderr
// together.
func runExport(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCommand(newExportCmd(), args...)
}

func TestExportParquetNames(t *testing.T) {
	k := filepath.Join(testutil.SharedTraces(t), "kineto")
	cpu := filepath.Join(k, "hta_cpu_only.json.gz")
	dir := t.TempDir()
	for _, c := range []struct{ args []string }{
		{[]string{"-o", filepath.Join(dir, "x.json")}},
		{[]string{"-o", filepath.Join(dir, "x.json.gz")}},
		{[]string{"-o", filepath.Join(dir, "x.parquet"), "--steps-output", filepath.Join(dir, "s.csv")}},
	} {
		out, err := runExport(t, append([]string{"--format", "parquet", cpu}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), "the name must end in .parquet") {
			t.Errorf("%q: %v, want a refusal\n%s", c.args, err, out)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("%q: wrote %s", c.args, ents[0].Name())
		}
	}
	_, err := runExport(t, "--format", "parquet", cpu, "-o", filepath.Join(dir, "x.json"))
	if err == nil || !strings.Contains(err.Error(), "x.parquet") || !strings.Contains(err.Error(), "--format chrome") {
		t.Errorf("-o x.json: %v, want the .parquet name and --format chrome suggested", err)
	}

	out, err := runExport(t, "--format", "parquet", cpu, "-o", filepath.Join(dir, "cpu.parquet"))
	if err != nil || !strings.Contains(out, "cpu.parquet (4 CPU operators: the input has no GPU work; ") || strings.Contains(out, "GPU ops") || !strings.Contains(out, "(1 step, ") {
		t.Errorf("CPU-only export (%v):\n%s", err, out)
	}
	out, err = runExport(t, "--format", "parquet", filepath.Join(k, "hta_triton_example.json.gz"), "-o", filepath.Join(dir, "gpu.parquet"))
	if err != nil || !strings.Contains(out, "gpu.parquet (1 GPU op, ") {
		t.Errorf("GPU export (%v):\n%s", err, out)
	}
}
