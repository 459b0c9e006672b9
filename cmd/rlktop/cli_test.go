package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/report"
	"github.com/rlktop/rlktop/tracer/attrib"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/views/viewstest"
)

// execRoot runs rootCmd (set up as main does) with args and returns its
// stdout and error.
func execRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	setupCLI(rootCmd)
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(args)
	defer rootCmd.SetArgs(nil)
	err := rootCmd.Execute()
	return out.String(), err
}

func TestVersion(t *testing.T) {
	out, err := execRoot(t, "--version")
	if err != nil || !strings.HasPrefix(out, "rlktop ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %q, %v", out, err)
	}
	// Built with -buildvcs=false (GOFLAGS on this project's machines), the
	// revision scripts/setup.sh stamps is what names the build.
	if v := versionStamped("0123456789ab, modified"); !hasVCS() && !strings.Contains(v, " 0123456789ab, modified (go1.") {
		t.Errorf("versionStamped() = %q, want the stamped revision", v)
	}
}

// hasVCS reports whether Go stamped this test binary's VCS revision
// (then version() prefers it to the -X one).
func hasVCS() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return true
		}
	}
	return false
}

// TestRunStepsRejected: --steps 0 and -1 with --headless fail before
// anything starts for the built-in loop (they ran forever); with a command
// -1 fails, and 0 runs it until it exits.
func TestRunStepsRejected(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		_, err := execRoot(t, "run", "--headless", "--steps", n)
		if err == nil || !strings.Contains(err.Error(), "--steps "+n+": a headless run needs at least 1 step") {
			t.Errorf("--steps %s: %v", n, err)
		}
	}
	if _, err := execRoot(t, "run", "--headless", "--steps", "-1", "--", "true"); err == nil || !strings.Contains(err.Error(), "--steps -1") {
		t.Errorf("--steps -1 -- true: %v", err)
	}
	if _, err := execRoot(t, "run", "--headless", "--untraced", "--steps", "0", "--", "true"); err != nil {
		t.Errorf("--steps 0 -- true (until it exits): %v", err)
	}
	if c, _, err := rootCmd.Find([]string{"run"}); err == nil {
		c.Flags().Set("untraced", "false")
	}
	// Reset the flag for later tests sharing rootCmd.
	if c, _, err := rootCmd.Find([]string{"run"}); err == nil {
		c.Flags().Set("steps", "20")
		c.Flags().Set("headless", "false")
	}
}

func TestReportTopNegative(t *testing.T) {
	cmd := newReportCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--top", "-5", "/work/shared/traces/kineto/kineto_sync_before_fix.json"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "--top -5") {
		t.Errorf("--top -5: %v", err)
	}
}

// TestRecordRefusesOverwrite: -o an existing file fails without --force
// and leaves the file as it was.
func TestRecordRefusesOverwrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.rlk")
	if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := execRoot(t, "record", "-o", p, "--steps", "1")
	if err == nil || !strings.Contains(err.Error(), "the file exists (8 B); pass --force") {
		t.Errorf("record -o existing: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "precious" {
		t.Errorf("file changed: %q", b)
	}
	if c, _, err := rootCmd.Find([]string{"record"}); err == nil {
		c.Flags().Set("output", "")
		c.Flags().Set("steps", "0")
	}
}

// TestCompletions: the values of --by and --format complete.
func TestCompletions(t *testing.T) {
	out, err := execRoot(t, "__complete", "report", "--by", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"kernel", "category", "stage", "step"} {
		if !strings.Contains(out, v+"\n") {
			t.Errorf("report --by completion lacks %s:\n%s", v, out)
		}
	}
	out, _ = execRoot(t, "__complete", "report", "--format", "")
	for _, v := range []string{"table", "json", "csv", "md"} {
		if !strings.Contains(out, v+"\n") {
			t.Errorf("report --format completion lacks %s:\n%s", v, out)
		}
	}
	out, _ = execRoot(t, "__complete", "run", "--flag", "attention=")
	if !strings.Contains(out, "attention=math\n") || !strings.Contains(out, "attention=fused\n") {
		t.Errorf("--flag attention= completion:\n%s", out)
	}
	// The keys: all 22 of the built-in loop's flags (loop/demo Config).
	out, _ = execRoot(t, "__complete", "run", "--flag", "")
	if n := strings.Count(out, "=\n"); n != 22 || !strings.Contains(out, "envs=\n") || !strings.Contains(out, "value_coef=\n") {
		t.Errorf("--flag completion: %d keys, want 22 with envs= and value_coef=:\n%s", n, out)
	}
}

// TestHeadlessCSVIsOneTable: run --headless --format csv writes the
// kernels table and nothing after it (steps: and flags: lines were
// appended); every record has the header's field count.
func TestHeadlessCSVIsOneTable(t *testing.T) {
	st := &livestate.State{Cumulative: viewstest.Snapshot(), Steps: []livestate.StepTime{{Step: 1, DurNs: 100}, {Step: 2, DurNs: 200}}}
	var b bytes.Buffer
	if err := writeRunReport(&b, st, map[string]string{"attention": "math"}, &runFlags{format: "csv", by: "kernel"}, false); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("not one CSV table: %v\n%s", err, b.String())
	}
	// Header plus the fixture's 12 kernels and 2 transfers.
	if len(recs) != 1+len(viewstest.Kernels)+2 {
		t.Errorf("%d records, want %d", len(recs), 1+len(viewstest.Kernels)+2)
	}
}

// TestCompareSweepTable: a comparison of envs=1,4,16 prints the sweep
// table and plot after the pairs (values by hand in report.TestSweep).
func TestCompareSweepTable(t *testing.T) {
	arm := func(v string) attrib.ArmStats {
		return attrib.ArmStats{Name: "envs=" + v, Flags: map[string]string{"envs": v}, Valid: true, Steps: 20, MedianNs: 10e6}
	}
	res := &livestate.CompareResult{Arms: []attrib.ArmStats{arm("1"), arm("4"), arm("16")}, Mode: "live",
		Pairs: []*attrib.Comparison{
			{Arms: []attrib.ArmStats{arm("1"), arm("4")}, Ratio: attrib.Ratio{Value: 1.02, CILow: 0.98, CIHigh: 1.06}, Verdict: attrib.VerdictNoise},
			{Arms: []attrib.ArmStats{arm("1"), arm("16")}, Ratio: attrib.Ratio{Value: 1.10, CILow: 1.05, CIHigh: 1.15}, Verdict: attrib.VerdictSlower},
		}}
	var b bytes.Buffer
	if err := report.WriteCompareResult(&b, res, report.Options{Format: "table", Top: -1}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sweep of envs: step time ×1.1 and time per item ×0.0688", "688 µs [656 µs, 719 µs]", "time per item (same scale)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("compare output lacks %q:\n%s", s, b.String())
		}
	}
}

// TestArgErrorsSayUsage: a command called with the wrong number of
// arguments says how to call it ("accepts 2 arg(s), received
// 1" and nothing else).
func TestArgErrorsSayUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "a.json"}, "usage: rlktop diff A B"},
		{[]string{"report"}, "usage: rlktop report FILE..."},
	} {
		_, err := execRoot(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--help") {
			t.Errorf("%v: %v, want %q and where the help is", c.args, err, c.want)
		}
	}
}
