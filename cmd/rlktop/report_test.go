package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

func runReport(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newReportCmd()
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
	cmd := newReportCmd()
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
	if err != nil || !strings.Contains(out, "| category | count | total | share |") || !strings.Contains(out, "hta_triton_example.json.gz") {
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
		{[]string{"--by", "bogus", filepath.Join(tmp, "missing.json")}, `unknown view "bogus" for --by (use one of kernel, category, stage, step, rank, file, finding)`},
	}
	for _, c := range cases {
		_, err := runReport(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
