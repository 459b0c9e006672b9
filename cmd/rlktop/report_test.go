package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rlktop/rlktop/internal/testutil"
	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/load"
)

func runReport(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCommand(newReportCmd(), args...)
}

// runCommand runs a fresh command (newReportCmd, newExportCmd) with args
// and returns its stdout and stderr together and its error.
func runCommand(cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

// reportJSON runs `rlktop report --format json FILES…` and returns its
// stdout alone (warnings go to stderr, shown only when it fails).
func reportJSON(t *testing.T, files ...string) []byte {
	t.Helper()
	return reportJSONWith(t, load.Options{}, files...)
}

// reportJSONWith is reportJSON loading with lo under the flags
// (newReportCmdWith).
func reportJSONWith(t *testing.T, lo load.Options, files ...string) []byte {
	t.Helper()
	cmd := newReportCmdWith(lo)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"--format", "json"}, files...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != nil {
		t.Fatalf("report: %v\n%s", err, errOut.String())
	}
	return out.Bytes()
}

func TestReportCommand(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "kineto")
	f := filepath.Join(dir, "tracelens_torch_compile_rocm.json.gz")
	out, err := runReport(t, f, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	// Independent figures: report/testdata/check_report.py on this file
	// (python3, json module, exact decimals) gives 12 kernels, 12549021 ns,
	// busy 12549021 ns.
	var raw struct {
		Totals map[string]int64 `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if got := raw.Totals; got["kernel_count"] != 12 || got["kernel_total_ns"] != 12549021 || got["busy_ns"] != 12549021 {
		t.Errorf("totals %v", got)
	}

	out, err = runReport(t, f, filepath.Join(dir, "hta_triton_example.json.gz"), "--by", "category", "--format", "md")
	if err != nil || !strings.Contains(out, "| category | count | total | share |") || !strings.Contains(out, `hta\_triton\_example.json.gz`) {
		// Markdown text escapes the name's underscores (report.escape).
		t.Errorf("two files, md by category: %v\n%s", err, out)
	}
}

func TestReportCommandErrors(t *testing.T) {
	mal := filepath.Join(testutil.SharedTraces(t), "malformed")
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	bad := filepath.Join(tmp, "rules.toml")
	os.WriteFile(bad, []byte("[[rule]]\ncategory = \"x\"\ncontext = '(['\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{empty}, empty + " (byte 0): file is empty"},
		{[]string{filepath.Join(tmp, "missing.json")}, "missing.json: cannot open"},
		{[]string{"--rules", bad, filepath.Join(mal, "simple-partial.json")}, `rules.toml: rule 1: field "context": bad regex`},
		{[]string{"--format", "xml", filepath.Join(mal, "simple-partial.json")}, `unknown format "xml"`},
		{[]string{"--by", "thread", filepath.Join(mal, "simple-partial.json")}, `unknown view "thread"`},
		// Checked before reading (the file does not exist) and naming
		// every view, finding included.
		{[]string{"--by", "bogus", filepath.Join(tmp, "missing.json")}, `unknown view "bogus" for --by (use one of kernel, category, stage, step, rank, file, memory, python, finding)`},
	}
	for _, c := range cases {
		_, err := runReport(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// TestReportTextNamesCut: the text table of hta_diff_control_a100 (one
// kernel name of 1,646 characters) cuts names to report.NameColumnWidth
// runes and says so, and the 174 distinct kernel, memcpy and memset names
// in the file (counted by python3's json module) stay 174 different cells
// once cut; a name shown on several rows (one per category it ran under)
// shows the same cell on each.
func TestReportTextNamesCut(t *testing.T) {
	f := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_diff_control_a100.json.gz")
	out, err := runReport(t, f, "--top", "0")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "kernel  ") })
	if start < 0 {
		t.Fatalf("no kernel table:\n%s", out)
	}
	seen := map[string]bool{} // cell + category
	cells := map[string]bool{}
	rows := 0
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "memcpy/memset (") || l == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "memcpy/memset (") {
			continue // the memcpy/memset rows' label
		}
		if l == "" || strings.HasPrefix(l, "names cut") || strings.HasPrefix(l, "share:") {
			break
		}
		rows++
		cell := strings.TrimRight(string([]rune(l)[:report.NameColumnWidth]), " ")
		if n := utf8.RuneCountInString(l); n <= report.NameColumnWidth || []rune(l)[report.NameColumnWidth] != ' ' {
			t.Errorf("row %d: the name runs past %d runes: %q", rows, report.NameColumnWidth, l)
		}
		key := cell + "|" + strings.Fields(string([]rune(l)[report.NameColumnWidth:]))[0]
		if seen[key] {
			t.Errorf("two rows show the same name and category %q", key)
		}
		seen[key], cells[cell] = true, true
	}
	if len(cells) != 174 {
		t.Errorf("%d different name cells in %d rows, want 174 (distinct GPU op names in the file)", len(cells), rows)
	}
	if !strings.Contains(out, "names cut to 72 characters (--format csv or json keeps them whole)") {
		t.Errorf("no note that names were cut:\n%s", out)
	}
}

// TestReportCPUOnlyWords: HTA's CPU-only trace holds 4 cpu_op events
// (aten::empty, 2.503 + 0.473 + 0.401 + 0.587 µs = 3.964 µs, counted by
// python3's json module) and no GPU work: the report calls them CPU
// operators with their self time, never kernels or GPU time.
func TestReportCPUOnlyWords(t *testing.T) {
	f := filepath.Join(testutil.SharedTraces(t), "kineto", "hta_cpu_only.json.gz")
	out, err := runReport(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "CPU operators (no GPU work in the trace): 4, self time 3.96 µs") || !strings.Contains(out, "\noperator  ") {
		t.Errorf("report of a CPU-only trace:\n%s", out)
	}
	if strings.Contains(out, "kernels:") || strings.Contains(out, "\nkernel ") {
		t.Errorf("CPU operators called kernels:\n%s", out)
	}
	out, err = runReport(t, f, "--by", "step")
	if err != nil || !strings.Contains(out, "cpu op time") || strings.Contains(out, "gpu time") {
		t.Errorf("--by step of a CPU-only trace (%v):\n%s", err, out)
	}
}
